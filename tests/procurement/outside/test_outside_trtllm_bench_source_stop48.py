"""Issue 26, stop 48 (branch trtb48): what aud48r's [TRT16] figures measured, read from the run's own logs.

aud48r compared the product's Llama 3.1 8B FP8 on one H100 with [TRT16]'s "19,787.63 tokens/sec - ISL=128, OSL=1024"
and "16,901.88 - ISL=128, OSL=2048" (shaamil101-etched/trtllm-benchmarks @cc0f8eb0 llama-8b-results/README.md) and
found +38.7% / +19.0% (strict xfails in test_outside_ranking_audit_stop48.py). The repository's logs say those are
not 8B runs.

Sources (opened for this module):
  [LOG70]   shaamil101-etched/trtllm-benchmarks @aeec9f291501c26fe34b773c7a157f3bb1fbce24
            results/result_<ISL>_<OSL>_<requests>.txt (trtllm-bench 0.16.0 throughput output): "Model:
            meta-llama/Llama-3.1-70B-Instruct", "Engine Directory: /tmp/meta-llama/Llama-3.1-70B-Instruct/tp_8_pp_1",
            "KV Cache Dtype: FP8", "Quantization: FP8", "TP Size: 8", "Max Runtime Batch Size: 2048", "Max Runtime
            Tokens: 8192", "Scheduling Policy: Guaranteed No Evict", "KV Memory Percentage: 90.00%", "Number of
            blocks in KV cache primary pool: 42668", "Number of tokens per block: 64.", "Issue Rate (req/sec):
            2.1222E+13" (all requests at once); "Token Throughput (tokens/sec)" = requests x OSL / "Total Latency"
            (128/1024: 7,500 x 1,024 / 388.121 s = 19,787.6). 128/1024 prints 19787.6318, 128/2048 16901.8790,
            128/128 14389.7989: the figures of the 8B sub-README and of its analysis/throughput_summary.csv @cc0f8eb0,
            row for row.
  [LOG8B]   the same repository @cc0f8eb02303de15aea03248e30e9dee403de4e5
            llama-8b-results/benchmark_sweep/nohup_8b.out ("Total benchmarks: 62", "Completed: 1", only ISL=128,
            OSL=128 started) and progress.txt ("Completed benchmarks: 1"): no 8B figure was printed.
  [NOEVICT] NVIDIA/TensorRT-LLM @02a10fed0dbf5db74c7da035be9c5fbef6d2df7a cpp/tensorrt_llm/batch_manager/
            capacityScheduler.cpp GuaranteedNoEvictScheduler::impl: in-progress requests keep "blocks needed to drive
            all in-progress requests to completion", a new context request is scheduled only while
            reservedBlocks.enoughAvailableBlocks(*req). (A 2025 copy; [LOG70] names the policy for 0.16.) So the run
            held min(2,048, 42,668 // ceil((ISL + OSL) / 64)) requests in flight: 2,048 at 128/1024, 1,254 at
            128/2048, 646 at 128/4096.
  [TRT17]   NVIDIA/TensorRT-LLM @258c7540c03517def55d9a5aadfa9288af474e1b docs/source/performance/perf-overview.md
            (0.17, the same trtllm-bench harness): LLaMA v3.1 70B TP 8 H100 FP8 "128, 2048 | ... | 17061.82" (the
            log's 16,901.88 is -0.9% from it) and LLaMA v3.1 8B TP 1 H100 FP8 "128, 128 | 28836.77", "128, 2048 |
            21109.38", "128, 4096 | 13593.65", "500, 2000 | 16500.69".
"""

from __future__ import annotations

import math

import pytest

from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_recommendations_x26b import candidate

H100 = "h100-sxm5-80gb"
FEASIBLE = {"fits", "tight", "oversized"}
LLM_SPEED = 0.15
MAX_BATCH, KV_BLOCKS, BLOCK_TOKENS = 2048, 42668, 64  # [LOG70]


