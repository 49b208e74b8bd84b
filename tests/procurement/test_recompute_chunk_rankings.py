"""A recompute chunk ranks each distinct stored workload once (procurement/services/recompute.py,
``ChunkRankings``; issue 26 "Speed"). What it stores must be, row for row, what a fresh ranking of each
workload gives at the chunk's instant; workloads that differ in anything but their name are ranked apart,
and new prices are a new chunk, never a remembered answer."""

import datetime as dt
import json

import pytest

from procurement.models import Recommendation, Workload
from procurement.services import recompute
from procurement.services.benchmarks import NO_MEASUREMENTS, ShapeMeasurements
from procurement.services.recommendations import (
    RankingContext,
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)
from procurement.services.recompute import ranking_key, recommendations_recompute_chunk
from procurement.sizing import parse_workload_spec
from tests.procurement.costing.test_recommendations import _raise_price

NOW = dt.datetime(2026, 12, 6, 9, 30, tzinfo=dt.UTC)
BASE = {"task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
# three copies under other names (one ranking), and one change each in tokens, precision and task
DOCUMENTS = [
    BASE | {"name": "copy-a"},
    BASE | {"name": "copy-b"},
    BASE | {"name": "copy-c"},
    BASE | {"name": "more-tokens", "training_tokens": 2e9},
    BASE | {"name": "fp16", "precision": "fp16"},
    BASE | {"name": "lora", "task": "lora"},
]
PARAMETERS = {"top": 5}


@pytest.fixture
def chunk_at_noon(monkeypatch):
    """The chunk's instant fixed, so a fresh ranking can be asked for at the same one."""
    monkeypatch.setattr(recompute.timezone, "now", lambda: NOW)


def _store(documents, parameters=PARAMETERS) -> list[Workload]:
    workloads = [Workload.objects.create(name=d["name"], task=d["task"], spec=d) for d in documents]
    for workload in workloads:
        Recommendation.objects.create(
            workload=workload, parameters=parameters, results=[], fingerprint="seed"
        )
    return workloads


def _fresh(workload: Workload, context: RankingContext, parameters=PARAMETERS) -> list:
    ranking = recommendation_compute(
        spec=workload_spec_parse(workload.spec),
        options=ranking_options_parse(parameters),
        workload=workload,
        context=context,
        now=NOW,
    )
    return json.loads(json.dumps(ranking.results, default=str))


def _stored(workload: Workload) -> list:
    return Recommendation.objects.filter(workload=workload).latest("computed_at", "pk").results


def _counting_rankings(monkeypatch) -> list:
    calls = []

    def counted(**kwargs):
        calls.append(kwargs["spec"].name)
        return recommendation_compute(**kwargs)

    monkeypatch.setattr(recompute, "recommendation_compute", counted)
    return calls


def test_a_chunk_stores_what_a_fresh_ranking_of_each_workload_gives(
    bundled_catalog, chunk_at_noon, monkeypatch
):
    workloads = _store(DOCUMENTS)
    context = RankingContext.current()
    calls = _counting_rankings(monkeypatch)
    summaries = recommendations_recompute_chunk([w.pk for w in workloads], context=context)
    assert [summary["created"] for summary in summaries] == [True] * len(DOCUMENTS)
    assert calls == ["copy-a", "more-tokens", "fp16", "lora"]  # the copies ranked once, the rest each
    for workload in workloads:
        assert _stored(workload) == _fresh(workload, context), workload.name
    assert _stored(workloads[3])[0]["total_cost"] != _stored(workloads[0])[0]["total_cost"]


def test_other_saved_options_are_another_ranking(bundled_catalog, chunk_at_noon, monkeypatch):
    workloads = _store(DOCUMENTS[:1]) + _store(DOCUMENTS[1:2], parameters={"top": 3})
    context = RankingContext.current()
    calls = _counting_rankings(monkeypatch)
    recommendations_recompute_chunk([w.pk for w in workloads], context=context)
    assert calls == ["copy-a", "copy-b"]
    assert len(_stored(workloads[0])) == 5 and len(_stored(workloads[1])) == 3
    assert _stored(workloads[1]) == _fresh(workloads[1], context, parameters={"top": 3})


def test_new_prices_are_ranked_anew_by_the_next_chunk(bundled_catalog, chunk_at_noon):
    workloads = _store(DOCUMENTS[:2])
    recommendations_recompute_chunk([w.pk for w in workloads], context=RankingContext.current())
    cheapest = _stored(workloads[0])[0]
    _raise_price(cheapest)
    context = RankingContext.current()  # the new price version's
    summaries = recommendations_recompute_chunk([w.pk for w in workloads], context=context)
    assert [summary["created"] for summary in summaries] == [True, True]
    for workload in workloads:
        assert _stored(workload) == _fresh(workload, context)
        assert _stored(workload)[0]["observation_id"] != cheapest["observation_id"]


def test_the_key_leaves_out_the_name_only():
    spec = parse_workload_spec(BASE | {"name": "a"})
    key = ranking_key(spec, PARAMETERS, NO_MEASUREMENTS)
    assert ranking_key(parse_workload_spec(BASE | {"name": "b"}), {"top": 5}, NO_MEASUREMENTS) == key
    others = [
        ranking_key(
            parse_workload_spec(BASE | {"name": "a", "training_tokens": 1.1e9}), PARAMETERS, NO_MEASUREMENTS
        ),
        ranking_key(parse_workload_spec(BASE | {"name": "a", "headroom": 0.3}), PARAMETERS, NO_MEASUREMENTS),
        ranking_key(
            parse_workload_spec(BASE | {"name": "a", "precision": "fp16"}), PARAMETERS, NO_MEASUREMENTS
        ),
        ranking_key(spec, {"top": 5, "deadline_hours": 10}, NO_MEASUREMENTS),
        ranking_key(spec, PARAMETERS, ShapeMeasurements({("h100-sxm5-80gb", 1): 3000.0}, {})),
        ranking_key(spec, PARAMETERS, ShapeMeasurements({}, {("h100-sxm5-80gb", 1): "2026-12-01"})),
    ]
    assert all(other != key for other in others)
