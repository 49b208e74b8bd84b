"""fix48n (stop 48, acting on aud48n's ACCEPT WITH NOTE of serve48b): the measured A100 SXM4 TP 8 all-reduce table
(assumptions.A100_TP8_ALLREDUCE_SECONDS) keyed on the run's link, extrapolated by bandwidth above its 4 GiB row,
and the choice of run (one rank a GPU, the fastest of the four published 8 x A100 sweeps) set against the others.
Tolerance: LLM speed 15% (the issue's).

Sources (stored copies; the index names no repository, path or commit for a find_string / read_file id):
  [NCCLT] read_file id 33201577724 (a Chinese write-up; host "thanos", 8 x A100-SXM4-80GB; nvidia-nccl-cu12
          wheel, NCCL release not printed): `mpirun -np 8 -N 8 ... all_reduce_perf -b 8 -e 4G -f 2 -g 1` (the
          table) and `./build/all_reduce_perf -b 8 -e 4G -f 2 -g 8` (one process), out-of-place us; 8 B - 64 KB:
          one rank a GPU 20.26 17.90 20.75 22.30 23.91 23.61 24.36 24.43 24.32 25.29 25.84 26.15 30.25 31.82,
          -g 8 40.12 39.64 39.06 38.89 39.53 39.08 39.17 42.05 38.39 39.12 39.39 39.47 40.93 40.97.
  [DKH]   read_file id 69473998636 ("nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903",
          `all_reduce_perf -b 8 -e 128M -f 2 -g 8`, 8 x A100-SXM4-80GB, host "dkh"), out-of-place us 8 B - 64 KB:
          34.84 35.44 35.58 36.13 36.85 36.93 36.53 36.57 36.58 37.17 36.86 36.47 36.74 37.48.
  [A40G]  find_string id 26203046415 (aud48n's reading: A100-SXM4-40GB, nGpus 8), 1-128 MB as in
          test_outside_a100_tp8_audit_stop48.py.
  [V09AR] NVIDIA/TensorRT-LLM cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp @b57221b7 (read_file id
          446505461), AllreducePlugin::selectImplementation: `if (messageSize > maxWorkspaceSize) { return
          AllReduceStrategyType::RING; }` ... `if (messageSize < 500 * 1000) { return ONESHOT; } return TWOSHOT;`
          for more than 4 ranks; maxWorkspaceSize = customAllReduceUtils::getMaxRequiredWorkspaceSize(worldSize),
          `return 8 * 1000 * 1000;` above 2 ranks (customAllReduceUtils.h, stored copy @005b299b, id 19851793947;
          the @b57221b7 copy is not stored).
"""

from __future__ import annotations

import statistics

import pytest

from procurement.sizing import throughput
from procurement.sizing.assumptions import (
    A100_TP8_ALLREDUCE_BYTES,
    A100_TP8_ALLREDUCE_LINK_GBPS,
    A100_TP8_ALLREDUCE_SECONDS,
)
from procurement.sizing.gpus import collective_bandwidth_gbps, tensor_parallel_over_nvlink
from tests.procurement.outside.test_outside_a100_tp8_audit_stop48 import A40G, DKH, G8, MPI
from tests.procurement.outside.test_outside_audit_stop43s import GPUS, first_token_ms
from tests.procurement.outside.test_outside_serve44 import per_gpu

SPEED = 0.15
A100 = "a100-sxm4-80gb"
A100_LINK = 300e9 * 0.8  # NVLink 3 per direction x COMM_EFFICIENCY (gpus.collective_bandwidth_gbps)
MB = 1_048_576
GIB = 2**30
FLOOR_ONE_RANK = tuple(
    float(us)
    for us in "20.26 17.90 20.75 22.30 23.91 23.61 24.36 24.43 24.32 25.29 25.84 26.15 30.25 31.82".split()
)
FLOOR_G8_THANOS = tuple(
    float(us)
    for us in "40.12 39.64 39.06 38.89 39.53 39.08 39.17 42.05 38.39 39.12 39.39 39.47 40.93 40.97".split()
)
FLOOR_G8_DKH = tuple(
    float(us)
    for us in "34.84 35.44 35.58 36.13 36.85 36.93 36.53 36.57 36.58 37.17 36.86 36.47 36.74 37.48".split()
)


def _call_us(message: float, link: float = A100_LINK, tp: float = 8.0, generation: float = 80.0) -> float:
    return float(throughput.tp_allreduce_call_seconds(tp, message, link, generation)) * 1e6


