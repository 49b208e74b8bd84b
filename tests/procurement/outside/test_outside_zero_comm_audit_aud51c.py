"""aud51c (stop 51): outside audit of zacc (DeepSpeed ZeRO-1/2 reductions priced per micro-batch where the config is
stated; procurement/sizing/deepspeed_reduce.py) and its neighbours (ZeRO-3, ZeRO-2 + optimizer offload, a bare
zero_stage). Bars: LLM throughput 15%, LLM memory 10%.

Source (grepped in tests/ first: only the three ZeRO-2 rows without offload are used, test_outside_ranking_audit_aud51r.py):
[CYFZ2] gist.github.com/chenyaofo/d4cd6a20ab4b95cb3a49491747e2139a (read through its gist.github.bluepio.com mirror):
  "A800 x 8, 1 TB CPU memory, Intel 8358 CPU x 2 ... CUDA 12.1, PyTorch 2.2.0, Deepspeed 0.14.2", LLaMA-7B, "The
  squence length is 4096." Rows (Zero Stage | Ckpt. | Optim. Off. | Param. Off. | Zero++ | BS | CPU Mem. | GPU Mem. |
  Th.put) used here: "2 | √ | √ | × | × | 1/64 | 361.3 | 13.4/16.9 | 1.81", "3 | × | × | × | × | 2/64 | 319.5 |
  14.8/75.7 | 4.95", "3 | √ | × | × | × | 2/64 | 319.6 | 14.8/20.4 | 4.45", "3 | √ | × | × | × | 8/64 | 319.6 |
  17.7/39.1 | 4.73", "3 | √ | × | × | × | 8/128 | 319.9 | 21.4/63.9 | 4.32". Footnote 7, now read: "GPU Mem.
  represents torch.cuda.memory_allocated()/torch.cuda.max_memory_allocated()": the second figure is the allocator's
  peak, no CUDA context, so ours is memory_per_gpu_gib less CUDA_CONTEXT_GIB (aud51r's reading, now confirmed).
  Footnote 5: "BS represents batch size per device per iteration/batch size for gradient decent": 8 ranks, so
  accumulation 64 / (8 x BS). Th.put read as samples/s over the 8 GPUs (aud51r). Stated as aud51r states the ZeRO-2
  rows (HF LLaMA-2-7B preset, bf16, huggingface loss, DeepSpeed 0.14.2 defaults); ZeRO-3 rows as a bare zero_stage 3
  (the product refuses reduce_bucket_size there); the offload row with parallelism.offload "optimizer". Sized on the
  A100 SXM4 80GB (no A800 in the catalog: same GA100 / HBM2e, NVLink 400 against 600 GB/s).
DeepSpeed, read for the judgement (deepspeedai/DeepSpeed tags, git show): v0.14.2 deepspeed/runtime/zero/config.py
  line 111 "use_multi_rank_bucket_allreduce: bool = True" (added by 2afa1c7f, PR #4695, first in v0.12.4);
  stage_1_and_2.py@v0.14.2 average_tensor (line 1037) with that default sends each bucket to allreduce_and_scatter
  (lines 1116-1130) -> allreduce_and_copy_with_multiple_ranks (997-1007) -> allreduce_bucket(rank=None) ->
  dist.all_reduce (line 1500): a full all-reduce, 2 (n - 1) / n of the bytes, then each rank keeps its slice. The
  per-rank dist.reduce zacc cites (v0.12.3 line 1044) is only the use_multi_rank_bucket_allreduce false path from
  v0.12.4 on. The per-micro-batch trigger zacc cites holds at v0.14.2 (line 1415).
"""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.test_outside_ranking_audit_aud51r import (
    A100,
    CYFZ2,
    CYFZ2_CKPT,
    on,
    samples_per_second,
)
from tests.procurement.outside.test_outside_ranking_audit_stop48 import LLM_MEMORY, LLM_SPEED, err

Z3 = CYFZ2 | {"parallelism": {"gpus": 8, "zero_stage": 3}}
Z3_BS2 = Z3 | {"micro_batch_size": 2, "gradient_accumulation_steps": 4}
Z3_CK_BS2 = Z3_BS2 | {"gradient_checkpointing": "full"}
Z3_CK_BS8 = Z3 | {"gradient_checkpointing": "full", "micro_batch_size": 8, "gradient_accumulation_steps": 1}
Z3_CK_BS8_128 = Z3_CK_BS8 | {"gradient_accumulation_steps": 2, "training_tokens": 128 * 4096 * 1000}
Z2_CK_OFF = CYFZ2_CKPT | {
    "parallelism": {"gpus": 8, "zero_stage": 2, "reduce_bucket_size": 500_000_000, "offload": "optimizer"}
}
Z2_CK_OVERLAP = CYFZ2_CKPT | {
    "parallelism": {"gpus": 8, "zero_stage": 2, "reduce_bucket_size": 500_000_000, "overlap_comm": True}
}
Z2_BARE = CYFZ2 | {"parallelism": {"gpus": 8, "zero_stage": 2}}


