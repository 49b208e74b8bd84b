"""The deadline filter's column operations against its row-by-row loops (tests/reference/deadline_loop.py).

Issue 26, "Speed": the deadline ranking over benchmarks/ranking_bench.py's 100,000-offer catalog spent
most of its time building one wall-clock key per spot row and finding each late row's same-shape on-demand
fallback in Python. Both became column operations; they must find exactly what the loops found, on a
resampled bundled catalog (several regions, bands, instance counts and prices per shape).
"""

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest

from procurement.ranking import RankingOptions, prepare
from procurement.ranking.configurations import configure
from procurement.ranking.contract import instance_counts_for
from procurement.ranking.deadline import cheapest_on_demand_same_shape, spot_wall_clocks
from procurement.ranking.shapes import build_shapes
from procurement.sizing import parse_workload_spec
from tests.reference.deadline_loop import cheapest_on_demand_row_by_row, spot_wall_clocks_row_by_row

DOCUMENTS = [
    {"name": "qlora-8b", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9},
    {"name": "full-7b", "task": "full_finetune", "model": {"preset": "mistral-7b"}, "training_tokens": 2e9},
    {"name": "pretrain-7b", "task": "pretrain", "model": {"preset": "llama-2-7b"}, "training_tokens": 2e10},
    {
        "name": "full-13b-auto",
        "task": "full_finetune",
        "model": {"preset": "llama-2-13b"},
        "training_tokens": 5e9,
        "parallelism": {"gpus": "auto"},
    },
]


def _resampled(frame, size: int, seed: int = 5):
    """Bundled rows drawn with replacement, prices jittered by 0.8-1.2 (as the benchmark's catalog)."""
    rng = np.random.default_rng(seed)
    sample = frame.sample(n=size, replace=True, random_state=seed).reset_index(drop=True)
    jitter = rng.uniform(0.8, 1.2, size)
    sample["price_per_hour_usd"] = [
        price * Decimal(repr(float(j))) for price, j in zip(sample["price_per_hour_usd"], jitter, strict=True)
    ]
    sample["price_per_hour_usd_float"] = sample["price_per_hour_usd"].map(float)
    sample["observation_id"] = np.arange(1, size + 1)
    return sample


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda document: document["name"])
def test_it_finds_what_the_row_by_row_loops_found(bundled_catalog, document):
    from procurement import selectors

    frame, gpus = selectors.ranking_offer_frame(), selectors.ranking_gpus()
    offers = _resampled(frame, 20_000)
    spec = parse_workload_spec(document)
    options = RankingOptions(top=20, deadline_hours=100.0, deadline_probability=0.95)
    prepared = prepare(offers, gpus, options)
    options = replace(
        options, instance_counts=instance_counts_for(spec, options, prepared.kinds["gpus_per_instance"])
    )
    shapes = build_shapes(spec, prepared.grid(gpus, options.instance_counts), options)
    configs = configure(prepared, shapes, options, spec)
    spot = np.flatnonzero(configs.fits & prepared.columns["is_spot"][configs.offer])
    assert spot.size > 1_000  # the comparison covers many rows of each shape

    walls = spot_wall_clocks(spot.tolist(), configs, prepared, spec, options)
    reference_walls = spot_wall_clocks_row_by_row(spot.tolist(), configs, prepared, spec, options)
    assert list(walls.items()) == list(reference_walls.items())

    found = cheapest_on_demand_same_shape(configs, prepared, spot, len(shapes.instances))
    reference = cheapest_on_demand_row_by_row(configs, prepared, spot, len(shapes.instances))
    assert list(found.items()) == list(reference.items())  # same matches, same order
    assert len(found) > 1_000

    # rows of one shape mostly share their hours: jitter them (+-10%) so that "no more hours than the
    # spot row's" picks past the cheapest, and drop half the kinds' on-demand rows so that some spot rows
    # have no fallback at all
    rng = np.random.default_rng(3)
    pricing = prepared.text["pricing_model"][prepared.positions[configs.offer]]
    dropped = (pricing == "on_demand") & (prepared.offer_kind[configs.offer] % 2 == 0)
    varied = replace(
        configs, hours=configs.hours * rng.uniform(0.9, 1.1, configs.hours.size), fits=configs.fits & ~dropped
    )
    found = cheapest_on_demand_same_shape(varied, prepared, spot, len(shapes.instances))
    reference = cheapest_on_demand_row_by_row(varied, prepared, spot, len(shapes.instances))
    assert list(found.items()) == list(reference.items())
    assert 0 < len(found) < spot.size
    # with unbounded spot hours every row takes its group's cheapest: the hours bound made a difference
    is_spot = prepared.columns["is_spot"][configs.offer]
    unbounded = replace(varied, hours=np.where(is_spot, np.inf, varied.hours))
    cheapest = cheapest_on_demand_same_shape(unbounded, prepared, spot, len(shapes.instances))
    assert list(cheapest.items()) == list(
        cheapest_on_demand_row_by_row(unbounded, prepared, spot, len(shapes.instances)).items()
    )
    assert any(cheapest[row] != od for row, od in found.items())
