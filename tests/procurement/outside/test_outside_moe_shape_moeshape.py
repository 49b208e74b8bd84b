"""moeshape (stop 51): moefloor's lead, a SHAPE rule for the Triton fused_moe kernel's time at small M, checked on
published kernel tables before any engine term. Result: no rule of the kernel's shape reproduces the tables within
~20%, so nothing goes into the engine (no figure moves; the [V22331] and [DSR1] rows stay strict xfails).

Kernel tables (benchmark_moe.py / tuning_fused_moe_triton.py "Kernel time": the whole fused_moe call, i.e. router
top-k, moe_align_block_size, the w1 (gate_up) and w2 (down) GEMMs, the activation and the sum, under a CUDA graph):
  [V19049]  vllm-project/vllm#19049 "Before this PR": Qwen3-30B-A3B (E 128, hidden 2,048, moe_intermediate 768,
            top-8) bf16, A100 PCIe 40GB (1,555 GB/s, 108 SMs), M 1/2/4/8: 109.21 / 159.81 / 268.89 / 403.13 us,
            config printed: BLOCK_SIZE_M 16, N 32, K 64 (vLLM get_default_config's M <= E branch; no file existed).
  [V24700]  vllm-project/vllm#24700 "# Main", Qwen3-30B-A3B fp8_w8a8 (per tensor) TP 1, H100 (taken as SXM5:
            3,350 GB/s, 132 SMs), M 1/2/4/8: 44.54 / 59.94 / 90.46 / 129.77 us. No E=128,N=768 H100 fp8 file in
            vllm's configs/ (find_files), so the same default 16 / 32 / 64 (printed in #19049 and in #31448's B200
            log "Using default MoE config ... {'BLOCK_SIZE_M': 16, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 64}").
  [S11730]  sgl-project/sglang#11730 "# Without tuned kernel", Qwen3-235B-A22B fp8_w8a8 TP 8 (moe_intermediate
            1,536 / 8 = 192, hidden 4,096), H200 (4,800 GB/s, 132 SMs), M 1/2/4/8: 31.70 / 36.56 / 49.67 / 66.87 us,
            config printed: 64 / 128 / 128, num_warps 4, num_stages 4.
  [V39902]  vllm-project/vllm#39902 (2026-04-15), gpt-oss-120b (E 128, hidden 2,880, intermediate 2,880, top-4),
            H100, default config before the PR: M 1 89.02 us, M 8 562.57 us. bf16: the PR's file
            (vllm configs/E=128,N=2880,device_name=NVIDIA_H100_80GB_HBM3.json @fb73c465) carries no dtype suffix,
            i.e. the unquantized path.
  Siblings read as held-out checks (not in the brief's four):
  [V24700-MIX] the same PR, Mixtral-8x7B bf16 TP 2 (E 8, hidden 4,096, 7,168 a rank, top-2), H100, tuned file
            configs/E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json @02ba322d (M 1: 16/64/128, M 2: 16/128/128,
            M 4: 16/32/256, M 8: 16/128/128): 144.03 / 229.28 / 351.10 / 434.98 us.
  [S11816]  sgl-project/sglang#11816 "Before", DeepSeek-R1 block FP8 TP 8 (E 256, hidden 7,168, 256 a rank, top-8;
            [DSR1]'s kernel class), B200 (8,000 GB/s, 148 SMs), configs printed (M 1: 16/64/128, M 2-8: 16/128/128):
            52.65 / 60.35 / 79.09 / 95.47 us.
  [V31448]  vllm-project/vllm#31448, Qwen3-Omni-30B-A3B (the Qwen3-30B expert shape) bf16, B200, default config:
            39.61 / 51.87 / 73.18 us at M 1 / 2 / 4.
  [V40542]  vllm-project/vllm#40542, Kimi-VL-A3B (E 64, hidden 2,048, 1,408, top-6) bf16, A100-SXM4-80GB
            (2,039 GB/s), default config, standalone tuner harness: M 1 183.5, M 4 266.2 us.
  [V44818]  vllm-project/vllm#44818, Gemma4 (E 128, N 704, K 2,816, top-8) bf16, H200, default, harness not
            stated: M 1 189.2, M 4 185.4 us.

Shape (model assumption, stated): at M < BLOCK_SIZE_M vLLM trims the grid to M x top_k M-blocks (invoke_fused_moe_
kernel's "optimize for small batch_size" EM bound), so each touched expert is one M-block and a GEMM launches
experts_touched x ceil(N / BLOCK_SIZE_N) blocks, each looping ceil(K / BLOCK_SIZE_K) times. Experts touched at M
tokens with the harnesses' random router: E (1 - (1 - k / E)^M). Bytes: experts x N x K x bytes a weight; w1 has
N = 2 x intermediate, K = hidden; w2 N = hidden, K = intermediate.
"""

