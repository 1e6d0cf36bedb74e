"""Spec 01: calibration protocol sensitivity (verbal vs token confidence).

Data flow: reader (``readers``) or table (``records.from_frame``) -> :class:`ConfidenceRecords`
-> ``gap.analyze`` (plug-in estimators + paired bootstrap, ``posterior`` monotone-curve PyMC model,
protocol cards) -> :class:`CalibrationReport` -> ``shift.protocol_shift`` / ``plots`` / JSON.
PyMC is imported only when a posterior is fitted.
"""

from .estimators import (  # noqa: F401
    CALIBRATION_ERRORS,
    ESTIMATORS,
    auroc,
    brier,
    ece,
    ece_equal_mass,
    estimate,
    kde_ece,
    ks_error,
    nll,
    smooth_ece,
)
from .gap import CalibrationReport, GapResult, analyze, calibration_gap  # noqa: F401
from .protocol import ProtocolCard, ProtocolIncompleteError  # noqa: F401
from .readers import read_boolq_file, read_boolq_llama3, read_openai_logprobs  # noqa: F401
from .readouts import t1_geometric_mean, t2_first_token  # noqa: F401
from .records import ConfidenceRecords, from_frame  # noqa: F401
from .shift import protocol_shift, provenance_analysis  # noqa: F401
from .verbal import parse_verbal  # noqa: F401
