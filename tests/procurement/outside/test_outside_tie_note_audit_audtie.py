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
Strict xfails say what the note should (or should not) say and does not; their cause is located in the product
code (ties.py / rank.py / recommend.py), not fixed here (auditor: no engine change), so they are UNEXPLAINED
in the labelling rules' sense (not FIXED; not a run's artefact).
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


# --- how often it fires ---------------------------------------------------------------------------------------

RANKINGS = [f"example:{name}" for name in EXAMPLES if name != "tco-study"] + list(CASES)


@pytest.mark.django_db
def test_the_note_fires_on_13_of_16_rankings(bundled_catalog):
    """Measured: 2 of the 3 bundled workloads and 11 of the 13 ranking cases carry the note; the three without
    are the 8-GPU full fine-tune and the two pretraining cases pinned to one GPU model (options gpus). A warning
    on four rankings in five (13 / 16 = 81%) is read as boilerplate; see the strict xfail on the serving class's ±56%."""
    fired = {name for name in RANKINGS if _note(name) is not None}
    assert len(RANKINGS) == 16
    assert set(RANKINGS) - fired == {
        "example:full-finetune-8gpu",
        "llama2_7b_pretrain_64_gpus_zero1",
        "llama2_70b_pretrain_tp8_zero1",
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

DOUBTED = (
    "UNEXPLAINED (cause located in the product, not fixed: ties.next_gpu_model reads `selected & fits`, which "
    "keeps the rows configurations.ranked_order ranks below for a doubt; a first row without a doubt is then "
    "'tied' with a row the ranking itself rejects as an answer). "
)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=DOUBTED
    + "QLoRA 65B (cases.json qlora_65b_one_48gb_card): verda 1x H100 spot 17.02 first, the note "
    "names l40s at +2.7%: aws g6e.2xlarge spot 17.49, tight (43.0 GiB peak on a 45.0 GiB card, 51.6 GiB with "
    "headroom), rank 91 of 280; the roomy second row is a100-sxm4-80gb at 18.62 (+9.4%).",
)
def test_qlora_65b_note_does_not_name_a_tight_row(bundled_catalog):
    _, second, rank, _ = _named_second("qlora_65b_one_48gb_card")
    assert not second["tight"], (rank, second["instance_type"])


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=DOUBTED + "Gaudi case (cases.json gaudi_measured_intel): verda 8x B200 spot 34.87 first, the note "
    "names h100-sxm5-80gb at +17.1%: nebius 8x H100 spot 40.82, tight (72.3 GiB peak on 79.6), rank 292 of 439. "
    "The roomy second row shown is aws p5en 8x H200 spot 40.84 (+17.1% too): the H100 named is one no top N shows.",
)
def test_gaudi_case_note_names_a_row_the_ranking_shows(bundled_catalog):
    _, second, rank, _ = _named_second("gaudi_measured_intel")
    assert not second["tight"] and rank <= 10, (rank, second["instance_type"])


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=DOUBTED
    + "Llama 2 70B bf16 serving (cases.json llama2_70b_bf16_serving_mlperf_latency): verda 1x2 "
    "H200 on demand 4,994.79 first, the note names a40 at +1.3%: cudo 4 instances x 4 A40 5,058.45 (16 GPUs "
    "against 2, tight: 40.1 GiB peak on 45.0), rank 54 of 95 (hand 5,058.45 / 4,994.79 = 1.0127).",
)
def test_70b_bf16_serving_note_compares_like_gpu_counts_and_no_tight_row(bundled_catalog):
    first, second, _, _ = _named_second("llama2_70b_bf16_serving_mlperf_latency")
    assert not second["tight"]
    assert second["gpus"] * second["instances"] == first["gpus"] * first["instances"]


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (cause located in the product, not fixed: next_gpu_model ignores the pricing model "
    "and multi_instance_spot, which ranked_order puts last). TinyLlama 16 GPUs, 300 h deadline (cases.json "
    "tinyllama_pretrain_16xa100_deadline): nebius 2x8 B200 on demand 4,526.36 first, the note names "
    "h100-sxm5-80gb at +1.5%: aws p5.48xlarge SPOT on 2 instances 4,592.49, rank 168 of 271 (a job that needs "
    "both spot instances granted at once); the on-demand H100 shown is nebius 5,462.90 (+20.7%).",
)
def test_tinyllama_note_compares_the_same_pricing_model(bundled_catalog):
    first, second, _, _ = _named_second("tinyllama_pretrain_16xa100_deadline")
    assert second["pricing_model"] == first["pricing_model"]


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (cause located in the product, not fixed: next_gpu_model ignores the pricing model). "
    "MLPerf LoRA 70B (cases.json mlperf_lora_llama2_70b_8xa100): runpod 8x L40S ON DEMAND 27.12 first, the "
    "note names b200 at +7.9%: verda 8x B200 SPOT 29.25 (hand 29.25 / 27.12 = 1.0785). The 7.9% is a spot "
    "discount against an on-demand price, not a speed question; a buyer who must run on demand is not told "
    "the on-demand B200's gap.",
)
def test_mlperf_lora_note_compares_the_same_pricing_model(bundled_catalog):
    first, second, _, _ = _named_second("mlperf_lora_llama2_70b_8xa100")
    assert second["pricing_model"] == first["pricing_model"]


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (cause located in the product, not fixed: tie_note's sentence names the GPU model "
    "only). examples/serve-70b.yaml: verda 5 x 4A100.88V on demand 18,880.25 (20 A100) first, the note names "
    "mi300x at +15.8%: runpod 3 x 4x_MI300X_SECURE 21,858.65 (12 MI300X), rank 3 (hand 21,858.65 / 18,880.25 "
    "= 1.1578). Different GPU counts; the sentence gives neither the count, the provider nor the instance, so "
    "the buyer cannot find the row to 'measure both'.",
)
def test_serve_70b_note_says_which_configuration_it_compares(bundled_catalog):
    match = _note("example:serve-70b")
    _, second, _, _ = _named_second("example:serve-70b")
    assert second["instance_type"] in match.string or f"{second['instances']} x" in match.string


# --- is N% the right error? --------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (cause located in the product, not fixed: ties.stated_speed_error quotes the class's "
    "pooled 90th-percentile absolute error, 0.5615 for serving_dense, whose median is 0.0931 and whose "
    "validation p90 0.8712 rests on 7 runs). cases.json llama2_70b_serving_mi300x_vs_h100: runpod 8x RTX A6000 "
    "2,906.99 first, 'a tie' with lium 8x RTX 6000 Ada 4,074.99 (hand +40.2%). The pooled error holds errors "
    "common to both cards of one workload (framework, batch, latency model), which cancel in a ranking; the "
    "product's own cross-card ratio checks miss by less (MLPerf LoRA B200/H100 2.825 vs 2.380, +18.7%, "
    "test_outside_recommendations.py RELABEL48_B200_H100_LORA). A 40% gap called a tie is noise.",
)
def test_a_40_percent_gap_is_not_called_a_tie(bundled_catalog):
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
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (cause located in the product, not fixed: recommend.render_table prints no row "
    "warnings at all, so `manage.py recommend examples/lora-finetune.yaml`, the default table, never shows "
    "the note the JSON carries).",
)
def test_the_note_is_in_the_default_text_table(bundled_catalog):
    out = io.StringIO()
    call_command("recommend", str(ROOT / "examples" / "lora-finetune.yaml"), stdout=out)
    assert TIE_PREFIX in out.getvalue()
