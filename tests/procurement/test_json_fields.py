"""Stored rankings are encoded with orjson (procurement/json_fields.py, issue 26 "Speed"): each must decode
to exactly the Python values ``json.dumps`` gave before (types, key order, every float bit for bit), on
real rankings: training and serving, deadlines (spot P50/P90 simulated), infeasible rows, another currency."""

import json
import math
from decimal import Decimal

import pytest

from procurement.json_fields import json_bytes
from procurement.models import Recommendation, Workload
from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import load_bundled_gpus, parse_workload_spec
from tests.procurement.test_ranking import NOW, OFFERS

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
DOCUMENTS = [
    {"name": "qlora", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 7e8},
    {"name": "full", "task": "full_finetune", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 4e9},
    {"name": "serve", "task": "inference", "model": {"preset": "llama-3.1-8b"}},
]
OPTION_SETS = [
    RankingOptions(top=None, include_infeasible=True),
    RankingOptions(top=20, deadline_hours=30.0, deadline_probability=0.95),
    RankingOptions(top=10, currency="CNY", fx_rate_from_usd=Decimal("7.1234"), pricing_models=("spot",)),
]


def _same(a, b, path="$", key_order=True):
    """Equal with the same types and key order (``1 == 1.0`` and ``{"a":1,"b":2} == {"b":2,"a":1}`` would
    pass ``==``); floats compared bit for bit."""
    assert type(a) is type(b), (path, a, b)
    if isinstance(a, dict):
        assert (list(a) if key_order else sorted(a)) == (list(b) if key_order else sorted(b)), path
        for key in a:
            _same(a[key], b[key], f"{path}.{key}", key_order)
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]", key_order)
    elif isinstance(a, float):
        assert a.hex() == b.hex() or (math.isnan(a) and math.isnan(b)), (path, a, b)
    else:
        assert a == b, (path, a, b)


def _rankings():
    for document in DOCUMENTS:
        spec = parse_workload_spec(document)
        for options in OPTION_SETS:
            yield rank_workload(spec, OFFERS, GPUS, options, now=NOW).results


def test_real_rankings_decode_to_what_json_dumps_gave():
    checked = 0
    for results in _rankings():
        before = json.loads(json.dumps(results))
        _same(before, json.loads(json_bytes(results)))
        checked += len(results)
    assert checked > 100  # real rows, not empty rankings


def test_values_json_handles_the_same_way():
    # non-string keys as json writes them, a non-ASCII text, a float that has no short decimal
    value = {1: "a", 2.5: None, False: [0.1 + 0.2, 1e-7, 1e22], None: "€ Ω", "s": [1, -0.0]}
    _same(json.loads(json.dumps(value)), json.loads(json_bytes(value)))
    for refused in (Decimal("1.5"), {1, 2}, object()):  # json.dumps refuses these too
        with pytest.raises(TypeError):
            json_bytes({"x": refused})


@pytest.mark.django_db
def test_a_stored_ranking_reads_back_as_it_was_given():
    results = next(_rankings())
    workload = Workload.objects.create(name="w", task="qlora", spec=DOCUMENTS[0])
    # bulk_create, as the recompute stores its chunks
    Recommendation.objects.bulk_create([Recommendation(workload=workload, parameters={}, results=results)])
    stored = Recommendation.objects.get(workload=workload).results
    # kept as JSON text (JSONTextField), so an object's keys in the order they were written; jsonb
    # returned its own order (shortest key first)
    _same(json.loads(json.dumps(results)), stored)


@pytest.mark.django_db
def test_a_stored_ranking_is_text_the_database_does_not_parse():
    """JSONTextField (issue 26, "Speed"): the column is text and holds the JSON as written; a key lookup
    in SQL is refused by name, not sent as jsonb SQL that the text column would fail."""
    from django.core.exceptions import FieldError
    from django.db import connection

    results = next(_rankings())
    workload = Workload.objects.create(name="w", task="qlora", spec=DOCUMENTS[0])
    Recommendation.objects.create(workload=workload, parameters={}, results=results)
    with connection.cursor() as cursor:
        cursor.execute("SELECT results FROM procurement_recommendation")
        (text,) = cursor.fetchone()
    assert text == json_bytes(results).decode()
    with pytest.raises(FieldError, match="Unsupported lookup '0__fits'"):
        list(Recommendation.objects.filter(results__0__fits=True))


@pytest.mark.django_db
def test_the_first_row_is_copied_from_the_ranking_on_every_kind_of_insert():
    """FirstRowField: save, bulk_create and COPY (procurement/bulk_copy.py) each store ``results[0]``, an
    empty ranking None; a save after the ranking changed stores its new first row."""
    from procurement.bulk_copy import copy_insert

    results = next(_rankings())
    assert len(results) > 1 and results[0] != results[1]
    workloads = Workload.objects.bulk_create(
        Workload(name=f"w{i}", task="qlora", spec=DOCUMENTS[0]) for i in range(4)
    )
    saved = Recommendation.objects.create(workload=workloads[0], results=results)
    Recommendation.objects.bulk_create([Recommendation(workload=workloads[1], results=results[1:])])
    copy_insert(
        [Recommendation(workload=workloads[2], results=results), Recommendation(workload=workloads[3])]
    )
    stored = dict(Recommendation.objects.values_list("workload_id", "first_result"))
    assert stored == {
        workloads[0].pk: results[0],
        workloads[1].pk: results[1],
        workloads[2].pk: results[0],
        workloads[3].pk: None,
    }
    saved.results = results[2:]
    saved.save()
    assert Recommendation.objects.get(pk=saved.pk).first_result == results[2]
