"""Outside audit aud47b (stop 47) of band47's measured accuracy, 0a4cad25 (issue 26 item 7, "estimates within 15%"):
procurement/sizing/accuracy.py and the committed class table procurement/data/reference/accuracy_classes.json.

Three questions an expert who signs the numbers asks of the sentence "within 15% on 19 of 24 published runs of
pretraining (median error 7%)" next to an estimate:

1. Is the evidence honest? The class table counts every row of docs/validation.md, including the rows the
   engine's constants were fitted on (named in procurement/sizing/assumptions.py and validation.py), and none of
   the ~3,000 outside cases of tests/procurement/outside. Pretraining and LoRA speed are worked here.
2. Is the class right? Six real workloads through POST /api/size/, and the word rule that files image cases.
3. Does the stale-file test fail when an engine change moves the table? Proved by a monkeypatch.

Failures of the product are strict xfails with their diagnosis. Nothing here edits product code.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from procurement.sizing import mfu, parse_workload_spec
from procurement.sizing.accuracy import (
    ACCURACY_CLASSES_JSON,
    OUTSIDE_ACCURACY_JSON,
    accuracy_classes,
    class_summary,
    outside_ledger,
    workload_accuracy,
)
from procurement.sizing.accuracy_build import accuracy_document, published_errors
from procurement.sizing.image_presets import image_presets
from tests.procurement.sizing.image_case_words import image_case_family

# ----------------------------------------------------------------------------------------------------------------
# 1. Honesty of the evidence
# ----------------------------------------------------------------------------------------------------------------

# The pretraining rows of docs/validation.md that a constant the engine prices them with was FITTED on (in-sample):
#  - assumptions.MFU_PRETRAIN_AMPERE (0.51): "reproduces LLaMA-1 Table 15's GPU-hours on average (7B -11.5%, 13B
#    +7.4%, 33B -1.3%, 65B +8.0%)": the four llama1-*-gpuhours rows, and llama1-65b-train-tps is the same run
#    (LLaMA-65B, 2,048 A100, 380 tokens/s/GPU, the paper's figure Table 15's GPU-hours come from);
#  - validation.MEGATRON_HOPPER_FITS: "the fit rows of the Megatron stack's 16-bit Hopper ceiling" (the two NeMo
#    24.09 rows);
#  - validation.py (eff42): "the three checkpointed rows are fit rows of recompute_forward_time_share (0.35)"
#    (MPT 13B / 30B / 70B on 128 H100).
PRETRAIN_FIT_ROWS = (
    "llama1-7b-gpuhours",
    "llama1-13b-gpuhours",
    "llama1-33b-gpuhours",
    "llama1-65b-gpuhours",
    "llama1-65b-train-tps",
    "nemo2409-llama31-8b-8xh100-bf16-tps",
    "nemo2409-llama31-70b-64xh100-bf16-tps",
    "mpt-13b-128xh100-tps",
    "mpt-30b-128xh100-tps",
    "mpt-70b-128xh100-tps",
)
# The inference class's in-sample rows: validation.py "prefill efficiencies are fitted on the v0.9.0 7B first tokens
# (fit points, in-sample)", explanation="Fit point."
INFERENCE_FIT_ROWS = ("trtllm-v090-a100-fp16-llama2-7b-ttft", "trtllm-v090-h100-fp8-llama2-7b-ttft")

# The outside cases' error distribution (aud47b, measured, not fitted): tests/procurement/outside run whole at this
# commit (968 tests: 811 passed, 157 strict xfails; 2 xdist workers) with a plugin that logged every pytest.approx
# comparison (expected, actual, rel) with the family (accuracy.workload_family) of every spec sized during that test.
# A comparison at rel 0.15 (0.10) in a test that sized specs of one language family only is one throughput (memory)
# case of that family, passing and strict-xfail cases alike. Ratios a test compares (ms-swift's 1.8B-over-7B
# speed) count as cases: they are estimates the product makes. Image tests compare through their own helper
# (_within) and are not counted. class -> (comparisons, median |error|, p90 |error|, within target):
OUTSIDE_SWEEP = {
    "pretrain/throughput": (108, 0.080, 0.190, 91),  # the class table: 24, 0.066, 0.196, 19
    "lora/throughput": (39, 0.112, 0.330, 24),  # the class table: 2, 0.466, 0.568, 0
    "inference/throughput": (198, 0.111, 0.808, 119),  # the class table: 20, 0.032, 0.296, 15
    "pretrain/memory": (16, 0.046, 0.113, 13),  # the class table: no case
    "inference/memory": (16, 0.028, 0.087, 16),  # the class table: 1 case
}


def _errors() -> dict:
    return {error.reference_id: error for error in published_errors()}


def _class_rows(errors: dict, key: str) -> list:
    family, metric = key.split("/")
    return [error for error in errors.values() if error.family == family and error.metric == metric]


def test_the_pretraining_class_counts_ten_rows_its_constants_were_fitted_on():
    # Held out (14 rows): 9 within 15%, median 7.6%, p90 54.8%. In sample (10 rows): 10 within, median 5.8%,
    # p90 8.2%. The class table says 19 of 24 (79%), median 6.6%, p90 19.6%: it blends the two. The outside sweep
    # (OUTSIDE_SWEEP: 91 of 108, 84%, median 8.0%, p90 19.0%) happens to back the blended figure.
    errors = _errors()
    rows = _class_rows(errors, "pretrain/throughput")
    assert set(PRETRAIN_FIT_ROWS) <= {row.reference_id for row in rows}
    fitted = class_summary([row.error for row in rows if row.reference_id in PRETRAIN_FIT_ROWS], 0.15)
    held_out = class_summary([row.error for row in rows if row.reference_id not in PRETRAIN_FIT_ROWS], 0.15)
    assert (fitted["cases"], fitted["within_target"]) == (10, 10)
    assert fitted["median_abs_error"] == pytest.approx(0.0583, abs=0.002)
    assert (held_out["cases"], held_out["within_target"]) == (14, 9)
    assert held_out["median_abs_error"] == pytest.approx(0.0756, abs=0.002)
    assert held_out["p90_abs_error"] == pytest.approx(0.548, abs=0.01)
    # fix47b: the class's headline now counts held-out cases only (the validation table's and the outside
    # ledger's); the table's 24 rows are its `validation` (held out) plus `fitted` (in sample), 19 within as before.
    stated = accuracy_classes()["pretrain/throughput"]
    validation, fitted_rows = stated["validation"], stated["fitted"]
    assert (
        validation["cases"] + fitted_rows["cases"],
        validation["within_target"] + fitted_rows["within_target"],
    ) == (
        24,
        19,
    )
    assert set(fitted_rows["references"]) == set(PRETRAIN_FIT_ROWS)
    assert set(INFERENCE_FIT_ROWS) == set(accuracy_classes()["inference/throughput"]["fitted"]["references"])


# Was a strict xfail (aud47b): "the pretraining sentence 'within 15% on 19 of 24 published runs of pretraining (median
# error 7%)' counts 10 rows the engine's constants were fitted on ... Fix: mark fit rows in validation.py (a fitted_on
# flag) and state held-out counts, or say 'of which 10 fitted'". Now the class counts 9 of 14 held-out validation
# rows plus the outside ledger's pretraining speed cases, and the text ends "not counted: 10 rows the engine was
# fitted on", because validation.Case.fit_row marks the 10 rows and accuracy.py counts them apart (fix47b).
def test_the_pretraining_sentence_states_its_held_out_rate():
    spec = parse_workload_spec({"task": "pretrain", "model": {"preset": "llama-2-7b"}})
    speed = workload_accuracy(spec)["throughput"]
    assert (speed["cases"], speed["within_target"]) == (14, 9) or "fitted" in speed["text"]


# LoRA speed cases the project holds outside docs/validation.md, recomputed here (held out of every LoRA fit):
#  - [QWEN] QwenLM/Qwen README @03cd81f5 (test_outside_audit_stop43l.py): Qwen-1.8B LoRA on one A100, micro-batch 1
#    x 8 accumulation, steps 1.0 / 1.0 / 1.1 / 1.7 / 3.3 / 6.8 s at 256-8,192 tokens;
#  - [NEMO] NeMo 24.12 performance summary, Finetuning (test_outside_recommendations.py NEMO_LORA_H100): Llama 2
#    7B / 13B / 70B LoRA FP8 on 8 H100, 24,824 / 14,629 / 2,621 tokens/s/GPU.
# Product at this commit: Qwen 2,468.6 (+20.5%), 4,937.1 (+20.5%), 9,874.3 (+32.6%), 13,089.5 (+35.8%), 12,384.1
# (+24.7%), 10,732.2 (+11.4%); NeMo within 15% each. So 4 of 9 within 15% here, 24 of 39 over the whole outside sweep.
# lora48: the run's fp32 adapters under autocast counted (lora.adapter_dtype fp32, lora_host): Qwen 2,141.5 (+4.6%),
# 4,282.9 (+4.6%), 8,565.9 (+15.0%, 0.02% past), 12,587.4 (+30.6%), 12,384.1 (+24.7%), 10,732.2 (+11.4%): 6 of 9,
# median 11.4% (was 4 of 9, 20.5%).
# fix48l: PEFT's x.to at a bare op's 7 us (pytorch issue #41383), not 31 us: Qwen 2,249.9 (+9.9%), 4,499.8 (+9.9%),
# 8,999.5 (+20.8%), 12,814.3 (+33.0%), 12,384.1 (+24.7%), 10,732.2 (+11.4%): still 6 of 9.
@pytest.mark.django_db
def test_the_outside_lora_speed_cases_the_class_leaves_out(bundled_catalog):
    from tests.procurement.outside.test_outside_audit_stop43l import (
        QWEN_1_8B,
        QWEN_1_8B_STEPS,
        published_tokens_per_second,
        tokens_per_second,
    )
    from tests.procurement.outside.test_outside_recommendations import NEMO_LORA_H100, qwen_lora_spec

    errors = []
    for seq, seconds in QWEN_1_8B_STEPS.items():
        published = published_tokens_per_second(seq, seconds)
        errors.append(tokens_per_second(qwen_lora_spec(QWEN_1_8B, seq, 1)) / published - 1)
    for preset, ((tp, pp), per_gpu) in NEMO_LORA_H100.items():
        spec = {
            "task": "lora",
            "model": {"preset": preset},
            "precision": "fp8",
            "seq_len": 4096,
            "micro_batch_size": 1,
            "gradient_checkpointing": "none",
            "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]},
            "parallelism": {"gpus": 8, "zero_stage": 0, "tensor_parallel": tp, "pipeline_parallel": pp},
            "gradient_accumulation_steps": 32 // (8 // (tp * pp)),
            "training_tokens": 1e7,
        }
        errors.append(tokens_per_second(spec, "h100-sxm5-80gb", 8) / 8 / per_gpu - 1)
    summary = class_summary(errors, 0.15)
    assert summary["cases"] == 9
    assert summary["within_target"] == 6
    assert summary["median_abs_error"] == pytest.approx(0.114, abs=0.01)
    # The class table knows two LoRA speed runs (peft L40S +33.7%, torchtune RTX 4090 -59.4%), both outside 15%.
    # fix47b: the validation table's own count is the class's `validation` (its headline adds the outside ledger).
    stated = accuracy_classes()["lora/throughput"]["validation"]
    assert (stated["cases"], stated["within_target"]) == (2, 0)


# Was a strict xfail (aud47b): "the classes draw on none of the outside cases. 'few published runs (2) of LoRA
# fine-tunes' understates the evidence: tests/procurement/outside holds 39 LoRA speed comparisons (24 within 15%) ...;
# pretraining memory says 'no published runs of pretraining to check it against' where 16 outside comparisons exist".
# Now lora/throughput counts 40 held-out cases (2 validation rows + 38 outside, 24 within 15%, median 11.3%) and
# pretrain/memory 21 (all outside, 18 within 10%, median 4.3%), because the class table adds the dated outside ledger
# (procurement/data/reference/outside_accuracy.json, tests/accuracy_ledger.py, measured 2026-12-07) (fix47b).
@pytest.mark.parametrize(("key", "least"), [("lora/throughput", 9), ("pretrain/memory", 1)])
def test_the_class_counts_the_projects_outside_runs(key, least):
    assert accuracy_classes().get(key, {"cases": 0})["cases"] >= least


# Was a strict xfail (aud47b): "'within 15% on 15 of 20 published runs of LLM inference and serving (median error
# 3%)'. Out of sample it is 119 of 198 outside comparisons (60%), median 11.1%, p90 81% ... Two of the 20 rows are the
# prefill efficiencies' fit points ... The sentence quotes the median only". Now inference/throughput counts 143 of
# 237 held-out cases (60.3%; 13 of 18 validation rows, 130 of 219 outside), median 10.7%, p90 74%, the two fit points
# apart, split by what is measured and dense / MoE, the 90th percentile in the words, because the fit rows are
# flagged (validation.Case.fit_row) and the outside ledger is counted (fix47b).
def test_the_inference_speed_median_is_near_the_out_of_sample_median():
    cases, median, _p90, within = OUTSIDE_SWEEP["inference/throughput"]
    stated = accuracy_classes()["inference/throughput"]
    assert stated["median_abs_error"] == pytest.approx(median, abs=0.03)
    # The stop-47 sweep (119 of 198 within 15%, 0.601) stays the floor: the stated share may not fall 5 points under it.
    assert stated["share_within_target"] >= within / cases - 0.05
    # stop 51 (re-measured, replacing stop 50's loosened -5 / +10 band around the frozen sweep): the sweep is now the
    # committed outside ledger itself (procurement/data/reference/outside_accuracy.json, every outside inference speed
    # comparison by kind). The stated class must count every one of them, no more, and pool them with the validation
    # table's rows into its share, so a class that drops or double-counts a source's rows fails here.
    ledger = json.loads(OUTSIDE_ACCURACY_JSON.read_text(encoding="utf-8"))["classes"]
    kinds = [entry for key, entry in ledger.items() if key.startswith("inference/throughput/")]
    outside_cases = sum(entry["cases"] for entry in kinds)
    outside_within = sum(entry["within_target"] for entry in kinds)
    assert (stated["outside"]["cases"], stated["outside"]["within_target"]) == (outside_cases, outside_within)
    validation = stated["validation"]
    pooled_cases = outside_cases + validation["cases"]
    pooled_within = outside_within + validation["within_target"]
    assert (stated["cases"], stated["within_target"]) == (pooled_cases, pooled_within)
    assert stated["share_within_target"] == pytest.approx(pooled_within / pooled_cases, abs=5e-4)


# Was a strict xfail (aud47b): "under five cases the sentence says only the count, 'few published runs (2) of LoRA
# fine-tunes', and hides that neither run is within target (+33.7%, -59.4%)". Now LoRA speed has 40 held-out cases
# ("within 15% on 24 of 40 held-out cases ..."), and a class under five states each run ("2 published runs of image
# diffusion training, both within 25%: +5%, -18%"; the validation table alone would read "2 published runs of LoRA
# fine-tunes, neither within 15%: +34%, -59%", tests/procurement/sizing/test_accuracy.py), because accuracy_text
# gives the signed errors under FEW_CASES (fix47b).
def test_a_few_case_sentence_says_how_its_runs_did():
    spec = parse_workload_spec({"task": "lora", "model": {"preset": "llama-3.1-8b"}})
    text = workload_accuracy(spec)["throughput"]["text"]
    assert "within" in text or "%" in text, text


# ----------------------------------------------------------------------------------------------------------------
# 2. Classification, through POST /api/size/
# ----------------------------------------------------------------------------------------------------------------

# Six real workloads (specs as their sources state the run; no published figure compared here):
WORKLOADS = {
    # huggingface/diffusers examples/text_to_image/README_sdxl.md, train_text_to_image_lora_sdxl.py:
    # --resolution=1024 --train_batch_size=1 --mixed_precision="fp16"
    "sdxl-lora": (
        {
            "name": "sdxl-lora",
            "task": "lora",
            "model": {"preset": "sdxl"},
            "precision": "fp16",
            "micro_batch_size": 1,
            "image": {"resolution_px": 1024},
        },
        "image_diffusion",
    ),
    # docs.ultralytics.com/modes/train: yolo detect train data=coco.yaml model=yolov8n.pt epochs=100 imgsz=640
    # (batch 16, AMP)
    "yolov8n-train": (
        {
            "name": "yolov8n-coco",
            "task": "full_finetune",
            "model": {"preset": "yolov8n"},
            "precision": "fp16",
            "micro_batch_size": 16,
            "image": {"resolution_px": 640, "epochs": 100, "dataset_images": 118287},
        },
        "image_detection",
    ),
    # vLLM serving Mixtral-8x7B-Instruct-v0.1 at TP 2 (docs.vllm.ai distributed serving), 32 streams
    "mixtral-serve": (
        {
            "name": "mixtral-serve",
            "task": "inference",
            "model": {"preset": "mixtral-8x7b"},
            "precision": "bf16",
            "parallelism": {"gpus": 2, "tensor_parallel": 2},
            "inference": {"concurrency": 32, "context_len": 2048, "output_tokens": 512},
        },
        "inference",
    ),
    # artidoro/qlora README: NF4, LoRA r 64 on all linear layers, paged AdamW 8-bit, one GPU
    "llama70b-qlora": (
        {
            "name": "llama70b-qlora",
            "task": "qlora",
            "model": {"preset": "llama-2-70b"},
            "micro_batch_size": 1,
            "seq_len": 2048,
            "gradient_checkpointing": "full",
            "lora": {"rank": 64, "targets": "all-linear"},
            "optimizer": "paged_adamw_8bit",
            "parallelism": {"gpus": 1},
            "training_tokens": 1e7,
        },
        "qlora",
    ),
    # Llama 2 model card: 7B pretrained on 2T tokens at 4k context (here on 8 GPUs)
    "llama7b-pretrain": (
        {
            "name": "llama7b-pretrain",
            "task": "pretrain",
            "model": {"preset": "llama-2-7b"},
            "seq_len": 4096,
            "micro_batch_size": 1,
            "gradient_checkpointing": "selective",
            "parallelism": {"gpus": 8},
            "training_tokens": 2e12,
        },
        "pretrain",
    ),
    # presets.IMAGE_TIERS sd1x-tier: "Stable Diffusion 1.x LoRA at 512 px" (an SD 1.x derivative without a preset)
    "sd1x-tier-lora": ({"name": "sd1x-tier", "task": "lora", "model": {"preset": "sd1x-tier"}}, "image_tier"),
}


def _size(client, spec: dict) -> dict:
    response = client.post("/api/size/?gpu=h100-sxm5-80gb", spec, content_type="application/json")
    assert response.status_code == 200, response.content[:500]
    return response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_six_real_workloads_fall_in_their_class_with_a_readable_sentence(
    bundled_catalog, engineer_client, name
):
    spec, family = WORKLOADS[name]
    accuracy = _size(engineer_client, spec)["accuracy"]
    assert accuracy["family"] == family
    for metric in ("memory", "throughput"):
        stated = accuracy[metric]
        # fix47b: a class may name what is measured after family/metric (image training / inference; LLM
        # inference speed: first token, batch-1 decode, serving, dense or MoE): was stated["class"] ==
        # f"{family}/{metric}"; the stated class is the table's own key either way.
        assert stated["class"].split("/")[:2] == [family, metric]
        assert accuracy_classes()[stated["class"]]["text"] == stated["text"]
        text = stated["text"]
        assert text and "_" not in text and "None" not in text, text  # words, not keys
        if stated["cases"] >= 5:
            assert text.startswith(
                f"within {stated['target']:.0%} on {stated['within_target']} of {stated['cases']}"
            )
        elif stated["cases"]:  # fix47b (aud47b fix 3): how each run did, was "few published runs (N) of ..."
            run = "run" if stated["cases"] == 1 else "runs"
            assert text.startswith(f"{stated['cases']} published {run} of {stated['label']}, "), text
            assert text.count("%") == stated["cases"] + 1, text
        else:
            assert text.startswith(f"no published runs of {stated['label']} to check it against"), text
    if family == "pretrain":  # docs/validation.md has no pretraining memory row; the outside ledger has some
        # was "no published runs of pretraining to check it against" (fix47b, aud47b fix 2)
        assert accuracy["memory"]["validation"]["cases"] == 0 < accuracy["memory"]["outside"]["cases"]


# Which rows of the image classes are training runs: image_validation.py's inputs begin "training", "lora" or
# "full_finetune" (a "same," row repeats the row before it); every other image row is a generation or forward pass.
def _training_image_rows() -> set[str]:
    from procurement.sizing.image_validation import image_cases

    training, previous = set(), False
    for case in image_cases():
        first = case.inputs.split(",")[0].strip().lower()
        previous = previous if first == "same" else first.split()[0] in {"training", "lora", "full_finetune"}
        if previous:
            training.add(case.key)
    return training


def test_the_image_rows_that_are_training_runs():
    assert _training_image_rows() == {
        "hf-blog-flux-qlora-4090-step",
        "diffusers-lora-sd15-2080ti-run",
        "colab-yolov8n-train-1280-b16-t4",
        "quickstart-yolov8n-train-640-b16-2080ti",
        "simpletuner-flux-lora-r16-bf16",
        "simpletuner-flux-lora-r16-int8",
        "simpletuner-flux-lora-r16-int4",
        "simpletuner-flux-lora-r16-nf4",
    }


# Was a strict xfail (aud47b): "image classes mix training and generation. A YOLOv8n training run is told 'within 25%
# on 11 of 11 published runs of object detectors' ... all 11 are TensorRT batch-1 forwards ... An SDXL LoRA is told
# 'within 25% on 13 of 13', 2 of the 13 being training runs". Now the YOLOv8n training's speed class is
# image_detection/throughput/training, no case ("no published runs of object detector training to check it
# against"), and the SDXL LoRA's image_diffusion/throughput/training holds the two training runs (+5%, -18%), because
# image classes split by ImageCase.training (fix47b).
@pytest.mark.django_db
@pytest.mark.parametrize("name", ["yolov8n-train", "sdxl-lora"])
def test_an_image_training_workloads_speed_class_holds_training_runs(bundled_catalog, engineer_client, name):
    accuracy = _size(engineer_client, WORKLOADS[name][0])["accuracy"]
    references = accuracy_classes()[accuracy["throughput"]["class"]]["references"]
    # Since the ledger counts the image modules (stop 47), the class also holds outside cases; each must be one the
    # ledger classed as training (every spec of its test a training spec).
    outside_training = {
        case
        for key, entry in outside_ledger()["classes"].items()
        if key.endswith("/training")
        for case in entry["errors"]
    }
    allowed = _training_image_rows() | outside_training
    assert set(references) <= allowed, sorted(set(references) - allowed)


# Was a strict xfail (aud47b): "a Mixtral 8x7B serving spec is told 'within 15% on 15 of 20 published runs of LLM
# inference and serving (median error 3%)'; none of the 20 is a mixture-of-experts model". Now its class is
# inference/throughput/serving_moe: "within 15% on 4 of 16 held-out cases of LLM serving throughput of
# mixture-of-experts models (median error 35%, 90th percentile 125%)", the 16 outside MoE serving cases (the [TRT9]
# Mixtral rows among them), because LLM inference speed splits by what is measured and dense / MoE (fix47b).
@pytest.mark.django_db
def test_a_mixtral_serving_sentence_rests_on_an_moe_row(bundled_catalog, engineer_client):
    accuracy = _size(engineer_client, WORKLOADS["mixtral-serve"][0])["accuracy"]
    references = accuracy_classes()[accuracy["throughput"]["class"]]["references"]
    assert any("mixtral" in key or "moe" in key or "qwen3" in key or "deepseek" in key for key in references)


# The word rule (image_case_words.image_case_family) files today's 34 image rows right: the YOLO and RT-DETR rows are
# detectors, AITemplate's ViT-L/16 a classifier, the rest diffusion (checked by hand against image_validation.py).
def test_the_word_rule_files_todays_image_rows_as_their_preset_families():
    from procurement.sizing.image_validation import image_cases

    family = None
    found = {}
    for case in image_cases():
        family = image_case_family(case.inputs, family)
        found[case.key] = family
    assert {key for key, family in found.items() if family == "image_vision"} == {
        "aitemplate-vit-l16-384-a100-batch-128"
    }
    assert {key for key, family in found.items() if family == "image_detection"} == {
        key for key in found if "yolo" in key or "detr" in key
    }
    # every preset's own name files as its preset's family
    families = {"diffusion": "image_diffusion", "detection": "image_detection", "vision": "image_vision"}
    for slug, entry in image_presets().items():
        assert image_case_family(f"inference, {slug}, fp16", None) == families[entry["family"]], slug


# Was a strict xfail (aud47b): "the word rule misfiles an SDXL row that names its text encoders ... as a vision
# classifier ('vit-' matches), and a ViT written 'ViT B/16' ... (DeiT-B) or a Faster R-CNN / RetinaNet detector as
# diffusion". Now each image case states its class (ImageCase.family, .training) and the word rule, kept as a check
# of those fields, reads only the model's own name (the field after the task, before any parenthesis) against
# detector and classifier architecture names (deit, r-cnn, retinanet ...): diffusion, vision, detection (fix47b).
@pytest.mark.parametrize(
    ("inputs", "family"),
    [
        (
            "inference, SDXL base (OpenCLIP ViT-bigG/14 + CLIP ViT-L/14 text encoders), fp16, 1024 px",
            "image_diffusion",
        ),
        ("inference, DeiT-B distilled, fp16, 224 px, batch 64, 1 x a100", "image_vision"),
        ("inference, Faster R-CNN R50-FPN, fp16, 800 px, batch 1, 1 x t4", "image_detection"),
    ],
)
def test_the_word_rule_files_an_image_case_by_its_model(inputs, family):
    assert image_case_family(inputs, None) == family


# ----------------------------------------------------------------------------------------------------------------
# 3. Staleness: the committed table against a fresh computation
# ----------------------------------------------------------------------------------------------------------------


def test_the_stale_file_test_fails_when_an_engine_constant_moves_validation_rows(monkeypatch):
    # assumptions.MFU_PRETRAIN_AMPERE 0.51 -> 0.45 (read by mfu.pretraining efficiency at call time) moves the A100
    # pretraining rows ~12% slower: pretrain/throughput goes 19 -> 16 of 24 within 15%, median 6.6% -> 9.2%.
    from tests.procurement.sizing.test_accuracy import (
        test_it_matches_a_fresh_computation_so_the_committed_table_cannot_go_stale as stale_test,
    )

    stale_test()  # passes at this commit
    before = json.loads(ACCURACY_CLASSES_JSON.read_text(encoding="utf-8"))["classes"]["pretrain/throughput"]
    monkeypatch.setattr(mfu, "MFU_PRETRAIN_AMPERE", replace(mfu.MFU_PRETRAIN_AMPERE, value=0.45))
    # fix47b: the table's class no longer blends fit and held-out rows, so the 24-row figure is computed here
    # from the rows themselves (was read from accuracy_document()'s class: the same 24, 16, 9.2%).
    errors = published_errors()
    rows = _class_rows({error.reference_id: error for error in errors}, "pretrain/throughput")
    moved_rows = class_summary([row.error for row in rows], 0.15)
    assert (moved_rows["cases"], moved_rows["within_target"]) == (24, 16)
    assert moved_rows["median_abs_error"] == pytest.approx(0.0917, abs=0.002)
    moved = json.loads(accuracy_document(errors))["classes"]["pretrain/throughput"]
    assert moved["validation"] != before["validation"] or moved["fitted"] != before["fitted"]
    with pytest.raises(AssertionError):
        stale_test()


def test_the_table_pins_class_summaries_not_rows():
    # A row that moves without moving its class's count, median, p90 or share leaves the committed file equal: the
    # stale test guards what is stated, not docs/validation.md's rows (their own test does that). Shown by moving
    # the pretraining row furthest from the median and p90 positions by half a point.
    errors = published_errors()
    (row,) = [error for error in errors if error.reference_id == "mpt-7b-128xh100-tps"]  # +1.1%
    moved = [replace(error, error=error.error + 0.005) if error is row else error for error in errors]
    assert accuracy_document(moved) == ACCURACY_CLASSES_JSON.read_text(encoding="utf-8")
