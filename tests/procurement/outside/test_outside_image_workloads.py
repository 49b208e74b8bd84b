"""An outside practitioner's image cases (issue 29 review x29), each run as a user runs it: the workload
spec through `manage.py size --format json` on the bundled catalog, and the same spec through the engine.

Cases and sources: image_workload_cases.json beside this file (published figures the author's validation
does not use). Targets from the issue: memory within 15%, speed within 25%. A case the engine does not model
is a strict xfail whose reason names the cause and the estimate."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing import image_model as im
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.image_shapes import encoder_cost, vae_decoder_cost
from procurement.sizing.memory import memory_breakdown_scalar

CASES = json.loads((Path(__file__).parent / "image_workload_cases.json").read_text())["cases"]
TARGET = {"memory": 0.15, "speed": 0.25}
GIB = 2.0**30


def _cli(tmp_path, case) -> dict:
    path = tmp_path / f"{case['key']}.json"
    path.write_text(json.dumps(case["spec"]))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", case["gpu"], "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def _estimate(case, memory: dict, throughput: dict) -> float:
    """The product's answer in the published unit (see each case's `compare`)."""
    spec, compare = case["spec"], case["compare"]
    batch = spec.get("micro_batch_size", 1)
    if compare == "seconds_per_image":
        return throughput["seconds_per_batch"] / batch
    if compare == "training_hours":
        return throughput["training_hours"]
    if compare == "seconds_per_step":
        images = batch * spec.get("gradient_accumulation_steps", 1)
        return images / throughput["training_images_per_second"]
    if compare == "allocated_gib":  # max_memory_allocated: tensors only, no CUDA context or allocator slack
        return memory["total_per_gpu_gib"] - memory["framework_overhead_gib"]
    if compare == "total_gb":  # a peak read off the device, in decimal GB
        return memory["total_per_gpu_gib"] * GIB / 1e9
    if compare == "total_mib":
        return memory["total_per_gpu_gib"] * 1024
    if compare == "reserved_gb":  # torch.cuda.memory_reserved / 1e9: everything but the CUDA context
        return (memory["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9
    raise AssertionError(compare)


def _marks(case):
    if "xfail" in case:
        return [pytest.mark.xfail(strict=True, reason=case["xfail"])]
    return []


PRODUCT_CASES = [pytest.param(c, id=c["key"], marks=_marks(c)) for c in CASES if c["gpu"]]
ENGINE_ONLY = [pytest.param(c, id=c["key"], marks=_marks(c)) for c in CASES if not c["gpu"]]


@pytest.mark.django_db
@pytest.mark.parametrize("case", PRODUCT_CASES)
def test_the_size_command_lands_within_target(bundled_catalog, tmp_path, case):
    report = _cli(tmp_path, case)
    (candidate,) = report["candidates"]
    estimate = _estimate(case, candidate["memory"], candidate["throughput"])
    published = case["published"]
    if case["kind"] == "memory-bracket":
        low, high = published
        assert low < estimate <= high, f"{case['key']}: {estimate:.0f} not in ({low}, {high}]"
        return
    if case["kind"] == "hours-lower-bound":
        assert estimate >= published * (1.0 - TARGET["speed"]), (
            f"{case['key']}: {estimate:.1f} h < {published} h"
        )
        return
    error = estimate / published - 1.0
    assert abs(error) <= TARGET[case["kind"]], f"{case['key']}: {estimate:.3f} vs {published} ({error:+.1%})"


@pytest.mark.parametrize("case", [pytest.param(c, id=c["key"]) for c in CASES if c["gpu"]])
def test_the_engine_gives_what_the_command_prints(case):
    """The CLI is a thin shell: the engine's own numbers for the same spec and GPU (rounded as printed)."""
    spec = parse_workload_spec(case["spec"])
    (row,) = size_workload(spec, [gpu_by_slug(case["gpu"])])["candidates"]
    memory = memory_breakdown_scalar(spec, 1)
    assert row["total_per_gpu_gib"] == pytest.approx(memory["total_per_gpu_gib"], abs=1e-3)
    if case["kind"] == "speed" and not spec.is_training:
        gpu = gpu_by_slug(case["gpu"])
        seconds = im.inference_seconds_per_image(
            spec, gpu.dense_tflops(spec.precision) * 1e12, gpu.memory_bandwidth_gbps * 1e9, gpu.generation
        )
        assert row["throughput"]["images_per_second_per_gpu"] == pytest.approx(1.0 / seconds, rel=1e-3)


