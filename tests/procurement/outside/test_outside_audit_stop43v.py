"""Outside audit aud43v (stop 43): diffspeed43's vision_peak_efficiency refit (0.745 -> 0.600 on AITemplate's
compiled ViT-B/16 batch-256 A100 row) checked against ViT runs on an A100 from a second source, not the
AITemplate table the fit and its held-out rows come from.

Source [FP-INFER]: FlagOpen/FlagPerf inference/benchmarks/vit_l_16/README.md @10eb354c (A100 rows as of
e203c9b6), '2.1 Nvidia A100' (NVIDIA_A100-SXM4-40GB, pytorch-2.1.0a0, TensorRT 8.5.1.7), model
transformers.ViTForImageClassification google/vit-large-patch16-224 (224 px, class token: 197 tokens), exported to
ONNX and built by trtexec (inference/inference_engine/nvidia/tensorrt.py @10eb354c build_engine: `--fp16` only
for fp16 rows; trtexec leaves TF32 on unless --noTF32), column *p_infer_core: tensorrt fp16 batch 64 1,388.9
images/s; tensorrt fp32 batch 32 587.3 images/s. The core window (inference/benchmarks/vit_l_16/pytorch/
forward.py engine_forward) is synchronized on both ends and holds the batch's host-to-device copy (fp32 input,
38.5 MB at batch 64: ~3-4 ms of the 46 ms batch, so the GPU-only rate is ~8% above the figure). Its MFU column
(27.4%) counts 61.6 GMACs as FLOPs (configurations.yaml flops 6.16e10): in FLOPs the fp16 row runs at 55% of
the A100's 312 TFLOPS.

Source [FP-TRAIN]: FlagOpen/FlagPerf @c87aa312 ('refine VIT && update NV results'; README rows unchanged through
9350b482), training/nvidia/vit-pytorch/README.md, 'NVIDIA DGX A100(40G)', NVIDIA_A100-SXM4-40GB. As it ran: model
torchvision.models.vit_b_16() (training/benchmarks/vit/pytorch/model/__init__.py @c87aa312; 197 tokens,
nn.MultiheadAttention with need_weights=False); container pytorch_1.13 (training/run_benchmarks/config/test_conf.py
@c87aa312 'vit:pytorch_1.13:A100:1:8:1'; training/nvidia/docker_image/pytorch_1.13/Dockerfile FROM
nvcr.io/nvidia/pytorch:22.11-py3, torch 1.13.0a0+936e930: no fused attention in MHA's training path, the module's
training forward materializes the scores: flash_attention false; the README's 'pytorch-1.8.0a0+52ea372' line cannot
run torchvision's vit_b_16 and is stale); config_A100x1x8.py @c87aa312 train_batch_size 256,
gradient_accumulation_steps 2; config_common.py opt adamw, amp True (the README's precision column says fp32; the
trainer runs the forward under torch.cuda.amp.autocast with a GradScaler: fp16 AMP); column p_core (forward +
backward + step in a host-timed window, train/trainer.py train_one_step): 1 x A100 ('单机单卡', bs=256) 1,151 images/s
(p_train, 1,144, shares p_core's blind spot: on one GPU neither window waits for the GPU, see the one-GPU case;
vit45b corrects aud43v's 'not flattering'), mem 29.4/40.0 GiB; 1 x 8 A100 5,441 images/s (680.1 a GPU; p_train
664.5), mem 39.3/40.0 (a full 300-epoch run with eval at batch 512). 2 x 8 A100 ('两机8卡', bs=256) 10,535 images/s
(658.4 a GPU). The multi-GPU windows sync inside (all-reduce of loss / acc).

Targets (issue 29): speed 25%, memory 15%.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25
MEMORY = 0.15
A100_40 = "a100-sxm4-40gb"


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _tensorrt_vit_l(precision: str, batch: int, tf32: bool) -> dict:
    image: dict = {"resolution_px": 224, "fused_kernels": True}
    if tf32:
        image["tf32_matmul"] = True
    return {
        "task": "inference",
        "model": {"preset": "vit-l-16"},
        "precision": precision,
        "micro_batch_size": batch,
        "image": image,
    }


def _flagperf_vit_b_training(gpus: int) -> dict:
    """[FP-TRAIN] as it ran: AMP fp16, AdamW, batch 256 a GPU, eager attention (PyTorch 1.13's
    nn.MultiheadAttention in training), p_core without the data loader (image.data_pipeline predecoded: the GPU
    side only). Gradient accumulation 2 only halves the optimizer's share (AdamW over 86M weights, ~1 ms a step)."""
    return {
        "task": "full_finetune",
        "model": {"preset": "vit-b-16"},
        "precision": "fp16",
        "micro_batch_size": 256,
        "optimizer": "adamw",
        "flash_attention": False,
        "parallelism": {"gpus": gpus},
        "image": {"epochs": 1, "dataset_images": 1_281_167, "data_pipeline": "predecoded"},
    }


