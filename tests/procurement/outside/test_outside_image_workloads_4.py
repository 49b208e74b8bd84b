"""A fourth outside practitioner's image cases for issue 29 (review x29, round 4). None of these measurements is
used by test_outside_image_workloads.py, _2.py, _3.py, image_workload_cases.json or docs/validation.md.

Each case is the spec a practitioner would write for the published run, sized the way a user sizes it
(`manage.py size --gpu SLUG --format json` and `manage.py recommend --format json` on the bundled catalog), and
compared with the published figure. Targets from the issue: memory within 15%, speed within 25% (speed is
compared as time per image or per step, the unit each source publishes). A case the product misses is a strict
xfail whose reason carries the measured gap and the diagnosed cause.

Sources (figures quoted in each case):
  [LCM] huggingface/blog lcm_lora.md (commit 062647cf135331f92028ace3a8ada12f0b76cec9;
      https://huggingface.co/blog/lcm_lora), section 'Benchmarks': SDXL base 1.0, 1024 px, fp16
      (variant="fp16", torch_dtype=torch.float16 in the post's code), batch 1, diffusers (PyTorch 2 SDPA, eager).
      Column 'SDXL standard (25 steps)' (default guidance 5.0: CFG, two UNet samples a step): T4 (Colab free)
      26.5 s, 3090 7 s, 4090 3.4 s, A100 (80 GB) 3.8 s. Column 'SDXL LoRA LCM (4 steps)' (LCMScheduler,
      guidance_scale=1.0: no CFG; the LCM-LoRA loaded with load_lora_weights, not fused): 4090 0.7 s,
      A100 (80 GB) 1.2 s.
  [SD3] huggingface/blog sd3.md (commit 04fdd03d5565a696b9fcfa5da34f302750adeceb; https://huggingface.co/blog/sd3),
      'Summary of Memory Optimizations': SD3 Medium (2B), A100 80GB, fp16, PyTorch 2.3, the pipeline's default
      arguments (1024 px, 28 steps, guidance 7.0: CFG, T5 max_sequence_length 256), batch 1, mean of 10 calls
      after 3 warm-up calls: 'Default | 4.762 | 18.765' (seconds, GB).
  [MLPERF41] mlcommons/inference_results_v4.1 (commit a2f5d66d17e8f75c02fd74dfe810ecca6a046696), closed division,
      stable-diffusion-xl Offline (20 steps, guidance 8, 1024 px: the MLPerf SDXL rules), TensorRT:
      closed/NVIDIA/results/H200-SXM-141GBx8_TRT/.../Offline/performance/run_1/mlperf_log_summary.txt
      'Samples per second: 17.4186' VALID, 8 x H200, config closed/NVIDIA/configs/stable-diffusion-xl/Offline/
      __init__.py: precision = "fp8" (the UNet quantized with ModelOpt), gpu_batch_size unet 32 * 2 (32 images,
      CFG), vae 8;
      closed/Cisco/results/C240M7_L40Sx2_TRT/.../Offline/performance/run_1/mlperf_log_summary.txt
      'Samples per second: 1.36759' VALID, 2 x L40S, config closed/Cisco/configs/stable-diffusion-xl/Offline/
      __init__.py class C240M7_L40Sx2: precision = "int8", gpu_batch_size unet 1 * 2.
  [Y10DOC] ultralytics/ultralytics docs/en/models/yolov10.md (commit 00772cfc98c17444f710e6dec92b45145730eba7),
      'Comparisons' table (from the YOLOv10 paper, Table 1), column 'Latency-forward (ms)': TensorRT FP16 on a T4,
      batch 1, 640 px, the forward pass without post-processing: YOLOv8n 1.77, YOLOv8m 5.09, YOLOv8l 8.06,
      YOLOv8x 12.83.
  [Y11X] a YOLO11x training script's saved log in the public index (find_string id 44833733781; project path
      /home/zhangkaifeng/projects/YONGONCHICKENFISH/src/detection-yolov11): Ultralytics 8.3.47, torch 2.5.1+cu124,
      'CUDA:0 (NVIDIA GeForce RTX 4090, 24177MiB)', yolo11x.pt, imgsz=608, default batch 16 (520 iterations an
      epoch: ~8,320 train images; the val loader's 29 batches of 32 hold 924 images with 321 instances, a sparse
      set), epoch 207: 'GPU_mem 14.9G ... 520/520 [01:43<00:00, 5.05it/s]'; '207 epochs completed in 6.199 hours.'
  [SDB] alexeigor/sd-benchmarks README.md (commit 858318038b3c451ac0b72788c355008bf20366c5), with its script
      PyTorch/test_pt.py (same commit): diffusers DiffusionPipeline, fp16, batch 1, guidance 7.5 (CFG), 50 steps,
      5 warm-up calls, mean of 10 timed calls; 'compile' = torch.compile(pipe.unet, mode="reduce-overhead",
      fullgraph=True) (fused kernels and CUDA graphs for the UNet only). SDXL 1024 px, 'PT2.0,fp16 + compile':
      A100-SXM 40GB 5.35 s, RTX 4090 6.02 s, RTX 6000 Ada 9.07 s. SD 1.5 512 px: 'PT2.0,fp16' (eager, SDPA)
      A100-SXM 40GB 1.96 s, H100-PCIe 80GB 1.44 s; 'PT2.0,fp16,xformers' V100 16gb 2.96 s, T4 16gb 7.83 s;
      'PT2.0,fp16,compile' H100-SXM 0.83 s, RTX 4090 1.17 s, L40 2.09 s.
  [TOME] huggingface/diffusers docs/source/en/optimization/tome.md (commit 3e385a6f30ae90cbce29cdf74fde1f0daec1b3cd),
      'Benchmarks': SD 1.5 fp16, diffusers 0.15.1, PyTorch 1.13.1 (no SDPA: diffusers' eager AttnProcessor),
      column 'Vanilla' on a V100: 512 px batch 4 ran (5.7 s), batch 8 'OOM'; 1024 px batch 1 'OOM'.

Units. GPU_mem is torch.cuda.memory_reserved() / 1e9 (Ultralytics): compared with (total - cuda_context_gib)
in GB. [SD3]'s 'Memory (GB)' comes from the author's benchmark gist (torch.cuda.max_memory_allocated / 1024**3 in
his other diffusers benchmarks): compared with the estimate less framework_overhead_gib.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

GIB = 2.0**30
MEMORY, SPEED = 0.15, 0.25


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


def _seconds_per_image(row: dict) -> float:
    return 1.0 / row["throughput"]["images_per_second_per_gpu"]


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _cents(value) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


# ---------------------------------------------------------------- SDXL 25 steps, batch 1, four cards [LCM]

SDXL_25 = {"task": "inference", "model": {"preset": "sdxl"}, "precision": "fp16", "image": {"steps": 25}}

# Hand: the product's own count is 348.6 TFLOP an image (50 UNet samples of ~6.76 TFLOP at a 128 x 128 latent,
# plus ~10.6 TFLOP of VAE decode and text encoders). The published time gives the achieved rate:
#   T4    348.6 / 26.5 = 13.2 TFLOPS = 20% of its 65 dense fp16      (product 18.46 s: 18.9 TFLOPS, 29%)
#   3090  348.6 / 7.0  = 49.8 TFLOPS = 70% of its 71 (fp32 accumulate) (product 10.69 s: 32.6 TFLOPS, 46%)
#   4090  348.6 / 3.4  = 102.5 TFLOPS = 62% of its 165.2               (product 5.37 s: 65 TFLOPS, 39%)
#   A100  348.6 / 3.8  = 91.7 TFLOPS = 29% of its 312                  (product 3.01 s: 116 TFLOPS, 37%)
# The two GeForce cards reach twice the fraction of peak the product gives them: the work-per-kernel curve
# (image_peak_efficiency 0.534 x rows / (rows + 549 x peak / 312), fitted on an L40S and an A100) caps them near
# 40-46%, while a 4090/3090 at batch 1 runs SDXL's convolutions near their (half-rate-accumulate) peak and boosts
# above its rated clock. The T4 goes the other way (a 70 W card that throttles under sustained fp16 load; the
# Colab free tier also shares a slow host).
SDXL_25_CASES = [
    # Was a strict xfail: product 18.46 s (-30.3%). Now 20.39 s (-23.1%): the T4's diffusion row (0.322 of
    # its peak, fitted on diffusers' torch2.0.md SD 1.5 batch-16 T4/A100 ratio) replaces the ResNet-50 one.
    pytest.param("t4", 26.5, id="t4"),
    # Was a strict xfail: product 10.69 s (+52.7%). Now 5.72 s (-18.3%): the 3090's diffusion row (1.161 of
    # its fp32-accumulate figure, fitted on torch2.0.md's compiled batch-16 3090/A100 ratio). sd29: 6.40 s (-8.5%):
    # under the optimized stack the row stops at the card's own 71 TFLOPS (assumptions.image_card_ceiling).
    pytest.param("rtx-3090", 7.0, id="rtx-3090"),
    # Was a strict xfail: product 5.37 s (+57.9%). Now 3.50 s (+3.0%): the 4090's diffusion row (1.011,
    # fitted on torch2.0.md's compiled batch-16 4090/A100 ratio, not on this source). sd29: 3.53 s (+3.7%): the
    # row stops at the card's own 165.2 TFLOPS (assumptions.image_card_ceiling).
    pytest.param("rtx-4090", 3.4, id="rtx-4090"),
    pytest.param("a100-sxm4-80gb", 3.8, id="a100-sxm4-80gb"),  # product 3.01 s (-20.7%): agree
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "published_s"), SDXL_25_CASES)
def test_sdxl_25_steps_batch_1_per_card(bundled_catalog, tmp_path, gpu, published_s):
    row = _size(tmp_path, SDXL_25, gpu)
    assert row["verdict"] != "does_not_fit"  # SDXL fp16 (12 GiB peak with the fp32 VAE decode) fits 16-80 GB
    _within(_seconds_per_image(row), published_s, SPEED)


# ---------------------------------------------------------------- SDXL + LCM-LoRA, 4 steps, no CFG [LCM]

SDXL_LCM = {
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    # the post's code: pipe.load_lora_weights("latent-consistency/lcm-lora-sdxl"), no fuse_lora (rank 64: the
    # adapter's 197M weights, huggingface.co/latent-consistency/lcm-lora-ssd-1b model card)
    "image": {"steps": 4, "guidance": "none", "unfused_lora_rank": 64},
}


# Was a strict xfail: "[LCM] SDXL + LCM-LoRA 4 steps on an RTX 4090 (img7, round-4 fix): was 0.628 s (-10.2%),
# agreeing by compensation; with the 4090 at its measured diffusion rate (the 25-step case now +3.0%) the product
# says 0.427 s (-39.0%): ... no inference adapter term for the unfused PEFT LoRA layers (their extra down/up
# matmuls, scale and add on every adapted layer) and the pipeline's fixed per-call work, ~0.27 s here".
# Now 0.779 s (+11.3%): the spec states the unfused adapter (image.unfused_lora_rank 64), whose 788 PEFT layers
# add 4 host kernels each (3,152 a step beside the UNet's 2,151: the step waits on the host), 6 passes over
# each adapted output and their matmuls (image_model.unfused_adapters). Still not sized for speed: SDXL's VAE
# decode runs upcast to fp32 (force_upcast; image_model.vae_decode_bytes_per_element counts it for memory only):
# at the 4090's TF32 rate with 4-byte traffic it would add ~0.12 s (0.90 s, +29%) here, and move the blog's other
# cells toward their published times (T4 LCM -67% -> -22%, A100 -36% -> -28%, 3090 -40% -> -26%); this case
# would then want a faster host than eager_kernel_host_s's A100-cloud fit (31 us a kernel).
@pytest.mark.django_db
def test_sdxl_lcm_4_steps_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[LCM] 'SDXL LoRA LCM (4 steps)' on a 4090: 0.7 s. SDXL at 4 steps without CFG (guidance_scale=1.0
    skips the unconditional pass), the LCM-LoRA loaded and not fused.
    Hand: 4 x 6.76 TFLOP + 10.6 TFLOP (VAE decode at 1024 px, fp32 upcast, and text encoders) = 37.6 TFLOP; at
    the 102 TFLOPS the 4090 reached on the 25-step column = 0.37 s. A step's host work: (2,151 UNet and
    pipeline kernels + 788 adapted layers x 4) x 31 us = 0.164 s against ~0.11 s of GPU work (the adapters'
    passes included): ~0.054 s a step on the host, 0.21 s over 4 steps. Product 0.779 s (+11.3%): agree."""
    row = _size(tmp_path, SDXL_LCM, "rtx-4090")
    _within(_seconds_per_image(row), 0.7, SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="EXPLAINED (vit45; re-based by fixa45 after aud45a on the post's own rows): (a) the host's launch time "
    "a kernel: the 4-step call without CFG is host-bound (4 x 5,303 kernels a step with the unfused adapter) and "
    "1.2 s needs ~52 us a kernel where the product prices 31 (eager_kernel_host_s, fal's A100 host). (b) A proof "
    "from the post's table (huggingface/blog lcm_lora.md @062647cf, 'Benchmarks'): the same script's RTX 4090 row, "
    "0.7 s, lands at 31 us a kernel (+11.3%, test_sdxl_lcm_4_steps_on_an_rtx_4090), while the A100 80 GB, faster "
    "than the 4090 on every datasheet axis this call uses (2.0x the memory bandwidth, 1.9x the fp16 tensor rate "
    "with fp32 accumulate), takes 1.71x as long (1.2 s): no model of the stated GPU and software meets both rows "
    "with one host, the A100's host needs ~1.7x the 4090's time a kernel; PixArt-alpha's README @327893d0 reran "
    "this row on a V100 32GB in the same 1.2 s (the call follows the host, not the card). The size of that host, "
    "~52 us, is the row's own requirement. Not shown: the diffusers team's A100 host in docs/source/en/"
    "optimization/torch2.0.md @2c529b75 ('A100 (batch size: 1)' SD txt2img 21.66 it/s eager, 44.03 compiled, 11.6 "
    "at batch 4: host-bound, ~46 us a kernel, at which this case is 1.082 s, -9.8%) ran PyTorch 2.0 with 'diffusers "
    "0.17.0.dev0' (its Benchmark section; spring 2023, diffusers PR #3313), and nothing shows it is the machine "
    "of this November 2023 post, which needed a later diffusers for LCM-LoRA: it is consistent, not evidence of "
    "the size. (c) A spec would need the "
    "host's launch time a kernel: no field states it and the post names no machine. History: "
    "[LCM] SDXL + LCM-LoRA 4 steps on an A100 80GB, the adapter stated unfused (image.unfused_lora_rank "
    "64): product 0.763 s vs published 1.2 s (-36.4%; was 0.373 s, -68.9%, before diff29 counted the adapter's "
    "3,152 kernels a step). e29b, the fixed per-image work is counted: the product's 39.8 TFLOP an image holds "
    "the two text encoders and the 1024 px VAE decode beside the 4 UNet steps (4 x 6.76 TFLOP + ~10.6 of "
    "decode and encoders). One part is counted at the wrong rate: SDXL's decode runs upcast to fp32 "
    "(force_upcast), which image_model.vae_decode_bytes_per_element counts for memory only; at the A100's "
    "TF32 rate it moves this case -36% -> -28% and the 4090 case +11% -> +29% (the note at the 4090 case), "
    "so it does not close this gap. 37.6 TFLOP in 1.2 s is 10% of the A100's peak and slower than the 4090 "
    "(0.7 s): the host binds. The 4090 case lands (+11.3%) at the same 31 us a kernel, so what is left is "
    "this host's speed: 1.2 s needs ~52 us a kernel "
    "(4 steps x 5,303 kernels on the host), a cloud VM's cores, which the spec cannot state. gen29, two other "
    "publications say the same: (1) this post's script is the diffusers team's (Sayak Paul), whose own A100 "
    "rows in diffusers' torch2.0.md put their host at ~46 us a kernel (SD 1.5 eager batch 1, 21.66 it/s; its "
    "V100 18.99: host-bound on both; assumptions eager_kernel_host_s: published range 31-46 us); at 46 us this "
    "case is 1.082 s (-9.8%); (2) PixArt-alpha/PixArt-alpha README.md @327893d0 reruns this row on a "
    "V100 32GB: 1.2 s, the A100's time on a card with 40% of its fp16 peak (its 25-step SDXL 7.7 s, 2.0x the "
    "A100's 3.8), so the 4-step call follows the host, not the card (product: V100 0.950 s at 31 us, 1.196 s at "
    "46 us). The 4090 case of this post needs the fast end: a host speed neither post states, left. "
    "diff29 (stop 42), still 0.763 s (-36.4%): in the same table the A100 is slow in both columns (25 steps 3.8 s "
    "vs 3.01, -20.7%) where the 4090 lands in both (+3.0%, +11.3%); the product puts the A100 at 0.86x / 0.98x "
    "the 4090's time, the table at 1.12x / 1.71x, so a few-step fixed-cost class (which would move the 4090's "
    "4-step row too) is ruled out: it is that machine. diffspeed43 (stop 43), still 0.763 s (-36.4%): the one "
    "per-image host cost the product leaves out of an eager pipeline, sized: the two text encoders' launches "
    "(transformers' CLIPEncoderLayer ~22 kernels a layer with quick_gelu, ~20 with gelu: CLIP-L 12 and "
    "OpenCLIP-bigG 32 layers, ~900 with embeddings and projection, once a prompt without CFG) at 31 us are "
    "~28 ms an image, on this case and the 4090's alike (-34.1% / +15.3%): too small to close this gap, and "
    "not adopted at this stop; vision_peak_efficiency's refit (ViTs only) does not touch UNets. diff44 (stop 44), "
    "unchanged (0.763 s): the post's whole table against the product (huggingface/blog lcm_lora.md @062647cf, "
    "'Benchmarks'): LCM column 3090 1.4 s vs 0.905 (-35%), T4 8.4 vs 2.77 (-67%), A100 1.2 vs 0.763 (-36%), 4090 "
    "0.7 vs 0.78 (+11%); 25-step column 3090 7.0 vs 6.40 (-8.5%), T4 26.5 vs 20.39 (-23%), A100 3.8 vs 3.01 (-21%), "
    "4090 3.4 vs 3.53 (+3.7%). The timing script the post cites (huggingface.co/datasets/pcuenq/gists, "
    "sayak_lcm_benchmark.py) is not in the index, so its guidance_scale is unchecked; the post's code passes "
    "guidance_scale=1 ('which effectively disables it'), as the spec states. Stated with CFG on (image.guidance "
    "cfg) the product gives A100 0.750 s (-37.5%: the step stays host-bound), 3090 1.514 (+8.1%), 4090 0.927 "
    "(+32%), T4 4.81 (-43%): CFG on does not bring the A100 row in either, and moves the 4090 out. Every "
    "condition the post states (guidance, steps, scheduler, the unfused adapter, eager fp16) is in the spec; "
    "what is left is the machine (above). Left.",
)
def test_sdxl_lcm_4_steps_on_an_a100(bundled_catalog, tmp_path):
    row = _size(tmp_path, SDXL_LCM, "a100-sxm4-80gb")
    _within(_seconds_per_image(row), 1.2, SPEED)


