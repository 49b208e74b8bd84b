"""img51: diffusers' eager Flux q / k fp32 chains, priced in DRAM where a chain's fp32 tensor exceeds the card's L2
(image_model.flux_qk_chain_dram_bytes_per_step)."""

import numpy as np
import pytest

from procurement.sizing import image_model as im
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec

# L2 sizes from the architecture whitepapers (KB = 1,024 B): H100 51,200 KB (H100 whitepaper Table 3), A100
# 40,960 KB (A100 whitepaper Table 3), full AD102 98,304 KB (Ada whitepaper Table 1; taken for the L40S).
H100_L2, A100_L2, L40S_L2 = 51_200 * 1024, 40_960 * 1024, 98_304 * 1024
# FLUX.1-dev at 1,024 px, batch 1: 4,096 image + 512 text tokens, hidden 3,072 (24 heads x 128), 19 joint blocks
# and 38 single blocks (black-forest-labs/FLUX.1-dev transformer/config.json)
JOINED, IMAGE, TEXT = 4608 * 3072, 4096 * 3072, 512 * 3072
# bytes an element beyond the counted activations, counted from diffusers @375ec930 (v0.33.1): RMSNorm 34 - 4 = 30,
# apply_rotary_emb 54 (kernel by kernel in image_model.FLUX_QK_*_BYTES_PER_ELEMENT's comment)
NORM, ROPE = 30, 54


def _flux(**overrides) -> object:
    spec = {
        "task": "inference",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "micro_batch_size": 1,
        "image": {"steps": 28, "resolution_px": 1024, "images": 100},
    }
    return parse_workload_spec(spec | overrides)


def test_it_reads_the_whitepaper_l2_sizes():
    assert gpu_by_slug("h100-sxm5-80gb").l2_cache_bytes == H100_L2
    assert gpu_by_slug("a100-sxm4-80gb").l2_cache_bytes == A100_L2
    assert gpu_by_slug("l40s").l2_cache_bytes == L40S_L2
    assert gpu_by_slug("mi300x").l2_cache_bytes is None  # no source opened: not priced


def test_it_streams_the_joined_chains_through_the_h100s_dram():
    # 14.16M elements = 56.6 MB in fp32 > 52.4 MB: the single blocks' RMSNorm and every block's RoPE spill; the
    # joint blocks' image q / k (12.58M, 50.3 MB) and text q / k (1.57M) stay in L2
    spill = JOINED * (NORM * 2 * 38 + ROPE * 2 * (19 + 38))
    assert spill == pytest.approx(119.42e9, rel=1e-4)
    assert im.flux_qk_chain_dram_bytes_per_step(_flux(), H100_L2) == pytest.approx(spill, rel=1e-9)


def test_the_a100_also_spills_the_joint_blocks_image_norms():
    spill = JOINED * (NORM * 2 * 38 + ROPE * 2 * 57) + IMAGE * NORM * 2 * 19
    assert spill == pytest.approx(133.76e9, rel=1e-4)
    assert im.flux_qk_chain_dram_bytes_per_step(_flux(), A100_L2) == pytest.approx(spill, rel=1e-9)


def test_the_l40s_holds_every_chain_and_an_unknown_l2_prices_none():
    rows = im.flux_qk_chain_dram_bytes_per_step(_flux(), np.array([L40S_L2, np.nan]))
    assert rows.tolist() == [0.0, 0.0]
    assert float(im.flux_qk_chain_dram_bytes_per_step(_flux(), None)) == 0.0


def test_a_batch_grows_the_tensor_past_a_larger_l2():
    # batch 2 on the L40S: 2 x 14.16M x 4 B = 113 MB > 100.7 MB; the image q / k (100.7 MB) sits just under it
    batch = im.flux_qk_chain_dram_bytes_per_step(_flux(micro_batch_size=2), L40S_L2)
    assert batch == pytest.approx(2 * JOINED * (NORM * 2 * 38 + ROPE * 2 * 57), rel=1e-9)


@pytest.mark.parametrize(
    "overrides",
    [
        {"precision": "fp32"},  # no upcast chain to speak of: the activations are fp32 already
        {"image": {"steps": 28, "resolution_px": 1024, "images": 100, "fused_kernels": True}},  # compiled
        {"model": {"preset": "sd3-medium"}},  # no single blocks, no RoPE
    ],
)
def test_it_is_zero_where_the_chains_do_not_run_eager(overrides):
    assert float(im.flux_qk_chain_dram_bytes_per_step(_flux(**overrides), H100_L2)) == 0.0


def test_it_adds_the_spill_to_the_h100_image_time():
    spec = _flux()
    h100 = gpu_by_slug("h100-sxm5-80gb")
    args = (spec, 989.5e12, 3350e9, 90)
    without = float(im.inference_seconds_per_image(*args))
    with_l2 = float(im.inference_seconds_per_image(*args, None, H100_L2))
    # 28 steps of 119.42 GB at 0.7 x 3,350 GB/s = 1.426 s an image
    assert with_l2 - without == pytest.approx(28 * 119.42e9 / (0.7 * 3350e9), rel=1e-3)
    assert h100.l2_cache_bytes == H100_L2
