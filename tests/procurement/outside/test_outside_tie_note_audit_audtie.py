"""Outside audit (audtie) of fix51n's tie note (procurement/ranking/ties.py, called from rank._add_tie_note).

The buyer's question: when the first row says "X and Y are a tie at ±N%", can I defend the first row to finance
and find Y? Judged on the bundled examples (examples/*.yaml, what `manage.py recommend` ranks) and the ranking
cases of tests/procurement/outside/cases.json (each a published run an earlier round chose; their sources are in
tests/procurement/outside/test_outside_recommendations.py), ranked through the same service the command uses
(``workload_spec_parse`` -> ``ranking_options_parse`` -> ``recommendation_compute``) on the bundled catalog.

Read: the change (fix51n f1cfbe67, ed7b67ee): ties.py next_gpu_model takes every configuration that is
``selected & fits`` on another GPU model costing at least the first row's; configurations.ranked_order ranks the
same rows with doubts (tight, unstated link, host doubt, consumer split, multi-instance spot) below the roomy ones,
so a "next GPU model" can be a row the ranking itself puts hundreds of rows down. tie_note compares the cost gap
with the first row's accuracy.throughput p90_abs_error (the class's 90th-percentile held-out error: 0.5615 for
inference/throughput/serving_dense, 0.3351 LoRA, 0.3106 full fine-tunes, 0.1895 pretraining, read from the rows).
recommend.render_table (the command's default format) prints no row warnings; the web page puts them in the
collapsed "Why" <details> (procurement/templates/procurement/_recommendation_rows.html line 29); the spot report
(procurement/reports/kinds/spot.py) reads no warnings.

Hand figures are the rows' own totals (USD, bundled catalog): gap = second / first - 1.
The 8 strict xfails audtie wrote (UNEXPLAINED, cause located in ties.py / rank.py / recommend.py) are FIXED by
fixtie: each test's docstring keeps its before and says its after.
"""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from procurement.ranking.ties import TIE_PREFIX
from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)