# ---------------------------------------------------------------- SD3 Medium on an A100 80GB [SD3]

SD3_DEFAULT = {
    "task": "inference",
    "model": {"preset": "sd3-medium"},
    "precision": "fp16",
    "image": {"steps": 28},
}


@pytest.mark.django_db
def test_sd3_medium_default_pipeline_time_on_an_a100(bundled_catalog, tmp_path):
    """[SD3] 'Default | 4.762' s. Hand: the product counts 514.8 TFLOP an image (28 steps x 2 CFG samples of the
    2B MMDiT over 4,096 image + 333 text tokens, VAE decode, CLIP-L, CLIP-G and T5-XXL); at the ~29-37% of the
    A100's 312 TFLOPS that SDXL's eager pipeline reaches on the same card (above) = 4.5-5.7 s. Product 3.81 s
    (-20.0%): agree, at the fast edge."""
    row = _size(tmp_path, SD3_DEFAULT, "a100-sxm4-80gb")
    _within(_seconds_per_image(row), 4.762, SPEED)


@pytest.mark.django_db
def test_sd3_medium_default_pipeline_memory_on_an_a100(bundled_catalog, tmp_path):
    """[SD3] 'Default | ... | 18.765' GB. Hand (fp16, every component on the GPU): MMDiT 2.03e9 x 2 B = 3.78 GiB,
    CLIP-L 0.123e9 x 2 = 0.23, OpenCLIP-bigG 0.695e9 x 2 = 1.29, T5-XXL encoder 4.76e9 x 2 = 8.86, VAE 0.084e9 x
    2 = 0.16 -> 14.33 GiB of weights, plus the VAE decode's activations at 1024 px (~2 GiB) = 16.4 GiB.
    Product 16.45 GiB allocated (-12.3%; 17.27 GiB if the blog's figure was the allocator's reserve, -8.0%):
    agree either way."""
    row = _size(tmp_path, SD3_DEFAULT, "a100-sxm4-80gb")
    memory = row["memory"]
    _within(memory["total_per_gpu_gib"] - memory["framework_overhead_gib"], 18.765, MEMORY)


