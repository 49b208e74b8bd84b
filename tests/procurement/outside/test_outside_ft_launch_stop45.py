"""ft45 (issue 29): is FasterTransformer's ViT-B/16 batch-1 A100 row (1.53 ms published, 0.790 ms ours, +93.6%,
test_outside_vit_datacenter_stop43.py::test_fastertransformer_vit_b_batch_one_on_an_a100) the host's launch time?
No engine change here: the sourced per-kernel launch cost is too small to move it; these tests pin why.

Source [FT-VIT]: NVIDIA/FasterTransformer docs/vit_guide.md @6ea1c77c (tables measured on v5.0, a44c381; host
'Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz', CUDA 11.4, built -DCMAKE_BUILD_TYPE=Release), 'INT8 vs. FP16 speedup
on ViT', ms a batch, B_16-224 / L_16-224 / B_16 (384 px) columns, FP16 and INT8, batch 1 / 8 / 16 / 32, on the
A100 (pclk 1,410 MHz) and on the T4 (pclk 1,590 MHz).
How the guide timed it (examples/cpp/vit/vit_example.cc @a44c381): 10 warm-up forwards, then 100 forwards back to
back from one C++ thread between two CUDA events (CudaTimer), no host sync between them; ViTTransformer is built
with is_free_buffer_after_forward false, so allocateBuffer returns at once and no cudaMalloc / cudaFree or blocking
cudaMemcpy runs per forward; sync_check_cuda_error is cudaDeviceSynchronize only `#ifndef NDEBUG`
(src/fastertransformer/utils/cuda_utils.h @a44c381), compiled out in the guide's Release build. So the launches
overlap the GPU's work: a forward takes max(GPU time, host issue time), not their sum.
Kernel count (vit45, ViT.cc / FusedAttentionLayer.cc / FfnLayer.cc): 12 a layer (6 of them cuBLAS GEMMs) + 4 a
forward: ViT-B 148 (72 GEMMs), ViT-L 292 (144 GEMMs). Every fp16 GEMM goes through cublasMMWrapper::Gemm
(src/fastertransformer/utils/cublasMMWrapper.cc @a44c381), which per call takes a mutex, formats and looks up the
shape's key twice in cublasAlgoMap (sprintf + std::map), creates three cublasLtMatrixLayouts and a
cublasLtMatmulDesc, sets two descriptor and six algo-config attributes (cublasLtMatmulAlgoInit), calls
cublasLtMatmul and destroys the four descriptors: host work beyond a bare kernel launch, not measured anywhere
opened here.

Source [CUDA-GRAPHS-BLOG]: A. Gray, 'Getting Started with CUDA Graphs', NVIDIA Technical Blog, 2019-09-05,
https://developer.nvidia.com/blog/cuda-graphs/ : a C++ loop of 20 short kernels x 1,000 steps on a V100 (CUDA
10.1): the kernel runs 2.9 us; 9.6 us a kernel with cudaStreamSynchronize after each launch, 3.8 us a kernel
launched back to back (launch overlapping the previous kernel), 3.4 us with a CUDA graph. The page itself is not
in the stored corpus; these figures are as two independent stored notes quote them from the fetched page (one a
table 'Plain launch, async stream | 3.8 us per 2.9 us kernel | V100, CUDA 10.1', with H100 2.1 us a stream launch
from Hazy Research's 'No Bubbles' post and 3.8 us an eager launch on a B200 from the MPK paper; the other '2.9 us
kernel, 9.6/3.8/3.4 us per kernel across submission styles'). Read as the host's issue time a bare launch: <= 3.8 us
(the loop is host-bound, 3.8 > 2.9); as the GPU-side gap between back-to-back kernels: 3.8 - 2.9 = 0.9 us
(0.5 us with a graph).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25
A100_40 = "a100-sxm4-40gb"
T4 = "t4"

# [CUDA-GRAPHS-BLOG], V100, CUDA 10.1, us a kernel
BLOG_KERNEL_US = 2.9
BLOG_BACK_TO_BACK_US = 3.8
BLOG_GRAPH_US = 3.4
VIT_B_KERNELS = 148
VIT_L_KERNELS = 292

# [FT-VIT] 'INT8 vs. FP16 speedup on ViT', ms a batch at batch 1 / 8 / 16 / 32: (FP16, INT8)
A100_ROWS = {
    "B_16-224": ((1.53, 1.52), (3.03, 2.38), (5.30, 3.74), (10.04, 6.43)),
    "L_16-224": ((2.97, 2.91), (8.09, 5.44), (15.03, 9.23), (29.66, 17.28)),
    "B_16-384": ((2.24, 2.26), (11.14, 7.93), (21.50, 14.66), (43.81, 29.07)),
}
T4_ROWS = {
    "B_16-224": ((3.43, 2.16), (14.46, 8.37), (28.77, 16.67), (57.22, 35.43)),
    "L_16-224": ((9.69, 5.04), (47.55, 24.38), (90.30, 47.29), (171.89, 101.25)),
}


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _ft(preset: str, batch: int) -> dict:
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": batch,
        "image": {"resolution_px": 224, "engine": "fastertransformer"},
    }


def _forward_ms(tmp_path, preset: str, batch: int, gpu: str) -> float:
    row = _size(tmp_path, _ft(preset, batch), gpu)
    return batch / row["throughput"]["images_per_second_per_gpu"] * 1e3


def test_a100_batch_one_does_not_depend_on_the_precision():
    """Arithmetic on [FT-VIT] alone, nothing sized: at batch 1 on the A100 INT8 runs as long as FP16 (1.53 / 1.52,
    2.97 / 2.91, 2.24 / 2.26 ms: ratios 0.99-1.02) though INT8 is 1.27-1.72x faster from batch 8 up on the same card
    and 1.59x / 1.92x faster at batch 1 on the slower T4. So the A100's batch-1 forward is not set by the GPU's work
    at the stated precision but by a floor that does not change with it, which the host's issue of the kernels is;
    and the FP16 rows put that floor at the same time a counted kernel for both models (1.53 ms / 148 = 10.3 us,
    2.97 ms / 292 = 10.2 us), 2.7x the blog's 3.8 us a back-to-back bare launch."""
    for fp16, int8 in (rows[0] for rows in A100_ROWS.values()):
        assert 0.97 <= fp16 / int8 <= 1.03
    for rows in A100_ROWS.values():
        for fp16, int8 in rows[1:]:
            assert fp16 / int8 >= 1.25
    for fp16, int8 in (rows[0] for rows in T4_ROWS.values()):
        assert fp16 / int8 >= 1.55
    vit_b = A100_ROWS["B_16-224"][0][0] * 1e3 / VIT_B_KERNELS
    vit_l = A100_ROWS["L_16-224"][0][0] * 1e3 / VIT_L_KERNELS
    assert vit_b == pytest.approx(10.34, abs=0.01)
    assert vit_l == pytest.approx(10.17, abs=0.01)
    assert vit_b / vit_l - 1.0 < 0.02
    assert vit_b / BLOG_BACK_TO_BACK_US == pytest.approx(2.72, abs=0.01)