@pytest.mark.parametrize("case", ENGINE_ONLY)
def test_the_engine_lands_within_target_without_a_catalog_gpu(case):
    """A card the catalog does not sell (GTX 1060): memory does not depend on the GPU."""
    memory = memory_breakdown_scalar(parse_workload_spec(case["spec"]), 1)
    estimate = _estimate(case, memory, {})
    assert abs(estimate / case["published"] - 1.0) <= TARGET[case["kind"]]


def test_eager_attention_adds_its_score_passes_to_inference_time():
    """SDXL on an A100 without SDPA (diffusers fast_diffusion tutorial: 4.63 s vs 3.31 s with SDPA).
    Hand count: the UNet's eager softmax elements per forward (self-attention 10 heads x 4096^2 x 10 blocks
    at 64x64, 20 heads x 1024^2 x 60 blocks at 32x32, cross-attention x 77) x 30 steps x 2 (CFG), four
    passes (baddbmm write, softmax read + write, bmm read) of 2 bytes, at 70% of 2,039 GB/s."""
    base = {"task": "inference", "model": {"preset": "sdxl"}, "precision": "bf16", "image": {"steps": 30}}
    sdpa, eager = parse_workload_spec(base), parse_workload_spec(base | {"flash_attention": False})
    scores = 10 * 10 * 4096 * (4096 + 77) + 60 * 20 * 1024 * (1024 + 77)
    per_forward = im.network_cost("sdxl-base-1.0", 1024).eager_scores_saved
    assert per_forward == pytest.approx(scores, rel=0.01)
    extra = im.inference_traffic_bytes_per_image(eager) - im.inference_traffic_bytes_per_image(sdpa)
    vae_scores = 128 * 128 * 128 * 128  # the VAE decoder's mid-block attention: one head over 128 x 128
    assert extra == pytest.approx(4 * 2 * (60 * per_forward + vae_scores), rel=1e-6)
    seconds = extra / (2039e9 * 0.70)
    assert seconds == pytest.approx(1.03, abs=0.02)
    fused = parse_workload_spec(
        base | {"flash_attention": False, "image": {"steps": 30, "fused_kernels": True}}
    )
    # round 4: a compiled UNet leaves the text encoders and the VAE decode eager (diffusers' recipe compiles
    # pipe.unet only): their elements written and read once, plus the VAE's eager attention passes
    encoders = sum(encoder_cost(e, e["tokens"]).saved for e in im.text_encoders(fused))
    decoder = vae_decoder_cost(im.vae(fused), 128).saved
    left_behind = 2 * 2 * (encoders + decoder) + 4 * 2 * vae_scores
    assert im.inference_traffic_bytes_per_image(fused) == pytest.approx(left_behind, rel=1e-6)


def _recommend(tmp_path, spec: dict, top: int = 5) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


FLUX_LORA_1024 = {
    "name": "flux-lora-1024",
    "task": "lora",
    "model": {"preset": "flux.1-dev"},
    "lora": {"rank": 16, "targets": "all-linear"},
    "gradient_checkpointing": "full",
    "image": {"cache_latents": True, "resolution_px": 1024, "train_steps": 2000},
}
SDXL_100K = {
    "name": "sdxl-100k",
    "task": "inference",
    "model": {"preset": "sdxl"},
    "micro_batch_size": 4,
    "image": {"steps": 30, "images": 100000},
}
YOLO_COCO = {
    "name": "yolov8s-coco",
    "task": "full_finetune",
    "model": {"preset": "yolov8s"},
    "micro_batch_size": 32,
    "image": {"epochs": 100, "dataset_images": 118287},
}


