"""aud48n (stop 48, outside audit of serve48b: an A100 SXM4 TP 8 all-reduce priced at one published nccl-tests
run instead of NCCL's tuning model). Published A100 TP 8 TensorRT-LLM rows no test used, sized as a user would
(trtllm_spec + the engine entry the outside tests use), and the change's table set against the other published
8 x A100 all_reduce_perf runs. Tolerance: LLM speed 15% (the issue's).

Sources (stored copies; the index names no repository for a find_string / read_file id):
  [TRT8]  NVIDIA/TensorRT-LLM docs/source/performance.md, "All data was generated using version 0.8.0" (stored
          copy, read_file id 5675739753). "A100 GPUs (FP16)", Low Latency (Batch | TP | Input | 1st Token Latency
          ms): "LLaMA 70B | 1 | 8 | 128 | 35.6", "LLaMA 70B | 1 | 8 | 2048 | 235.1", "Falcon 180B | 1 | 8 | 2048 |
          463.0"; Peak Throughput: "Falcon 180B | 16 | 8 | 2048 | 128 | 20" (out tok/s/GPU).
  [TRT9]  same file, "All data was generated using version 0.9.0" (stored id 5995251461): A100 FP16 Low Latency
          "Falcon 180B | 1 | 8 | 2048 | 456.0".
  [TRT5]  same file, "This data has been updated for v0.6.1" (stored id 3037522292, commit 138f96d4), Low Latency
          "The following data is from TensorRT-LLM v0.5": A100 FP16 "Falcon 180B | 1 | 8 | 2048 | 509". Its
          Falcon-180B recipe builds with examples/falcon/build.py without --use_custom_all_reduce and runs
          `mpirun -n 8 ... gptSessionBenchmark` (one rank a GPU, NCCL's ring).
  [REL05] octoml/TensorRT-LLM-release @6b32b407 (NVIDIA release/0.5.0): allreducePlugin.cpp selectImplementation
          (worldSize > 4: ONESHOT < 500,000 B, TWOSHOT < 8,000,000 B, else RING) runs only under the opt-in
          --use_custom_all_reduce (examples/falcon/build.py:287, benchmarks/python/benchmark.py:194 default False).
  [NCCLT] serve48b's run (find_string id 33201577724, host "thanos", 8 x A100-SXM4-80GB, NCCL wheel release not
          printed), out-of-place us: `mpirun -np 8 ... -g 1` (the product's table) and `-g 8` (one process).
  [DKH]   find_string id 69473998636: "nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903" (NCCL
          2.19.3, the release whose tuning.cc the engine models), `all_reduce_perf -b 8 -e 128M -f 2 -g 8` on 8 x
          NVIDIA A100-SXM4-80GB (host "dkh"), out-of-place us: 1 MB 67.31, 2 MB 81.12, 4 MB 106.56, 8 MB 161.65,
          16 MB 273.12, 32 MB 431.40, 64 MB 671.74, 128 MB 1295.41.
  [A40G]  find_string id 26203046415 (a profiler's captured fixture; DGX A100 bus ids 0x07 ... 0xbd), "nGpus 8",
          8 x NVIDIA A100-SXM4-40GB, out-of-place us: 1 MB 78.77, 2 MB 108.8, 4 MB 131.1, 8 MB 183.4, 16 MB 293.6,
          32 MB 415.7, 64 MB 657.2, 128 MB 1256.7.
"""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import throughput
from tests.procurement.outside.test_outside_audit_stop43s import (
    CTXFIRST_GEMM_PATH,
    TTFT49_WAVES,
    TTFT51_RECIPE,
    first_token_ms,
)
from tests.procurement.outside.test_outside_serve44 import per_gpu

SPEED = 0.15
A100 = "a100-sxm4-80gb"
MB = 1_048_576
MPI = {1: 37.89, 2: 55.39, 4: 81.66, 8: 130.6, 16: 213.3, 32: 377.6, 64: 615.7, 128: 1181.6}
G8 = {1: 52.61, 2: 59.30, 4: 103.8, 8: 162.6, 16: 260.5, 32: 439.2, 64: 695.5, 128: 1305.0}
DKH = {1: 67.31, 2: 81.12, 4: 106.56, 8: 161.65, 16: 273.12, 32: 431.40, 64: 671.74, 128: 1295.41}
A40G = {1: 78.77, 2: 108.8, 4: 131.1, 8: 183.4, 16: 293.6, 32: 415.7, 64: 657.2, 128: 1256.7}