@pytest.mark.django_db
def test_the_sourced_launch_cost_cannot_land_vit_b_batch_one(bundled_catalog, tmp_path):
    """[CUDA-GRAPHS-BLOG]'s cost, applied the two ways it can be read, leaves the row far outside 25%:
    - as the host's issue time a kernel, overlapped (vit_example's loop has no sync): 148 x 3.8 us = 0.562 ms, under
      the product's 0.790 ms of GPU work, so max(GPU, host) is the GPU's 0.790 ms and nothing moves (+93.6%);
    - kernel by kernel, each kernel max(its own GPU time, 3.8 us): the product's per-layer split (six GEMMs 55.5
      us, 4.6 to 18.5 us each; fused attention 4.0 us; five elementwise kernels 6.4 us, ~1.3 us each) leaves only
      the 60 elementwise kernels under 3.8 us: +0.15 ms -> ~0.94 ms, ~+63% (estimated by hand, not sized);
    - as a GPU-side gap a kernel added to the work: 148 x 0.9 us (0.5 with graphs) = +0.133 ms -> 0.923 ms,
      1,083 images/s, +65.7%.
    Even charging every one of the 148 kernels the blog's whole 3.8 us on top of its GPU time (no overlap at all,
    which the blog's own back-to-back loop contradicts) gives 1.352 ms, 739.6 images/s, +13.2%: only that reading
    lands, and then ViT-L/16 224 batch 1 (292 kernels: 2.697 + 1.110 = 3.807 ms against 2.97, -22.0%) barely
    stays. The rows need 2.9-4.3 us added a kernel (vit45), or 8.3-10.3 us a kernel of host time under the
    overlapped reading: neither is a figure any source opened gives."""
    ours = _forward_ms(tmp_path, "vit-b-16", 1, A100_40)
    assert ours == pytest.approx(0.790, abs=0.002)
    published = 1.53
    host_floor = VIT_B_KERNELS * BLOG_BACK_TO_BACK_US * 1e-3
    assert host_floor == pytest.approx(0.562, abs=0.001)
    assert max(ours, host_floor) == ours
    gap = VIT_B_KERNELS * (BLOG_BACK_TO_BACK_US - BLOG_KERNEL_US) * 1e-3
    assert published / (ours + gap) - 1.0 > SPEED
    graph_gap = VIT_B_KERNELS * (BLOG_GRAPH_US - BLOG_KERNEL_US) * 1e-3
    assert published / (ours + graph_gap) - 1.0 > SPEED
    # the host floor the row needs under the overlapped reading, and what it is a kernel
    needed_floor = published / (1.0 + SPEED)
    assert needed_floor * 1e3 / VIT_B_KERNELS == pytest.approx(8.27, abs=0.01)


