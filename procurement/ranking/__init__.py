"""Rank every way to run a workload: offer x instance count x parallelism plan -> fits? -> hours -> cost.

Vectorized in two levels so one workload over 100,000 offers stays far under 100 ms:

1. **Shapes** are what the sizing engine needs: (GPU model, GPUs per instance, instances, plan).
   A catalog has a few hundred of them, however many offers it lists; memory, compatibility and
   hours are computed once per shape with the sizing engine's vectorized functions.
2. **Configurations** are offers joined to the shapes of their GPU kind with numpy index arrays;
   prices, spot overhead, storage and the job total are array expressions over all of them.

Only the rows that are returned become Python dicts (with their reasons in words). Floats are used
inside; the returned money is rounded half-up to cents as Decimal strings, like every report.
Formulas: docs/cost-model.md ("Job cost", "Spot"); the ranking rules: docs/cost-model.md ("Ranking").

The package, one module per step: ``options`` (the vocabulary), ``offers`` (the offer table as numpy
columns, once), ``shapes`` (sizing and host needs per shape), ``configurations`` (feasibility: memory,
host RAM and vCPUs, whole-instance prices, spot rules; pricing, filters, order, Pareto front),
``rows`` (the JSON rows and their reasons), ``spot_details`` (a spot row's rate, verdict and P50/P90),
``spot_inputs`` (the job's checkpoint write and restart times), ``serving`` (replicas from demand,
latency targets, a month of serving), ``collapse`` (identical rows in several regions as one),
``rank`` (``rank_workload``).
"""

from procurement.ranking.configurations import Configurations, configure, pareto_shapes, spot_overhead_by_band
from procurement.ranking.offers import PreparedOffers, offer_columns, prepare, prepare_offers
from procurement.ranking.options import (
    COMMITTED_MODELS,
    DEFAULT_INSTANCE_COUNTS,
    HOURS_PER_MONTH,
    OFFER_COLUMNS,
    PARTIAL_TENSOR_PARALLEL,
    PLAN_NAMES,
    PLANS,
    RANKED_PRICING_MODELS,
    RankingOptions,
)
from procurement.ranking.rank import Ranking, rank_workload
from procurement.ranking.rows import describe, stale_reason
from procurement.ranking.shapes import (
    ShapeGrid,
    Shapes,
    build_shapes,
    incompatibility,
    nvlink_within,
    shape_grid,
)

__all__ = [
    "COMMITTED_MODELS",
    "DEFAULT_INSTANCE_COUNTS",
    "HOURS_PER_MONTH",
    "OFFER_COLUMNS",
    "PARTIAL_TENSOR_PARALLEL",
    "PLANS",
    "PLAN_NAMES",
    "RANKED_PRICING_MODELS",
    "Configurations",
    "PreparedOffers",
    "Ranking",
    "RankingOptions",
    "ShapeGrid",
    "Shapes",
    "build_shapes",
    "configure",
    "describe",
    "incompatibility",
    "nvlink_within",
    "offer_columns",
    "pareto_shapes",
    "prepare",
    "prepare_offers",
    "rank_workload",
    "shape_grid",
    "spot_overhead_by_band",
    "stale_reason",
]
