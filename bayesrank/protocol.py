"""The one result protocol every bayesrank result speaks, defined once.

A result — a Bradley–Terry fit, an audit, an HJA fit, a calibration report, a grid analysis, a flip
posterior, a review — is a :class:`Result`:

=====================  ==========================================================================
``.table()``           the main labelled :class:`pandas.DataFrame` (vocabulary: docs/glossary.md)
``.summary()``         readable text (``str(result)`` is the same)
``.to_dict()``         plain JSON-ready dict; top level carries ``schema``, ``bayesrank_version``
                       and ``diagnostics``
``.to_json(path)``     the dict as JSON, **validated** against ``bayesrank/schemas/<schema>.json``
``.diagnostics``       a :class:`Diagnostics`: one meaning of ``converged`` for the whole package
``.plot(ax=None)``     a matplotlib figure of the result
``.save(path)``        the result written where the suffix says (``.json``, ``.csv``: the table,
                       ``.txt``: the summary; a review also ``.html``, ``.md``); folders created
``repr`` / notebook    a short view: headline, the table's first rows, the diagnostics line
                       (:mod:`bayesrank.quicklook`; ``_repr_html_`` is what Jupyter shows)
=====================  ==========================================================================

The review report, the CLI and notebooks are three views of the same objects.

``converged`` means, by kind of computation:

* ``optimizer`` (MLE, MAP, Laplace): the optimizer reported success **and** the gradient norm of
  the objective at the returned point is at most ``gradient_tol``;
* ``sampler`` (NUTS): max R-hat ≤ 1.01, min bulk and tail ESS ≥ 100 per chain (Vehtari et al.
  2021), and no divergent transitions;
* ``resampling`` (bootstrap): the point fit converged and every replicate fit converged (failed or
  non-finite replicates are counted in ``n_failed`` and handled as ``failed_policy`` says);
* ``exact`` (closed forms, ANOVA, counting): always ``True``;
* ``composite`` (several computations in one result, e.g. a report): every part converged; the
  parts' own diagnostics are in ``extra["parts"]``.

A failed check never raises: it is reported in ``messages``, shown in JSON and warned about in the CLI.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100
GRADIENT_TOL = 1e-6

Kind = Literal["optimizer", "sampler", "resampling", "exact", "composite"]


@dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics of one computation (see the module docstring for ``converged``)."""

    kind: Kind
    method: str
    converged: bool
    messages: tuple[str, ...] = ()
    # optimizer
    optimizer_status: str | None = None
    gradient_norm: float | None = None
    gradient_tol: float | None = None
    iterations: int | None = None
    # sampler
    rhat_max: float | None = None
    ess_bulk_min: float | None = None
    ess_tail_min: float | None = None
    ess_min_required: float | None = None
    divergences: int | None = None
    chains: int | None = None
    draws: int | None = None
    # resampling
    n_replicates: int | None = None
    n_failed: int | None = None
    failed_policy: str | None = None
    # anything else worth reporting (PPC, PSIS-LOO, per-part details), JSON-ready scalars/dicts
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def optimizer(cls, method: str, success: bool, gradient_norm: float, *, iterations: int | None = None,
                  status: str = "", gradient_tol: float = GRADIENT_TOL, **extra: Any) -> Diagnostics:
        """Optimizer success and ``‖∇‖ ≤ gradient_tol`` (the norm of the gradient actually minimised)."""
        gn = float(gradient_norm)
        msgs = []
        if not success:
            msgs.append(f"{method}: optimizer reported failure ({status or 'no status'})")
        if not gn <= gradient_tol:  # also catches NaN
            msgs.append(f"{method}: gradient norm {gn:.3g} above tolerance {gradient_tol:.1g}")
        return cls(kind="optimizer", method=method, converged=not msgs, messages=tuple(msgs),
                   optimizer_status=status or ("success" if success else "failure"), gradient_norm=gn,
                   gradient_tol=float(gradient_tol), iterations=iterations, extra=dict(extra))

    @classmethod
    def sampler(cls, method: str, idata: Any, var_names: Iterable[str] | None = None, **extra: Any) -> Diagnostics:
        """R-hat, bulk/tail ESS (rank-normalised, as ArviZ 1: :mod:`bayesrank.stats.convergence`) over
        ``var_names`` and the divergence count."""
        import numpy as np

        from bayesrank.stats import convergence

        post = idata["posterior"]
        names = list(var_names) if var_names is not None else list(post.data_vars)
        chains, draws = int(post.sizes["chain"]), int(post.sizes["draw"])
        x = convergence.stacked(post, names) if names else np.full((1, chains, draws), np.nan)

        def worst(vals: Any, fn: Any) -> float:  # a constant parameter has no R-hat/ESS (NaN): left out; non-finite draws fail below
            vals = vals[np.isfinite(vals)]
            return float(fn(vals)) if vals.size else float("nan")

        bad = [str(n) for n in names if not np.all(np.isfinite(np.asarray(post[n], dtype=float)))]

        rhat = worst(convergence.rhat(x), np.max)
        ess_b = worst(convergence.ess_bulk(x), np.min)
        ess_t = worst(convergence.ess_tail(x), np.min)
        div = int(np.asarray(idata["sample_stats"]["diverging"]).sum()) if "sample_stats" in idata.children else 0
        diag = cls.from_sampler_values(method, rhat, ess_b, ess_t, div, chains, draws, **extra)
        if bad:
            import dataclasses

            diag = dataclasses.replace(diag, converged=False, messages=diag.messages + (
                f"{method}: non-finite draws (NaN or inf) of {', '.join(bad)}",))
        return diag

    @classmethod
    def from_sampler_values(cls, method: str, rhat_max: float, ess_bulk_min: float, ess_tail_min: float,
                            divergences: int, chains: int, draws: int, **extra: Any) -> Diagnostics:
        need = float(ESS_PER_CHAIN_MIN * chains)
        msgs = []
        if not rhat_max <= RHAT_MAX:
            msgs.append(f"{method}: max R-hat {rhat_max:.3f} > {RHAT_MAX}")
        if chains < 2:
            msgs.append(f"{method}: R-hat needs at least 2 chains (got {chains})")
        if not ess_bulk_min >= need:
            msgs.append(f"{method}: min bulk ESS {ess_bulk_min:.0f} < {need:.0f} (100 per chain)")
        if not ess_tail_min >= need:
            msgs.append(f"{method}: min tail ESS {ess_tail_min:.0f} < {need:.0f} (100 per chain)")
        if divergences:
            msgs.append(f"{method}: {divergences} divergent transitions")
        return cls(kind="sampler", method=method, converged=not msgs, messages=tuple(msgs), rhat_max=float(rhat_max),
                   ess_bulk_min=float(ess_bulk_min), ess_tail_min=float(ess_tail_min), ess_min_required=need,
                   divergences=int(divergences), chains=int(chains), draws=int(draws), extra=dict(extra))

    @classmethod
    def resampling(cls, method: str, point: Diagnostics, n_replicates: int, n_failed: int,
                   failed_policy: str, **extra: Any) -> Diagnostics:
        """Bootstrap-type: the point fit's diagnostics plus the count of replicates that failed."""
        msgs = list(point.messages)
        if n_failed:
            msgs.append(f"{method}: {n_failed} of {n_replicates} replicates failed ({failed_policy})")
        status = point.optimizer_status if point.kind != "exact" else f"point estimate exact ({point.method})"
        return cls(kind="resampling", method=method, converged=not msgs, messages=tuple(msgs),
                   optimizer_status=status, gradient_norm=point.gradient_norm,
                   gradient_tol=point.gradient_tol, iterations=point.iterations, n_replicates=int(n_replicates),
                   n_failed=int(n_failed), failed_policy=failed_policy, extra=dict(extra))

    @classmethod
    def exact(cls, method: str, **extra: Any) -> Diagnostics:
        """A closed-form or counting computation: nothing to converge."""
        return cls(kind="exact", method=method, converged=True, extra=dict(extra))

    @classmethod
    def combine(cls, method: str, parts: dict[str, Diagnostics]) -> Diagnostics:
        """Several computations in one result (e.g. a fit per benchmark): converged iff all are."""
        msgs = tuple(f"{name}: {m}" for name, d in parts.items() for m in d.messages)
        return cls(kind="composite", method=method, converged=all(d.converged for d in parts.values()), messages=msgs,
                   extra={"parts": {name: d.to_dict() for name, d in parts.items()}})

    # ------------------------------------------------------------------ views
    def to_dict(self) -> dict[str, Any]:
        from bayesrank.report import to_jsonable

        d: dict[str, Any] = {"kind": self.kind, "method": self.method, "converged": bool(self.converged),
             "messages": list(self.messages)}
        for name in ("optimizer_status", "gradient_norm", "gradient_tol", "iterations", "rhat_max", "ess_bulk_min",
                     "ess_tail_min", "ess_min_required", "divergences", "chains", "draws", "n_replicates", "n_failed",
                     "failed_policy"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        if self.extra:
            d["extra"] = self.extra
        return to_jsonable(d)

    def line(self) -> str:
        """One line for consoles and reports."""
        if self.kind == "exact":
            return f"{self.method}: exact computation"
        if self.kind == "composite":
            n = len(self.extra.get("parts", {}))
            state = f"all {n} parts converged" if self.converged else f"{len(self.messages)} failed check(s)"
            return f"{self.method}: {'converged' if self.converged else 'NOT converged'} ({state})"
        if self.kind == "sampler":
            core = (f"R-hat max {self.rhat_max:.3f}, ESS bulk/tail min {self.ess_bulk_min:.0f}/{self.ess_tail_min:.0f}"
                    f" (need {self.ess_min_required:.0f}), {self.divergences} divergences")
        else:
            core = f"{self.optimizer_status}, |gradient| {self.gradient_norm:.2g}" if self.gradient_norm is not None \
                else f"{self.optimizer_status}"
            if self.kind == "resampling":
                core += f"; {self.n_failed}/{self.n_replicates} replicates failed ({self.failed_policy})"
        return f"{self.method}: {'converged' if self.converged else 'NOT converged'} ({core})"


class Result(ABC):
    """Base class of every result object (see the module docstring).

    Subclasses set ``schema`` (the name of a JSON Schema in ``bayesrank/schemas/``), provide a
    ``diagnostics`` attribute or property returning :class:`Diagnostics`, and implement the
    abstract methods. ``to_dict`` must put ``"schema"``, ``"bayesrank_version"`` and
    ``"diagnostics"`` at the top level (``self._envelope()`` returns them). A dataclass subclass is
    declared with ``repr=False`` so that the short ``repr`` below is kept.

    The quick looks (``repr`` and ``_repr_html_``) show ``_headline()`` (default: the summary's
    first line), the first rows of ``_quick_table()`` (default: ``table()``) in the columns
    ``_quick_columns`` names (default: the first ones) and the diagnostics line.
    """

    schema: ClassVar[str]
    if TYPE_CHECKING:  # an attribute or a property of every subclass
        @property
        def diagnostics(self) -> Diagnostics: ...

    #: columns the quick looks show first (None: the table's first columns)
    _quick_columns: ClassVar[tuple[str, ...] | None] = None

    @abstractmethod
    def table(self) -> pd.DataFrame:
        """The main labelled DataFrame."""

    @abstractmethod
    def summary(self) -> str:
        """Readable text."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict following ``bayesrank/schemas/<schema>.json``."""

    @abstractmethod
    def plot(self, ax: Any = None, **kwargs: Any) -> Figure:
        """A matplotlib Figure (drawn into ``ax`` when given)."""

    def _envelope(self) -> dict[str, Any]:
        from bayesrank import __version__

        return {"schema": self.schema, "bayesrank_version": __version__, "diagnostics": self.diagnostics.to_dict()}

    def to_json(self, path: str | Path | None = None) -> str:
        """The result as JSON, validated against its schema; written to ``path`` when given."""
        from bayesrank.report import to_jsonable

        data = to_jsonable(self.to_dict())
        validate(data, self.schema)
        text = json.dumps(data, indent=2)
        if path is not None:
            from bayesrank.outputs import write_text

            write_text(path, text)
        return text

    # ------------------------------------------------------------------ files
    def _writers(self) -> dict[str, Any]:
        """File suffix -> a function returning that file's text."""
        return {".json": self.to_json, ".csv": lambda: self.table().to_csv(index=False), ".txt": self.summary}

    def save(self, path: str | Path) -> list[Path]:
        """Write the result in the format ``path``'s suffix names (``.json``: validated JSON, ``.csv``:
        ``table()``, ``.txt``: ``summary()``), creating missing folders; returns the paths written."""
        from bayesrank.outputs import write_text

        p = Path(path)
        writers = self._writers()
        writer = writers.get(p.suffix.lower())
        if writer is None:
            raise ValueError(f"{path}: {type(self).__name__}.save writes {', '.join(writers)} files "
                             f"(the suffix names the format)")
        return [write_text(p, writer())]

    # ------------------------------------------------------------------ quick looks
    def _headline(self) -> str:
        """One line saying what this result is (default: the summary's first line)."""
        text = self.summary().strip()
        return text.splitlines()[0] if text else self.schema

    def _quick_table(self) -> pd.DataFrame:
        """The table the quick looks show the first rows of (default: ``table()``)."""
        return self.table()

    def __repr__(self) -> str:
        from bayesrank.quicklook import text

        return text(self)

    def _repr_html_(self) -> str:
        from bayesrank.quicklook import html

        return html(self)

    def __str__(self) -> str:
        return self.summary()


# ---------------------------------------------------------------------- JSON Schemas
SCHEMA_URN = "urn:bayesrank:schema:"


@lru_cache(maxsize=1)
def _registry() -> Any:
    from referencing import Registry, Resource

    res = []
    for entry in resources.files("bayesrank.schemas").iterdir():
        if entry.name.endswith(".json"):
            doc = json.loads(entry.read_text())
            res.append((SCHEMA_URN + entry.name[: -len(".json")], Resource.from_contents(doc)))
    return Registry().with_resources(res)


def schema(name: str) -> dict:
    """The JSON Schema ``bayesrank/schemas/<name>.json``."""
    try:
        return _registry()[SCHEMA_URN + name].contents
    except LookupError:
        raise KeyError(f"no schema named {name!r}") from None


def validate(instance: dict, name: str) -> None:
    """Validate ``instance`` against schema ``name`` (jsonschema ``ValidationError`` on failure —
    a programming error, not bad input)."""
    from jsonschema import Draft202012Validator

    Draft202012Validator(schema(name), registry=_registry()).validate(instance)