def _speed(spec: dict) -> float:
    return samples_per_second(spec, on(spec, A100))


def _memory(spec: dict) -> float:
    return on(spec, A100)["memory_per_gpu_gib"] - CUDA_CONTEXT_GIB


# Published / ours at aud51c (a0390f0f, zacc merged), A100 SXM4 80GB, error, verdict:
#   Z3 no ckpt BS 2/64     Th.put 4.95 / 5.686 +14.9% pass;  GPU Mem 75.7 / 56.54 -25.3% MISS
#   Z3 ckpt BS 2/64        Th.put 4.45 / 5.102 +14.7% pass;  GPU Mem 20.4 / 20.49 +0.4% pass
#   Z3 ckpt BS 8/64        Th.put 4.73 / 5.102 +7.9% pass;   GPU Mem 39.1 / 41.25 +5.5% pass
#   Z3 ckpt BS 8/128       Th.put 4.32 / 5.102 +18.1% MISS;  GPU Mem 63.9 / 41.25 -35.4% MISS
#   Z2 ckpt + optim. off.  Th.put 1.81 / 3.331 +84.0% MISS;  GPU Mem 16.9 / 17.62 +4.3% pass
#   Z2 ckpt BS 1/64, the exposed per-micro-batch reduction by hand from DeepSpeed 0.14.2: 0.79 s a step; ours 0.40
# fix51c (parallelism.multi_rank_bucket_allreduce, default true): Z2 ckpt + optim. off. 3.331 -> 3.264 (+80.3%, MISS);
#   the exposed reduction 0.396 -> 0.792 s (pass, xfail removed)
# offl2 (probe, not built): the offload rows priced by DeepSpeed 0.14.2's mechanisms (per-rank PCIe at 31.5 GB/s plus
# a host-memory floor for CPU Adam, in place of the flat +50%), published / today -> probe:
#   Z2 ckpt + optim. off. BS 1/64           1.81 / 3.331 (+84.0%) -> 4.385 (+142.3%)
#   Z3 ckpt + optim. off. BS 2/64           2.05 / 3.401 (+65.9%) -> 4.648 (+126.7%)  (ZeRO-2's bytes as a stand-in)
#   Z3 ckpt + optim. + param off. BS 4/64   2.06 / 3.401 (+65.1%) -> 4.721 (+129.2%)  (ZeRO-2's bytes as a stand-in)
# all three away from published: the run's offload costs 17-20 s a step, the located mechanisms 1.2-1.7 s.


# --- ZeRO-3 (a neighbour zacc must leave alone: bare zero_stage 3, no DeepSpeed reduce path) -------------------------
@pytest.mark.django_db
def test_z3_no_checkpointing_bs2_speed(bundled_catalog):
    """[CYFZ2] ZeRO-3, no ckpt, BS 2/64 (accumulation 4): 4.95 published, ours 5.686 (+14.9%), inside the bar by 0.1
    point. Ours equals the ZeRO-2 bare row's 5.686 exactly: ZeRO-3's 3 collectives a micro-batch (12 a step, ~0.6 s
    on the A100 link) all hide under 0.67 of the ~11 s compute, so the ZeRO-3 cost is not what carries this row."""
    assert abs(err(_speed(Z3_BS2), 4.95)) < LLM_SPEED


R_Z3_NOCK_MEM = (
    "UNEXPLAINED (aud51c): [CYFZ2] ZeRO-3, no ckpt, BS 2/64, GPU Mem max_memory_allocated 75.7; ours 56.54 GiB less "
    "context (-25.3%), while the checkpointed BS 2 row lands (20.4 / 20.49). The 19.2 GiB is in the un-checkpointed "
    "activations of 2 x 4,096 tokens (the only term the two rows do not share). Lead, unsized: the gist does not say "
    "the attention path (an HF LLaMA under PyTorch 2.2 without attn_implementation runs SDPA; eager attention would "
    "keep 32 heads x 4,096^2 x 2 B x 2 = 2 GiB of probabilities a layer). 0% of the gap sized."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Z3_NOCK_MEM)
def test_z3_no_checkpointing_bs2_memory(bundled_catalog):
    assert abs(err(_memory(Z3_BS2), 75.7)) < LLM_MEMORY


@pytest.mark.django_db
def test_z3_checkpointing_bs2_speed_and_memory(bundled_catalog):
    """[CYFZ2] ZeRO-3, ckpt, BS 2/64: 4.45 / 20.4 published; ours 5.102 (+14.7%) / 20.49 GiB (+0.4%)."""
    assert abs(err(_speed(Z3_CK_BS2), 4.45)) < LLM_SPEED
    assert abs(err(_memory(Z3_CK_BS2), 20.4)) < LLM_MEMORY


