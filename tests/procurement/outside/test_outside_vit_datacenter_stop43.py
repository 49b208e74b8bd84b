"""ViT classifiers on a datacenter card (diffspeed43, issue 29: "vision_peak_efficiency lacks datacenter
calibration"). Until stop 43 the ViT ceiling of full-rate cards (assumptions.vision_peak_efficiency, 0.745) was
round 4's fit on an RTX 3090 training row, which since e29 fits the GeForce ceiling instead: no full-rate card
calibrated it.

Source [AIT-VIT]: facebookincubator/AITemplate examples/04_vit/README.md @44026ba7, 'Reference Speed vs PyTorch
Eager', A100-40GB / CUDA 11.6.2, timm vit_base_patch16_224 (224 px) and vit_large_patch16_384 (384 px), fp16,
images/s. Two stacks, each stated as it ran:
  - AIT QPS: the model compiled by AITemplate (CUTLASS GEMMs with fused bias / GELU / residual epilogues, fused
    attention): `image.fused_kernels` (no eager activation passes), so the GEMMs' rate is the whole forward;
  - PT QPS: PyTorch 1.12 eager (no scaled_dot_product_attention; timm's Attention.forward computes q @ k.T,
    softmax and @ v): `flash_attention: false`.
Fit row: AIT ViT-B batch 256, 5,273.03 images/s (vision_peak_efficiency 0.745 -> 0.600). Every other row here is
held out. Speed target 25% (issue 29).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25


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


def _vit(preset: str, px: int, batch: int, fused: bool) -> dict:
    image = {"resolution_px": px} | ({"fused_kernels": True} if fused else {})
    spec = {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": batch,
        "image": image,
    }
    return spec if fused else spec | {"flash_attention": False}


AIT_COMPILED = [
    # the fit row: 6,547.8 images/s (+24.2%) at round 4's 0.745; 5,273.4 (+0.0%) at 0.600
    pytest.param("vit-b-16", 224, 256, 5273.03, id="vit-b-256-fit"),
    # held out: 6,349.1 (+25.7%) -> 5,113.4 (+1.2%)
    pytest.param("vit-b-16", 224, 64, 5052.52, id="vit-b-64"),
    # held out: 5,661.9 (+28.8%) -> 4,559.9 (+3.7%)
    pytest.param("vit-b-16", 224, 16, 4396.74, id="vit-b-16"),
    # held out: 4,914.5 (-0.0%) at 0.600 (the same table's batch 32, 6.51 ms)
    pytest.param("vit-b-16", 224, 32, 4916.93, id="vit-b-32"),
    # held out: 604.1 (+26.1%) -> 486.6 (+1.5%)
    pytest.param("vit-l-16", 384, 128, 479.24, id="vit-l-384-128"),
    # held out: 592.1 (+29.6%) -> 476.9 (+4.4%)
    pytest.param("vit-l-16", 384, 32, 456.93, id="vit-l-384-32"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "px", "batch", "published"), AIT_COMPILED)
def test_ait_compiled_vit_on_an_a100(bundled_catalog, tmp_path, preset, px, batch, published):
    row = _size(tmp_path, _vit(preset, px, batch, fused=True), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], published, SPEED)


EAGER_VIT_B_REASON = (
    "[AIT-VIT] PyTorch 1.12 eager ViT-B on the A100-40GB: product 2,905.9 / 2,856.7 images/s at batch 256 / 64 vs"
    " published 2,226.10 / 2,032.77 (+30.5% / +40.5%; batch 32 +39.2%, batch 16 +32.0% with the host floor"
    " binding). GPU-bound, not host-bound: vit44 counts the eager forward's kernels from timm 0.6's code"
    " (image_model.vit_forward_kernels: 17 a block, 210 a forward, 6.5 ms at eager_kernel_host_s 31 us) and that"
    " floor lands the same table's batch 1-8 rows (-24% to -15%, test_pytorch_eager_vit_is_host_bound_at_small"
    "_batches) but is 6.5 ms against 88 ms of GPU work at batch 256. The GEMMs are calibrated (the compiled rows"
    " land within +4%): at batch 256 the eager run takes 0.449 ms an image against AITemplate's 0.190 ms, 0.259"
    " ms of eager work where the product counts 0.154 ms. vit44 recounted the elementwise traffic from timm"
    " 0.6's Block and Attention.forward (norm1, the q, k and v copies torch.matmul makes of the permuted heads,"
    " the heads' output copy, two residual adds, norm2, GELU: 26 elements a hidden unit and token; the scores"
    " written by q @ k.T, scaled, softmaxed and read by attn @ v: 6 passes) = 44.4 hidden-unit elements at 196"
    " tokens against the product's 46.3 (34 + 4 score passes): the count agrees, so the missing 0.105 ms an image"
    " is not traffic the product leaves out (a PyTorch whose F.linear adds a 3-D input's bias in a kernel of its"
    " own would add 18, ~0.06 ms). Left: the two attention bmm at 196 tokens (K = 196 and row strides of 392 B,"
    " not multiples of 8 halves) would have to run at ~16 TFLOPS (1.42 GFLOP an image) to take it; ViT-L at"
    " 384 px (576 tokens, aligned) lands at +16.6%. No source here measures misaligned batched GEMMs, and the"
    " same card's eager AMP training of ViT-B (test_outside_audit_stop43v, FlagPerf) comes out 27% SLOW, so an"
    " eager-attention slowdown would widen that miss. UNEXPLAINED."
)


AIT_EAGER = [
    pytest.param(
        "vit-b-16",
        224,
        256,
        2226.10,
        id="vit-b-256",
        marks=pytest.mark.xfail(strict=True, reason=EAGER_VIT_B_REASON),
    ),
    pytest.param(
        "vit-b-16",
        224,
        64,
        2032.77,
        id="vit-b-64",
        marks=pytest.mark.xfail(strict=True, reason=EAGER_VIT_B_REASON),
    ),
    # vit44: the same table's batch 32 and 16 (15.95 and 8.59 ms), GPU-bound and at the host floor's edge
    pytest.param(
        "vit-b-16",
        224,
        32,
        2006.62,
        id="vit-b-32",
        marks=pytest.mark.xfail(strict=True, reason=EAGER_VIT_B_REASON),
    ),
    pytest.param(
        "vit-b-16",
        224,
        16,
        1863.35,
        id="vit-b-16",
        marks=pytest.mark.xfail(strict=True, reason=EAGER_VIT_B_REASON),
    ),
    # held out: 287.3 (+30.0%) at 0.745 -> 257.7 (+16.6%)
    pytest.param("vit-l-16", 384, 128, 221.08, id="vit-l-384-128"),
    # held out: 284.5 (+30.9%) -> 254.9 (+17.3%)
    pytest.param("vit-l-16", 384, 32, 217.33, id="vit-l-384-32"),
]


# [AIT-VIT] the same README's PyTorch 1.12 eager rows at small batches (PT Latency, ms a batch; held out, nothing
# fitted): the forward is host-bound, ~5 ms for ViT-B whatever the batch up to 8. Before vit44 the product had
# no kernel count for a ViT and sized the GPU work alone: ViT-B 1,178.5 / 1,679.8 / 2,133.4 / 2,466.4 images/s at
# batch 1 / 2 / 4 / 8 (+483% / +342% / +194% / +71%), ViT-L/16 384 px 177.0 / 210.2 at batch 1 / 2 (+75% /
# +25%). Now the host floor of image_model.vit_forward_kernels (timm 0.6's forward: 17 kernels a block with
# eager attention, 6 a forward; ViT-B 210, ViT-L 414) at eager_kernel_host_s (31 us, fitted on fal's SD 1.5
# diffusers run, not on these rows): 6.5 ms and 12.8 ms a forward.
AIT_EAGER_HOST_BOUND = [
    # 4.95 ms -> 202.0 images/s; product 153.6 (-24.0%)
    pytest.param("vit-b-16", 224, 1, 202.02, id="vit-b-1"),
    # 5.26 ms -> 380.2; product 307.2 (-19.2%)
    pytest.param("vit-b-16", 224, 2, 380.43, id="vit-b-2"),
    # 5.51 ms -> 726.0; product 614.4 (-15.4%)
    pytest.param("vit-b-16", 224, 4, 726.08, id="vit-b-4"),
    # 5.56 ms -> 1,438.8; product 1,228.9 (-14.6%)
    pytest.param("vit-b-16", 224, 8, 1439.03, id="vit-b-8"),
    # 9.88 ms -> 101.2; product 77.9 (-23.0%)
    pytest.param("vit-l-16", 384, 1, 101.17, id="vit-l-384-1"),
    # 11.90 ms -> 168.0; product 155.8 (-7.3%)
    pytest.param("vit-l-16", 384, 2, 168.02, id="vit-l-384-2"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "px", "batch", "published"), AIT_EAGER_HOST_BOUND)
def test_pytorch_eager_vit_is_host_bound_at_small_batches(
    bundled_catalog, tmp_path, preset, px, batch, published
):
    row = _size(tmp_path, _vit(preset, px, batch, fused=False), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], published, SPEED)
    # the answer says the host, not the card, set it (image_model.vit_host_floor_warning)
    assert any("kernels (counted from timm" in text for text in row["warnings"])


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "px", "batch", "published"), AIT_EAGER)
def test_pytorch_eager_vit_on_an_a100(bundled_catalog, tmp_path, preset, px, batch, published):
    row = _size(tmp_path, _vit(preset, px, batch, fused=False), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], published, SPEED)


# Was a strict xfail (FT_REASON): "Product with image.fused_kernels: 4,914.5 (+54.2%) and 1,401.8 (+29.9%) ...
# image.fused_kernels names no library and the product sizes the faster one; the guide gives no kernel breakdown
# to say where FasterTransformer's time goes." Now 3,497.6 (+9.7%) and 1,071.6 (-0.7%) because the spec states
# the engine (image.engine fastertransformer) and the product counts what FasterTransformer's ViT does between
# its GEMMs, read from its code (NVIDIA/FasterTransformer src/fastertransformer/models/vit/ViT.cc,
# FusedAttentionLayer.cu @4c014fba): no GEMM epilogues, so LayerNorm, q/k/v bias + packing, bias + residual +
# LayerNorm, bias + GELU and bias + residual are kernels of their own, 23 elements a hidden unit, token and layer
# (image_model.FASTERTRANSFORMER_VIT_LAYER_PASSES: ViT-B 83.5 MB an image, 0.077 ms at 70% of 1,555 GB/s), and
# its TensorRT fused attention pads 197 tokens to 256 (1.69x the attention FLOPs). Nothing fitted.
# Source [FT-VIT]: NVIDIA/FasterTransformer docs/vit_guide.md @6ea1c77c, 'ViT Performance on A100' (A100 at pclk
# 1,410 MHz, CUDA 11.4), table 'INT8 vs. FP16 speedup on ViT', FP16 columns B_16-224 and L_16-224 (ms a batch;
# with_cls_token: 197 tokens). Batch 32 were the xfail rows; batch 8 and 16 are held out too.
FT_A100 = [
    # 10.04 ms -> 3,187.3 images/s; product 3,497.6 (+9.7%)
    pytest.param("vit-b-16", 32, 3187.3, id="vit-b-224-32"),
    # 29.66 ms -> 1,078.9; product 1,071.6 (-0.7%)
    pytest.param("vit-l-16", 32, 1078.9, id="vit-l-224-32"),
    # 5.30 ms -> 3,018.9; product 3,309.3 (+9.6%)
    pytest.param("vit-b-16", 16, 3018.9, id="vit-b-224-16"),
    # 3.03 ms -> 2,640.3; product 2,987.6 (+13.2%)
    pytest.param("vit-b-16", 8, 2640.3, id="vit-b-224-8"),
    # 15.03 ms -> 1,064.5; product 1,010.0 (-5.1%)
    pytest.param("vit-l-16", 16, 1064.5, id="vit-l-224-16"),
    # 8.09 ms -> 988.9; product 905.9 (-8.4%)
    pytest.param("vit-l-16", 8, 988.9, id="vit-l-224-8"),
]


def _fastertransformer(preset: str, batch: int) -> dict:
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": batch,
        "image": {"resolution_px": 224, "engine": "fastertransformer"},
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "batch", "published"), FT_A100)
def test_fastertransformer_vit_on_an_a100(bundled_catalog, tmp_path, preset, batch, published):
    row = _size(tmp_path, _fastertransformer(preset, batch), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], published, SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "[FT-VIT] B_16-224 FP16 batch 1 on the A100: 1.53 ms published (653.6 images/s); product 0.790 ms"
        " (1,265.5, +93.6%). At one image a forward's ~135 FasterTransformer operations (11 a layer: 5 GEMMs or"
        " the fused attention, 5 elementwise kernels and a host-to-device copy of the batched q/k/v GEMM's"
        " pointers, FusedAttentionLayer.cu) each carry their launch and tail latency, which the product sizes for eager PyTorch (eager_kernel_host_s)"
        " but not for a C++ engine; no source here measures that engine's per-kernel floor. L_16-224 batch 1"
        " (2.97 ms, 336.7) lands at 370.8 (+10.1%): its 24 wider layers hide it. Batch 8 and up land."
    ),
)
def test_fastertransformer_vit_b_batch_one_on_an_a100(bundled_catalog, tmp_path):
    row = _size(tmp_path, _fastertransformer("vit-b-16", 1), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], 653.6, SPEED)