# ---------------------------------------------------------------- MLPerf Inference v4.1 SDXL Offline [MLPERF41]

MLPERF_SDXL = {
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp8",  # the product's 8-bit tensor-core precision; see each case
    "image": {"steps": 20, "fused_kernels": True},  # TensorRT engines
}


# Was a strict xfail: product 0.277 s (-39.7%) with every FLOP at the fp8 peak; img7 (round 4): 0.323 s (-29.6%)
# with only the UNet's convolutions and linears at the fp8 peak ("[MLPERF41] ... the run reached 2.18 images/s x
# 281 TFLOP = 612 TFLOPS, 62% of the dense fp16 peak but 31% of fp8's; NVIDIA's fp8 H100 result in the same round
# (16.35 samples/s on 8 GPUs) is no faster than The_Stage's fp16 H100 run that docs/validation.md uses (18.10)").
# img8 (round 5): now 0.487 s (+5.9%): the quantized layers at eight_bit_diffusion_rate (0.581 of the fp8 peak,
# 1.16x the bf16 rate), calibrated on that H100 fp8 run (16.3484 samples/s, DGX-H100_H100-SXM-80GBx8_TRT), not
# on this one.
@pytest.mark.django_db
def test_mlperf_v41_sdxl_offline_fp8_on_an_h200(bundled_catalog, tmp_path):
    row = _size(tmp_path, MLPERF_SDXL | {"micro_batch_size": 32}, "h200-sxm-141gb")
    assert row["verdict"] != "does_not_fit"  # NVIDIA ran it: 32 images (64 UNet samples) a batch
    _within(_seconds_per_image(row), 8 / 17.4186, SPEED)