@pytest.mark.django_db
def test_z3_checkpointing_bs8_no_accumulation_speed_and_memory(bundled_catalog):
    """[CYFZ2] ZeRO-3, ckpt, BS 8/64 (accumulation 1): 4.73 / 39.1 published; ours 5.102 (+7.9%) / 41.25 (+5.5%)."""
    assert abs(err(_speed(Z3_CK_BS8), 4.73)) < LLM_SPEED
    assert abs(err(_memory(Z3_CK_BS8), 39.1)) < LLM_MEMORY


R_Z3_BS8_128 = (
    "UNEXPLAINED (aud51c): [CYFZ2] ZeRO-3, ckpt, BS 8/128 (accumulation 2): published 4.32 samples/s and 63.9 GiB; "
    "ours 5.102 (+18.1%) and 41.25 (-35.4%), the same as the BS 8/64 row (4.73 / 39.1, which lands), since ours "
    "charges nothing that depends on accumulation here (ZeRO-3's per-micro-batch collectives hide). Published, one "
    "more micro-batch a step costs 8.7% of the speed and 24.8 GiB, where the BS 2/64 row at accumulation 4 holds only "
    "20.4: the extra memory is 99% of one fp32 copy of the whole model (6.74e9 x 4 B = 25.1 GiB), but the "
    "accumulation-4 row does not hold it, so it is not accumulation alone (stage3.py not read for it). Not located; "
    "0% sized."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Z3_BS8_128)
def test_z3_checkpointing_bs8_accumulation2_speed(bundled_catalog):
    assert abs(err(_speed(Z3_CK_BS8_128), 4.32)) < LLM_SPEED


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Z3_BS8_128)
def test_z3_checkpointing_bs8_accumulation2_memory(bundled_catalog):
    assert abs(err(_memory(Z3_CK_BS8_128), 63.9)) < LLM_MEMORY


# --- ZeRO-2 + optimizer offload (a neighbour: the stated config with offload) ----------------------------------------
R_Z2_OFFLOAD = (
    "UNEXPLAINED (aud51c; offl2 sized the located mechanisms: 8% of the gap): [CYFZ2] ZeRO-2, ckpt, optimizer "
    "offload, BS 1/64 (accumulation 8): published 1.81 samples/s, ours 3.536 (+95.3%; fix51e2: the CPU step at the "
    "ZeRO-Offload paper's 81.06e6 a physical core-second on the assumed 6 physical cores, 1.73 s; the run's stated "
    "host, two Xeon 8358 = 64 physical cores for 8 ranks, would give 8 a rank, 1.30 s, faster still) | before "
    "fix51e2: 3.009 (+66.2%; a step 35.4 s published, 21.3 s ours; 3.264, +80.3%, under the flat +50% before fix51e; 3.331, +84.0%, before fix51c priced DeepSpeed "
    "0.14.2's per-micro-batch all-reduce). fix51e retired the flat +50% of the step (6.27 s here): the offload now "
    "costs offl2's copies, pageable (pin_memory unstated, DeepSpeed's default) 36 B x P / 8 at 10.0 GB/s = 3.03 s, "
    "and the CPU step at 14.32e6 parameters a core-second on the assumed 12 cores a rank (the run's host, two Xeon "
    "8358, 64 cores for 8 ranks, would state 8: 7.35 s, about 2.70 samples/s, +49%), 4.90 s: 7.93 s; published, offload adds 20.1 s over the same run without it (4.19, 15.3 s). "
    "offl2 read DeepSpeed 0.14.2 (stage_1_and_2.py): with accumulation > 1, async_accumulate_grad_in_cpu_via_gpu "
    "(from line 1182, called at 1320-1324) moves each rank's partition (6.738e9 / 8 params, bf16) GPU -> CPU after "
    "micro-batches 1-7 and CPU -> GPU in micro-batches 2-8; the boundary sends the fp32 gradient (line 1274) and "
    "step() brings the updated fp32 partition back with fp32_partition.to(device) (line 1871): 36 B a parameter, "
    "30.3 GB a rank, 0.963 s at 31.5 GB/s (PCIe 4.0 x16). The host step, DeepSpeedCPUAdam (csrc/includes/cpu_adam.h "
    "Step_AVX: 4 fp32 loads, 3 stores, 28 B) plus unscale_and_clip_grads and reset_cpu_buffers (~14 B), is 42 B x "
    "6.738e9 = 283 GB on two Xeon 8358 (8 DDR4-3200 channels each, 409.6 GB/s): >= 0.69 s. 1.65 s of 20.1 (8%); "
    "priced that way instead of the flat 50% the row reads 4.385 (+142%), away from published, so not built. "
    "Not from torch Adam: engine.py@v0.14.2 lines 1242-1245 refuse a client optimizer under offload. Unlocated "
    "~18 s; leads, unsized: pin_memory false by default (offload_config.py@v0.14.2 line 70: pageable copies), CPU "
    "Adam's OpenMP threads over 8 ranks without --bind_cores_to_rank (launch.py@v0.14.2 lines 230-232; DeepSpeed "
    "PR #7474: 1.3x a step). Memory (16.9 / 17.62 GiB, +4.3%) lands."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Z2_OFFLOAD)