T4_BATCH_ONE_REASON = (
    "UNEXPLAINED (ft45, new held-out rows of [FT-VIT]): FasterTransformer v5.0 FP16 batch 1 on the T4, 224 px:"
    " ViT-B/16 3.43 ms published (291.5 images/s), product 2.277 ms (439.2, +50.7%); ViT-L/16 9.69 ms (103.2),"
    " product 7.611 ms (131.4, +27.3%). The same table's batch 8 / 16 / 32 land (-0.8% / +0.5% / +0.9% and -1.2% /"
    " -4.4% / -8.1%). Not the host: INT8 runs these rows 1.59x / 1.92x faster (2.16 / 5.04 ms), so the GPU's work"
    " sets them, and 3.43 ms over 148 kernels is 23 us a kernel, twice the A100's host-bound 10.3. What is short is"
    " the product's batch-1 GPU time: the forward costs 1.90x an image of batch 8 (3.43 against 14.46 / 8 = 1.81 ms)"
    " where the product charges 1.25x (2.277 against 1.821); its work-per-kernel efficiency of the 197-row GEMMs (and"
    " the 197 -> 256 fused attention at one image) does not fall far enough at batch 1 on this card. Whether the same"
    " shortfall sits under the A100's batch-1 host floor cannot be seen there (host-bound). A spec field would not"
    " fix it; a batch-1 GEMM rate measured per card would. diff46 (stop 46), unchanged: the patch "
    "convolution (utils/conv2d.h @a44c381, fixed CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, the same fp16 "
    "call in the FP16 and INT8 forwards) runs one 196 x 768 (ViT-L 1,024) x 768 implicit GEMM at batch 1, "
    "~12 (16) output tiles on 40 SMs, one wave, about 0.12 ms at the T4's CUDA-core rate: a tenth or less of "
    "the 1.15 / 2.08 ms missing; not sized by a source, not the cause on this count."
    " img47 (stop 47), the 197-row GEMMs' fill of the T4's 40 SMs checked (test_t4_batch_one_follows_the_sm_fill):"
    " the guide's own batch-1 over batch-8 cost an image orders as the tiles a GEMM leaves on 40 SMs: ViT-B 224"
    " 1.90 (197 rows: 2 x 6 = 12 of 40 SMs on the 768-wide GEMMs), ViT-L 224 1.63 (2 x 8 = 16), ViT-B 384 1.12"
    " (577 rows: 5 x 6 = 30); counted in waves of 128 x 128 tiles without split-K the GEMMs' ratio would be 3.33"
    " (ViT-B) and 2.29 (ViT-L), above the published forward's, so vit_gemm's tuned algorithms (tile, split-K,"
    " searched per shape; cublasMMWrapper::Gemm @35989aa4 applies gemm_config.in's tile and splitK_val) recover"
    " part of the fill and their picks are not published: bracketed, not sized. The product's half-efficiency rows"
    " scale with the card's dense peak (kernel_efficiency: 549 x 65 / 312 = 114 rows on the T4), where a tile's"
    " fill scales with SMs (549 x 40 / 108 = 203); sized that way (a test-only swap, not adopted) ViT-B batch 1"
    " reads 2.68 ms (+27.9%, still out), ViT-L 9.03 ms (+7.3%), batch 8-32 -0.9..-8.8%. Not adopted: it moves"
    " every non-A100 card's image pricing (the Hopper rows are fitted on the peak law) and does not land ViT-B."
    " Still UNEXPLAINED."
)