def _nccl_model(monkeypatch):
    """The engine as it priced every call before serve48b: NCCL's model (generation 80 read as 90, the same ring
    constants and LL128 on, so the measured-table branch is skipped)."""
    original = throughput.tp_allreduce_call_seconds

    def modelled(tp, message_bytes, link, generation=None, nvlink=None):
        gen = None if generation is None else np.where(np.asarray(generation) == 80.0, 90.0, generation)
        return original(tp, message_bytes, link, gen, nvlink)

    monkeypatch.setattr(throughput, "tp_allreduce_call_seconds", modelled)


def _with_run(monkeypatch, run: dict[int, float]):
    """The product's table with its 1-128 MB rows replaced by another published run's."""
    table = dict(zip(throughput.A100_TP8_ALLREDUCE_BYTES, throughput.A100_TP8_ALLREDUCE_SECONDS, strict=True))
    table.update({mb * MB: us * 1e-6 for mb, us in run.items()})
    monkeypatch.setattr(
        throughput, "A100_TP8_ALLREDUCE_SECONDS", tuple(table[b] for b in throughput.A100_TP8_ALLREDUCE_BYTES)
    )


# --- Case 1: held-out A100 TP 8 first tokens and a prefill-heavy row that land (ours, serve48b's table; before it).
# [TRT8] 70B 2,048: 229.48 (-2.4%; 217.17, -7.6%). [TRT8] Falcon 2,048: 529.82 (+14.4%; 516.64, +11.6%). [TRT5]
# Falcon 2,048: 529.82 (+4.1%; +1.5%). [TRT8] Falcon 16 | 2,048 / 128: 20.06 (+0.3%; 20.04, +0.2%).
@pytest.mark.parametrize(
    ("model", "prompt", "published"),
    [("llama-2-70b", 2048, 235.1), ("falcon-180b", 2048, 463.0), ("falcon-180b", 2048, 509.0)],
    ids=["trt8-70b-2048", "trt8-falcon-2048", "trt5-falcon-2048"],
)
def test_a100_tp8_first_token_at_2048_tokens(model, prompt, published):
    assert first_token_ms(model, "fp16", A100, 8, prompt=prompt) == pytest.approx(published, rel=SPEED)


def test_trt8_a100_falcon_180b_tp8_prefill_heavy_row():
    assert per_gpu("falcon-180b", "fp16", A100, 8, 16, 2048, 128) == pytest.approx(20, rel=SPEED)


# --- Case 2: a held-out row of the v0.9.0 table the change moves OUT of tolerance.
TRT9_FALCON_2048 = (
    "UNEXPLAINED (aud48n): [TRT9] A100 FP16 Falcon 180B TP 8, batch 1, first token at 2,048 tokens: published 456.0 ms;"
    " ours 529.8 (+16.2%); 516.6 (+13.3%, inside) before serve48b priced its 160 all-reduces of 2,048 x 14,848 x 2 B"
    " = 58 MiB (NCCL's ring: above every custom-kernel threshold, [REL05] and cls45d) at the [NCCLT] MPI table"
    " (581.9 us a call, interpolated) instead of NCCL's model (499.5 us): +13.2 ms. The measurement is not the error:"
    " every other published 8 x A100 run is slower still at 64 MB ([NCCLT] -g 8 695.5, [DKH] 671.7, [A40G] 657.2 us"
    " against 615.7) and puts the row at +17.6 to +18.9%. The same engine figure lands [TRT5] 509 (+4.1%) and [TRT8]"
    " 463.0 (+14.4%): the publisher's Falcon context phase got 1.12x faster from v0.5 to v0.9 at the same shape, a"
    " release difference no spec field states. Ruled out: a custom all-reduce (58 MiB runs RING in every release"
    " read). Lead: what changed in v0.8-v0.9's context phase for Falcon (context FMHA / GEMM plugin), not opened"
)


@pytest.mark.xfail(strict=True, reason=TRT9_FALCON_2048)
def test_trt9_a100_falcon_180b_tp8_first_token_at_2048_tokens():
    assert first_token_ms("falcon-180b", "fp16", A100, 8, prompt=2048) == pytest.approx(456.0, rel=SPEED)


