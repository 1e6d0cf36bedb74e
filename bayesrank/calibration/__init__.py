"""Spec 01: calibration protocol sensitivity (verbal vs token confidence).

Data flow: reader (``readers``) or table (``records.from_frame``) -> :class:`ConfidenceRecords`
-> ``gap.analyze`` (plug-in estimators + paired bootstrap, ``posterior`` paired PyMC model,
protocol cards) -> :class:`CalibrationReport` -> ``shift.protocol_shift`` / ``plots`` / JSON.
Names load lazily (PEP 562); PyMC is imported only when a posterior is fitted.
"""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    **dict.fromkeys(["CALIBRATION_ERRORS", "ESTIMATORS", "auroc", "brier", "ece", "ece_equal_mass", "estimate",
                     "kde_ece", "ks_error", "nll", "smooth_ece", "ece2_debiased"], "estimators"),
    **dict.fromkeys(["CalibrationReport", "GapResult", "analyze", "calibration_gap"], "gap"),
    **dict.fromkeys(["ProtocolCard", "ProtocolIncompleteError"], "protocol"),
    **dict.fromkeys(["read_boolq_file", "read_boolq_llama3", "read_openai_logprobs"], "readers"),
    **dict.fromkeys(["t1_geometric_mean", "t2_first_token"], "readouts"),
    **dict.fromkeys(["ConfidenceRecords", "from_frame"], "records"),
    **dict.fromkeys(["protocol_shift", "provenance_analysis"], "shift"),
    "parse_verbal": "verbal",
})
