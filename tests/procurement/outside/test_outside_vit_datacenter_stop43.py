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


# Source [XF-EAGER] (vit45): eager attention measured on an A100 in fp16, forward, by xformers' benchmark
# (facebookresearch/xformers xformers/benchmarks/benchmark_mem_eff_attention.py @3a16b203, the 'eager' column:
# ref_attention, timm 0.6's Attention.forward ops: the permute copies of q, k and v out of one [B, N, 3, H, d]
# tensor, q @ k.T, softmax, @ v, all fp16, with the scale on q where timm scales the scores; timed by
# torch.utils.benchmark). Tables in the pull-request threads, us a call, B heads of M tokens, head width K = 64:
#   - PR #530 ('Allow custom softmax in memory efficient attention', 2022-11-17, section 'A100 fw'): M = 197:
#     B = 384 679.3, B = 1024 1,768.7, B = 32 x H = 16 981.8 -> 1.77 / 1.73 / 1.92 us a head;
#   - PR #434 ('p100nvcc', 2022-09-23, the table's reference column; fixa45: its description opens with an 'A100
#     fw' block and the same description also holds a '(Tesla_V100_SXM2_16GB)' group; the stored excerpts that
#     show the M = 128 / 256 rows carry no GPU label, so which GPU ran them could NOT be confirmed; its B = 1024,
#     M = 197 figure, 1,731.0, is #530's A100 figure within 2%, which suggests the A100 block but does not show it): M = 128, B = 1024 215.3; M = 256,
#     B = 768 474.4; M = 197, B = 1024 1,731.0 -> 0.210 / 0.618 / 1.690 us a head: 12.8 / 9.4 / 43.5 ps a score
#     element. 197 tokens (rows of 394 B, not a multiple of 16 B) cost 4.6x an aligned length's time a score
#     element, and 2.7x the 256-token head's time with 0.59x its elements.
# The product charges the same ops (3 copies, the scale, 4 score passes at 70% of 1,555 GB/s, 9.9 MFLOP at the
# GEMM rate) 0.524 us a head at 197 tokens: 1.17-1.39 us a head short.
# vit45c: the engine now prices those ops (all but the copies) at the table's 1.727 us a head on the A100
# (image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD).
# Was a strict xfail (EAGER_VIT_B_REASON): "UNEXPLAINED (EXPLAINED in part; fixa45 after aud45a, was EXPLAINED by
# vit45): ... published 1,863.35 / 2,006.62 / 2,032.77 / 2,226.10 images/s at batch 16 / 32 / 64 / 256; product
# 2,457.8 / 2,793.5 / 2,856.7 / 2,905.9 (+31.9% / +39.2% / +40.5% / +30.5%) ... A spec would need ... a measured
# eager attention rate by length on each card generation". Now 1,746.7 / 1,794.3 / 1,819.0 / 1,838.1 (-6.3% /
# -10.6% / -10.5% / -17.4%) because (vit45c) the engine prices an eager 16-bit ViT's score and context batched
# GEMMs and softmax at an unaligned token count on the A100 at [XF-EAGER]'s measured time, 1.727 us a head
# (PR #530 'A100 fw', M = 197, B = 1,024: 1,768.7 us; PR #434's 1,731.0 agrees within 2%), instead of the counted
# 0.34 us (FLOPs at the GEMM rate, 4 score passes at 70% of 1,555 GB/s): image_model.
# EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD, a measured rate, not fitted on these rows. +0.20 ms an image (144
# heads). The run had 196 tokens (benchmark_pt.py @44026ba7 class_token=False); the product counts 197 and uses the
# 197-token rate (no class-token field; 196 would take it x (196 / 197)^2 = 0.990). The aligned ViT-L/384 rows
# (576 tokens as run; the product counts 577, which the measured table does not cover) are unchanged. The rows'
# spread (-6.3% .. -17.4%) and the aligned ViT-L rows' common +16.6..+21.4% (test_outside_explanations_audit_
# stop45a.py) stay undiagnosed: the product's larger-batch rows are on the slow side after the term.


