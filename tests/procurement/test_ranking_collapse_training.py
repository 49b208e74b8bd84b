"""Training rankings collapse identical rows too (ranking/collapse.py, issue 26).

Outside round 4 (tests/procurement/outside/test_outside_recommendations_x26b.py, case 4): the top five of the
Qwen3-30B-A3B plan on 16 GPUs held the same Nebius H200 node (2 x 8 GPUs, same plan, 8.13 h, 634.41 USD) three
times, in us-central1, eu-west1 and eu-north1. Expected: one row saying "also in" the other two, the next
distinct offers moving up, and no row cheaper than a kept one folded away.
"""

import copy
from dataclasses import replace

import pytest

from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)
from tests.procurement.outside.test_outside_recommendations_x26b import QWEN3_MOE_H100


def _rows(collapse: bool | None, top: int = 5) -> list[dict]:
    options = ranking_options_parse({"top": top})
    if collapse is not None:
        options = replace(options, collapse_identical=collapse)
    spec = workload_spec_parse(copy.deepcopy(QWEN3_MOE_H100))
    return recommendation_compute(spec=spec, options=options).as_report()["results"]


def _identity(row: dict) -> tuple:
    return (
        row["provider"],
        row["instance_type"],
        row["pricing_model"],
        row["effective_price_per_hour"],
        row["total_cost"],
        round(row["hours"], 6),
    )


@pytest.mark.django_db
def test_the_same_node_in_three_regions_is_one_row(bundled_catalog):
    every = _rows(False, top=20)
    collapsed = _rows(None)
    h200 = [row for row in every[:5] if row["instance_type"].startswith("gpu-h200")]
    assert len({_identity(row) for row in h200}) == 1 and len(h200) == 3  # the duplicates of the report
    identities = [_identity(row) for row in collapsed]
    assert len(identities) == len(set(identities)) == 5
    kept = next(row for row in collapsed if row["instance_type"].startswith("gpu-h200"))
    assert sorted([kept["region"], *kept["also_in"]]) == sorted(row["region"] for row in h200)
    assert any(reason.startswith("also in 2 regions") for reason in kept["reasons"])
    # nothing cheaper is lost: the collapsed list is the uncollapsed one with the repeats taken out
    distinct = []
    for row in every:
        if _identity(row) not in {_identity(seen) for seen in distinct}:
            distinct.append(row)
    assert [_identity(row) for row in distinct[:5]] == identities


def test_every_regions_row_is_asked_for_through_the_service_and_the_command():
    """`collapse_identical: false` (docs/cost-model.md) goes through the option parser the API uses, and
    `manage.py recommend --every-region` sets it (outside round x26c found it refused as an unknown option)."""
    from procurement.management.commands.recommend import Command

    assert ranking_options_parse({"collapse_identical": False}).collapse_identical is False
    assert ranking_options_parse({}).collapse_identical is None  # the default: collapse
    with pytest.raises(Exception, match="collapse_identical"):
        ranking_options_parse({"collapse_identical": "sometimes"})
    parser = Command().create_parser("manage.py", "recommend")
    assert parser.parse_args(["spec.yaml", "--every-region"]).every_region is True
