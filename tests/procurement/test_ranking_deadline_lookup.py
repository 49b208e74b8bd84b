"""The deadline plan's on-demand fallback price: the first on-demand row of the same provider, type and
region, in table order, found without copying the offer table (procurement/ranking/rank.py)."""

import pandas as pd

from procurement.ranking import RankingOptions, prepare
from procurement.ranking.rank import on_demand_prices
from tests.procurement.test_ranking import GPUS, OFFERS


class _Configs:
    def __init__(self, offers):
        self.offer = offers


def _spot_index(prepared, instance_type):
    """The prepared index of the table's spot row of ``instance_type`` (and the config that points at it)."""
    for index, position in enumerate(prepared.positions):
        if prepared.text["instance_type"][position] == instance_type and (
            prepared.text["pricing_model"][position] == "spot"
        ):
            return index
    raise AssertionError(instance_type)


def test_it_takes_the_first_on_demand_price_of_the_same_type_and_region_in_table_order():
    spot = OFFERS[(OFFERS["instance_type"] == "g6.2xlarge") & (OFFERS["pricing_model"] == "spot")].iloc[[0]]
    on_demand = OFFERS[(OFFERS["instance_type"] == "g6.2xlarge") & (OFFERS["pricing_model"] == "on_demand")]
    region = spot["region"].iloc[0]
    first, second = on_demand.iloc[[0]].copy(), on_demand.iloc[[0]].copy()
    first["price_per_hour_usd"], second["price_per_hour_usd"] = 0.9, 0.5  # the first wins, not the lowest
    elsewhere = on_demand.iloc[[0]].assign(region="elsewhere-1", price_per_hour_usd=0.1)
    no_price = on_demand.iloc[[0]].assign(price_per_hour_usd=None)  # skipped: no price
    table = pd.concat([spot, elsewhere, no_price, first, second], ignore_index=True)
    assert (table["region"].iloc[[0, 2, 3, 4]] == region).all()
    prepared = prepare(table, GPUS, RankingOptions())
    index = _spot_index(prepared, "g6.2xlarge")
    assert on_demand_prices(table, prepared, _Configs([index]), [0]) == {0: 0.9}
    # a spot row with no on-demand sibling gets none; no table, no prices
    assert (
        on_demand_prices(
            table.iloc[[0, 1]], prepare(table.iloc[[0, 1]], GPUS, RankingOptions()), _Configs([0]), [0]
        )
        == {}
    )
    assert on_demand_prices(None, prepared, _Configs([index]), [0]) == {}


def test_a_table_that_is_not_the_prepared_one_is_searched_on_its_own_columns():
    spot = OFFERS[(OFFERS["instance_type"] == "g6.2xlarge") & (OFFERS["pricing_model"] == "spot")].iloc[[0]]
    prepared = prepare(spot, GPUS, RankingOptions())  # one row: positions do not fit a longer table
    others = OFFERS[OFFERS["instance_type"] != "g6.2xlarge"].iloc[:3]
    on_demand = OFFERS[(OFFERS["instance_type"] == "g6.2xlarge") & (OFFERS["pricing_model"] == "on_demand")]
    sibling = on_demand.iloc[[0]].assign(region=spot["region"].iloc[0], price_per_hour_usd=0.7)
    table = pd.concat([others, sibling], ignore_index=True)
    assert on_demand_prices(table, prepared, _Configs([0]), [0]) == {0: 0.7}
