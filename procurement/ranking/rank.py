"""rank_workload: every configuration of the offer table for a workload, ranked by total job cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from procurement.ranking.configurations import configure, pareto_shapes, ranked_order
from procurement.ranking.empty import why_empty
from procurement.ranking.offers import PreparedOffers, prepare
from procurement.ranking.options import RankingOptions
from procurement.ranking.rows import describe
from procurement.ranking.shapes import build_shapes
from procurement.ranking.spot_details import price_histories
from procurement.sizing import GpuSpec, WorkloadSpec


@dataclass(frozen=True)
class Ranking:
    results: list[dict[str, Any]]
    considered: int  # configurations priced
    feasible: int
    # When nothing is feasible: the top reasons, [{"reason", "count"}] (procurement/ranking/empty.py).
    why_empty: list[dict[str, Any]] = field(default_factory=list)

    def as_report(self) -> dict[str, Any]:
        return {
            "results": self.results, "considered": self.considered, "feasible": self.feasible,
            "why_empty": self.why_empty,
        }  # fmt: skip


def rank_workload(
    spec: WorkloadSpec,
    offers: pd.DataFrame | None,
    gpus: Mapping[str, GpuSpec],
    options: RankingOptions | None = None,
    *,
    now: pd.Timestamp | None = None,
    prepared: PreparedOffers | None = None,
) -> Ranking:
    """Every configuration of ``offers`` for ``spec``, ranked by total job cost (ascending).

    ``prepared`` (from ``prepare(offers, gpus, options)``) skips re-reading the offer table when many
    workloads with the same filters are ranked in a row.
    """
    options = options or RankingOptions()
    if spec.is_training and not spec.training_tokens:
        raise ValueError("training_tokens: required to rank a training workload by job cost")
    prepared = prepared or prepare(offers, gpus, options)
    if not len(prepared.offer_kind):
        seen = len(offers) if offers is not None else len(prepared.positions)
        return Ranking(
            results=[],
            considered=0,
            feasible=0,
            why_empty=why_empty(prepared, None, None, options, spec, seen),
        )
    shapes = build_shapes(spec, prepared.grid(gpus, options.instance_counts), options)
    configs = configure(prepared, shapes, options, spec)
    order = ranked_order(configs, options.top, options.include_infeasible)
    front = pareto_shapes(configs, shapes.hours)
    now = pd.Timestamp(now or pd.Timestamp.now(tz="UTC")).to_pydatetime()
    simulated = _simulated_spot_rows(order, prepared, configs, options)
    histories = price_histories(
        [prepared.row(int(configs.offer[i])).get("offer_id") for i in simulated], options
    )  # one read for every simulated row
    context = (prepared, shapes, configs, spec, options, front, now)
    rows = [
        describe(int(i), *context, simulate_spot=int(i) in simulated, price_histories=histories)
        for i in order
    ]
    feasible = int(configs.fits.sum())
    reasons = []
    if not feasible or not any(row["fits"] for row in rows):
        everything = configs if options.include_infeasible else configure(
            prepared, shapes, replace(options, include_infeasible=True), spec
        )  # fmt: skip
        reasons = why_empty(prepared, shapes, everything, options, spec, len(prepared.offer_kind))
    return Ranking(results=rows, considered=configs.considered, feasible=feasible, why_empty=reasons)


def _simulated_spot_rows(order, prepared: PreparedOffers, configs, options: RankingOptions) -> set[int]:
    """The first ``spot_simulation_rows`` feasible spot rows of the ranking get the Monte Carlo."""
    spot = [int(i) for i in order if configs.fits[i] and prepared.columns["is_spot"][configs.offer[i]]]
    return set(spot[: options.spot_simulation_rows])
