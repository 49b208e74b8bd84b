"""aud51q (stop 51): outside audit of qwenq's DeepSpeed ZeRO-1/2 gradient buckets (parallelism.reduce_bucket_size,
overlap_comm; memory._deepspeed_ipg_buffer_bytes) on published memory no test had. Bar: LLM memory 10%.

Source (grepped in tests/ first: the README's 14B and 72B Q-LoRA memory figures were in no test; only their s/it
were, test_outside_audit_stop43l.py / test_outside_qlora_audit_stop44.py):
[QWEN-Q14-72] QwenLM/Qwen README.md "Profiling of Memory and Speed" (rows added at e8e1596, 2023-11-30; read at
  03cd81f5), one A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, flash attention 2, batch 1, accumulation 8:
  "14B | Q-LoRA | 1 | 1": 18.7G / 18.4G / 18.9G / 19.9G / 23.0G / 27.9G and
  "72B | Q-LoRA | 1 | 1": 61.4G / 61.4G / 62.9G / 64.1G / 68.0G / 75.6G at 256 / 512 / 1,024 / 2,048 / 4,096 /
  8,192 tokens. The run: finetune/finetune_qlora_single_gpu.sh at e8e1596 (`--fp16 True`, `--deepspeed
  finetune/ds_config_zero2.json`) and ds_config_zero2.json at af22d5e (unchanged since): "stage": 2,
  "overlap_comm": true, "reduce_bucket_size": 2e8, "contiguous_gradients": true. So exactly the two 2e8-element
  fp16 buckets qwenq counts (2 x 2e8 x 2 B = 0.745 GiB), on GPTQ-Int4 Qwen-14B-Chat-Int4 / Qwen-72B-Chat-Int4.
  Stated with the project's own helper qwen_lora_spec(..., qlora=True) (the README's run as the author states it;
  nothing added). "G" read as GiB, as the project's [QWEN-Q] test does.
DeepSpeed, read for the judgement: stage_1_and_2.py DeepSpeedZeroOptimizer.backward allocates the ipg buffer(s) at
  each backward's start, and independent_gradient_partition_epilogue ends in self._release_ipg_buffers(): the
  buckets live through each micro-batch's backward (beside the activation peak, as qwenq counts them), and are
  gone at the optimizer step.
"""

from __future__ import annotations

import pytest

from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

GIB = 2.0**30
LLM_MEMORY = 0.10
BUCKETS_GIB = (
    2 * 200_000_000 * 2 / GIB
)  # ds_config_zero2.json: overlap_comm true, reduce_bucket_size 2e8, fp16


def _spec(size: str, seq: int) -> dict:
    return qwen_lora_spec(MODELS[size], seq, 1, qlora=True) | {"task": "qlora", "weight_quantization": "int4"}


def _breakdown(spec: dict) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)


SHORT_14B_MISS = (
    "UNEXPLAINED (aud51q): [QWEN-Q14-72] Qwen-14B Q-LoRA (GPTQ int4, DeepSpeed ZeRO-2 fp16, 2 x 2e8 buckets) on one "
    "A100: published {pub} G, ours {ours} GiB ({err}). The buckets are counted and are not the cause (0.745 GiB, "
    "19% of the 256-token gap before qwenq, 3.97 GiB). The 14B is short by 3.23 / 2.56 / 2.30 / 1.78 / 1.85 / 0.69 "
    "GiB from 256 to 8,192 tokens, so two things cancel: a fixed term the product lacks (~3 GiB at 256, larger than "
    "the 7B's 1.35 and smaller than the 72B's 4.73, so not model-independent) and a growth with length the product "
    "over-counts (ours +11.74 GiB from 256 to 8k against +9.2 published). Leads, unsized: DeepSpeed's fp16 engine "
    "casting the model's non-GPTQ parameters to fp16 (module.half()) and the fp16 flat buffers of the adapters; a "
    "reserved (nvidia-smi) reading of the README; for the growth, the loss chain at 6 B x V a token (shifted_16bit) "
    "beside the recomputed block. 0% of the gap is sized. fix51q: the loss chain is 6 B x V from code (fp16, no "
    "autocast: logits 2 + shifted copy 2 + log_softmax 2 in forward; saved log_softmax 2 + nll_loss's zeros 2 + "
    "log_softmax's gradient 2 in backward) and is gone before the last block's recompute, so the code's peak is "
    "max(loss, block), not the sum; charging the max takes the 14B growth 11.75 -> 10.26 GiB (9.2 published) but "
    "the 7B / 1.8B rows' 10.30 / 8.43 -> 9.11 / 7.84 (12.0 / 10.0 published) and these rows further short "
    "(256 -17.3 -> -17.6%): it does not reproduce the held-out rows, so not shipped; the short fixed term is unsized. "
    "qlfix: the lead of one more 16-bit copy of the embedding and head (2.90 GiB here, 4.64 on the 72B; peft's "
    "prepare_model_for_kbit_training casting them to fp32) is refuted from code: peft v0.5.0 skips that cast when "
    "model.quantization_method is 'gptq' (src/peft/utils/other.py lines 92-101), the attribute its LoRA needs to wrap "
    "a GPTQ QuantLinear at all (other.py 331-341, tuners/lora.py 341 / 446), and DeepSpeed's fp16 engine casts the "
    "module to fp16 anyway (engine.py _configure_distributed_model, self.module.half()). Charged anyway it would "
    "read 18.51 / 18.89 / 19.65 here (-1.0 / +2.7 / +4.0%) but push the passing 7B 512 / 1k rows out (+12.3 / "
    "+10.4%): a term fitted to the gap, not shipped. ZeRO-2's step peak (stage_1_and_2.py@v0.12.3 step: the flat "
    "16-bit gradient copy 2 + its fp32 copy 4 B a trainable parameter beside the partition) sits below the backward "
    "peak here (6 B x 223.2M = 1.25 GiB against buckets + activations + unpacked block 1.69 GiB): 0% sized."
)
SHORT_14B = {
    256: (18.7, 15.47, "-17.3%"),
    512: (18.4, 15.84, "-13.9%"),
    1024: (18.9, 16.60, "-12.2%"),
}