from __future__ import annotations

import math

import pytest

from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

CARD_GBPS = {"A100-PCIE": 1555.0, "A100-SXM": 2039.0, "H100": 3350.0, "H200": 4800.0, "B200": 8000.0}
CARD_SMS = {"A100-PCIE": 108, "A100-SXM": 108, "H100": 132, "H200": 132, "B200": 148}
DEFAULT = (16, 32, 64)  # vLLM get_default_config, M <= E: BLOCK_SIZE_M, N, K
# (card, E, top_k, hidden, intermediate a rank, bytes a weight, {M: (published us, (BLOCK_M, BLOCK_N, BLOCK_K))})
BRIEF_TABLES = {
    "V19049": (
        "A100-PCIE",
        128,
        8,
        2048,
        768,
        2,
        {1: (109.21, DEFAULT), 2: (159.81, DEFAULT), 4: (268.89, DEFAULT), 8: (403.13, DEFAULT)},
    ),
    "V24700": (
        "H100",
        128,
        8,
        2048,
        768,
        1,
        {1: (44.54, DEFAULT), 2: (59.94, DEFAULT), 4: (90.46, DEFAULT), 8: (129.77, DEFAULT)},
    ),
    "S11730": (
        "H200",
        128,
        8,
        4096,
        192,
        1,
        {m: (us, (64, 128, 128)) for m, us in {1: 31.70, 2: 36.56, 4: 49.67, 8: 66.87}.items()},
    ),
    "V39902": ("H100", 128, 4, 2880, 2880, 2, {1: (89.02, DEFAULT), 8: (562.57, DEFAULT)}),
}
SIBLING_TABLES = {
    "V24700-MIX": (
        "H100",
        8,
        2,
        4096,
        7168,
        2,
        {
            1: (144.03, (16, 64, 128)),
            2: (229.28, (16, 128, 128)),
            4: (351.10, (16, 32, 256)),
            8: (434.98, (16, 128, 128)),
        },
    ),
    "S11816": (
        "B200",
        256,
        8,
        7168,
        256,
        1,
        {
            1: (52.65, (16, 64, 128)),
            2: (60.35, (16, 128, 128)),
            4: (79.09, (16, 128, 128)),
            8: (95.47, (16, 128, 128)),
        },
    ),
}
HELD_OUT_TABLES = {
    "V31448": ("B200", 128, 8, 2048, 768, 2, {1: (39.61, DEFAULT), 2: (51.87, DEFAULT), 4: (73.18, DEFAULT)}),
    "V40542": ("A100-SXM", 64, 6, 2048, 1408, 2, {1: (183.5, DEFAULT), 4: (266.2, DEFAULT)}),
    "V44818": ("H200", 128, 8, 2816, 704, 2, {1: (189.2, DEFAULT), 4: (185.4, DEFAULT)}),
}


def rows(tables):
    return [(name, spec[:6], m, us, cfg) for name, spec in tables.items() for m, (us, cfg) in spec[6].items()]


def gemms(spec, m, cfg):
    """(blocks, K iterations, bytes) of w1 and w2 at M tokens."""
    _, experts, top_k, hidden, inter, wbytes = spec
    touched = experts * (1 - (1 - top_k / experts) ** m)
    _, block_n, block_k = cfg
    return [
        (touched * math.ceil(n / block_n), math.ceil(k / block_k), touched * n * k * wbytes)
        for n, k in ((2 * inter, hidden), (hidden, inter))
    ]


def fill_rule_us(spec, m, cfg):
    """The brief's rule: each GEMM reads its bytes at the engine's rate x min(1, grid blocks / SMs)."""
    card = spec[0]
    rate = ACHIEVED_BANDWIDTH_FRACTION * CARD_GBPS[card] * 1e9
    return sum(b / (rate * min(1.0, g / CARD_SMS[card])) * 1e6 for g, _, b in gemms(spec, m, cfg))


