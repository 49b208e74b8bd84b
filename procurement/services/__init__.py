"""Writes of the procurement app: evaluate and store TCO studies and ranked recommendations, recompute
them when prices change, and tell owners when a decision changed.

Django-side glue around the plain-Python engines, one module per concern:
``tco`` (studies), ``recommendations`` (rankings), ``recompute`` (stored decisions against current
prices), ``notifications`` (change events), ``currency`` (results in another currency).
"""

from importlib import import_module

from procurement import models

# Each name is imported from its module on first use (PEP 562), so importing one service (say
# services.calibration for the `size` command) does not import them all, and with them pandas.
_SOURCES = {
    "BenchmarkImport": "benchmarks",
    "benchmark_import": "benchmarks",
    "measurements_for_spec": "benchmarks",
    "shape_measurements": "benchmarks",
    "change_event_create": "notifications",
    "change_event_has_target": "notifications",
    "change_event_notify": "notifications",
    "change_events_create": "notifications",
    "change_events_notify": "notifications",
    "RANKING_OPTION_FIELDS": "recommendations",
    "RankingContext": "recommendations",
    "WorkloadSpecInputError": "recommendations",
    "ranking_options_parse": "recommendations",
    "ranking_prices_used": "recommendations",
    "recommendation_compute": "recommendations",
    "recommendation_create": "recommendations",
    "recommendation_fingerprint": "recommendations",
    "recommendation_preview": "recommendations",
    "workload_create_from_spec": "recommendations",
    "workload_duplicate": "recommendations",
    "workload_spec_parse": "recommendations",
    "workload_update_spec": "recommendations",
    "decision_changes": "recompute",
    "recommendation_recompute": "recompute",
    "recommendations_recompute_chunk": "recompute",
    "recompute_targets": "recompute",
    "tco_study_recompute": "recompute",
    "EvaluatedStudy": "tco",
    "OfferPriceRecorder": "tco",
    "fx_pairs_into": "tco",
    "gpu_economics_lookup": "tco",
    "study_errors": "tco",
    "tco_study_create": "tco",
    "tco_study_evaluate": "tco",
    "tco_study_update": "tco",
}


def __getattr__(name: str):
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_SOURCES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BenchmarkImport",
    "benchmark_import",
    "measurements_for_spec",
    "shape_measurements",
    "RANKING_OPTION_FIELDS",
    "EvaluatedStudy",
    "OfferPriceRecorder",
    "RankingContext",
    "WorkloadSpecInputError",
    "change_event_create",
    "change_event_has_target",
    "change_event_notify",
    "change_events_create",
    "change_events_notify",
    "decision_changes",
    "fx_pairs_into",
    "gpu_economics_lookup",
    "models",
    "ranking_options_parse",
    "ranking_prices_used",
    "recommendation_compute",
    "recommendation_create",
    "recommendation_fingerprint",
    "recommendation_preview",
    "recommendations_recompute_chunk",
    "recommendation_recompute",
    "recompute_targets",
    "study_errors",
    "tco_study_create",
    "tco_study_evaluate",
    "tco_study_recompute",
    "tco_study_update",
    "workload_create_from_spec",
    "workload_duplicate",
    "workload_spec_parse",
    "workload_update_spec",
]