def in_flight(isl: int, osl: int) -> int:
    """[NOEVICT]: each admitted request holds the blocks of its whole ISL + OSL; [LOG70] caps the batch at 2,048."""
    return min(MAX_BATCH, KV_BLOCKS // math.ceil((isl + osl) / BLOCK_TOKENS))


def run_70b_tp8(isl: int, osl: int) -> dict:
    return candidate(trtllm_spec("llama-3.1-70b", "fp8", 8, in_flight(isl, osl), isl, osl), H100)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("isl", "osl", "published"),
    [
        (128, 128, 14389.7989),  # 2,048 in flight: ours 14,360 (-0.2%)
        (128, 256, 17602.0571),  # 2,048: 18,426 (+4.7%)
        (128, 512, 19327.0773),  # 2,048: 21,085 (+9.1%)
        (128, 1024, 19787.6318),  # 2,048: 21,891 (+10.6%): aud48r's "8B" 128/1024 figure
        (1024, 1024, 10893.8728),  # 1,333: 12,013 (+10.3%)
        (2048, 2048, 8686.7633),  # 666: 9,831 (+13.2%)
    ],
)
def test_trtllm016_figures_are_the_70b_tp8_run_within_15_percent(bundled_catalog, isl, osl, published):
    """[LOG70] stated as it ran: Llama 3.1 70B FP8, FP8 KV, TP 8 on 8 H100s, at the in-flight count the KV pool
    allows ([NOEVICT])."""
    row = run_70b_tp8(isl, osl)
    assert row["verdict"] in FEASIBLE
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(published, rel=LLM_SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (trtb48): stated as [LOG70] ran them, the two long-output rows read fast: 128/2048 at "
    "1,254 in flight 19,932 vs 16,901.88 (+17.9%), 128/4096 at 646 15,875 vs 12,427.84 (+27.7%). Ruled out as the "
    "whole cause: the benchmark's last partial wave (all requests issued at once, uniform lengths: 3,000 = 2 x 1,254 "
    "+ 492 and 1,500 = 2 x 646 + 208, the tail run at the smaller count) gives +14.9% / +22.0%, so 128/4096 stays "
    "out; the harness's 8,192-token step budget is not binding (1,254 x 128 / 2,048 = 78 prompt tokens a step). "
    "Lead: a per-step cost the engine does not charge. Published seconds a step (in flight / tokens/s) less ours "
    "(decode step + prefill share): +8.8 / +9.9 / +11.3 / +11.3 / +11.4 / +8.9 ms at 128/512, 128/1024, "
    "128/2048, 128/4096, 1024/1024, 2048/2048 (646 to 2,048 in flight; 128/128 -0.3 ms, where ours charges "
    "65 ms of prefill a step), about 10 ms a step whatever the batch or context, so it weighs most on the short "
    "steps of the long-output rows (40 ms at 646). The log shows no CUDA graphs ('cudaGraphMode' off) and "
    "enableTrtOverlap 0 (host scheduling not overlapped); no source sizes that host time at TP 8, so not landed. "
    "NVIDIA's own 0.17 row of this shape (70B TP 8 H100 128/2048 17,061.82) agrees with the log (-0.9%). trtstep "
    "(stop 49, test_outside_trtllm_host_step_stop49.py): no source sizes the executor's host time (TensorRT-LLM "
    "PR #10018 gives enable_trt_overlap only as '1.05x OTPS', setup unstated; PR #3625 and the overlap-scheduler "
    "docs give no time); NVIDIA's 0.17 128/4096 row is 1.140x the log's (14,171.43), which leaves 4.9 ms a step "
    "there against 10.6 at 128/2048, so the residual is not one size a step; and a TP-independent 10 ms would put "
    "[TRT17]'s 8B TP 1 128/128 row at -19.8%",
)
@pytest.mark.parametrize(("isl", "osl", "published"), [(128, 2048, 16901.8790), (128, 4096, 12427.8444)])
def test_trtllm016_70b_tp8_long_output_rows_within_15_percent(bundled_catalog, isl, osl, published):
    row = run_70b_tp8(isl, osl)
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(published, rel=LLM_SPEED)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("isl", "osl", "published"),
    [
        (128, 128, 28836.77),  # ours 26,056 (-9.6%)
        (128, 2048, 21109.38),  # 20,114 (-4.7%)
        (128, 4096, 13593.65),  # 12,851 (-5.5%)
        (500, 2000, 16500.69),  # 15,983 (-3.1%)
    ],
)
def test_the_8b_on_one_h100_reads_nvidias_own_017_rows_within_15_percent(
    bundled_catalog, isl, osl, published
):
    """[TRT17]'s 8B TP 1 H100 FP8 rows, the harness aud48r meant: the product reads them slightly slow, never +38.7%.
    Stated at 256 streams, a count the product keeps runnable on all four; the rate is flat from there (the step is
    compute-bound: 512 streams give the same figure to the token/s)."""
    row = candidate(trtllm_spec("llama-3.1-8b", "fp8", 1, 256, isl, osl), H100)
    assert row["verdict"] in FEASIBLE
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(published, rel=LLM_SPEED)