ROOT = Path(__file__).resolve().parents[3]
CASES = json.loads((Path(__file__).parent / "cases.json").read_text(encoding="utf-8"))["cases"]
EXAMPLES = {p.stem: yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples").glob("*.yaml"))}
NOTE = re.compile(
    r"within the model's error: (?P<first>\S+) and (?P<second>\S+) are a tie at ±(?P<error>\d+)% "
    r"\(\S+ costs (?P<gap>[\d.]+)% more"
)
WIDE = 500  # the most rows --top allows: where the named second sits in the full ranking


def _ranked(name: str, top: int = 10) -> list[dict]:
    if name.startswith("example:"):
        spec, options = EXAMPLES[name.split(":", 1)[1]], {}
    else:
        spec, options = CASES[name]["spec"], CASES[name]["options"]
    parsed = ranking_options_parse({"top": top} | options)
    return recommendation_compute(spec=workload_spec_parse(copy.deepcopy(spec)), options=parsed).as_report()[
        "results"
    ]


def _first(rows: list[dict]) -> dict:
    return next(row for row in rows if row["fits"] and row["total_cost"] is not None)


def _note(name: str) -> re.Match | None:
    first = _first(_ranked(name))
    notes = [warning for warning in first["warnings"] if warning.startswith(TIE_PREFIX)]
    assert len(notes) <= 1, notes
    return NOTE.match(notes[0]) if notes else None


def _named_second(name: str) -> tuple[dict, dict, int, int]:
    """(first row, the row the note names, its rank from 1, rows ranked): the named GPU's fitting row whose
    total is the first row's times (1 + the stated gap), within the note's 0.1% rounding."""
    match = _note(name)
    assert match is not None
    rows = _ranked(name, WIDE)
    first = _first(rows)
    target = float(first["total_cost"]) * (1 + float(match["gap"]) / 100)
    hits = [
        n
        for n, row in enumerate(rows)
        if row["gpu"] == match["second"]
        and row["fits"]
        and abs(float(row["total_cost"]) - target) <= 0.0006 * target + 0.005
    ]
    assert hits, (name, match.group(0), target)
    return first, rows[hits[0]], hits[0] + 1, len(rows)


def _named_or_none(name: str) -> tuple[dict, dict, int, int] | None:
    """_named_second where the note fires, else None (fixtie: a note that no longer fires names no row)."""
    return _named_second(name) if _note(name) is not None else None


# --- how often it fires ---------------------------------------------------------------------------------------

RANKINGS = [f"example:{name}" for name in EXAMPLES if name != "tco-study"] + list(CASES)


@pytest.mark.django_db
def test_the_note_fires_on_5_of_16_rankings(bundled_catalog):
    """Before (audtie): 13 of 16 (81%). After fixtie (like-for-like second, the class median error, at least 5
    held-out cases): 5 of 16 (31%), each a pair a buyer would weigh: lora-finetune H100 / B200 spot 8.43 / 8.96
    (+6.3% at ±9%, LoRA median 0.0923 over 44 cases), lora_8b_32k H100 / B200 spot (+7.9% at ±9%), alpaca 8x A6000
    / p4d 8x A100-40GB spot (+1.6% at ±11%, full fine-tune median 0.1064 over 12), BERT L4 / T4 spot (+3.1% at
    ±11%), Mixtral serving 4x L40 / 4x L40S on demand (+14.7% at ±20%, serving_moe median 0.2021 over 22)."""
    fired = {name for name in RANKINGS if _note(name) is not None}
    assert len(RANKINGS) == 16
    assert fired == {
        "example:lora-finetune",
        "lora_8b_32k_attention",
        "alpaca_full_ft_spot_deadline",
        "bert_base_squad_one_card",
        "mixtral_serving_mlperf_latency",
    }


# --- controls: the note must not fire --------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("case", ["llama2_7b_pretrain_64_gpus_zero1", "llama2_70b_pretrain_tp8_zero1"])
def test_control_one_gpu_model_asked_for_carries_no_note(bundled_catalog, case):
    """options gpus ['a100-sxm4-80gb']: every row is one GPU model, whose speed error is common to all rows; the
    order is by price alone (ties.py's own model assumption)."""
    rows = _ranked(case)
    assert {row["gpu"] for row in rows} == {"a100-sxm4-80gb"}
    assert _note(case) is None


@pytest.mark.django_db
def test_control_full_finetune_example_b200_lead_over_error(bundled_catalog):
    """examples/full-finetune-8gpu.yaml: verda 8x B200 spot 52.74 first, nebius 8x H100 spot 69.38 next (hand:
    69.38 / 52.74 = 1.316, +31.6%) against the full fine-tune class's ±31% (p90 0.3106): no note, correctly."""
    rows = _ranked("example:full-finetune-8gpu")
    first = _first(rows)
    assert (first["gpu"], first["total_cost"]) == ("b200", "52.74")
    error = first["accuracy"]["throughput"]["p90_abs_error"]
    assert 69.38 / 52.74 - 1 > error
    assert _note("example:full-finetune-8gpu") is None


# --- what it says where it fires on like-for-like pairs (pass) ------------------------------------------------


@pytest.mark.django_db
def test_lora_example_h100_and_b200_one_gpu_spot_rows_named_at_the_lora_class_error(bundled_catalog):
    """examples/lora-finetune.yaml: verda 1x H100 spot 8.43 and verda 1x B200 spot 8.96 (hand 8.96 / 8.43 =
    1.0629, +6.3%) at ±34% (LoRA class p90 0.3351): like for like (one GPU, spot both, one provider), and the
    named B200 is the second row shown."""
    first, second, rank, _ = _named_second("example:lora-finetune")
    assert (first["gpu"], first["total_cost"], second["gpu"], second["total_cost"]) == (
        "h100-sxm5-80gb",
        "8.43",
        "b200",
        "8.96",
    )
    assert rank == 2 and second["pricing_model"] == first["pricing_model"] == "spot"
    assert second["gpus"] == first["gpus"] == 1
    assert _note("example:lora-finetune")["gap"] == f"{8.96 / 8.43 * 100 - 100:.1f}"


# --- what it should not say: pairs that are not like for like ---------------------------------------------------

# FIXED (fixtie): the six strict xfails below held until ties.next_gpu_model compared only like for like (no
# more doubts than the first row, as configurations.ranked_order counts them; the same pricing model; the stated
# plan shape) and the error quoted became the class median. Each case's before is kept in its docstring; after,
# four of them carry no note (their like-for-like second is past the median error) and the assertion is that a
# note, where one fires, names a like-for-like row.


@pytest.mark.django_db
def test_qlora_65b_note_does_not_name_a_tight_row(bundled_catalog):
    """Before: verda 1x H100 spot 17.02 first, the note named a TIGHT aws g6e.2xlarge L40S spot 17.49 (+2.7%, rank
    91 of 280). After: no note (the roomy like-for-like second, an A100 at 18.62, +9.4%, is past the QLoRA class
    median, ±7%)."""
    named = _named_or_none("qlora_65b_one_48gb_card")
    assert named is None or not named[1]["tight"], named


@pytest.mark.django_db
def test_gaudi_case_note_names_a_row_the_ranking_shows(bundled_catalog):
    """Before: verda 8x B200 spot 34.87 first, the note named a TIGHT nebius 8x H100 spot 40.82 (+17.1%, rank 292
    of 439). After: no note (+17.1% is past the full fine-tune / pretrain median)."""
    named = _named_or_none("gaudi_measured_intel")
    assert named is None or (not named[1]["tight"] and named[2] <= 10), named


@pytest.mark.django_db
def test_70b_bf16_serving_note_compares_like_gpu_counts_and_no_tight_row(bundled_catalog):
    """Before: verda 1x2 H200 on demand 4,994.79 first, the note named a TIGHT cudo 4 x 4 A40 5,058.45 (16 GPUs
    against 2, rank 54 of 95). After: no note."""
    named = _named_or_none("llama2_70b_bf16_serving_mlperf_latency")
    if named is not None:
        first, second, _, _ = named
        assert not second["tight"]
        assert second["gpus"] * second["instances"] == first["gpus"] * first["instances"]


@pytest.mark.django_db
def test_tinyllama_note_compares_the_same_pricing_model(bundled_catalog):
    """Before: nebius 2x8 B200 on demand 4,526.36 first, the note named a 2-instance SPOT p5 4,592.49 (+1.5%, rank
    168 of 271). After: no note (the on-demand H100, nebius 5,462.90, +20.7%, is past the pretrain median ±7%)."""
    named = _named_or_none("tinyllama_pretrain_16xa100_deadline")
    assert named is None or named[1]["pricing_model"] == named[0]["pricing_model"], named


@pytest.mark.django_db
def test_mlperf_lora_note_compares_the_same_pricing_model(bundled_catalog):
    """Before: runpod 8x L40S ON DEMAND 27.12 first, the note named verda 8x B200 SPOT 29.25 (+7.9%, a spot
    discount). After: no note (no on-demand configuration on another GPU within the LoRA median ±9%)."""
    named = _named_or_none("mlperf_lora_llama2_70b_8xa100")
    assert named is None or named[1]["pricing_model"] == named[0]["pricing_model"], named


@pytest.mark.django_db
@pytest.mark.parametrize(
    "case", ["example:serve-70b", "example:lora-finetune", "mixtral_serving_mlperf_latency"]
)
def test_serve_70b_note_says_which_configuration_it_compares(bundled_catalog, case):
    """Before: serve-70b's note named mi300x at +15.8% (3 x 4 MI300X against 5 x 4 A100) with no count, provider
    or instance. After: serve-70b carries no note (+15.8% past the serving_dense median ±9%); where the note fires
    (lora-finetune, Mixtral serving) it names the provider, the instance, instances x GPUs, the pricing model and
    the named row's rank, which is that row's place in --top 500."""
    match = _note(case)
    if match is None:
        assert case == "example:serve-70b"
        return
    _, second, rank, _ = _named_second(case)
    assert second["instance_type"] in match.string and second["provider"] in match.string
    assert f"{second['instances']} x {second['gpus_per_instance']} " in match.string
    assert f"rank {rank} in the list" in match.string


# --- is N% the right error? --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_40_percent_gap_is_not_called_a_tie(bundled_catalog):
    """FIXED (fixtie). Before: runpod 8x RTX A6000 2,906.99 'a tie' with lium 8x RTX 6000 Ada 4,074.99 (+40.2%) at
    the serving_dense pooled p90 ±56%. After: the class median, 0.0931 over 160 held-out cases, is quoted: no note."""
    match = _note("llama2_70b_serving_mi300x_vs_h100")
    assert match is None or float(match["gap"]) < 25.0, match.group(0)


# --- where a user reads it --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_note_is_in_the_json_answer(bundled_catalog, tmp_path):
    out = io.StringIO()
    call_command("recommend", str(ROOT / "examples" / "lora-finetune.yaml"), "--format", "json", stdout=out)
    first = json.loads(out.getvalue())["results"][0]
    assert any(warning.startswith(TIE_PREFIX) for warning in first["warnings"])


@pytest.mark.django_db
def test_the_note_is_in_the_default_text_table(bundled_catalog):
    """FIXED (fixtie): recommend.render_table prints the note on the line under the first row."""
    out = io.StringIO()
    call_command("recommend", str(ROOT / "examples" / "lora-finetune.yaml"), stdout=out)
    lines = out.getvalue().splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("  1 "))
    assert lines[first + 1].strip().startswith(TIE_PREFIX)
