"""bayesrank.stats.nuts builds the draws' DataTree itself (nutpie's raw trace, no ArviZ): the same
groups, variables, dims, coordinates and values as nutpie's own ArviZ conversion of the same seeded run."""

import subprocess
import sys

import numpy as np


def test_tree_equals_nutpies_conversion():
    import nutpie

    from bayesrank.bt import density
    from bayesrank.bt.api import BradleyTerry
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path
    from bayesrank.stats.nuts import _cfunc_model, trace_tree

    bt = BradleyTerry(read_comparisons(path("sports/nba_games_2023_24_tidy.csv")))
    dens = density.BTDensity(bt.rows, "davidson", bt.prior_sigma, bt.tie_prior_sigma, bt.beta_sigma, bt.position)
    coords, dims = dens.coords()
    init = lambda s: np.random.default_rng(s).uniform(-1.0, 1.0, dens.ndim)  # noqa: E731
    model = _cfunc_model(dens.compiled(), dens.ndim, dens.shapes(), init, coords, dims)
    kw = dict(draws=60, tune=40, chains=2, cores=1, seed=3, progress_bar=False, save_warmup=False)
    ref = nutpie.sample(model, **kw)
    got = trace_tree(nutpie.sample(model, return_raw_trace=True, **kw), coords, nutpie.__version__)
    assert set(got.children) == {"posterior", "sample_stats"} <= set(ref.children)
    for group in got.children:
        a, b = got[group].to_dataset(), ref[group].to_dataset()
        assert sorted(a.data_vars) == sorted(b.data_vars), group
        for v in a.data_vars:
            assert a[v].dims == b[v].dims and a[v].dtype == b[v].dtype, (group, v)
            if a[v].dtype == object:
                assert a[v].values.tolist() == b[v].values.tolist()
            else:
                np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=f"{group}/{v}")
        for c in b.coords:
            assert list(a[c].values) == list(b[c].values), (group, c)


def test_density_sampler_imports_neither_arviz_nor_scipy_stats():
    code = ("import sys; from bayesrank.bt import BradleyTerry; from bayesrank.data import read_comparisons; "
            "from bayesrank.datasets import path; "
            "f = BradleyTerry(read_comparisons(path('sports/nba_games_2023_24_tidy.csv'))).fit('nuts', draws=100, "
            "tune=100, chains=2); a = sys.modules.get('arviz'); "
            "print(f.diagnostics.rhat_max > 0, 'arviz_stats' in sys.modules, 'arviz_plots' in sys.modules, "
            "'jax' in sys.modules, 'scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False", "False", "False"]