# --- Fix 6: above the run's last row (4 GiB) the call was frozen at the 4 GiB time (np.clip); now it goes on at that
# row's bus bandwidth (232.8 GB/s), continuous at 4 GiB.
def test_messages_above_4_gib_are_priced_at_the_last_rows_bandwidth():
    assert A100_TP8_ALLREDUCE_BYTES[-1] == 4 * GIB
    assert _call_us(4 * GIB) == pytest.approx(32285.0, rel=1e-9)
    assert _call_us(8 * GIB) == pytest.approx(2 * 32285.0, rel=1e-9)
    assert _call_us(6 * GIB) == pytest.approx(1.5 * 32285.0, rel=1e-9)
    assert _call_us(4 * GIB * (1 + 1e-9)) == pytest.approx(32285.0, rel=1e-6)
    busbw = 2 * 7 / 8 * 8 * GIB / (_call_us(8 * GIB) * 1e-6) / 1e9
    assert busbw == pytest.approx(232.8, abs=0.1)
    # still above NCCL's model (the run's 232.8 GB/s against the 240 GB/s link / LL128 share the model prices)
    assert _call_us(8 * GIB) > _call_us(8 * GIB, generation=90.0)
    # below 8 B the first row holds (a latency floor, not extrapolated)
    assert _call_us(2.0) == pytest.approx(20.26, rel=1e-9)


# --- Fix 5: keyed on the run's link. Both A100 SXM4 parts (40 GB and 80 GB) have the run's NVLink 3 link and pay the
# measured call (the 40 GB part at the 80 GB run: no one-rank-a-GPU 40 GB run is published); an Ampere TP 8 group
# on NVLink at another link (e.g. an A800-like 400 GB/s NVLink, 160 GB/s a direction at COMM_EFFICIENCY) keeps
# NCCL's model.
def test_the_table_is_keyed_on_the_runs_link():
    assert A100_TP8_ALLREDUCE_LINK_GBPS * 1e9 == pytest.approx(A100_LINK, rel=1e-12)
    eight_mb = 8 * MB
    for slug in ("a100-sxm4-80gb", "a100-sxm4-40gb"):
        gpu = GPUS[slug]
        assert gpu.generation == 80 and tensor_parallel_over_nvlink(gpu, 8)
        link = collective_bandwidth_gbps(gpu, 8) * 1e9
        assert _call_us(eight_mb, link) == pytest.approx(130.6, rel=1e-9)
    a800_like = 400e9 / 2 * 0.8
    modelled = _call_us(eight_mb, a800_like, generation=90.0)
    assert _call_us(eight_mb, a800_like) == pytest.approx(modelled, rel=1e-12)
    assert modelled != pytest.approx(130.6, rel=0.05)
    # TP 4 and other generations at the A100 link: unchanged (NCCL's model)
    assert _call_us(eight_mb, tp=4.0) == pytest.approx(_call_us(eight_mb, tp=4.0, generation=90.0), rel=1e-12)


def test_the_40gb_part_prices_its_tp8_first_token_calls_like_the_80gb_part():
    comm_80 = first_token_ms("llama-2-70b", "fp16", "a100-sxm4-80gb", 8, prompt=2048)
    comm_40 = first_token_ms("llama-2-70b", "fp16", "a100-sxm4-40gb", 8, prompt=2048)
    # same link, same table: any difference is the card's own speed, not its all-reduce
    assert collective_bandwidth_gbps(GPUS["a100-sxm4-40gb"], 8) == collective_bandwidth_gbps(GPUS[A100], 8)
    assert comm_40 >= comm_80 * 0.99


