"""AWS Spot Advisor JSON: bands from the file's own ranges, Linux only, errors naming the JSON path."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from pricing.price_checks import OUT_OF_RANGE, Refusals
from pricing.providers.records import SourceRowError
from pricing.providers.spot_advisor import parse_spot_advisor, read_spot_advisor

SNAPSHOT = dt.datetime(2022, 7, 23, tzinfo=dt.UTC)
BUNDLED = Path(__file__).resolve().parents[3] / "pricing/data/spot_advisor/spot-advisor-data-2022-07-23.json"
OLDER = Path(__file__).resolve().parent / "recorded/real/spot-advisor-data-2022-07-09.json.gz"
RANGES = [
    {"dots": 0, "index": 0, "max": 5, "label": "<5%"},
    {"dots": 1, "index": 1, "max": 11, "label": "5-10%"},
    {"dots": 2, "index": 2, "max": 16, "label": "10-15%"},
    {"dots": 3, "index": 3, "max": 22, "label": "15-20%"},
    {"dots": 4, "index": 4, "max": 100, "label": ">20%"},
]


def advisor(linux: dict, windows: dict | None = None, ranges: list | None = None) -> dict:
    return {
        "spot_advisor": {"us-east-1": {"Linux": linux, "Windows": windows or {}}},
        "ranges": RANGES if ranges is None else ranges,
    }


def parse(data: dict, **kwargs):
    return list(parse_spot_advisor(data, observed_at=SNAPSHOT, source="test", **kwargs))


def test_it_reads_bands_and_savings_for_linux_only():
    records = parse(advisor({"g5.xlarge": {"r": 0, "s": 70}}, windows={"g5.2xlarge": {"r": 4, "s": 50}}))
    assert [
        (r.region, r.instance_type, r.interruption_band, r.interruption_label, r.savings_pct) for r in records
    ] == [("us-east-1", "g5.xlarge", 0, "<5%", 70)]
    assert records[0].observed_at == SNAPSHOT


def test_it_takes_labels_from_the_file_ranges():
    renamed = [{**entry, "label": f"band {entry['index']}"} for entry in RANGES]
    (record,) = parse(advisor({"p4d.24xlarge": {"r": 3, "s": 60}}, ranges=renamed))
    assert record.interruption_label == "band 3"


def test_it_keeps_only_the_requested_instance_types():
    data = advisor({"g5.xlarge": {"r": 0, "s": 70}, "c5.large": {"r": 1, "s": 60}})
    assert [r.instance_type for r in parse(data, instance_types={"g5.xlarge"})] == ["g5.xlarge"]


@pytest.mark.parametrize(
    ("advice", "field"),
    [
        ({"r": 7, "s": 70}, "spot_advisor.us-east-1.Linux.g5.xlarge.r"),
        ({"s": 70}, "spot_advisor.us-east-1.Linux.g5.xlarge.r"),
        ({"r": 1, "s": 170}, "spot_advisor.us-east-1.Linux.g5.xlarge.s"),
        ("high", "spot_advisor.us-east-1.Linux.g5.xlarge"),
    ],
)
def test_a_bad_entry_is_refused_with_its_json_path_and_the_rest_lands(advice, field):
    refusals = Refusals()
    records = parse(advisor({"g5.xlarge": advice, "p3.2xlarge": {"r": 4, "s": 70}}), refusals=refusals)
    assert [r.instance_type for r in records] == ["p3.2xlarge"]
    assert refusals.counts == {OUT_OF_RANGE: 1}
    assert field in refusals.examples[OUT_OF_RANGE][0]


def test_one_out_of_range_row_in_the_real_snapshot_costs_only_that_row():
    """The real 2022-07-23 advisor file (pricing/data/spot_advisor/PROVENANCE.md) with one entry's band
    set out of range: the other 6,725 Linux bands of the file still load, the bad one is refused."""
    data = json.loads(BUNDLED.read_text())
    data["spot_advisor"]["us-east-1"]["Linux"]["p3.2xlarge"]["r"] = 9
    refusals = Refusals()
    records = parse(data, refusals=refusals)
    assert len(records) == 6726 - 1
    assert ("us-east-1", "p3.2xlarge") not in {(r.region, r.instance_type) for r in records}
    assert refusals.counts == {OUT_OF_RANGE: 1}
    assert "spot_advisor.us-east-1.Linux.p3.2xlarge.r" in refusals.examples[OUT_OF_RANGE][0]


def test_the_older_real_snapshot_reads_whole():
    """The 2022-07-09 advisor file (/work/shared data, same curation, PROVENANCE.md): every Linux row
    is in range, so nothing is refused (a count a reader that refused real rows would miss)."""
    raw = json.loads(gzip.open(OLDER).read())
    refusals = Refusals()
    records = parse(raw, refusals=refusals)
    assert len(records) == sum(len(systems.get("Linux", {})) for systems in raw["spot_advisor"].values())
    assert refusals.total == 0


def test_it_refuses_a_file_without_ranges():
    with pytest.raises(SourceRowError, match="band labels") as error:
        parse(advisor({}, ranges=[]))
    assert error.value.field == "ranges"


def test_it_names_line_and_column_of_broken_json(tmp_path):
    path = tmp_path / "spot-advisor-data.json"
    path.write_text('{"ranges": [\n  {"index": 0,, "label": "<5%"}]}')
    with pytest.raises(SourceRowError) as error:
        list(read_spot_advisor(path, observed_at=SNAPSHOT))
    assert error.value.location == f"{path}:2:15"  # the second comma


def test_it_reads_the_bundled_snapshot():
    records = list(read_spot_advisor(BUNDLED, observed_at=SNAPSHOT))
    raw = json.loads(BUNDLED.read_text())["spot_advisor"]
    assert len(records) == sum(len(systems["Linux"]) for systems in raw.values()) == 6726
    # In the 2022-07-23 snapshot, us-east-1 p3.2xlarge: {"r": 4, "s": 70}; g5.xlarge: {"r": 0, "s": 70}.
    by_key = {(r.region, r.instance_type): r for r in records}
    p3 = by_key["us-east-1", "p3.2xlarge"]
    assert (p3.interruption_label, p3.savings_pct) == (">20%", 70)
    assert by_key["us-east-1", "g5.xlarge"].interruption_label == "<5%"
    assert {r.source for r in records} == {"spot-advisor:spot-advisor-data-2022-07-23.json"}
