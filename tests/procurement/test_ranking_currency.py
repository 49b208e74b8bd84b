"""Rankings in another currency: converted from USD through a stored FX rate, rounded once; a currency
without a stored rate is an error naming it, and nothing is stored."""

import json
from decimal import ROUND_HALF_UP, Decimal
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from procurement.models import Recommendation, Workload
from procurement.ranking import RankingOptions, rank_workload
from procurement.services.recompute import recommendation_recompute
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, QLORA_8B

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
# pricing/data/fx_rates.csv: 1 CNY = 0.13986 USD, so 1 USD = 1 / 0.13986 CNY
USD_TO_CNY = Decimal(1) / Decimal("0.13986")


def assert_rebuilds_to_the_minor_unit(row: dict) -> None:
    """Each part from the row's own figures, rounded half-up to the fen once; the total is their sum."""
    basis, cent = row["cost_basis"], Decimal("0.01")
    price = Decimal(row["effective_price_per_hour"])
    compute = (price * Decimal(str(row["hours"])) * row["instances"]).quantize(cent, ROUND_HALF_UP)
    storage = basis["storage"]
    parts = {
        "compute": compute,
        "setup": (price * Decimal(basis["setup"]["hours"]) * row["instances"]).quantize(cent, ROUND_HALF_UP),
        "storage": (
            Decimal(storage["gb"]) * Decimal(storage["rate_per_gb_month"]) * Decimal(storage["months"])
        ).quantize(cent, ROUND_HALF_UP),
        "reruns": (Decimal(basis["reruns"]["fraction"]) * compute).quantize(cent, ROUND_HALF_UP),
    }
    assert {name: Decimal(row["cost_breakdown"][name]) for name in parts} == parts
    assert Decimal(row["total_cost"]) == sum(parts.values())


def _rank(**options):
    return rank_workload(QLORA_8B, OFFERS, GPUS, RankingOptions(top=None, **options), now=NOW).results


def test_it_converts_every_amount_from_usd_and_keeps_the_order():
    rate = Decimal("7.15")
    usd, cny = _rank(), _rank(currency="CNY", fx_rate_from_usd=rate)
    assert [(r["instance_type"], r["instances"]) for r in usd] == [
        (r["instance_type"], r["instances"]) for r in cny
    ]
    for in_usd, in_cny in zip(usd, cny, strict=True):
        assert in_cny["currency"] == "CNY"
        # rank48: a row's money is priced on its own shown figures in its currency (the effective price converted
        # and rounded to 6 places, below), each part rounded to the fen once: rebuilt here from the CNY row alone
        # (was: the total converted from the unrounded USD total, within half a cent x rate)
        assert_rebuilds_to_the_minor_unit(in_cny)
        effective_gap = (
            Decimal(in_cny["effective_price_per_hour"]) - Decimal(in_usd["effective_price_per_hour"]) * rate
        )
        assert abs(effective_gap) <= rate * Decimal("0.0000005") + Decimal("0.0000005")
        price_gap = Decimal(in_cny["price_per_hour"]) - Decimal(in_usd["price_per_hour"]) * rate
        assert abs(price_gap) <= rate * Decimal("0.0000005") + Decimal(
            "0.0000005"
        )  # both rounded to 6 places
        assert "money converted from USD at 7.15 CNY per USD" in in_cny["reasons"]


def test_it_reads_the_budget_in_the_requested_currency():
    rate = Decimal("7.15")
    in_usd = _rank(budget=50.0)
    in_cny = _rank(budget=50.0 * 7.15, currency="CNY", fx_rate_from_usd=rate)
    assert [r["observation_id"] for r in in_cny] == [r["observation_id"] for r in in_usd]
    assert all(Decimal(r["total_cost"]) <= Decimal("357.50") for r in in_cny)


def _recommend(tmp_path, *args) -> dict:
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(WORKLOAD))
    out = StringIO()
    call_command("recommend", str(path), "--format", "json", "--top", "3", *args, stdout=out)
    return json.loads(out.getvalue())


def test_it_ranks_in_a_currency_with_a_stored_rate_from_the_command_line(tmp_path, bundled_catalog):
    usd = _recommend(tmp_path)["results"]
    cny = _recommend(tmp_path, "--currency", "CNY")["results"]
    assert [r["observation_id"] for r in cny] == [r["observation_id"] for r in usd]
    for in_usd, in_cny in zip(usd, cny, strict=True):
        assert in_cny["currency"] == "CNY" and in_usd["currency"] == "USD"
        assert_rebuilds_to_the_minor_unit(
            in_cny
        )  # rank48 (was: the USD total x rate within half a cent x rate)
        effective_gap = (
            Decimal(in_cny["effective_price_per_hour"])
            - Decimal(in_usd["effective_price_per_hour"]) * USD_TO_CNY
        )
        assert abs(effective_gap) <= USD_TO_CNY * Decimal("0.0000005") + Decimal("0.0000005")


def test_it_names_a_currency_without_a_stored_rate(tmp_path, bundled_catalog):
    with pytest.raises(CommandError, match="currency: no FX rate stored for EUR"):
        _recommend(tmp_path, "--currency", "EUR", "--save")
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0


def test_it_stores_nothing_through_the_api_for_a_currency_without_a_rate(engineer_client, bundled_catalog):
    body = {"workload": WORKLOAD, "currency": "EUR"}
    response = engineer_client.post("/api/recommendations/", body, content_type="application/json")
    assert response.status_code == 400
    assert (
        response.json()["errors"][0]["path"] == "currency"
        and "EUR" in response.json()["errors"][0]["message"]
    )
    assert Workload.objects.count() == 0 and Recommendation.objects.count() == 0
    bad = engineer_client.post(
        "/api/recommendations/", body | {"currency": "euro"}, content_type="application/json"
    )
    assert bad.json()["errors"][0]["path"] == "currency"


def test_it_keeps_the_currency_when_recomputing(engineer_client, bundled_catalog):
    body = {"workload": WORKLOAD, "currency": "CNY", "top": 3, "save": True}
    created = engineer_client.post("/api/recommendations/", body, content_type="application/json").json()
    assert {row["currency"] for row in created["results"]} == {"CNY"}
    assert recommendation_recompute(created["workload_id"])["created"] is False  # same prices, same rate
    page = engineer_client.get(f"/workloads/{created['workload_id']}/recommendations/").content.decode()
    assert "in CNY" in page and "total job cost (CNY)" in page