# --- Fix 2: the choice of run. The table is the one-rank-a-GPU run (TensorRT-LLM's launch shape), the fastest of
# four. The three others drive 8 GPUs from one process (-g 8): on the two whose small rows are printed the call
# floors at 34.8-42.1 us from 8 B to 64 KB, where one rank a GPU on the same thanos host floors at 17.9-31.8 us; at
# 32-128 MB the three -g 8 runs (three hosts, both cards) agree within 6% while the one-rank-a-GPU run is 0.86-0.94x
# them. So the gap is the launch shape, not the host.
def test_the_minus_g8_runs_differ_from_one_rank_a_gpu_by_their_launch_shape():
    assert (min(FLOOR_ONE_RANK), max(FLOOR_ONE_RANK)) == (17.90, 31.82)
    assert min(FLOOR_G8_THANOS + FLOOR_G8_DKH) == 34.84 and max(FLOOR_G8_THANOS + FLOOR_G8_DKH) == 42.05
    assert max(FLOOR_ONE_RANK) < min(FLOOR_G8_THANOS + FLOOR_G8_DKH)
    stored = dict(zip(A100_TP8_ALLREDUCE_BYTES, A100_TP8_ALLREDUCE_SECONDS, strict=True))
    assert [stored[8 * 2**k] * 1e6 for k in range(14)] == pytest.approx(FLOOR_ONE_RANK, abs=1e-9)
    for mb in (32, 64, 128):
        runs = (G8[mb], DKH[mb], A40G[mb])
        assert max(runs) / min(runs) < 1.06
        assert 0.86 <= round(MPI[mb] / max(runs), 2) and round(MPI[mb] / min(runs), 2) <= 0.94
    spread_1_16 = [max(G8[mb], DKH[mb], A40G[mb]) / min(G8[mb], DKH[mb], A40G[mb]) for mb in (1, 2, 4, 8, 16)]
    assert (min(spread_1_16), max(spread_1_16)) == pytest.approx((1.127, 1.835), abs=0.001)
    # the spread stated in the table's comment (other runs / the table)
    fastest = [round(min(r[mb] for r in (G8, DKH, A40G)) / MPI[mb], 2) for mb in (1, 2, 8, 64)]
    slowest = [round(max(r[mb] for r in (G8, DKH, A40G)) / MPI[mb], 2) for mb in (1, 2, 8, 64)]
    assert (fastest, slowest) == ([1.39, 1.07, 1.24, 1.07], [2.08, 1.96, 1.40, 1.13])


# The alternative the audit proposed, a per-size median of the four runs, is not landable: it moves the passing
# [TRT8] A100 Falcon 180B TP 8 first token at 2,048 tokens (463.0 ms, test_outside_a100_tp8_audit_stop48.py) out
# (+14.4% -> +16.1%), while it would land [TRT8] 70B at 128 tokens (-16.6% -> -9.9%, aud48n's strict xfail) and move
# the v0.9.0 b512 row to +6.9% and [TRT5] Falcon at 128 to -8.0%. The trade-off is recorded, the table kept.
def test_a_median_of_the_four_runs_would_move_a_passing_row_out(monkeypatch):
    table = dict(zip(A100_TP8_ALLREDUCE_BYTES, A100_TP8_ALLREDUCE_SECONDS, strict=True))
    table.update({mb * MB: statistics.median(r[mb] for r in (MPI, G8, DKH, A40G)) * 1e-6 for mb in MPI})
    monkeypatch.setattr(
        throughput, "A100_TP8_ALLREDUCE_SECONDS", tuple(table[b] for b in A100_TP8_ALLREDUCE_BYTES)
    )
    falcon_2048 = first_token_ms("falcon-180b", "fp16", A100, 8, prompt=2048)
    assert falcon_2048 / 463.0 - 1 == pytest.approx(0.161, abs=0.002)
    assert abs(falcon_2048 / 463.0 - 1) > SPEED
    assert first_token_ms("llama-2-70b", "fp16", A100, 8) / 35.6 - 1 == pytest.approx(-0.099, abs=0.002)
    assert per_gpu("llama-2-70b", "fp16", A100, 8, 512, 128, 2048) / 684 - 1 == pytest.approx(
        0.069, abs=0.002
    )
    assert first_token_ms("falcon-180b", "fp16", A100, 8) / 61 - 1 == pytest.approx(-0.080, abs=0.002)


# --- Fix 8: the 3.8 MB Falcon 180B first-token call (128 x 14,848 x 2 B) is under v0.9.0's 8,000,000 B workspace
# and above ONESHOT's 500,000 B at TP 8: [V09AR] runs it TWOSHOT, which the NCCL table does not describe; the
# [TRT5] (v0.5, NCCL: --use_custom_all_reduce off) row is the one the table prices.
def test_the_falcon_first_token_call_is_v090s_twoshot_not_nccl():
    message = 128 * 14848 * 2
    assert 500 * 1000 < message < 8 * 1000 * 1000
    assert 512 * 8192 * 2 > 8 * 1000 * 1000  # the b512 decode call: NCCL's ring in v0.9.0 too