def test_the_trt9_falcon_2048_row_was_inside_before_serve48b(monkeypatch):
    assert first_token_ms("falcon-180b", "fp16", A100, 8, prompt=2048) / 456.0 - 1 == pytest.approx(
        0.162, abs=0.002
    )
    call = float(throughput.tp_allreduce_call_seconds(8.0, 2048 * 14848 * 2, 240e9, 80)) * 1e6
    assert call == pytest.approx(581.9, abs=0.1)
    _nccl_model(monkeypatch)
    assert float(
        throughput.tp_allreduce_call_seconds(8.0, 2048 * 14848 * 2, 240e9, 80)
    ) * 1e6 == pytest.approx(499.5, abs=0.1)
    assert first_token_ms("falcon-180b", "fp16", A100, 8, prompt=2048) / 456.0 - 1 == pytest.approx(
        0.133, abs=0.002
    )


# --- Case 3: a held-out short first token the change moves further out (it missed already).
TRT8_70B_128 = (
    (
        "UNEXPLAINED (aud48n): [TRT8] A100 FP16 Llama 2 70B TP 8, batch 1, first token at 128 tokens: published 35.6 ms;"
        " ours 29.70 (-16.6%); 29.99 (-15.7%) before serve48b: its 160 calls of 128 x 8,192 x 2 B = 2 MiB now cost the"
        " [NCCLT] MPI run's 55.4 us, under NCCL's model (57.2). The row is within reach of the per-call cost alone: with"
        " the other published runs' 2 MB times ([NCCLT] -g 8 59.3, [DKH] 81.1, [A40G] 108.8 us) it reads -14.8 / -5.0 /"
        " +7.4%, so a 2 MB call on 8 A100s is not pinned to better than 2x by what is published. Whether v0.8.0's"
        " benchmark engines ran the custom TWOSHOT kernel for 2 MiB (under the 8 MB threshold; cls45d: v0.9.0's did) is"
        " not stated, and that kernel's time on 8 A100s is unmeasured (sglang#2688 timed 2 and 4 GPUs). Lead: a TP 8"
        " two-shot timing on A100."
    )
    + TTFT49_WAVES
    + TTFT51_RECIPE
    + CTXFIRST_GEMM_PATH
)


@pytest.mark.xfail(strict=True, reason=TRT8_70B_128)
def test_trt8_a100_llama2_70b_tp8_first_token_at_128_tokens():
    assert first_token_ms("llama-2-70b", "fp16", A100, 8) == pytest.approx(35.6, rel=SPEED)


# --- Finding (the change's own source): serve48b's table is the fastest of four published 8 x A100 sweeps at
# 1-16 MB; every other run is 1.2-2.1x it at 1 MB and 1.24-1.40x at 8 MB. Both rows serve48b relabelled FIXED land
# under every run (the direction is robust: any measured call is slower than NCCL's model at 4-32 MB), but a held-out
# row swings by up to 24 points with the choice of run, so one run does not pin the constant.
RUNS = {"mpi": MPI, "thanos-g8": G8, "dkh-nccl-2.19.3-g8": DKH, "a100-40gb-g8": A40G}
# (70B b512 128/2,048 vs 684, [TRT5] Falcon first token 128 vs 61, [TRT8] 70B first token 128 vs 35.6)
EXPECTED = {
    "mpi": (0.134, -0.139, -0.166),
    "thanos-g8": (0.068, -0.087, -0.148),
    "dkh-nccl-2.19.3-g8": (0.070, -0.073, -0.050),
    "a100-40gb-g8": (0.029, -0.008, 0.074),
}


def test_published_runs_against_the_products_table():
    for run in (G8, DKH, A40G):
        assert all(run[mb] > MPI[mb] for mb in (1, 2, 4, 8, 16, 32, 64, 128))
    assert [round(r[1] / MPI[1], 2) for r in (G8, DKH, A40G)] == [1.39, 1.78, 2.08]
    assert [round(r[8] / MPI[8], 2) for r in (G8, DKH, A40G)] == [1.25, 1.24, 1.40]


@pytest.mark.parametrize("run", list(RUNS), ids=list(RUNS))
def test_the_fixed_rows_under_each_published_run(monkeypatch, run):
    if run != "mpi":
        _with_run(monkeypatch, RUNS[run])
    row_70b = per_gpu("llama-2-70b", "fp16", A100, 8, 512, 128, 2048) / 684 - 1
    falcon_128 = first_token_ms("falcon-180b", "fp16", A100, 8) / 61 - 1
    llama_128 = first_token_ms("llama-2-70b", "fp16", A100, 8) / 35.6 - 1
    assert (row_70b, falcon_128, llama_128) == pytest.approx(EXPECTED[run], abs=0.002)
    assert abs(row_70b) < SPEED and abs(falcon_128) < SPEED
