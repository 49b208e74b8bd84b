"""A fifth outside practitioner's image cases for issue 29 (review x29e). None of these measurements is used by
test_outside_image_workloads.py, _2.py, _3.py, _4.py, image_workload_cases.json or docs/validation.md.

Each case is the spec a practitioner would write for the published run, sized the way a user sizes it
(`manage.py size --gpu SLUG --format json`, `manage.py recommend --format json`, GET /api/offers/ on the
bundled catalog), and compared with the published figure. Targets from the issue: memory within 15%, speed
within 25%. A case the product misses is a strict xfail whose reason carries the published figure, the
product's, the gap and my reading of the cause.

Sources (figures quoted in each case):
  [TORCHAO] sayakpaul/diffusers-torchao README.md (commit 9b9f2383dccb8eb73a4c6a8ffe736dd9610c26d2), 'Flux.1 Dev
      Benchmarks', table 'Additional Results' ('The experiments were run on a single H100, 80 GB GPU'; the
      repo's nvidia-smi in diffusers tests/quantization/torchao/README.md shows an 'H100 80GB HBM3', the SXM
      card). Script inference/benchmark_image.py (same commit): DiffusionPipeline.from_pretrained(
      'black-forest-labs/FLUX.1-dev', torch_dtype=torch.bfloat16), pipe(prompt=PROMPT,
      num_images_per_prompt=batch_size) with the pipeline's defaults (FluxPipeline: 1024 px, 28 steps,
      guidance 3.5 distilled, max_sequence_length 512: the preset's defaults), 5 warm-up calls, then timed;
      'model_memory' = torch.cuda.memory_allocated() after loading (and quantizing), 'inference_memory' =
      torch.cuda.max_memory_allocated() after the runs, both / 1024**3 (utils.py bytes_to_giga_bytes: GiB).
      'compile' = transformer in channels_last + torch.compile(mode="max-autotune", fullgraph=True); the
      VAE stays eager (compile_vae False in the rows used). Quantization is torchao quantize_ on the
      transformer only (the T5/CLIP encoders and the VAE stay bf16).
      Rows used (batch | fuse | compile | quantization | model_memory | inference_memory | time):
        1 | False | False | None   | 31.438 | 33.851 |  6.573
        4 | False | False | None   | 31.438 | 39.49  | 24.828
        8 | False | False | None   | 31.438 | 47.509 | 49.438
        1 | False | True  | None   | 31.438 | 33.851 |  4.209
        8 | False | True  | None   | 31.439 | 47.506 | 31.685
        1 | False | False | int8wo | 20.385 | 31.607 |  8.551
        1 | False | True  | fp8dq  | 20.357 | 31.818 |  3.243
      The quantized rows' inference_memory is not an inference peak: reset_memory runs before loading, so the
      peak holds the bf16 transformer before quantize_ (31.6 GiB = the bf16 model_memory); I compare their
      model_memory with the product's weights instead.
  [MMYOLO] open-mmlab/mmyolo configs/yolov8/README.md (commit 8c4d9dc503dc8e327bec8147e8dc97124052f693),
      'COCO' table, rows without Mask Refine: YOLOv8-n/s/m/l/x, 640 px, SyncBN, AMP, 'Mem (GB)' 2.8 / 4.0 / 7.2 /
      9.8 / 12.2; Note 1: 'We use 8x A100 for training, and the single-GPU batch size is 16'; config
      yolov8_s_syncbn_fast_8xb16-500e_coco.py: train_batch_size_per_gpu = 16, img_scale = (640, 640),
      num_classes = 80 (COCO). Mem is mmengine's log 'memory' (torch.cuda.max_memory_allocated in MB, no
      allocator reserve, no CUDA context): compared with total - framework_overhead_gib.
  [TOF-Y11] two YOLO11 training logs of one project in the public index (find_string ids 29335361469 and
      30034053923; project path /home/naquoc17/TimeOfFlight-Project/Human-detection-Yolo11): 'Ultralytics 8.3.74
      ... torch-2.5.1+cu124 CUDA:0 (NVIDIA GeForce RTX 3090, 24139MiB)', 'model=yolo11s.pt' / 'model=yolo11m.pt',
      'batch=8, imgsz=640', 'workers=1', 'deterministic=True', 'amp=True', nc=3; 1603 iterations an epoch (12,824
      train images, 13,216 boxes: about one object an image; the last batch's Instances column runs 1-11).
      Mosaic epochs 4-10: yolo11s 'GPU_mem' 2.33-2.35G (median 2.34G), 16.58-16.74 it/s (median 16.67);
      yolo11m 4.59-4.64G (median 4.64G), 9.53-9.72 it/s (median 9.61). yolo11s: '20 epochs completed in 0.553
      hours.' GPU_mem is torch.cuda.memory_reserved() / 1e9: compared with (total - cuda_context_gib) in GB.
      The pace does not change when mosaic closes at epoch 11 (yolo11s 16.64 -> 16.52 it/s, yolo11m 9.72 ->
      9.81), so the one loader worker, decoding this set's small frames, is not the bound: the GPU step is.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

MEMORY, SPEED = 0.15, 0.25
H100 = "h100-sxm5-80gb"


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _recommend(tmp_path, spec: dict, top: int) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


def _allocated_gib(row: dict) -> float:
    """The product's peak as torch.cuda.max_memory_allocated would see it: no CUDA context, no allocator slack."""
    memory = row["memory"]
    return memory["total_per_gpu_gib"] - memory["framework_overhead_gib"]


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _cents(value) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


