"""Input checks and money rounding shared by the engines."""

from decimal import Decimal

import pytest

from procurement.costing.values import CostInputError, fraction, round_money, round_price, to_decimal


def test_it_reads_a_float_as_written_not_as_its_binary_expansion():
    assert to_decimal(0.1, "x") == Decimal("0.1")


@pytest.mark.parametrize("bad", [True, None, "abc", float("nan"), float("inf"), "Infinity"])
def test_it_refuses_what_is_not_a_finite_number(bad):
    with pytest.raises(CostInputError) as error:
        to_decimal(bad, "rent.price_per_gpu_hour")
    assert error.value.field == "rent.price_per_gpu_hour"


def test_it_rounds_money_half_up_to_the_minor_unit():
    assert round_money(Decimal("17.505"), "USD") == Decimal("17.51")
    assert round_money(Decimal("1234.5"), "JPY") == Decimal("1235")
    assert round_price(Decimal("2.1234565")) == Decimal("2.123457")


def test_it_bounds_a_fraction():
    assert fraction("1", "utilization") == 1
    with pytest.raises(CostInputError, match="utilization: must be between 0 and 1"):
        fraction("1.01", "utilization")