@pytest.mark.django_db
def test_tensorrt_vit_l16_fp16_batch64_on_an_a100(bundled_catalog, tmp_path):
    """[FP-INFER] TensorRT fp16, batch 64: 1,388.9 images/s. Product (image.fused_kernels; the ceiling at 0.600):
    1,458.8 (+5.0%); at the predecessor 0.745 about 1,811 (+30%). Hand: ViT-L/16 at 224 px, 197 tokens: 24 layers
    x 197 x 12 x 1024^2 MACs = 59.5 G, attention 24 x 2 x 197^2 x 1024 = 1.9 G, patch embedding 196 x 768 x 1024
    = 0.15 G: 61.6 GMACs = 123.1 GFLOP an image; 1,388.9 x 123.1e9 = 171 TFLOPS = 55% of 312 (AITemplate's fit
    row: 59%; FasterTransformer's rows: 36%). An independent compiled stack, network and batch on the card the
    refit names: it lands, with the timing window's input copy (~8%) on the product's fast side."""
    row = _size(tmp_path, _tensorrt_vit_l("fp16", 64, tf32=False), A100_40)
    _within(row["throughput"]["images_per_second_per_gpu"], 1388.9, SPEED)


@pytest.mark.django_db
def test_tensorrt_vit_l16_fp32_batch32_on_an_a100_stated_tf32(bundled_catalog, tmp_path):
    """[FP-INFER] TensorRT fp32, batch 32: 587.3 images/s = 72.3 TFLOPS, 3.7x the A100's 19.5 TFLOPS fp32 SIMT
    peak: trtexec builds fp32 engines with TF32 tensor cores unless told --noTF32. STATED with image.tf32_matmul
    true: 729.4 (+24.2%; inside the bar at its edge: TF32 runs at the 16-bit ceiling's fraction of the TF32
    peak). Unstated: next case."""
    row = _size(tmp_path, _tensorrt_vit_l("fp32", 32, tf32=True), A100_40)
    _within(row["throughput"]["images_per_second_per_gpu"], 587.3, SPEED)


@pytest.mark.django_db
# Was a strict xfail: "product 152.2 (-74.1%) when the spec says fp32 + image.fused_kernels (a TensorRT engine) and
# nothing about TF32 ... image.fused_kernels names no library, so a spec that leaves it unset still gets a 3.9x
# slow answer." Now 729.4 (+24.2%, the stated case's figure) because the spec can name the engine the row ran
# (image.engine tensorrt: FlagPerf's inference/inference_engine/nvidia/tensorrt.py @10eb354c builds with
# trtexec) and image.tf32_matmul, left unstated, follows that engine's default: trtexec enables TF32 unless
# --noTF32 (NVIDIA/TensorRT samples/common/sampleOptions.cpp: 'Disable tf32 precision (default is to enable
# tf32, in addition to fp32)'), which build_engine does not pass. A PyTorch spec keeps PyTorch >= 1.12's default.
def test_tensorrt_vit_l16_fp32_batch32_on_an_a100_unstated_tf32(bundled_catalog, tmp_path):
    spec = _tensorrt_vit_l("fp32", 32, tf32=False)
    spec["image"] = {"resolution_px": 224, "engine": "tensorrt"}  # the engine as it ran; TF32 not stated
    row = _size(tmp_path, spec, A100_40)
    _within(row["throughput"]["images_per_second_per_gpu"], 587.3, SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "EXPLAINED: [FP-TRAIN] torchvision ViT-B/16 AMP training, batch 256, one A100-40GB: p_core 1,151 images/s"
        " published; product 716.0 (-37.8%; was 835.7, -27.4%, before vit45c; 0.306 s a 256-image micro-step then)"
        " with the run's eager attention stated."
        " (a) The one-GPU windows leave GPU work outside them (train/trainer.py @c87aa312, unchanged at 9350b482):"
        " p_core's window (train_one_step, pure_compute_time) and p_train's (no_eval_time) are host clocks that"
        " close without a device sync on a micro-step with no optimizer step (gradient_accumulation_steps 2 in"
        " config_A100x1x8.py, the one A100 config committed); the single-GPU branch skips the all-reduce, so"
        " the step's forward and backward are only enqueued when both windows close, and the wait for them is"
        " TrainingState.to_dict's .item() on loss / acc1 / acc5 (train/training_state.py), called after"
        " no_eval_time is added and before no_eval_start restarts: outside both windows. The even micro-step's"
        " window closes after GradScaler.step's found_inf .item(), so it holds that step's GPU time. This is why"
        " p_train (1,144) agrees with p_core: the same blind spot, not a check. The multi-GPU branch syncs inside"
        " the window (torch.tensor of the three CUDA scalars, all_reduce, tolist): the 1 x 8 row, 680.1 a GPU,"
        " and the 2 x 8 row, 10,535 / 16 = 658.4, measure the GPU's rate (product 835.7: +22.9% / +26.9%), and"
        " the one-GPU row is 1.69x / 1.75x them. (b) Size: with accumulation 2 a window pair counts 512 images"
        " against one micro-step's GPU time plus the other's host enqueue (>= 19.5 ms, the product's 630-kernel"
        " host count): at the product's 0.306 s that reads 512 / 0.326 = 1,571 (+36.5%); with no accumulation"
        " only the AdamW tail escapes (~835.7). The published 1,151 lies inside that 836-1,571 range: it needs"
        " the unsynced window to close 0.139 s into its 0.306 s micro-step, 0.168 s left to the .item() outside."
        " The lead that fused attention ran is closed: nvcr.io/nvidia/pytorch:22.11-py3 (training/nvidia/docker_image/"
        "pytorch_1.13/Dockerfile) ships torch 1.13.0a0+936e930 (NVIDIA's 22.11 build, torch-1.13.0a0+936e9305."
        "nv22.11); a 1.13.0a0 build predates pytorch/pytorch PR #86296 (2022-10-06, main bumped to 1.14), and"
        " nn.functional.multi_head_attention_forward first reached a fused kernel in PR #89470 ('[SDPA] Call"
        " _sdp_attention in nn.functional.mha', 2022-11-30), replacing the inline bmm / softmax / bmm block that"
        " torchvision's vit_b_16 ran in training; the model is torchvision.models.vit_b_16() (model/__init__.py"
        " @c87aa312, no timm, no channels_last, no torch.compile); the SDPA figure (1,099.9, -4.4%) is not the"
        " run's spec. (c) No spec field can state a timing window that drops GPU work; the product sizes the"
        " GPU's rate, which the synced multi-GPU rows measure. vit45c: with the measured 197-token eager attention"
        " rate on the A100 in the engine (image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD, xformers PR #530"
        " 'A100 fw', 1.727 us a head in the forward; the backward keeps its counted cost) the product reads 716.0"
        " (-37.8%; 0.358 s a micro-step) and the synced rows +5.3% / +8.8%; the window pair then reads up to"
        " 512 / (0.358 + 0.0195) = 1,357 (+17.9%), so 1,151 still lies inside the 716-1,357 range the blind"
        " window allows (it closes 0.193 s into the 0.358 s micro-step)."
    ),
)
def test_flagperf_vit_b16_amp_training_one_a100(bundled_catalog, tmp_path):
    row = _size(tmp_path, _flagperf_vit_b_training(1), A100_40)
    _within(row["throughput"]["training_images_per_second"], 1151.0, SPEED)