def _case(size: str, seq: int, published: float, ours: float):
    marks = ()
    if size == "14b" and seq in SHORT_14B:
        pub, o, err = SHORT_14B[seq]
        marks = pytest.mark.xfail(strict=True, reason=SHORT_14B_MISS.format(pub=pub, ours=o, err=err))
    return pytest.param(size, seq, published, ours, marks=marks, id=f"{size}-{seq}")


# Published G (the README) and ours GiB at aud51q (qwenq merged), error, verdict at the 10% bar:
#   14B  256 18.7 / 15.47 -17.3% miss; 512 18.4 / 15.84 -13.9% miss; 1k 18.9 / 16.60 -12.2% miss;
#        2k 19.9 / 18.12 -9.0% pass; 8k 27.9 / 27.21 -2.5% pass   (4k 23.0 / 21.15 -8.0%, not kept: case count)
#   72B  256 61.4 / 56.67 -7.7% pass; 1k 62.9 / 58.59 -6.9% pass; 4k 68.0 / 66.25 -2.6% pass; 8k 75.6 / 76.47 +1.1%
#        pass   (512 61.4 / 57.31 -6.7%, 2k 64.1 / 61.14 -4.6%, not kept)
# zstep (stop 51), restated: 72B 256 56.67 -> 58.20 GiB (-7.7% -> -5.2%). Cause: ZeRO-2's optimizer step now counts
#   (memory._gradients_at_zero_step_peak, stage_1_and_2.py@v0.12.3 step() lines 1758-1788): the fp32 cast of the
#   0.755 G fp32 adapters' gradient partition, 8 B x 0.755e9 = 5.62 GiB, outlives the 256-token activations and
#   exceeds the backward's 2.81 GiB of 4 B gradients + 0.745 GiB of buckets + 0.61 GiB of activations (by 1.46 GiB, the
#   total's +1.53 with the overhead fraction); DeepSpeed's FusedAdam (ds_config_zero2.json's optimizer block,
#   qwen_lora_spec's deepspeed_fused) adds no step temporaries. 1k and longer: the backward still peaks, unmoved.
#   14B: the step (8 B x 0.223e9 = 1.66 GiB) stays under the backward's 1.94 GiB at 256: unmoved.
CASES = [
    _case("14b", 256, 18.7, 15.47),
    _case("14b", 512, 18.4, 15.84),
    _case("14b", 1024, 18.9, 16.60),
    _case("14b", 2048, 19.9, 18.12),
    _case("14b", 8192, 27.9, 27.21),
    _case("72b", 256, 61.4, 58.20),
    _case("72b", 1024, 62.9, 58.59),
    _case("72b", 4096, 68.0, 66.25),
    _case("72b", 8192, 75.6, 76.47),
]


@pytest.mark.parametrize(("size", "seq", "published", "ours"), CASES)
def test_qwen_readme_14b_72b_qlora_memory_under_zero2_buckets(size, seq, published, ours):
    breakdown = _breakdown(_spec(size, seq))
    total = breakdown["total_per_gpu_gib"]
    assert total == pytest.approx(ours, abs=0.01)
    assert total == pytest.approx(published, rel=LLM_MEMORY)


def test_the_buckets_are_whole_size_beside_a_lora_s_few_gradients_and_absent_when_unstated():
    # Case 10 (by hand from ds_config_zero2.json + stage_1_and_2.py): the 72B 8k row's gradients carry exactly
    # 2 x 2e8 x 2 B = 0.745 GiB over the same run with the buckets unstated, whatever the trainable count, and the
    # total moves by the same amount (nothing else keys on the field). Ours 76.47 -> 75.72 GiB without them
    # (+1.1% -> +0.2% against 75.6): both inside the bar; the buckets do not decide this row.
    stated = _spec("72b", 8192)
    unstated = stated | {"parallelism": {"gpus": 1, "zero_stage": 2}}
    with_buckets, without = _breakdown(stated), _breakdown(unstated)
    assert with_buckets["gradients_gib"] - without["gradients_gib"] == pytest.approx(BUCKETS_GIB, rel=1e-9)
    assert with_buckets["total_per_gpu_gib"] - without["total_per_gpu_gib"] == pytest.approx(
        BUCKETS_GIB, rel=0.05
    )
    assert without["total_per_gpu_gib"] == pytest.approx(75.6, rel=LLM_MEMORY)