def latency_rule_us(spec, m, cfg, call_us, iter_us, occupancy, eta):
    """The rule extended: a per-call constant, plus each GEMM at the larger of its bytes at eta x datasheet and
    its serial K loop (iterations x iter_us) over ceil(blocks / (occupancy x SMs)) waves."""
    card = spec[0]
    waves_of = lambda g: math.ceil(g / (occupancy * CARD_SMS[card]))  # noqa: E731
    return call_us + sum(
        max(b / (eta * CARD_GBPS[card] * 1e9) * 1e6, it * iter_us * waves_of(g))
        for g, it, b in gemms(spec, m, cfg)
    )


def worst(points, fn, *params):
    return max(abs(fn(spec, m, cfg, *params) / us - 1) for _, spec, m, us, cfg in points)


def test_the_grid_fill_rule_misses_the_kernel_tables_by_up_to_72_percent():
    """The brief's rule (grid blocks = experts touched x N / BLOCK_SIZE_N against the SM count, nothing else)
    reads the narrow fp8 tables far low, because their grids already fill the card (Qwen3-30B's w1 at M 1: 8 x
    1,536 / 32 = 384 blocks on 132 SMs) yet run at 0.25 of the H100's bandwidth, and reads Mixtral high. Errors:
    A100 bf16 M 1 -36%, H100 fp8 M 1 -64%, H200 fp8 M 4 -45%, B200 block FP8 M 1 -72%, Mixtral M 8 +24%."""
    got = {
        f"{n} M{m}": fill_rule_us(s, m, c) / us - 1 for n, s, m, us, c in rows(BRIEF_TABLES | SIBLING_TABLES)
    }
    assert got["V19049 M1"] == pytest.approx(-0.365, abs=0.005)
    assert got["V24700 M1"] == pytest.approx(-0.639, abs=0.005)
    assert got["S11730 M4"] == pytest.approx(-0.448, abs=0.005)
    assert got["S11816 M1"] == pytest.approx(-0.720, abs=0.005)
    assert got["V24700-MIX M8"] == pytest.approx(0.243, abs=0.005)
    assert max(abs(e) for e in got.values()) > 0.70


def test_a_serial_k_loop_term_takes_no_weight_once_a_per_call_constant_is_allowed():
    """The shape term given its best chance: per-K-iteration latency x waves, with the occupancy, the constant
    and the read rate all free, searched on the six tables. The best fit sets the latency to zero (34 us a call,
    bytes at 0.80: worst 23.8%); without the constant, the shape term alone is worst 33.9%. The grid explains
    nothing a per-call constant does not."""
    points = rows(BRIEF_TABLES | SIBLING_TABLES)
    etas = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
    iters = [i * 0.1 for i in range(0, 21)]

    def best(calls):
        return min(
            (worst(points, latency_rule_us, call, it, occ, eta), call, it, occ, eta)
            for call in calls
            for it in iters
            for occ in (1, 2, 4, 8)
            for eta in etas
        )

    err, call, it, _, eta = best([float(x) for x in range(0, 61, 2)])
    assert (call, it, eta) == (34.0, 0.0, 0.8)
    assert err == pytest.approx(0.238, abs=0.001)
    err_shape_only = best([0.0])[0]
    assert err_shape_only == pytest.approx(0.339, abs=0.001)


def test_a_per_call_constant_fitted_on_the_brief_tables_misses_held_out_tables():
    """Fitted on the brief's four tables alone, 30 us a call + bytes at 0.80 lands them within 17.1%; held out, it
    reads the block-FP8 DeepSeek-R1 table ([DSR1]'s kernel class, B200) -30% at M 1 and -29% at M 4, and two
    other-harness tables -49% (A100 Kimi-VL M 1) and -71% (H200 Gemma4 M 1); only the B200 Qwen3-30B table
    (same shape as the fit's) lands (+6%). Not a shape rule, and not within ~20% off its fit tables."""
    rule = lambda s, m, c: latency_rule_us(s, m, c, 30.0, 0.0, 1, 0.80)  # noqa: E731
    assert worst(rows(BRIEF_TABLES), rule) == pytest.approx(0.171, abs=0.001)
    held = {f"{n} M{m}": rule(s, m, c) / us - 1 for n, s, m, us, c in rows(SIBLING_TABLES | HELD_OUT_TABLES)}
    assert held["S11816 M1"] == pytest.approx(-0.300, abs=0.005)
    assert held["S11816 M4"] == pytest.approx(-0.289, abs=0.005)
    assert held["V40542 M1"] == pytest.approx(-0.490, abs=0.005)
    assert held["V44818 M1"] == pytest.approx(-0.710, abs=0.005)
    assert held["V31448 M1"] == pytest.approx(0.055, abs=0.005)