@pytest.mark.django_db
def test_flux_lora_ranking_leads_with_a_card_that_holds_bf16_flux(bundled_catalog, tmp_path):
    """bf16 FLUX.1-dev weights alone are 11.9 B x 2 bytes = 22.2 GiB: a single 24 GB consumer card cannot
    hold them with activations (the HF QLoRA post: 26 GB for bf16 LoRA at 512x768), so every single-GPU row
    must be a >= 32 GB card and a 24 GB card only appears sharded (ZeRO-3) over several."""
    rows = _recommend(tmp_path, FLUX_LORA_1024, top=20)
    assert rows and all(row["fits"] for row in rows)
    small = {"l4", "rtx-3090", "rtx-4090", "a10", "a10g"}  # 24 GB cards
    assert not [row for row in rows if row["gpu"] in small and row["gpus"] == 1]
    assert all(row["memory_per_gpu_gib"] > 22.2 for row in rows if row["gpus"] == 1)
    first = rows[0]
    # 2,000 steps x batch 1 = 2,000 images: the run's cost per 1,000 training images is half the total
    assert float(first["unit_costs"]["per_training_run"]) == pytest.approx(float(first["total_cost"]))
    assert float(first["unit_costs"]["per_thousand_training_images"]) == pytest.approx(
        float(first["total_cost"]) / 2, abs=0.01
    )


@pytest.mark.django_db
def test_sdxl_batch_generation_is_ranked_by_cost_per_thousand_images(bundled_catalog, tmp_path):
    rows = _recommend(tmp_path, SDXL_100K, top=10)
    assert rows and all(row["fits"] for row in rows)
    per_thousand = [float(row["unit_costs"]["per_thousand_images"]) for row in rows]
    for row, unit in zip(rows, per_thousand, strict=True):
        assert unit == pytest.approx(float(row["total_cost"]) / 100, abs=0.01)  # 100,000 images
    assert per_thousand == sorted(per_thousand)  # cheapest job first
    # A 24 GB consumer card holds SDXL at batch 4. The bound was the engine's own 13.7 GiB (< 16) until the
    # VAE decode counted its tensor-core convolutions' NHWC copies (image_shapes.CONV_NHWC_COPIES); it is now
    # the published peak: HF blog simple_sdxl_optimizations measured 21.72 GiB allocated for fp16 batch 4
    # with an fp32 decode, i.e. 6.62 GiB of weights + 15.10 GiB of decode; this run is bf16, whose decode
    # stays in 16 bits (half: 7.55) on 6.46 GiB of weights = 14.0 GiB, + 0.6 GiB CUDA context and 5%
    # allocator slack = 15.3 GiB, held to the memory target (15%) both ways.
    assert 15.3 * 0.85 <= rows[0]["memory_per_gpu_gib"] <= 15.3 * 1.15
    assert rows[0]["memory_per_gpu_gib"] < 24 * 0.93  # 24 GB = 22.35 GiB of card


@pytest.mark.django_db
def test_yolo_training_ranking_does_not_lead_with_a_cpu_starved_host(bundled_catalog, tmp_path):
    (first,) = _recommend(tmp_path, YOLO_COCO, top=1)
    assert not any(w.startswith("too few vCPUs") for w in first["warnings"])


@pytest.mark.django_db
def test_the_size_table_speaks_in_images(bundled_catalog, tmp_path):
    """A practitioner reads images/s and seconds per batch, not 'decode tokens' (the JSON has had both)."""
    case = next(c for c in CASES if c["key"] == "diffusers-fast-sdxl-a100-bf16-sdpa")
    path = tmp_path / "sdxl.json"
    path.write_text(json.dumps(case["spec"]))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", case["gpu"], stdout=out)
    table = out.getvalue()
    assert "images_per_second" in table and "seconds_per_batch" in table
    assert "decode_tokens" not in table and "time_to_first_token" not in table
    seconds = _cli(tmp_path, case)["throughput"]["seconds_per_batch"]
    assert f"{seconds:,.3f}" in table
