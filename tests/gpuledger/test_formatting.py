"""The page filters: each figure checked against the text a person should read."""

from decimal import Decimal

import pytest
from django.template import Context, Template
from hypothesis import given
from hypothesis import strategies as st

from gpuledger.templatetags import formatting as f


@pytest.mark.parametrize(
    ("value", "currency", "text"),
    [
        (Decimal("312345.6"), "USD", "312,345.60 USD"),
        ("1234567.891", "", "1,234,567.89"),
        (Decimal("-2500"), "EUR", "-2,500.00 EUR"),
        (Decimal("-0.001"), "", "0.00"),  # rounds to zero: no minus sign
        (None, "USD", "—"),
        ("not a number", "USD", "—"),
    ],
)
def test_money_groups_thousands_with_two_decimals(value, currency, text):
    assert f.money(value, currency) == text


def test_hourly_keeps_up_to_four_decimals_and_at_least_two():
    assert f.hourly(Decimal("2.99")) == "2.99"
    assert f.hourly(Decimal("0.262936800")) == "0.2629"  # 1.88 CNY x 0.13986 USD/CNY
    assert f.hourly(Decimal("98.32"), "USD") == "98.32 USD/h"
    assert f.hourly(Decimal("1234.5")) == "1,234.50"


def test_gib_percent_and_number():
    assert f.gib(12.345) == "12.3 GiB"
    assert f.gib(12.345, 2) == "12.35 GiB"
    assert f.gib(None) == "—"
    assert f.gib(float("nan")) == "—"
    assert f.percent(0.8) == "80%"
    assert f.percent(0.7594, 1) == "75.9%"
    assert f.percent(1.25) == "125%"
    assert f.number(1234567.891) == "1,234,568"
    assert f.number("2048") == "2,048"


def test_hours_adds_days_for_long_runs():
    assert f.hours(5.25) == "5.2 h"  # banker's rounding of 5.25 at one decimal (format uses round-half-even)
    assert f.hours(130.25) == "130.2 h (5.4 days)"  # 130.25 / 24 = 5.427
    assert f.hours(None) == "—"


def test_quantity_says_billions_and_millions():
    # Llama-3.1-8B: 8,030,261,248 parameters (Meta model card)
    assert f.quantity(8030261248) == "8.03 billion"
    assert f.quantity(4.2e6) == "4.2 million"
    assert f.quantity(1.5e12) == "1.5 trillion"
    assert f.quantity(512) == "512"
    assert f.quantity(None) == "—"


def test_speed_keeps_three_significant_figures():
    assert f.speed(12345.6) == "12,346"
    assert f.speed(45.678) == "45.7"
    assert f.speed(0.01234) == "0.0123"
    assert f.speed(0) == "0"


def test_labels_and_words_replace_engine_keys():
    assert f.label("kv_cache_gib") == "KV cache (GiB)"
    assert f.label("training_tokens_per_second") == "Training speed (tokens/s)"
    assert f.label("disk_for_checkpoints_gb") == "Disk for checkpoints (GB)"
    assert f.label("time_to_first_token_seconds") == "Time to first token (s)"
    assert f.words("does_not_fit") == "does not fit"
    assert f.words(None) == "—"


def test_plain_never_shows_a_python_repr():
    assert f.plain(["aws", "lambda"]) == "aws, lambda"
    assert f.plain({"pricing_model": "on_demand", "gpus": [8]}) == "pricing model: on_demand; gpus: 8"
    assert f.plain(True) == "yes" and f.plain(None) == "—" and f.plain([]) == "—"
    for value in (["a"], {"a": 1}, ("x", None)):
        text = f.plain(value)
        assert "[" not in text and "{" not in text and "'" not in text and "None" not in text


def test_unique_drops_repeats_ignoring_case_and_a_final_full_stop():
    items = ["use bf16", "Use bf16.", "consumer card", "use bf16"]
    assert f.unique(items) == ["use bf16", "consumer card"]
    assert f.unique(None) == []


def test_the_filters_load_in_a_template():
    html = Template("{% load formatting %}{{ a|money:'USD' }} {{ b|percent }} {{ c|gib }}").render(
        Context({"a": Decimal("1000"), "b": 0.5, "c": 3})
    )
    assert html == "1,000.00 USD 50% 3.0 GiB"


def test_json_plain_reads_a_stored_json_text():
    assert f.json_plain('{"region": "us-east-1", "hours": 168}') == "region: us-east-1; hours: 168"
    assert f.json_plain("{}") == "—" and f.json_plain("not json") == "not json"


def test_name_drops_the_unit_a_formatted_value_already_carries():
    assert f.name("kv_cache_gib") == "KV cache"
    assert f.name("training_hours") == "Training time"
    # pres26: communication_share is all traffic against compute plus traffic, not a share of step time
    assert f.name("communication_share") == "Communication, all traffic, hidden or not"
    assert f.name("exposed_communication_share") == "Exposed communication, share of step time"


# --- properties -----------------------------------------------------------------------------------

amounts = st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, allow_infinity=False, places=6)


@given(amounts)
def test_money_reads_back_as_the_amount_rounded_to_cents(amount):
    text = f.money(amount, "USD")
    assert text.endswith(" USD")
    digits = text.removesuffix(" USD")
    assert Decimal(digits.replace(",", "")) == amount.quantize(Decimal("0.01")) or (
        amount.quantize(Decimal("0.01")) == 0 and Decimal(digits.replace(",", "")) == 0
    )
    whole = digits.lstrip("-").split(".")[0]
    assert all(len(group) == 3 for group in whole.split(",")[1:]) and len(whole.split(",")[0]) <= 3


@given(st.floats(min_value=0, max_value=10, allow_nan=False))
def test_percent_is_a_hundred_times_the_fraction(fraction):
    text = f.percent(fraction, 1)
    assert text.endswith("%")
    assert abs(float(text[:-1].replace(",", "")) - fraction * 100) <= 0.05 + 1e-9


@given(st.lists(st.sampled_from(["a", "A.", "b", " b ", "c"]), max_size=8))
def test_unique_keeps_first_occurrences_in_order(items):
    kept = f.unique(items)
    keys = [str(item).strip().rstrip(".").lower() for item in kept]
    assert len(keys) == len(set(keys))
    assert set(keys) == {str(item).strip().rstrip(".").lower() for item in items}


def test_a_gpu_hour_price_reads_at_most_four_decimals_with_thousands_separators():
    # The catalog keeps 6 decimals (p4d.24xlarge 21.957642 USD/h in us-east-1, SkyPilot's AWS catalog);
    # a table shows 4 and the export/API keep them all (issue 30).
    assert f.hourly(Decimal("21.957642")) == "21.9576"
    assert f.hourly(Decimal("2.744705"), "USD") == "2.7447 USD/h"
    assert f.hourly(Decimal("12345.678901")) == "12,345.6789"
    html = Template("{% load formatting %}{{ p|hourly }} {{ m|money:'USD' }} {{ s|percent:1 }}").render(
        Context({"p": Decimal("55.040000"), "m": Decimal("1112.50"), "s": 0.3123})
    )
    assert html == "55.04 1,112.50 USD 31.2%"