T4_BATCH_ONE = [
    pytest.param(
        "vit-b-16",
        1,
        3.43,
        id="t4-vit-b-224-1",
        marks=pytest.mark.xfail(strict=True, reason=T4_BATCH_ONE_REASON),
    ),
    pytest.param(
        "vit-l-16",
        1,
        9.69,
        id="t4-vit-l-224-1",
        marks=pytest.mark.xfail(strict=True, reason=T4_BATCH_ONE_REASON),
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "batch", "published_ms"), T4_BATCH_ONE)
def test_fastertransformer_vit_batch_one_on_a_t4(bundled_catalog, tmp_path, preset, batch, published_ms):
    ours = _forward_ms(tmp_path, preset, batch, T4)
    error = published_ms / ours - 1.0  # images/s: ours over published
    assert abs(error) <= SPEED, f"{ours:.3f} ms vs {published_ms} ms ({error:+.1%})"


def _waves(tiles: int, sms: int) -> int:
    return -(-tiles // sms)


def _gemm_tile_k_units(rows: int, width: int, ffn: int, sms: int, tile: int = 128) -> int:
    """One layer's six GEMMs (q, k, v, output: width x width; FFN up: width x ffn, down: ffn x width) in waves of
    tile x tile output tiles over `sms`, each wave costing its K: the fill arithmetic, no split-K."""
    row_tiles = -(-rows // tile)
    narrow = _waves(row_tiles * (width // tile), sms)
    wide = _waves(row_tiles * (ffn // tile), sms)
    return 4 * narrow * width + wide * width + narrow * ffn


def test_t4_batch_one_follows_the_sm_fill():
    """img47, arithmetic on [FT-VIT] alone, nothing sized: the batch-1 cost an image over batch 8's on the T4 (40 SMs)
    ranks as the 128 x 128 tiles the 768 / 1,024-wide GEMMs leave on 40 SMs at 197 or 577 rows (12, 16, 30), and the
    untuned wave count over-shoots the published ratios (3.33 / 2.29 against 1.90 / 1.63): the tuned algorithms'
    tiles and split-K (vit_gemm; not published) sit between."""
    b224 = T4_ROWS["B_16-224"][0][0] / (T4_ROWS["B_16-224"][1][0] / 8)
    l224 = T4_ROWS["L_16-224"][0][0] / (T4_ROWS["L_16-224"][1][0] / 8)
    b384 = 8.53 / (61.07 / 8)  # [FT-VIT] 'INT8 vs. FP16 speedup on ViT', B_16 (FP16), batch 1 and 8
    assert b224 == pytest.approx(1.90, abs=0.01) and l224 == pytest.approx(1.63, abs=0.01)
    assert b384 == pytest.approx(1.12, abs=0.01)
    assert b224 > l224 > b384
    t4_sms = 40
    vit_b = _gemm_tile_k_units(197, 768, 3072, t4_sms) / (_gemm_tile_k_units(197 * 8, 768, 3072, t4_sms) / 8)
    vit_l = _gemm_tile_k_units(197, 1024, 4096, t4_sms) / (
        _gemm_tile_k_units(197 * 8, 1024, 4096, t4_sms) / 8
    )
    assert vit_b == pytest.approx(3.33, abs=0.01) and vit_l == pytest.approx(2.29, abs=0.01)
    assert vit_b > b224 and vit_l > l224
