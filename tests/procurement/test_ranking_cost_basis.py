"""Every returned row's money rebuilds to the cent from the row alone (aud48r, stop 48): compute = the shown
effective_price_per_hour x the shown hours x instances, setup = that price x setup hours x instances, storage =
GB x rate x months, reruns = fraction x compute, each rounded half-up once, and total_cost = their sum.

Before rank48 the hours were shown to 3 decimals while compute was priced on the float hours, and the total was
rounded once with the remainder moved into compute: phi-2's row 1 showed $60,248.04 for 23.60 x 212.74 h x 12 =
$60,247.97, and a $1.21 AWS spot job's compute $0.02 for 0.095210 x 0.36 h = $0.034."""

from decimal import ROUND_HALF_UP, Decimal

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

PARTS = ("compute", "setup", "storage", "reruns")
QLORA = parse_workload_spec(
    {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 3.7e7}
)
SERVING = parse_workload_spec({"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}})
QUANTA = {"USD": Decimal("0.01"), "EUR": Decimal("0.01"), "JPY": Decimal(1)}


def _rows(spec=QLORA, **options):
    options = {"top": None, "setup_hours": 1.0, "rerun_fraction": 0.2} | options
    return [
        row
        for row in rank_workload(spec, OFFERS, GPUS, RankingOptions(**options), now=NOW).results
        if row["fits"]
    ]


def _money(amount: Decimal, currency: str) -> Decimal:
    return amount.quantize(QUANTA[currency], ROUND_HALF_UP)


def _rebuilt(row: dict) -> dict[str, Decimal]:
    """The four parts by hand from the row's own figures (the test's arithmetic, not the product's)."""
    basis, currency = row["cost_basis"], row["currency"]
    price, hours = Decimal(row["effective_price_per_hour"]), Decimal(str(row["hours"]))
    compute = _money(price * hours * row["instances"], currency)
    storage = basis["storage"]
    return {
        "compute": compute,
        "setup": _money(price * Decimal(basis["setup"]["hours"]) * row["instances"], currency),
        "storage": _money(
            Decimal(storage["gb"]) * Decimal(storage["rate_per_gb_month"]) * Decimal(storage["months"]),
            currency,
        ),
        "reruns": _money(Decimal(basis["reruns"]["fraction"]) * compute, currency),
    }


@pytest.mark.parametrize(
    "currency,rate", [("USD", Decimal(1)), ("EUR", Decimal("0.9213")), ("JPY", Decimal("151.37"))]
)
def test_it_rebuilds_every_part_of_every_row_to_the_cent(currency, rate):
    rows = _rows(
        currency=currency,
        fx_rate_from_usd=rate,
        storage_gb=37.3,
        storage_rate_per_gb_month={"aws": 0.08, "lambda": 0.2},
    )
    assert len(rows) >= 3
    for row in rows:
        hand = _rebuilt(row)
        assert {name: Decimal(row["cost_breakdown"][name]) for name in PARTS} == hand, row["cost_basis"]
        assert Decimal(row["total_cost"]) == sum(hand.values()) == Decimal(row["cost_breakdown"]["total"])


def test_it_shows_the_hours_the_compute_is_priced_on():
    # the row's hours and its compute basis are one figure, to 6 decimals: no 3-decimal rounding in between
    for row in _rows(storage_gb=10.0):
        assert Decimal(row["cost_basis"]["compute"]["hours"]) == Decimal(str(row["hours"]))
        assert row["cost_basis"]["compute"]["price_per_hour"] == row["effective_price_per_hour"]
        assert row["cost_basis"]["compute"]["instances"] == row["instances"]
        assert -Decimal(row["cost_basis"]["compute"]["hours"]).as_tuple().exponent <= 6


def test_it_rebuilds_a_hand_computed_row():
    # vast 1x-RTX4090 at 0.35 USD/h; 1,000 tokens/s makes 3.7e7 tokens take 10.277778 h (37,000 s / 3,600).
    # compute = 0.35 x 10.277778 x 1 = 3.5972223 -> 3.60; setup = 0.35 x 1 h = 0.35; reruns = 0.2 x 3.60 = 0.72;
    # storage = 100 GB x 0.10 x ((10.277778 + 1) / 730 + 1) months = 100 x 0.10 x 1.015449 -> 10.15;
    # total = 3.60 + 0.35 + 10.15 + 0.72 = 14.82.
    (row,) = _rows(
        providers=("vast",),
        instance_counts=(1,),
        storage_tail_months=1.0,
        storage_gb=100.0,
        storage_rate_per_gb_month={"vast": 0.10},
        measured_tokens_per_second={("rtx-4090", 1): 1000.0},
    )
    assert row["hours"] == 10.277778
    assert row["cost_breakdown"] == {
        "compute": "3.60",
        "setup": "0.35",
        "storage": "10.15",
        "reruns": "0.72",
        "total": "14.82",
    }
    assert row["total_cost"] == "14.82"
    assert row["cost_basis"]["storage"]["months"] == "1.015449"
    assert row["cost_basis"]["compute"]["text"] == "0.350000 x 10.277778 h x 1"


def test_it_rebuilds_serving_rows_too():
    rows = _rows(SERVING, storage_gb=20.0, storage_rate_per_gb_month={"aws": 0.08})
    assert rows
    for row in rows:
        hand = _rebuilt(row)
        assert {name: Decimal(row["cost_breakdown"][name]) for name in PARTS} == hand
        assert Decimal(row["total_cost"]) == sum(hand.values())