@pytest.mark.django_db
def test_flagperf_vit_b16_amp_training_eight_a100(bundled_catalog, tmp_path):
    """[FP-TRAIN] 1 x 8 A100: p_core 5,441 images/s = 680.1 a GPU; product 835.7 a GPU (+22.9%) -> 716.0 (+5.3%,
    vit45c: the forward's eager attention at 197 tokens priced at xformers' measured A100 rate). Lands. vit45b:
    this row's window waits for the GPU (train_one_step's all-reduce of loss / acc1 / acc5 reads the CUDA scalars
    inside it), so it, not the one-GPU row (whose windows close before the GPU finishes), measures the GPU's rate;
    the 2 x 8 row (658.4 a GPU, same sync) puts the product at +26.9%, on the fast side like this one."""
    row = _size(tmp_path, _flagperf_vit_b_training(8), A100_40)
    _within(row["throughput"]["training_images_per_second"] / 8, 5441 / 8, SPEED)


@pytest.mark.django_db
def test_flagperf_vit_b16_amp_training_two_by_eight_a100(bundled_catalog, tmp_path):
    """[FP-TRAIN] 2 x 8 A100 (FlagOpen/FlagPerf training/nvidia/vit-pytorch/README.md @c87aa312, the 2 x 8 row):
    p_core 10,535 images/s = 658.4 a GPU, the same synced window as the 1 x 8 row (vit45b). Product 835.7 a GPU
    (+26.9%, not a test until vit45c) -> 716.0 (+8.8%) with the forward's eager attention at 197 tokens priced
    at xformers' measured A100 rate (image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD). New, held out: no
    FlagPerf row was used to choose the rate."""
    row = _size(tmp_path, _flagperf_vit_b_training(16), A100_40)
    _within(row["throughput"]["training_images_per_second"] / 16, 10535 / 16, SPEED)


@pytest.mark.django_db
# Was a strict xfail: 29.4 GiB published, product 20.206 (-31.3%; activations 17.382 GiB, the eager scores at
# 2 B an element). Now 27.62 (-6.1%; activations 24.443) because image_model.training_activation_bytes counts
# what autocast keeps in a ViT (autocast_vit_training): eager softmax runs in fp32 and keeps its fp32 output
# plus the fp16 copy attn @ v takes (6 B an element: +4 B x 1.431 G = 5.33 GiB) and the fp32 residual stream
# # keeps both pre-norms' inputs at 4 B (+2 B x 197 x 768 x 2 x 12 x 256 = 1.73 GiB). The remaining 1.8 GiB is
# not sized (the figure is device memory in use: the allocator's reserve beyond the product's 5% is in it).
def test_flagperf_vit_b16_amp_training_memory_one_a100(bundled_catalog, tmp_path):
    row = _size(tmp_path, _flagperf_vit_b_training(1), A100_40)
    _within(row["memory"]["total_per_gpu_gib"], 29.4, MEMORY)
