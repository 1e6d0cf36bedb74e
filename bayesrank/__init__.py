"""bayesrank: can this leaderboard or benchmark comparison be trusted?

Subpackages (one concern each; data flows one way: reader -> validated data -> model -> result):

- ``bayesrank.data``         validated pairwise comparisons, readers, sufficient statistics
- ``bayesrank.bt``           Bradley-Terry: MLE, PyMC model, MAP/Laplace, NUTS, bootstrap
- ``bayesrank.influence``    spec 00: perturbation audit (influence functions, 1-step Newton)
- ``bayesrank.hja``          spec 02: heterogeneous judge-aware ranking
- ``bayesrank.calibration``  spec 01: calibration protocol sensitivity
- ``bayesrank.configflip``   spec 03: configuration-conditional rank instability
"""

__version__ = "0.1.0"

from bayesrank._lazy import lazy_exports  # noqa: E402

# ``import bayesrank`` loads nothing else; ``bayesrank.bt`` etc. import on first use (PEP 562)
__getattr__, __dir__, _ = lazy_exports(__name__, {})