AIT_EAGER = [
    pytest.param("vit-b-16", 224, 256, 2226.10, id="vit-b-256"),  # 2,905.9 (+30.5%) -> 1,838.1 (-17.4%)
    pytest.param("vit-b-16", 224, 64, 2032.77, id="vit-b-64"),  # 2,856.7 (+40.5%) -> 1,819.0 (-10.5%)
    # vit44: the same table's batch 32 and 16 (15.95 and 8.59 ms), GPU-bound and at the host floor's edge
    pytest.param("vit-b-16", 224, 32, 2006.62, id="vit-b-32"),  # 2,793.5 (+39.2%) -> 1,794.3 (-10.6%)
    pytest.param("vit-b-16", 224, 16, 1863.35, id="vit-b-16"),  # 2,457.8 (+31.9%) -> 1,746.7 (-6.3%)
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
        "UNEXPLAINED: [FT-VIT] B_16-224 FP16 batch 1 on the A100: 1.53 ms published (653.6 images/s); product"
        " 0.790 ms (1,265.5, +93.6%: GEMMs 0.666 ms at 16% of peak on 197 rows, fused attention 0.048, traffic"
        " 0.077). vit45 counted the forward's operations from NVIDIA/FasterTransformer @release/v5.3_tag d21dc02"
        " (src/fastertransformer/models/vit/ViT.cc ViTTransformer::forward, layers/attention_layers/"
        "FusedAttentionLayer.cu, layers/FfnLayer.cc): a layer runs invokeGeneralLayerNorm, the q, k and v GEMMs"
        " (three cublas Gemm calls; one batchedGemm after a cudaMemcpyAsync of its 12 pointers only where vit_gemm's"
        " gemm_config.in times the batched one faster: cublasMMWrapper.cc isFuseBatchGemm), invokeTrtAddQkvBias,"
        " the TensorRT fused attention kernel, the output GEMM, invokeGeneralAddBiasResidualPreLayerNorm, the FFN's"
        " GEMM, genericActivation (bias + GELU) and GEMM, and invokeAddBiasResidual: 12 a layer; a forward adds the"
        " patch convolution (cuDNN), invokeAddBiasConcatClsTokenAddPosEmbed, invokeGetTrtPaddingOffset and the"
        " final LayerNorm: ViT-B 148, ViT-L 292 (examples/cpp/vit/vit_example.cc times 100 forwards back to back"
        " between CUDA events, no host sync between them). Landing both batch-1 rows with a fixed cost a kernel"
        " needs 2.9-4.3 us (ViT-B: at least +0.434 ms over 148 to come within 25%, 1.224 ms; ViT-L/16 224 px, 2.97 ms"
        " published, 2.697 ms product, +10.1% now: at most +1.263 ms over 292); no source opened here gives a"
        " per-kernel cost of a C++ engine's back-to-back launches (the product's eager_kernel_host_s, 31 us, and"
        " AITemplate's eager rows' 24 us are PyTorch's Python dispatch, not this). Batch 8 and up land."
        " ft45 (test_outside_ft_launch_stop45.py): the host is where the time goes, shown by the guide's own rows: at"
        " batch 1 on the A100 INT8 runs as long as FP16 (1.52 / 1.53, 2.91 / 2.97, 2.26 / 2.24 ms) though it is"
        " 1.27-1.72x faster from batch 8 up and 1.59-1.92x faster at batch 1 on the T4, and the FP16 rows give the"
        " same time a counted kernel for ViT-B and ViT-L (10.3 / 10.2 us). vit_example.cc @a44c381 issues the 100"
        " timed forwards back to back (no sync; buffers kept; sync_check_cuda_error compiled out in the guide's"
        " Release build), so launches overlap the GPU's work. The one sourced launch cost found, NVIDIA's 'Getting"
        " Started with CUDA Graphs' (2019, V100, CUDA 10.1: 3.8 us a kernel back to back for a 2.9 us kernel, 3.4"
        " with a graph, 9.6 with a sync after each; quoted by two stored notes, the page itself not stored), cannot"
        " land it: 148 x 3.8 us = 0.562 ms is under the 0.790 ms of GPU work (max: no move, +93.6%), kernel by"
        " kernel ~0.94 ms (~+63%), as a 0.9 us gap a kernel 0.923 ms (+65.7%); only adding the whole 3.8 us to"
        " every kernel's GPU time (1.352 ms, +13.2%; ViT-L -22.0%) lands, a serialization the blog's own"
        " back-to-back loop and vit_example's contradict. The rows need 8.3-10.3 us of host time a kernel, 2.2-2.7x"
        " a bare launch; the candidate is FasterTransformer's per-GEMM host work (cublasMMWrapper::Gemm @a44c381"
        " per fp16 call: a mutex, two sprintf + std::map algo look-ups, four cublasLt descriptor creates and"
        " destroys, algo init and six config attributes around cublasLtMatmul; 72 of ViT-B's 148 kernels: ~17 us"
        " each if the other 76 take 3.8, ViT-L's 144 the same), measured by no source opened. A spec would need"
        " the host's issue time a kernel and a GEMM call (no field; nothing published per CPU). The T4's batch-1"
        " rows miss too though GPU-bound (+50.7% / +27.3%, new strict xfails there): the product's batch-1 GPU time"
        " is short on that card, and how much of this row that is cannot be seen under the A100's host floor."
        " diff46 (stop 46), unchanged (1,265.5, +93.6%): two more candidates read at a44c381 and set aside. "
        "(1) No sync inside the timed loop: ViT.cc calls sync_check_cuda_error() after each layer, but "
        "cuda_utils.h syncAndCheck is empty under NDEBUG, which the guide's `cmake "
        "-DCMAKE_BUILD_TYPE=Release` keeps (CMakeLists.txt only appends -O3 to CMAKE_CXX_FLAGS_RELEASE). (2) "
        "The patch embedding (utils/conv2d.h): cuDNN with a fixed CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "
        "NCHW in / NHWC out, four descriptors created and destroyed a call, the same fp16 call in ViT.cc and "
        "ViTINT8.cc, so a precision-independent batch-1 cost that would fit INT8 = FP16 here; but its work "
        "is one 196 x 768 x 768 implicit GEMM (0.231 GFLOP), ~12 output tiles of 128 x 128, about 0.14 ms "
        "even on the A100's CUDA cores at one tile an SM: a fifth of the 0.74 ms missing. No source measures "
        "that algorithm at this shape. Still the per-GEMM host work above, unmeasured."
        " img47 (stop 47), published per-call costs of cuBLASLt's host side looked for and read; none sizes the"
        " ~13-17 us a GEMM the row needs. (1) pytorch/pytorch PR #191700 (NVIDIA, 2026-07-31, 'cuBLASLt heuristic"
        " cache'): caching the heuristic result saves ~0.7-0.9 us a call on cuBLASLt's hot path, 'the bulk of"
        " the time is the heuristic call itself'; FasterTransformer does not call the heuristic where vit_gemm's"
        " gemm_config.in holds the shape (cublasMMWrapper::Gemm @35989aa4: cublasLtMatmulAlgoInit and the"
        " config attributes instead), and 72 x 0.9 us is 0.065 ms. (2) ml-explore/mlx issue #3861: an explicit"
        " cublasLtMatmulAlgoGetHeuristic at 0.059 ms a query (Windows, against an 18 ms matmul); were that paid"
        " on each of the 72 GEMMs (a shape missing from gemm_config.in, cublasLtMatmul given a NULL algo) the"
        " forward would take at least 72 x 59 us = 4.25 ms, 2.8x the published 1.53: the rows rule it out as the"
        " per-call cost here. (3) PaddlePaddle/Paddle PR #50931 (2023-02-26): caching the four cuBLASLt"
        " descriptors (heap allocations a create) cut an AlphaFold step 3.22 -> 3.16 s (1.7%), no per-call"
        " time. The descriptor, mutex and algo-map work stays unmeasured; UNEXPLAINED."
    ),
)
def test_fastertransformer_vit_b_batch_one_on_an_a100(bundled_catalog, tmp_path):
    row = _size(tmp_path, _fastertransformer("vit-b-16", 1), "a100-sxm4-40gb")
    _within(row["throughput"]["images_per_second_per_gpu"], 653.6, SPEED)