# ---------------------------------------------------------------- FLUX.1-dev bf16 on an H100 [TORCHAO]


def _flux(batch: int = 1, compiled: bool = False, **fields) -> dict:
    """The benchmark's run: bf16 pipeline (torch_dtype=torch.bfloat16), num_images_per_prompt=batch, the
    pipeline's defaults (the preset's 28 steps, 1024 px, distilled guidance, 512 T5 tokens); compile =
    torch.compile of the transformer (image.fused_kernels)."""
    spec = {"task": "inference", "model": {"preset": "flux.1-dev"}, "precision": "bf16"}
    spec["micro_batch_size"] = batch
    if compiled:
        spec["image"] = {"fused_kernels": True}
    return spec | fields


# Hand check of the product's FLOPs: 2,098 TFLOP an image. Per step, a token passes through half of each double
# block (image or text stream: 4 x 3072^2 attention + 2 x 3072 x 12288 MLP = 113M weights, 19 blocks = 2.15B) and
# all of each single block (3072 x (3 x 3072 + 12288) + (3072 + 12288) x 3072 = 113M, 38 blocks = 4.3B): 6.45B
# per token (the adaLN modulation runs once per image). 2 x 6.45e9 x 4,608 tokens = 59.5 TFLOP + attention
# 4 x 4,608^2 x 3,072 x 57 = 14.9 TFLOP -> 74.4 TFLOP a step, x 28 = 2,083 TFLOP, plus VAE and T5: agrees.
# The published eager 6.573 s is 319 TFLOPS (32% of the H100's 989); compiled 4.209 s is 498 TFLOPS (50%).
FLUX_MEMORY = [
    pytest.param(1, 33.851, id="batch-1"),  # product 33.55 GiB (-0.9%)
    pytest.param(4, 39.49, id="batch-4"),  # product 39.92 GiB (+1.1%)
    pytest.param(8, 47.509, id="batch-8"),  # product 48.42 GiB (+1.9%)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("batch", "published_gib"), FLUX_MEMORY)
def test_flux_bf16_peak_allocated_on_an_h100(bundled_catalog, tmp_path, batch, published_gib):
    """[TORCHAO] inference_memory. The weights alone agree to the MB (product 31.42 GiB vs model_memory 31.438),
    and the ~2.1 GiB an image of activations (VAE decode dominating) matches the batch slope (47.509 - 33.851)
    / 7 = 1.95 GiB."""
    row = _size(tmp_path, _flux(batch), H100)
    _within(row["memory"]["weights_gib"], 31.438, 0.02)
    _within(_allocated_gib(row), published_gib, MEMORY)


FLUX_TIME = [
    pytest.param(
        1, False, 6.573, id="eager-batch-1"
    ),  # product 6.82 s (+3.8%; img51, fp32 q / k chains; was 5.40 s, -17.9%, and 6.37 s, -3.1%, see below)
    pytest.param(
        4, False, 24.828, id="eager-batch-4"
    ),  # product 27.28 s (+9.9%, img51; was 20.90 s, -15.8%, and 21.87 s, -11.9%)
    pytest.param(
        8, False, 49.438, id="eager-batch-8"
    ),  # product 54.34 s (+9.9%, img51; was 41.56 s, -15.9%, and 42.54 s, -14.0%)
    pytest.param(8, True, 31.685, id="compiled-batch-8"),  # product 32.14 s (+1.4%; was 33.35 s, +5.3%)
    # Was a strict xfail: "published 4.209 s, product 5.48 s (+30.2%). The product's compile
    # (image.fused_kernels) only drops the eager elementwise passes, saving 14% ... The product's batch-1 DiT
    # efficiency under compile is too low on Hopper." Now 4.27 s (+1.3%): a DiT's work per kernel is counted
    # in the fit network's rows (image_model.dit_equivalent_rows): FLUX's 554 kernels average 67 GMAC over
    # 4,608 tokens, 5.3x the work per row of the SDXL UNet image_half_rows was fitted on (930 kernels, 3.6
    # GMAC over 1,317 rows), so batch 1 runs at 50% of the bf16 peak, not 39%. Derived from the shapes; the
    # eager rows above move with it (eager batch 1 from -3.1% to -17.9%: the eager DiT's elementwise bytes,
    # fp32 q/k RMSNorm and RoPE among them, are undercounted by about 1.2 s an image, which the old batch-1
    # efficiency had hidden).
    pytest.param(1, True, 4.209, id="compiled-batch-1"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("batch", "compiled", "published_s"), FLUX_TIME)
def test_flux_bf16_pipeline_time_on_an_h100(bundled_catalog, tmp_path, batch, compiled, published_s):
    row = _size(tmp_path, _flux(batch, compiled), H100)
    _within(row["throughput"]["seconds_per_batch"], published_s, SPEED)


@pytest.mark.django_db
def test_flux_int8_weight_only_resident_weights_on_an_h100(bundled_catalog, tmp_path):
    """[TORCHAO] int8wo row, model_memory 20.385 GiB: the transformer's linears in int8, the encoders and VAE bf16.
    `weight_quantization: int8` quantizes the denoiser only (docs/workload-spec.md): product 20.34 GiB (-0.2%)."""
    row = _size(tmp_path, _flux(1, weight_quantization="int8"), H100)
    _within(row["memory"]["weights_gib"], 20.385, MEMORY)


# Was a strict xfail: "published 8.551 s, product 6.37 s (-25.5%, just past the bar). The product prices int8
# weight-only at the bf16 rate; eager torchao int8wo runs an unfused dequantize-then-matmul per linear". Now
# 6.46 s (-24.4%): each eager forward pays torchao's _linear_fp_act_int8_weight_impl outside the GEMM
# (image_model.weight_dequantize_bytes_per_image): the int8 weight cast to a bf16 copy (11.9B x 3 B) and the
# scale multiply and bias add over every linear output (6.72G elements x 8 B) = 89.5 GB a step, 28 steps at
# 0.7 x 3.35 TB/s = 1.07 s. Hand: 5.395 s (the bf16 eager estimate) + 1.07 = 6.46 s. Inside the bar at its
# edge: the rest is the eager DiT undercount the bf16 eager rows show (-17.9% at batch 1). img51: 6.46 -> 7.89 s
# (-24.4% -> -7.7%): diffusers' fp32 q / k chains over the H100's L2 (image_model.flux_qk_chain_dram_bytes_per_step).
@pytest.mark.django_db
def test_flux_int8_weight_only_eager_time_on_an_h100(bundled_catalog, tmp_path):
    row = _size(tmp_path, _flux(1, weight_quantization="int8"), H100)
    _within(row["throughput"]["seconds_per_batch"], 8.551, SPEED)


@pytest.mark.django_db
def test_flux_int8_weight_only_compiled_time_on_an_h100(bundled_catalog, tmp_path):
    """[TORCHAO] int8wo, compile True, batch 1: 4.615 s. Product 4.27 s (-7.6%; was 5.48 s, +18.8%, before
    dit_equivalent_rows); compiled, the dequantize folds into the GEMM: no weight_dequantize term."""
    row = _size(tmp_path, _flux(1, compiled=True, weight_quantization="int8"), H100)
    _within(row["throughput"]["seconds_per_batch"], 4.615, SPEED)


FP8_FLUX = _flux(1, compiled=True, precision="fp8")


# Was a strict xfail: "published 3.243 s, product (precision fp8, fused_kernels) 5.04 s (+55.5%). Two causes:
# the bf16 compiled batch-1 miss above (+30%), and the 8-bit rate". Now 3.39 s (+4.7%). First cause:
# dit_equivalent_rows (bf16 compiled 4.27 s, +1.3%; fp8 then 3.83 s, +18.0%). Second: a DiT's 8-bit linears run
# at eight_bit_dit_rate (0.691 of the fp8 peak, 1.38x bf16; compute_peak.eight_bit_rate), fitted on the same
# repo's CogVideoX-5B H100 rows (bf16 compiled 87.455 s, fp8 75.255 s), not on this one; the SDXL UNet keeps
# eight_bit_diffusion_rate (0.581, MLPerf), so the H200 fp8 (+5.9%) and L40S int8 (+13.3%) cases do not move.
@pytest.mark.django_db
def test_flux_fp8_dynamic_compiled_time_on_an_h100(bundled_catalog, tmp_path):
    row = _size(tmp_path, FP8_FLUX, H100)
    _within(row["throughput"]["seconds_per_batch"], 3.243, SPEED)


# Was a strict xfail: "model_memory 20.357 GiB (transformer fp8, T5-XXL/CLIP/VAE bf16); product weights_gib
# under precision fp8 15.95 GiB (-21.7%). The product stores the text encoders in 8 bits too". Now 20.34 GiB
# (-0.1%): a low-bit generation keeps its text encoders and VAE in 16 bits (image_model.
# frozen_parts_bytes_per_param; quantize_(pipe.transformer, ...) converts the transformer only), and
# image.quantize_text_encoders now states the other recipe under precision fp8 too (18.76 GiB: T5's linears at
# 1 byte, its embedding bf16 and its wo projections fp32). Hand: the int8wo row's 20.34 GiB (an 8-bit
# transformer, 11.9B x 1 B = 11.08 GiB, beside bf16 T5-XXL 4.76B, CLIP-L 123M and VAE 84M = 9.26 GiB).
@pytest.mark.django_db
def test_flux_fp8_dynamic_resident_weights_on_an_h100(bundled_catalog, tmp_path):
    row = _size(tmp_path, FP8_FLUX, H100)
    _within(row["memory"]["weights_gib"], 20.357, MEMORY)


# ---------------------------------------------------------------- mmyolo YOLOv8 COCO training memory [MMYOLO]

MMYOLO_MEMORY = [
    pytest.param("yolov8n", 2.8, id="yolov8n"),  # product 2.39 GiB (-14.5%): inside, at the edge
    pytest.param("yolov8s", 4.0, id="yolov8s"),  # product 3.84 GiB (-4.0%)
    pytest.param("yolov8m", 7.2, id="yolov8m"),  # product 6.41 GiB (-11.0%)
    pytest.param("yolov8l", 9.8, id="yolov8l"),  # product 9.64 GiB (-1.7%)
    pytest.param("yolov8x", 12.2, id="yolov8x"),  # product 12.03 GiB (-1.4%)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "published_gb"), MMYOLO_MEMORY)
def test_mmyolo_yolov8_coco_training_peak_allocated(bundled_catalog, tmp_path, preset, published_gb):
    """[MMYOLO] batch 16 per GPU ('the single-GPU batch size is 16'), 640 px, AMP (fp16: the detector presets'
    default), COCO (max objects: the default 93). mmyolo does not run Ultralytics' deterministic mode
    (image.deterministic: false; a time term only). SyncBN over 8 GPUs keeps the same per-GPU memory as BN.
    Memory only: the README gives no time. The 'n' model sits at the edge (-14.5%): its fixed terms (the
    assigner's and loss's per-anchor temporaries at 80 classes) weigh most there, and mmyolo's own loss path
    is not Ultralytics'."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": preset},
        "micro_batch_size": 16,
        "image": {"resolution_px": 640, "deterministic": False},
    }
    row = _size(tmp_path, spec, "a100-sxm4-80gb")
    _within(_allocated_gib(row), published_gb, MEMORY)  # mmengine MB = bytes // 2**20; 'GB' = MB / 1024


# ---------------------------------------------------------------- YOLO11 training on an RTX 3090 [TOF-Y11]


def _tof_yolo11(preset: str) -> dict:
    """batch=8, imgsz=640, amp=True (fp16: the detector presets' default), deterministic=True (the default
    image.deterministic), 20 epochs over 12,824 images; at most 11 objects an image (the largest Instances count
    the log shows for a batch's last images; the set averages one). The host is left at the rule's vCPUs: the log
    shows the loader does not bind (see the source note)."""
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "micro_batch_size": 8,
        "image": {
            "resolution_px": 640,
            "max_objects_per_image": 11,
            "epochs": 20,
            "dataset_images": 12_824,
        },
    }


TOF_MEMORY = [
    pytest.param("yolo11s", 2.34, id="yolo11s"),  # product 2.16 GB (-7.9%)
    pytest.param("yolo11m", 4.64, id="yolo11m"),  # product 4.48 GB (-3.4%)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "published_gb"), TOF_MEMORY)
def test_yolo11_training_reserved_memory_on_an_rtx_3090(bundled_catalog, tmp_path, preset, published_gb):
    row = _size(tmp_path, _tof_yolo11(preset), "rtx-3090")
    reserved_gb = (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * 2**30 / 1e9
    _within(reserved_gb, published_gb, MEMORY)


TOF_SPEED = [
    # 16.67 it/s x 8 = 133.4 images/s; product 114.7 (-14.0%). Hand: 21.6 GFLOPs (the log's fused-less summary)
    # e29: 142.2 (+6.7%) at the GeForce rate (compute_peak.geforce_rate; 119.6 just before).
    # x 3 (forward + backward) x 133.4 = 8.6 TFLOPS, 12% of the 3090's 71 fp16 tensor TFLOPS: a small detector at
    # batch 8 is bound by per-layer overheads, which the clock-based efficiency (FLOPs a cycle vs the V100)
    # carries over from the YOLOv5 V100 fit.
    pytest.param("yolo11s", 16.67 * 8, id="yolo11s"),
    # 9.61 it/s x 8 = 76.9 images/s; product 60.3 (-21.6%): 68.2 GFLOPs x 3 x 76.9 = 15.7 TFLOPS, 22% of peak.
    # e29: 74.8 (-2.7%) at the GeForce rate (62.9 just before).
    pytest.param("yolo11m", 9.61 * 8, id="yolo11m"),
]


# fill44 (stop 44): yolo11s 142.3 -> 127.4 (+6.7% -> -4.5%), yolo11m 74.82 -> 74.23 (-2.7% -> -3.4%): batch-8 fill on 82 SMs 0.819 / 0.897, geforce_detector_rate 1.26.
@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "published_images_s"), TOF_SPEED)
def test_yolo11_training_images_per_second_on_an_rtx_3090(
    bundled_catalog, tmp_path, preset, published_images_s
):
    row = _size(tmp_path, _tof_yolo11(preset), "rtx-3090")
    _within(row["throughput"]["training_images_per_second"], published_images_s, SPEED)


# fill44 (stop 44): 0.5006 -> 0.5592 h (-9.5% -> +1.1%): the batch-8 fill above.
@pytest.mark.django_db
def test_yolo11s_twenty_epoch_run_hours_on_an_rtx_3090(bundled_catalog, tmp_path):
    """'20 epochs completed in 0.553 hours' (validation of 535 images each epoch included, about 1.8 s of
    ~98 s). Product 0.621 h (+12.3%); 0.501 h (-9.4%) since e29's GeForce rate (0.596 just before)."""
    row = _size(tmp_path, _tof_yolo11("yolo11s"), "rtx-3090")
    _within(row["throughput"]["training_hours"], 0.553, SPEED)


# ---------------------------------------------------------------- ranking judgement: 100,000 FLUX.1-dev images

FLUX_100K = _flux(1) | {"image": {"images": 100_000}}


def _cheapest_per_gpu_hour(client_as, gpu: str) -> Decimal:
    """The bundled catalog's cheapest on-demand GPU-hour of a card, through GET /api/offers/ (illustrative demo
    prices left out, as the ranking leaves them out)."""
    response = client_as("viewer").get(f"/api/offers/?gpu={gpu}&pricing_model=on_demand&limit=500")
    assert response.status_code == 200
    rows = [r for r in response.json() if r["price_quality"] != "illustrative" and r["currency"] == "USD"]
    return min(Decimal(r["price_per_hour"]) / Decimal(r["gpu_count"]) for r in rows)


@pytest.mark.django_db
def test_flux_100k_images_top_row_by_hand(bundled_catalog, client_as, tmp_path):
    """Which offer makes 100,000 FLUX.1-dev images (bf16, 1024 px, 28 steps, eager diffusers) cheapest?
    Today's top row: lium L40S_4x (4 x L40S) on demand at 1.52 USD/h, 98.377 h (dit29: was 106.821 h before a
    DiT's rows counted its work per kernel, image_model.dit_equivalent_rows). By hand: compute 1.52 x 98.377 =
    149.533 -> 149.53; storage 3.47; total 153.00 USD; per 1,000 images 1.5300 USD. The product's time on the
    card: 98.377 h x 4 x 3600 / 100,000 = 14.17 s an image on an L40S (148 TFLOPS at 2,098 TFLOP an image, 41%
    of its 362 dense bf16; was 15.38 s).
    Judgement: the H100 leg of the comparison is inside the bar (published 6.573 s vs product 5.40 s above, -17.9%;
    6.37 s before dit29), the cost
    arithmetic is right, and 48 GB holds FLUX bf16 (35.8 GiB). The row's exposure is the L40S time, for
    which I found no published FLUX figure: the Ada board-power bound the team fitted (0.261 TFLOPS/W,
    docs: UNet generation) is not applied to the DiT; applied, 350 W x 0.261 = 91 TFLOPS -> 23 s an image,
    +50% cost (243 USD of compute). The robustness check: the catalog's cheapest on-demand H100 GPU-hour (lium
    H100-SXM_8x, 14.00 USD / 8 = 1.75) at the published eager 6.573 s is 100,000 x 6.573 / 3600 = 182.6 h x 1.75
    = 319.5 USD; compiled (4.209 s) 204.6 USD. Both exceed the row's 149.53 (162.37 before dit29), and the eager H100 exceeds even the
    power-bounded L40S, so the first row is right under either reading; only a compiled H100 against a
    power-bounded L40S would flip it (204.6 < 243). The assertion pins the eager break-even."""
    rows = _recommend(tmp_path, FLUX_100K, top=3)
    first = rows[0]
    assert first["fits"] and first["memory_per_gpu_gib"] <= first["memory_margin"]["capacity_gib"]
    price, hours = Decimal(first["price_per_hour"]), Decimal(str(first["hours"]))
    breakdown = {k: Decimal(v) for k, v in first["cost_breakdown"].items()}
    assert abs(breakdown["compute"] - _cents(price * hours)) <= Decimal("0.01")  # hours printed to 3 dp
    assert (
        breakdown["compute"] + breakdown["setup"] + breakdown["storage"] + breakdown["reruns"]
        == (breakdown["total"])
    )
    assert breakdown["total"] == Decimal(first["total_cost"])
    assert _cents(breakdown["total"] / 100) == _cents(first["unit_costs"]["per_thousand_images"])
    # the product's own time per image on that card equals what `size` says for it
    per_image = float(hours) * first["gpus"] * 3600 / 100_000
    sized = _size(tmp_path, _flux(1), first["gpu"])
    assert per_image == pytest.approx(sized["throughput"]["seconds_per_batch"], rel=0.01)
    # robustness: the cheapest H100 at the published time [TORCHAO] costs more than the top row's compute
    h100_at_published = _cheapest_per_gpu_hour(client_as, H100) * Decimal(100_000 * 6.573 / 3600)
    assert breakdown["compute"] < h100_at_published, (breakdown["compute"], h100_at_published)
