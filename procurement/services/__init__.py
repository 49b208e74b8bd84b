"""Writes of the procurement app: evaluate and store TCO studies and ranked recommendations, recompute
them when prices change, and tell owners when a decision changed.

Django-side glue around the plain-Python engines, one module per concern:
``tco`` (studies), ``recommendations`` (rankings), ``recompute`` (stored decisions against current
prices), ``notifications`` (change events), ``currency`` (results in another currency).
"""

from procurement import models
from procurement.services.benchmarks import (
    BenchmarkImport,
    benchmark_import,
    measurements_for_spec,
    shape_measurements,
)
from procurement.services.notifications import (
    change_event_create,
    change_event_has_target,
    change_event_notify,
    change_events_create,
    change_events_notify,
)
from procurement.services.recommendations import (
    RANKING_OPTION_FIELDS,
    RankingContext,
    WorkloadSpecInputError,
    ranking_options_parse,
    ranking_prices_used,
    recommendation_compute,
    recommendation_create,
    recommendation_fingerprint,
    recommendation_preview,
    workload_create_from_spec,
    workload_duplicate,
    workload_spec_parse,
    workload_update_spec,
)
from procurement.services.recompute import (
    decision_changes,
    recommendation_recompute,
    recommendations_recompute_chunk,
    recompute_targets,
    tco_study_recompute,
)
from procurement.services.tco import (
    EvaluatedStudy,
    OfferPriceRecorder,
    fx_pairs_into,
    gpu_economics_lookup,
    study_errors,
    tco_study_create,
    tco_study_evaluate,
    tco_study_update,
)

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