def test_z2_checkpointing_optimizer_offload_speed(bundled_catalog):
    assert abs(err(_speed(Z2_CK_OFF), 1.81)) < LLM_SPEED


@pytest.mark.django_db
def test_z2_checkpointing_optimizer_offload_memory(bundled_catalog):
    """[CYFZ2] ZeRO-2 + optimizer offload, ckpt, BS 1/64: GPU Mem 16.9; ours 17.62 GiB less context (+4.3%)."""
    assert abs(err(_memory(Z2_CK_OFF), 16.9)) < LLM_MEMORY


# --- the change itself: what DeepSpeed 0.14.2 sends a micro-batch -----------------------------------------------------
@pytest.mark.django_db
def test_z2_overlap_false_exposes_deepspeed_0_14_all_reduce_bytes_each_micro_batch(bundled_catalog):
    """[CYFZ2] ZeRO-2, ckpt, BS 1/64 (accumulation 8): the step time overlap_comm false adds over overlap_comm true is
    the 8 exposed per-micro-batch reductions; by hand, 8 all-reduces of 6.74e9 x 2 B on 8 ranks at the product's A100
    link rate: 2 x 49.6 ms x 8 = 0.79 s. DeepSpeed 0.14.2, the run's, defaults use_multi_rank_bucket_allreduce to
    true (zero/config.py line 111; PR #4695, since v0.12.4), under which average_tensor all-reduces each bucket
    (stage_1_and_2.py@v0.14.2 lines 1116-1130, 1004, 1500 dist.all_reduce). FIXED (fix51c:
    parallelism.multi_rank_bucket_allreduce, default true): 0.396 s (reduce-scatter bytes, strict xfail
    UNEXPLAINED) -> 0.792 s; [CYFZ2] ckpt BS 1 4.946 -> 4.799 (+18.0% -> +14.5%), no ckpt BS 1 5.493 -> 5.312
    (+3.1% -> -0.3%), ckpt BS 4 5.062 -> 5.023 (+7.9% -> +7.1%), as aud51c's probe read."""
    exposed = 64 / _speed(CYFZ2_CKPT) - 64 / _speed(Z2_CK_OVERLAP)
    assert exposed == pytest.approx(2 * 8 * 0.0496, rel=0.10)


@pytest.mark.django_db
def test_z2_flag_false_keeps_deepspeed_0_12_3_reduce_scatter_bytes(bundled_catalog):
    """fix51c: the same pair with parallelism.multi_rank_bucket_allreduce false (DeepSpeed <= 0.12.3's per-rank
    dist.reduce, stage_1_and_2.py@v0.12.3 line 1044): 8 reduce-scatters of 49.6 ms, 0.397 s by hand (ours 0.397)."""
    old_ds = {"multi_rank_bucket_allreduce": False}
    false_spec = CYFZ2_CKPT | {"parallelism": CYFZ2_CKPT["parallelism"] | old_ds}
    true_spec = Z2_CK_OVERLAP | {"parallelism": Z2_CK_OVERLAP["parallelism"] | old_ds}
    exposed = 64 / _speed(false_spec) - 64 / _speed(true_spec)
    assert exposed == pytest.approx(8 * 0.0496, rel=0.10)


@pytest.mark.django_db
def test_bare_zero_stage_2_keeps_the_old_rule_and_both_land(bundled_catalog):
    """Neighbour: the [CYFZ2] no-ckpt BS 1/64 row (5.33) as a bare zero_stage 2 keeps the old rule (one all-reduce a
    step, hidden): ours 5.686 (+6.7%); with the config stated (5e8, overlap_comm false) 5.493 (+3.1%), slower, as the
    exposed reductions make it. Both inside the bar; the bare spec is not silently assumed to be DeepSpeed. fix51c:
    stated 5.493 -> 5.312 (+3.1% -> -0.3%), DeepSpeed 0.14.2's all-reduce a micro-batch (multi_rank_bucket_allreduce
    true, its default)."""
    bare, stated = _speed(Z2_BARE), _speed(CYFZ2)
    assert bare > stated
    assert abs(err(bare, 5.33)) < LLM_SPEED
    assert abs(err(stated, 5.33)) < LLM_SPEED