# Was a strict xfail: product 1.069 s (-26.9%), every FLOP at the 8-bit peak. Now 1.216 s (-16.8%): only the
# UNet's convolutions and linears at the 8-bit peak, attention, VAE and CLIP at the 16-bit one
# (compute_peak.low_bit_image_peak). img8 (round 5): 1.657 s (+13.3%) with the 8-bit layers at
# eight_bit_diffusion_rate (0.581 of the 8-bit peak, fitted on NVIDIA's H100 fp8 run of the same round).
@pytest.mark.django_db
def test_mlperf_v41_sdxl_offline_int8_on_an_l40s(bundled_catalog, tmp_path):
    row = _size(tmp_path, MLPERF_SDXL | {"micro_batch_size": 1}, "l40s")
    _within(_seconds_per_image(row), 2 / 1.36759, SPEED)


# ---------------------------------------------------------------- YOLOv8 TensorRT FP16 on a T4 [Y10DOC]

YOLOV8_T4 = [
    # Was a strict xfail: product 1.33 ms (-25.1%), the A100 TensorRT floor and slope carried to the T4. Now
    # 1.593 ms (-10.0%) (det29: a TensorRT forward still writes and reads each fused Conv-BN-SiLU output, 0.32
    # ms at the T4's 0.7 x 320 GB/s, which the A100 fit had folded into its slope and floor; refitted on the
    # same two A100 rows with that traffic counted: detector_tensorrt_efficiency 0.360). det29c: 1.56 ms
    # (-11.6%) with the rate by work per image and the 0.743 ms floor (solved on three A100 rows).
    pytest.param("yolov8n", 1.77, id="yolov8n"),
    # product 5.42 ms (+6.4%; 5.38, +5.6%, before det29c; was 4.77, -6.4%, before det29)
    pytest.param("yolov8m", 5.09, id="yolov8m"),
    pytest.param("yolov8l", 8.06, id="yolov8l"),  # product 9.82 ms (+21.8%; 9.70, +20.3%, before det29c)
    pytest.param("yolov8x", 12.83, id="yolov8x"),  # product 14.30 ms (+11.4%; 14.09, +9.8%, before det29c)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "published_ms"), YOLOV8_T4)
def test_yolov8_tensorrt_fp16_forward_on_a_t4(bundled_catalog, tmp_path, preset, published_ms):
    """Hand for YOLOv8x: 257.8 GFLOPs (the table's fused count, 640 px) / 12.83 ms = 20.1 TFLOPS = 31% of the T4's
    65 dense fp16: the product's detector_efficiency (0.314, fitted on the A100 table) carries to the T4 for
    the large models; the small ones are set by the per-forward floor. det29: the fused layers' output
    traffic is counted apart (0.32 ms for YOLOv8n, 2.2 ms for YOLOv8x at the T4's 0.7 x 320 GB/s) and the
    convolutions run at detector_tensorrt_efficiency (0.360, the same A100 rows refitted with it). det29c: at
    0.352 x work / (work + detector_tensorrt_half_gflops scaled to the card's peak), 0.348 of peak for YOLOv8x
    on the T4."""
    spec = {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": 1,
        "image": {"fused_kernels": True},
    }
    row = _size(tmp_path, spec, "t4")
    _within(_seconds_per_image(row) * 1000.0, published_ms, SPEED)


# ---------------------------------------------------------------- YOLO11x training on an RTX 4090 [Y11X]

YOLO11X_4090 = {
    "task": "full_finetune",
    "model": {"preset": "yolo11x"},
    "precision": "fp16",
    "micro_batch_size": 16,
    # 207 epochs of 520 x 16 = 8,320 images; a sparse set (321 instances in 924 val images): at most a few
    # objects an image, stated as 8 (the default 93 adds 0.5 GiB)
    "image": {"resolution_px": 608, "epochs": 207, "dataset_images": 8320, "max_objects_per_image": 8},
}


@pytest.mark.django_db
def test_yolo11x_training_memory_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[Y11X] GPU_mem 14.9G at epoch 207. Hand: 56.9M parameters (fp32 weights, gradients, SGD/AdamW states:
    ~0.85 GiB) plus the activations of 16 images at 608 px (~12.7 GiB for YOLO11x's C3k2/C2PSA blocks kept for
    backward under AMP) = ~13.6 GiB allocated, ~14-15 GB reserved. Product 14.87 GiB total -> (14.87 - 0.6
    CUDA context) x 1.0737 = 15.32 GB reserved (+2.8%): agree."""
    row = _size(tmp_path, YOLO11X_4090, "rtx-4090")
    reserved_gb = (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9
    _within(reserved_gb, 14.9, MEMORY)


# fill44 (stop 44): 0.2044 -> 0.1938 s (+3.2% -> -2.1%): its batch-16 608 px step fills the 4090's 128 SMs 0.951, geforce_detector_rate 1.26.
# Was a strict xfail: "[Y11X] YOLO11x training step (batch 16, 608 px) on an RTX 4090: product 0.2945 s vs
# published 1 / 5.05 it/s = 0.198 s (+48.7%); measured 80.8 images/s x 527.7 GFLOP (the product's own count: 3 x
# 175.9 GFLOP forward) = 42.6 TFLOPS = 25.8% of the 165.2 dense fp16 peak, the product allows 17.4%
# (detector_training_efficiency fitted on V100 YOLOv5 times, plus the deterministic fill); as for SDXL above, the
# GeForce 4090 is under-rated". Now 0.243 s (+22.8%): the fit's work per image is scaled by the card's dense
# FLOPs per clock, not its peak (a kernel's fixed latency is cycles; assumptions
# detector_training_reference_clock_mhz, procurement/data/gpu_clocks.csv): the 4090 reaches its 165.2 TFLOPS at
# 2,520 MHz, 65,556 FLOPs a clock, 0.80 of the V100's 81,699, so the step's kernels are better fed than its peak
# said: 0.2500 of peak (was 0.1998) before the fill, 12.78 ms of compute + 2.42 ms of fill an image. Nothing
# fitted: the clock is the Ada whitepaper's. The same rule moves the A100 YOLO11x log
# (test_outside_image_workloads_2.py, 1,410 MHz) from +12.0% to +8.5%. Left: the 4090 holds clocks above its
# rated boost under load, which no datasheet states. e29: 0.2045 s (+3.3%) at the GeForce rate
# (compute_peak.geforce_rate, 1.19: the ViT fit's ratio, not fitted on this case).
# Was 0.1938 s (-2.1%), now 0.1908 s (-3.6%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step).
@pytest.mark.django_db
def test_yolo11x_training_step_on_an_rtx_4090(bundled_catalog, tmp_path):
    row = _size(tmp_path, YOLO11X_4090, "rtx-4090")
    _within(16 / row["throughput"]["training_images_per_second"], 1 / 5.05, SPEED)


# fill44 (stop 44): 6.11 -> 5.80 h (-1.4% -> -6.5%): the step above.
# Was a strict xfail: "[Y11X] 207 epochs of YOLO11x on an RTX 4090: product 8.81 h vs published 6.199 h (+42.1%;
# the published run includes ~0.21 h of per-epoch validation, 29 batches at 7.84 it/s, so training alone is ~5.99 h
# and the gap +47%); same cause as the step time". Now 7.27 h (+17.3%; +21.4% against training alone): the step
# above at the card's FLOPs per clock. e29: 6.114 h (-1.4%) at the GeForce rate.
# Was 5.80 h (-6.5%), now 5.70 h (-8.0%) because geforce_detector_rate 1.26 -> 1.28 (fixd44: refitted by log least squares, 1.281, once the RTX 2080 SUPER fit row has its 48 SMs; rate x 1.28 / 1.26 = 1.0159 on this GPU-bound step).
@pytest.mark.django_db
def test_yolo11x_training_run_hours_on_an_rtx_4090(bundled_catalog, tmp_path):
    row = _size(tmp_path, YOLO11X_4090, "rtx-4090")
    _within(row["throughput"]["training_hours"], 6.199, SPEED)


# ---------------------------------------------------------------- SDXL / SD 1.5 on seven cards [SDB]

# Hand, SDXL compiled: 50 steps x 2 CFG samples x 6.76 TFLOP + 10.6 TFLOP = 686.7 TFLOP an image (the product's
# own count). A100 40GB: 686.7 / 5.35 = 128 TFLOPS = 41% of 312 (product 4.98 s, -6.9%). RTX 4090: 686.7 / 6.02 =
# 114 TFLOPS = 69% of its 165.2 (product 8.64 s: 79 TFLOPS, 48%). RTX 6000 Ada: 686.7 / 9.07 = 76 TFLOPS = 21% of
# its 364 (product 4.39 s: 156 TFLOPS, 43%): the 300 W workstation card runs SDXL slower than the 450 W 4090 of the
# same AD102 die, while the product ranks it 2x faster from its datasheet peak.
# diff29: the three Ada runs of SDXL reach the same FLOPs per board watt (4090 0.254, RTX 6000 Ada 0.252, the L40S
# forward of docs/validation.md 0.261 TFLOPS/W): compute_peak.power_bound_tflops bounds a UNet's rate there.
SDB_SDXL = [
    pytest.param("a100-sxm4-40gb", 5.35, id="a100-sxm4-40gb"),
    # Was a strict xfail: product 8.64 s (+43.6%). Now 5.00 s (-16.9%): the 4090's diffusion row. diff29: 5.85 s
    # (-2.9%): the 450 W board's bound on a UNet's rate (ada_unet_tflops_per_watt, fitted on the L40S forward).
    pytest.param("rtx-4090", 6.02, id="rtx-4090"),
    # Was a strict xfail: "[SDB] SDXL 50 steps, UNet compiled, on an RTX 6000 Ada: product 4.39 s vs published
    # 9.07 s (-51.6%); measured 76 TFLOPS = 21% of the 364 datasheet peak, slower than the 4090 (6.02 s) on the
    # same AD102 die; the product scales by the datasheet peak and has no power-limit term (300 W vs 450 W)"
    # (img7, round-4 fix: 6.42 s, -29.2%, with the card's diffusion row, fitted on TensorRT SD 1.5 at batch 1).
    # Now 8.77 s (-3.3%): 364.2 is the dense fp16 figure with full-rate fp32 accumulate (the datasheet's 1,457
    # headline is fp8 with sparsity), but a saturated UNet on an Ada card runs at its board power x
    # ada_unet_tflops_per_watt (0.261, fitted on diffusers/benchmarks' L40S SDXL forward, not on this README):
    # 686.7 TFLOP / (0.261 x 300 W) = 8.77 s. Hand, per watt on this README's row: 686.7 / 9.07 / 300 = 0.252,
    # the 4090's 686.7 / 6.02 / 450 = 0.254.
    pytest.param("rtx-6000-ada", 9.07, id="rtx-6000-ada"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "published_s"), SDB_SDXL)
def test_sdxl_50_steps_compiled_unet_per_card(bundled_catalog, tmp_path, gpu, published_s):
    spec = {
        "task": "inference",
        "model": {"preset": "sdxl"},
        "precision": "fp16",
        "image": {"steps": 50, "fused_kernels": True},
    }
    _within(_seconds_per_image(_size(tmp_path, spec, gpu)), published_s, SPEED)


# Hand, SD 1.5 at 512 px: the product counts 82.8 TFLOP an image (100 UNet samples of ~0.8 TFLOP at a 64 x 64
# latent, plus the VAE decode and CLIP). Eager A100 40GB: 82.8 / 1.96 = 42 TFLOPS = 14% of peak, a latency-bound
# batch of 2 (the product, fitted on fal's 1.59 s on an A100 80GB, says 1.59 s: -19.1%). The V100 and the T4 reach
# 82.8 / 2.96 = 28 TFLOPS (22% of 125) and 82.8 / 7.83 = 10.6 TFLOPS (16% of 65); the product makes both ~40% too
# fast. Compiled, published times are 0.69-0.83 of eager (A100 1.36 / 1.96 in the same README), the product's
# fused_kernels halve them: only the 4090 lands.
# img8 (round 5), the joint refit of a small-batch fill and eager_kernel_host_s asked for on the SD 1.5 [SDB]
# misses: the published rows do not support a batch-dependent term. diffusers' torch2.0.md @2c529b75 (PyTorch 2.0,
# diffusers 0.17) has host-free compiled rows (mode reduce-overhead: CUDA graphs) at batch 1, 4 and 16: on the A100
# 22.7, 68.4 and 261.1 ms a step against the engine's 15.3, 44.2 and 159.9 (-33%, -35%, -39%), and GPU-bound eager
# rows at batch 4 and 16 at -34% and -36%; the T4 (-32% to -40%), 3090 (-30% to -40%) and 4090 compiled (-32% to
# -39%) rows the same. The miss does not shrink with the batch: it is SD 1.5's rate on that stack, not the fill of
# small GEMMs, and a batch-1 eager step's GPU work (~27 ms at that rate) stays under fal's 31.8 ms, so the 31 us a
# kernel fitted there is not confounded. One ceiling for UNets with heads under 64 wide (SD 1.5's 40; 0.327 of peak
# in place of 0.534, fitted on the batch-16 compiled row) puts every torch2.0.md row on the A100, T4, 3090 and 4090
# within -6%..+12% (V100 +2%..+23%) and passes all five SD 1.5 xfails below (V100 -6%, T4 -1%, H100 -11%, 4090
# +11%, L40 -24%), but moves sayakpaul's 2024 SD 1.5 compiled A100 run (image_workload_cases.json diffusers-fast-sd15-a100-
# bf16-compiled: bf16, fused QKV, max-autotune, 0.493 s for 30 steps, ~15 ms a step) from -1% to +61%. No single
# ceiling passes both (that case needs >= 0.43, the H100 compiled one <= 0.38): on the same A100, PyTorch 2.0's
# SD 1.5 step is 1.5x the 2024 stack's. The 2023 README's other fused stacks agree with the newer one
# (alexeigor/sd-benchmarks README @021a7dbb, A100-SXM4-40GB: AITemplate 1.01 s, OneFlow 0.98 s for 50 steps, vs
# PT2.0 compile 1.36 s). The engine keeps the current stack's rate; these cases measure PyTorch 2.0's, which the
# spec could not state (img9: image.runtime states it now, below). The V100 rows of torch2.0.md do not agree
# with the engine either (eager batch 1 -33%).
# img9 (round 6): the spec states the software stack (image.runtime), a fact of each run, not a tuning. The README
# labels every SD 1.5 row 'PT2.0'; the Dockerfile of the commit that added each row (alexeigor/sd-benchmarks) says
# which PyTorch ran it, none 2.2 or later (where SDPA runs FlashAttention-2): V100/T4 xformers (ba0c4ff, 2023-04-23)
# 'FROM nvcr.io/nvidia/pytorch:23.03-py3' (PyTorch 2.0.0a0); A100 eager (faacca1, 2023-04-29) and H100 PCIe eager
# (5f4b1b2, 2023-05-04) 'RUN pip install torch torchvision torchaudio --index-url https://download.pytorch.org/
# whl/cu118' (2.0.0/2.0.1 then); H100 SXM compiled (a43a9d0, 2023-06-10) 'FROM nvcr.io/nvidia/pytorch:23.05-py3'
# (2.0.0a0); RTX 4090 and L40 compiled (4b2141a, 53284e9, 2023-12-30) 'FROM nvcr.io/nvidia/pytorch:23.10-py3'
# (the 2.1.0a0 pre-release). image.runtime 'pytorch-2.0' runs SD 1.x's UNet at pytorch_2_0_narrow_unet_rate (0.65
# of the optimized rate, fitted on diffusers' torch2.0.md compiled A100 rows, not on these cases); the eager A100
# and H100 PCIe rows stay host-bound (their estimates move < 1%). The SDXL rows above are left at the default:
# their rate does not change (wide heads), so stating a stack there would test nothing.
SD15_PT20_NOTE = (
    " img9 (round 6): with image.runtime pytorch-2.0 (the run's Dockerfile: nvcr.io/nvidia/pytorch:23.10-py3, "
    "PyTorch 2.1.0a0) 1.502 s (-28.1%, was 0.980 s, -53.1%): the stack's rate closes half of the gap; the rest "
    "is the L40's diffusion row (0.675, fitted on TensorRT SD 1.5 times vs the 4090), which puts the L40 at "
    "1.23x the 4090's compiled time (as their TensorRT rows, 0.91 / 0.74 s) where this README's compiled PyTorch "
    "rows measured 1.79x (2.09 / 1.17 s). diff29: the Ada board-power bound (ada_unet_tflops_per_watt, 78.3 "
    "TFLOPS at 300 W) does not bind at SD 1.5's batch-1 fill (55 TFLOPS here). The card does not explain the rest: "
    "the README's RTX 6000 Ada (same AD102 die, same 300 W) ran this row in 1.28 s, and the L40's own compiled "
    "SD 2.1 768 px row is 1.36x the 4090's (3.08 / 2.26 s; the engine 1.30x with SD 1.5's shapes at 768 px), so "
    "this row is 1.6x its twin's on the smallest, most host-sensitive workload (its host, not stated). gen29: "
    "the L40 datasheet's board power is 300 W (catalog tdp_w 300), so the bound applies at 78.3 TFLOPS, above "
    "the 55 this fill needs; a sustained-clock limit (passive cooling) would slow this run's own 768 px row "
    "alike, yet that row (same commit 53284e9) is 1.11x the RTX 6000 Ada's (3.08 / 2.77 s; product 3.246 s, "
    "+5.4%) where this one is 1.63x: the excess shrinks as the GPU work per step grows, a per-step host cost, "
    "not a card rate. 2.09 s is 41 ms a step, slower than the product's eager (uncompiled) estimate on this "
    "card (1.785 s); the same README's compiled H100 SXM row took 16.6 ms a step. Host not stated: left. "
    "diffspeed43 (stop 43), unchanged (1.502 s): the product sizes the twin RTX 6000 Ada's compiled row at "
    "1.485 s (+16.0% of its 1.28 s), so it treats the two AD102 / 300 W cards alike; one figure lands both "
    "rows only between 1.568 s (this row's -25%) and 1.600 s (the twin's +25%), a window no stated setting "
    "of the two runs separates (same script, same commit, same container). diff44 (stop 44), unchanged "
    "(1.502 s): the row's script read (alexeigor/sd-benchmarks PyTorch/test_pt.py @53284e9, the file the 4090 "
    "row's 4b2141a ran): torch.compile(pipe.unet, mode='reduce-overhead', fullgraph=True), i.e. CUDA graphs, as "
    "image.fused_kernels sizes it; guidance_scale 7.5 (CFG), 50 steps, 5 warm-up calls, then the mean of 10 timed "
    "calls (perf_counter_ns with torch.cuda.synchronize). The README's TensorRT rows of the two 300 W AD102 cards "
    "agree within 1% (L40 0.91 s, RTX 6000 Ada 0.90 s; product's L40 row fitted on TensorRT times), so the "
    "card's rate is not the gap: this row is 0.81 s (16 ms a step) slower than its twin's under the same "
    "stated stack, which leaves the machine around the card, not stated. Left"
)
SDB_SD15 = [
    pytest.param(
        "a100-sxm4-40gb", False, 1.96, id="eager-a100-sxm4-40gb"
    ),  # 1.598 s (-18.4%; optimized -19.1%)
    pytest.param(
        "h100-pcie-80gb", False, 1.44, id="eager-h100-pcie-80gb"
    ),  # 1.584 s (+10.0%; optimized +9.4%). fix51a: 1.436 s (-0.3%): the row eager_kernel_host_s_hopper is set on
    # Was a strict xfail: 1.81 s (-38.7%) at the optimized stack's rate. img9: 2.639 s (-10.8%) with the run's
    # stack stated (image.runtime: pytorch-2.0).
    pytest.param("v100-sxm2-16gb", False, 2.96, id="xformers-v100-sxm2-16gb"),
    # Was a strict xfail: 5.09 s (-35.0%; 4.63 s, -40.8%, before the T4's diffusion row). img9: 7.379 s (-5.8%).
    pytest.param("t4", False, 7.83, id="xformers-t4"),
    # img9: a row of the same README the round-4 review left out, 'PT2.0,fp16 + compile' on the A100-SXM 40GB,
    # 1.36 s (added in 547ae9d, 2023-11-11: 'FROM nvcr.io/nvidia/pytorch:23.10-py3', test_pt.py 'run_compile =
    # True'): 0.795 s (-41.5%) at the optimized rate, 1.220 s (-10.3%) with image.runtime pytorch-2.0. Not added:
    # the H100 PCIe 'PT2.0,fp16,compile' row (1.11 s, fc20311), whose test_pt.py at that commit says 'run_compile
    # = False' (0.770 s, -30.7%, if it was compiled).
    pytest.param("a100-sxm4-40gb", True, 1.36, id="compiled-a100-sxm4-40gb"),
    # Was a strict xfail: 0.452 s (-45.6%). img9: 0.694 s (-16.4%) with image.runtime pytorch-2.0.
    pytest.param("h100-sxm5-80gb", True, 0.83, id="compiled-h100-sxm5-80gb"),
    # Was a strict xfail: 0.797 s (-31.9%) with the 4090's diffusion row (1.23 s, +5.3%, before it, by
    # compensation). img9: 1.221 s (+4.4%) with image.runtime pytorch-2.0.
    pytest.param("rtx-4090", True, 1.17, id="compiled-rtx-4090"),
    pytest.param(
        "l40",
        True,
        2.09,
        marks=pytest.mark.xfail(
            strict=True,
            reason="UNEXPLAINED (labelled at stop 48): [SDB] SD 1.5, 512 px, 50 steps, UNet compiled, on an L40, the run's stack stated (image.runtime "
            "pytorch-2.0): product 1.502 s vs published 2.09 s (-28.1%; was 1.15 s, -45.0%, at the optimized "
            "stack's rate, and 0.980 s, -53.1%, after the L40's diffusion row). e29b: the head's earlier readings "
            "(the compiled-UNet gain over-counted, a 300 W limit) no longer hold: the compiled H100 and 4090 rows "
            "of the same README pass (-16.4%, +4.4%) and the board-power bound does not bind (below)."
            + SD15_PT20_NOTE,
        ),
        id="compiled-l40",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "compiled", "published_s"), SDB_SD15)
def test_sd15_50_steps_per_card(bundled_catalog, tmp_path, gpu, compiled, published_s):
    image = {"steps": 50, "runtime": "pytorch-2.0"} | ({"fused_kernels": True} if compiled else {})
    spec = {"task": "inference", "model": {"preset": "sd-1.5"}, "precision": "fp16", "image": image}
    _within(_seconds_per_image(_size(tmp_path, spec, gpu)), published_s, SPEED)


# ---------------------------------------------------------------- SD 1.5 eager attention out of memory [TOME]

# Hand: diffusers' eager AttnProcessor (get_attention_scores) holds three score-sized fp16 tensors at once: the
# torch.empty baddbmm input (beta = 0), the scores and the softmax probabilities. One score tensor is
# 8 heads x tokens^2 x samples (2 a prompt under CFG) x 2 B:
#   512 px (4,096 tokens), batch 8:  8 x 4096^2 x 16 x 2 B = 4.3 GB, x 3 = 12.9 GB + 2.1 GB weights + the
#     decode of 8 images at once                                             -> over 16 GB: OOM, as published
#   512 px, batch 4:                 x 3 = 6.4 GB + 2.1 GB + decode          -> fits, as published (5.7 s)
#   1024 px (16,384 tokens), batch 1: 8 x 16384^2 x 2 x 2 B = 8.6 GB, x 3 = 25.8 GB -> OOM, as published
# (the same rule puts every OOM/ran boundary of the table's A100 40GB column where it is). The product keeps one
# score tensor: 7.91 GiB at batch 8 and 11.60 GiB at 1024 px, both 'fits' on a V100 16GB.
TOME_V100 = [
    pytest.param(512, 4, True, id="512px-batch-4-ran"),
    # Both were strict xfails: 7.91 and 11.60 GiB 'fits'. Now diffusers' AttnProcessor's three score-sized
    # tensors (image_model.EAGER_INFERENCE_SCORE_TENSORS): does_not_fit at 512 px batch 8 and at 1024 px.
    pytest.param(512, 8, False, id="512px-batch-8-oom"),
    pytest.param(1024, 1, False, id="1024px-batch-1-oom"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("side", "batch", "ran"), TOME_V100)
def test_sd15_eager_attention_memory_on_a_v100(bundled_catalog, tmp_path, side, batch, ran):
    spec = {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "flash_attention": False,
        "micro_batch_size": batch,
        "image": {"resolution_px": side},
    }
    row = _size(tmp_path, spec, "v100-sxm2-16gb")
    assert (row["verdict"] != "does_not_fit") is ran, (row["verdict"], row["memory"]["total_per_gpu_gib"])


# ---------------------------------------------------------------- ranking judgements by hand

SDXL_100K = {
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "image": {"steps": 25, "images": 100_000},
}


def _cheapest_4090_per_gpu_hour(client_as) -> Decimal:
    """The bundled catalog's cheapest on-demand RTX 4090 GPU-hour, read through GET /api/offers/ (illustrative
    demo prices left out, as the ranking leaves them out)."""
    response = client_as("viewer").get("/api/offers/?gpu=rtx-4090&pricing_model=on_demand&limit=500")
    assert response.status_code == 200
    rows = [r for r in response.json() if r["price_quality"] != "illustrative" and r["currency"] == "USD"]
    return min(Decimal(r["price_per_hour"]) / Decimal(r["gpu_count"]) for r in rows)


@pytest.mark.django_db
def test_sdxl_100k_images_top_row_cost_per_thousand_by_hand(bundled_catalog, client_as, tmp_path):
    """Which offer makes 1,000 SDXL images (1024 px, 25 steps, fp16) cheapest? Asked for 100,000 images so the
    compute, not the fixed 7-day storage tail (1.15 USD of a 1,000-image job's 1.37 on the top row), decides.
    Today's top row: vast 8x-Tesla_V100-32-65536 (8 x V100 16GB; 32 is its vCPU count) at 0.85 USD/h
    (pricing/data/skypilot/vast/vms.csv: 'Price' 0.85), 25.566 h. By hand: compute 0.85 x 25.566 = 21.7311 ->
    21.73 USD; + storage 1.33 = 23.06 USD; per 1,000 images 23.06 / 100 = 0.2306 USD. The product's own time:
    25.566 h x 8 GPUs x 3600 / 100,000 = 7.36 s an image a V100, which is what `size` says for the card.
    Judgement: a 16 GB V100 holds SDXL fp16 (12.0 GiB peak with the fp32 VAE decode) and at 0.106 USD a GPU-hour
    it is the cheapest GPU-hour in the catalog that does; the row is credible. Its one exposure is the product's
    4090 error (+58% above): repriced at the published 3.4 s, the cheapest 4090 still costs more (lium
    RTX4090_1x, 0.28 USD/h: 100,000 x 3.4 / 3600 = 94.4 h = 26.44 USD of compute > 21.73)."""
    rows = _recommend(tmp_path, SDXL_100K, top=5)
    first = rows[0]
    assert first["fits"] and first["memory_per_gpu_gib"] <= first["memory_margin"]["capacity_gib"]
    price, hours = Decimal(first["price_per_hour"]), Decimal(str(first["hours"]))
    breakdown = first["cost_breakdown"]
    assert abs(Decimal(breakdown["compute"]) - _cents(price * hours)) <= Decimal(
        "0.01"
    )  # hours printed to 3 dp
    assert Decimal(breakdown["total"]) == Decimal(first["total_cost"])
    assert _cents(Decimal(first["total_cost"]) / 100) == _cents(first["unit_costs"]["per_thousand_images"])
    # the product's own time per image on that card, from the job's hours and from `size`
    per_image = float(hours) * first["gpus"] * 3600 / 100_000
    sized = _size(tmp_path, SDXL_25, first["gpu"])
    assert per_image == pytest.approx(_seconds_per_image(sized), rel=0.01)
    # the judgement's robustness: the cheapest 4090 GPU-hour at the published 4090 time [LCM]
    at_published = _cheapest_4090_per_gpu_hour(client_as) * Decimal(100_000 * 3.4 / 3600)
    assert Decimal(breakdown["compute"]) < at_published


# Was a strict xfail (the row said '730 h of serving priced ... cost per month'); now '100,000 images priced
# as a job (...): hours = the images at N images/s an instance, no reruns, no setup' (ranking/rows.py).
@pytest.mark.django_db
def test_an_image_job_row_explains_itself_as_a_job(bundled_catalog, tmp_path):
    (first,) = _recommend(tmp_path, SDXL_100K, top=1)
    assert not any("730 h of serving" in reason for reason in first["reasons"]), first["reasons"]


@pytest.mark.django_db
def test_yolo11x_training_run_top_row_by_hand(bundled_catalog, client_as, tmp_path):
    """The [Y11X] run (207 epochs, 8,320 images, 608 px, batch 16) ranked over the catalog. Today's top row: AWS
    g6.xlarge (1 x L4, 4 vCPUs, 16 GiB) spot at 0.0913 USD/h (pricing/data/skypilot/aws/vms.gpu.csv, eu-south-2
    eus2-az3: SpotPrice 0.091300), 11.873 h. By hand: compute at the effective spot price (checkpoints every 15
    min add 0.18%: 0.091466) x 11.873 = 1.0860 -> 1.09; setup 1 h x 0.0913 = 0.09; reruns 20% of compute =
    0.2172 -> 0.22; storage 0.89; total 2.29 USD. (12.973 h and 2.41 USD before the L4 had its clock, yolo29:
    its 121 TFLOPS at 2,040 MHz are 59,314 FLOPs a clock, not the reference clock's 79,085.)
    Judgement: 1,722,240 images in 11.87 h = 40.3 images/s on a 72 W L4 (the 4090 did 80.8 at 450 W); 4 vCPUs
    feed 4 x 24.64 = 98.6 mosaic images/s, so the GPU bounds it; the row carries the 'host RAM too small' rule
    of thumb (and, until det29 sized the vCPU need from the data pipeline, 'too few vCPUs'), which Ultralytics
    (workers = min(8, CPUs), no RAM cache by default) lives with. Credible. Robust to the product's 4090 error (+42% above when written; +23% since the card's clock
    counts): the cheapest on-demand 4090 GPU-hour (lium,
    0.28 USD) for the published 6.199 h, with the same 1 h setup and 20% reruns, is 0.28 x (6.199 x 1.2 + 1) =
    2.36 USD before storage, above the top row's 1.40. Exposure: no published L4 YOLO training time; at 72 W the
    L4 cannot hold 2,040 MHz under tensor load, which the product does not model (clocks.py)."""
    rows = _recommend(tmp_path, YOLO11X_4090, top=5)
    first = rows[0]
    assert first["fits"]
    price, hours = Decimal(first["price_per_hour"]), Decimal(str(first["hours"]))
    breakdown = {k: Decimal(v) for k, v in first["cost_breakdown"].items()}
    assert abs(breakdown["compute"] - _cents(price * hours)) <= Decimal("0.01")
    assert abs(breakdown["reruns"] - _cents(breakdown["compute"] * Decimal("0.2"))) <= Decimal("0.01")
    parts = breakdown["compute"] + breakdown["setup"] + breakdown["storage"] + breakdown["reruns"]
    assert parts == breakdown["total"] == Decimal(first["total_cost"])
    assert Decimal(first["unit_costs"]["per_training_run"]) == breakdown["total"]
    # the top row's card is no faster than the published 4090 run (80.8 images/s)
    images = 207 * 8320
    assert images / (float(hours) * first["gpus"] * 3600) <= 80.8
    best = _cheapest_4090_per_gpu_hour(client_as)
    assert breakdown["total"] - breakdown["storage"] <= best * (Decimal("6.199") * Decimal("1.2") + 1)
