"""The collapse of identical rows (ranking/collapse.py) reads each offer's part of a group key once per
prepared table and the rows' figures as Python numbers (issue 26, "Speed"). The groups must be those of
the key built per row from the table, as before: checked here against that per-row key on whole rankings
of the bundled catalog (every configuration, training, spot and serving)."""

import copy
from dataclasses import replace

import numpy as np
import pytest

from procurement.ranking.collapse import KEY_COLUMNS, collapse
from procurement.ranking.configurations import configure, ranked_order
from procurement.ranking.contract import instance_counts_for
from procurement.ranking.serving import serving_options
from procurement.ranking.shapes import build_shapes
from procurement.services.recommendations import RankingContext, ranking_options_parse
from procurement.sizing import parse_workload_spec
from tests.procurement.outside.test_outside_recommendations_x26b import QWEN3_MOE_H100

DOCUMENTS = [
    {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9},
    {"name": "f", "task": "full_finetune", "model": {"preset": "qwen2.5-14b"}, "training_tokens": 3e9},
    {"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}},
    copy.deepcopy(QWEN3_MOE_H100),
]


def _collapse_per_row(order, prepared, configs):
    """The key as it was built for each row from the table (before the per-offer memo)."""
    kept, groups, also = [], {}, {}
    for index in order.tolist():
        offer = int(configs.offer[index])
        position = int(prepared.positions[offer])
        cost, hours = float(configs.total_cost[index]), float(configs.hours[index])
        band = int(prepared.columns["band"][offer]) if bool(prepared.columns["is_spot"][offer]) else -1
        key = (
            *(prepared.text[name][position] for name in KEY_COLUMNS),
            round(float(prepared.columns["price_usd"][offer]), 6),
            int(configs.shape[index]),
            round(cost, 2) if np.isfinite(cost) else None,
            round(hours, 6) if np.isfinite(hours) else None,
            band,
        )
        if key in groups:
            region, zone = prepared.text["region"][position], prepared.text["zone"][position]
            place = f"{region}/{zone}" if zone else str(region)
            if place not in also[groups[key]]:
                also[groups[key]].append(place)
            continue
        groups[key], also[index] = index, []
        kept.append(index)
    return kept, also


@pytest.mark.parametrize("document", DOCUMENTS, ids=["qlora", "full", "serving", "moe"])
@pytest.mark.parametrize("include_infeasible", [False, True])
def test_the_groups_are_those_of_the_per_row_key(bundled_catalog, document, include_infeasible):
    spec = parse_workload_spec(document)
    context = RankingContext.current()
    options = serving_options(spec, ranking_options_parse({"include_infeasible": include_infeasible}))
    prepared = context.prepared(options)
    sizes = prepared.kinds["gpus_per_instance"]
    options = replace(options, instance_counts=instance_counts_for(spec, options, sizes))
    shapes = build_shapes(spec, prepared.grid(context.gpus, options.instance_counts), options)
    configs = configure(prepared, shapes, options, spec)
    order = ranked_order(configs, None, include_infeasible)
    kept, also = collapse(order, prepared, configs)
    assert (kept, also) == _collapse_per_row(order, prepared, configs)
    assert len(kept) < order.size  # the catalog sells some offers in several regions at one price
