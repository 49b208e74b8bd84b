"""aud51z (stop 51): outside audit of zstep, DeepSpeed ZeRO-1/2's optimizer-step peak (memory._gradients_at_zero_
step_peak: the peak is max(backward, step), the step holding weights + optimizer states + 8 B x P / dp), and of the
plans next to it that it must leave alone (optimizer offload, ZeRO-3). Bar: LLM memory 10%.

Every published figure is an allocator reading (torch.cuda.max_memory_allocated), so ours is the engine's
total_per_gpu_gib less its CUDA context (assumptions.CUDA_CONTEXT_GIB, 0.6), the convention of aud51r's [CYFZ2] tests;
the engine's 5% fragmentation allowance stays in (it reads ours up by 5% of the tensors).

Sources (grepped in tests/ first: neither the DeepSpeed-Chat log nor these [CYFZ2] rows is in any test; aud51r used
the gist's three ZeRO-2 rows without optimizer offload, test_outside_ranking_audit_aud51r.py):

[DSCHAT-SFT] microsoft/DeepSpeedExamples applications/DeepSpeed-Chat/training/step1_supervised_finetuning/
  training_log_output/opt-1.3b-globalBatchSize128.log @24fd63c3 (2023-06-23; the run is of 2023-04-18), listed in
  applications/DeepSpeed-Chat/training/README.md "Training logs" as trained "with x16-V100-32GB GPUs" (a DGX-2 node;
  the log ends with 16 "Process ... exits successfully" lines). Its first line: `deepspeed main.py ...
  --model_name_or_path facebook/opt-1.3b --per_device_train_batch_size 8 ... --max_seq_len 512 ...
  --gradient_accumulation_steps 1 ... --zero_stage 2 --deepspeed` (no --gradient_checkpointing, no --offload, no
  LoRA). Every progress line (736 of them) reads "MemAllocated=3.96GB, MaxMemAllocated=22.95GB" (DeepSpeed's timer:
  bytes / 1024**3, so GiB). The run as DeepSpeed-Chat's step-1 main.py of that time stated it: fp16 (its ds config's
  "fp16": {"enabled": true}), FusedAdam (main.py `AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam`),
  no reduce_bucket_size in its zero_optimization dict, so DeepSpeed's default 5e8 with overlap_comm off at stage 2
  (one 5e8-element fp16 ipg buffer), prompts padded to max_seq_len (512 tokens a sample), OPT's own eager attention
  and dropout (the training README: "for our OPT-1.3B example, we enabled dropout"), HF OPTForCausalLM's loss.
  OPT-1.3B's config: 24 layers, 2,048 hidden, 32 heads, 8,192 FFN (ReLU, not gated), vocabulary 50,272, tied head,
  biased projections.
[CYFZ2] gist.github.com/chenyaofo/d4cd6a20ab4b95cb3a49491747e2139a ("A800 x 8 ... CUDA 12.1, PyTorch 2.2.0, Deepspeed
  0.14.2", "Benchmark of LLaMA-7B models using deepspeed-based traning code. The squence length is 4096."; "GPU Mem.
  represents torch.cuda.memory_allocated() / torch.cuda.max_memory_allocated()"; BS "batch size per device per
  iteration / batch size for gradient decent"), the rows no test had:
    "2 | √ | √ | × | × | 1/64 | 361.3 | 13.4/16.9 | 1.81 |"   (ZeRO-2, checkpointing, optimizer offload)
    "3 | × | × | × | × | 2/64 | 319.5 | 14.8/75.7 | 4.95 |"   (ZeRO-3, no checkpointing)
    "3 | √ | × | × | × | 2/64 | 319.6 | 14.8/20.4 | 4.45 |"   (ZeRO-3, checkpointing)
    "3 | √ | √ | × | × | 2/64 | 387.4 | 3.8/9.4 | 2.05 |"     (ZeRO-3, checkpointing, optimizer offload)
    "3 | √ | × | × | × | 8/64 | 319.6 | 17.7/39.1 | 4.73 |"   (ZeRO-3, checkpointing, BS 8)
  Stated as aud51r states the gist's run (CYFZ2 there: llama-2-7b preset = LLaMA-7B's shape, bf16, 8 ranks, the HF
  loss, DeepSpeed 0.14.2's default 5e8 reduce bucket); accumulation = 64 / (8 x BS). Sized on the engine's A100 SXM
  memory model (no A800 in the catalog; memory does not read the card).
  Not taken, with the reason: "3 | √ | √ | √ | × | 4/64 | ... | 2.2/7.9" (parameter offload: its 5.7 GiB over the
  resting memory is less than half the ZeRO-2 BS 4 row's 11.4 at the same micro-batch and loss, so the two rows do not
  describe the same activations) and "3 | √ | × | × | × | 8/128 | ... | 21.4/63.9" (24.8 GiB above the 8/64 row at the
  same micro-batch; only the accumulation differs, which moves no activation): bases not established.

What zstep changes here, by hand (DeepSpeed v0.12.3 / v0.14.2 stage_1_and_2.py step(), the no-offload branch, read
for this audit: `self.flatten(self.averaged_gradients[i]).to(fp32)` with the 16-bit partition views still alive, so
2 + 2 + 4 B a partition parameter): [DSCHAT-SFT] 8 B x 1.3158e9 / 16 = 0.61 GiB at the step, below the backward's
16.56 GiB of activations + 1.08 GiB of gradients and bucket: the backward stands, the change moves nothing. [CYFZ2]'s
rows here are optimizer offload (the step runs on the host: stage_1_and_2.py's cpu_offload branch) or ZeRO-3
(stage3.py): zstep must leave them, and does (asserted below).
"""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec

GIB = 2.0**30
LLM_MEMORY = 0.10

# --- [DSCHAT-SFT] OPT-1.3B full fine-tune, DeepSpeed-Chat step 1, ZeRO-2 fp16, 16 x V100-32G -----------------------
OPT_1_3B = {
    "name": "facebook/opt-1.3b",
    "num_layers": 24,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "intermediate_size": 8192,
    "vocab_size": 50272,
    "tie_word_embeddings": True,
    "gated_mlp": False,
    "attention_qkv_bias": True,
    "dropout": True,
}
DSCHAT_SFT = {
    "task": "full_finetune",
    "model": OPT_1_3B,
    "precision": "fp16",
    "seq_len": 512,
    "micro_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "flash_attention": False,  # OPT's eager attention (transformers of April 2023)
    "cross_entropy": "huggingface",
    "optimizer_impl": "deepspeed_fused",
    "training_tokens": 1e9,
    "parallelism": {"gpus": 16, "zero_stage": 2, "reduce_bucket_size": 500_000_000},
}

# --- [CYFZ2] LLaMA-7B, DeepSpeed 0.14.2, 8 x A800, 4,096 tokens -------------------------------------------------------
CYFZ2 = {
    "task": "full_finetune",
    "model": {"preset": "llama-2-7b"},
    "precision": "bf16",
    "seq_len": 4096,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "cross_entropy": "huggingface",
    "training_tokens": 64 * 4096 * 1000,
    "parallelism": {"gpus": 8, "zero_stage": 2, "reduce_bucket_size": 500_000_000},
}


def _cyfz2(stage: int, batch: int, *, ckpt: bool, offload: str = "none") -> dict:
    parallelism = {"gpus": 8, "zero_stage": stage, "offload": offload}
    if stage == 2:
        parallelism["reduce_bucket_size"] = 500_000_000
    spec = CYFZ2 | {
        "micro_batch_size": batch,
        "gradient_accumulation_steps": 64 // (8 * batch),
        "parallelism": parallelism,
    }
    if ckpt:
        spec["gradient_checkpointing"] = "full"
    return spec


def _breakdown(spec: dict) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(spec), spec["parallelism"]["gpus"])


def _allocated_gib(spec: dict) -> float:
    """Ours as an allocator peak: the engine's per-GPU total less its CUDA context."""
    return _breakdown(spec)["total_per_gpu_gib"] - CUDA_CONTEXT_GIB


Z3_NO_CKPT_MISS = (
    "UNEXPLAINED (aud51z): [CYFZ2] LLaMA-7B ZeRO-3 without checkpointing, BS 2 / 64, 4,096 tokens, 8 x A800: "
    "published max_memory_allocated 75.7 GiB, ours 57.14 - 0.6 context = 56.54 (-25.3%). Not zstep's (ZeRO-3 is "
    "stage3.py; gradients_gib is the sharded 2 B x P / 8 = 1.57, asserted). Known: the same gist's ZeRO-2 row "
    "without checkpointing at BS 1 passes (44.8 vs 47.17, +5.3%, aud51r), its peak 25.4 GiB over its resting 19.4; "
    "doubling the micro-batch predicts ~50.8 over this row's resting 14.8 = 65.6, and the row reads 75.7: ~10 GiB "
    "more than twice the BS 1 activations, which ZeRO-3 alone would have to add. Candidates, each bounded, none "
    "established: ZeRO-3's gathered parameters in flight in backward (stage3_max_live_parameters 1e9 default x 2 B "
    "= 1.86 GiB), its 5e8-element reduce bucket (0.93 GiB), the fp32 loss logits at BS 2 (2 x 4,096 x 32,000 x 4 B "
    "= 0.98 GiB a copy): ~3.8 GiB of the 19.2 GiB gap, ~20% sized; the gist does not show its code or config."
)

# (id, spec, published GiB, ours GiB at aud51z) ------------------------------------------------------------------------
CASES = [
    pytest.param(DSCHAT_SFT, 22.95, 22.05, id="dschat-opt1.3b-zero2-16xv100"),
    pytest.param(
        _cyfz2(2, 1, ckpt=True, offload="optimizer"), 16.9, 17.62, id="cyfz2-zero2-ckpt-optoffload-bs1"
    ),
    pytest.param(_cyfz2(3, 2, ckpt=True), 20.4, 20.49, id="cyfz2-zero3-ckpt-bs2"),
    pytest.param(
        _cyfz2(3, 2, ckpt=True, offload="optimizer"), 9.4, 8.96, id="cyfz2-zero3-ckpt-optoffload-bs2"
    ),
    pytest.param(_cyfz2(3, 8, ckpt=True), 39.1, 41.25, id="cyfz2-zero3-ckpt-bs8"),
    pytest.param(
        _cyfz2(3, 2, ckpt=False),
        75.7,
        56.54,
        id="cyfz2-zero3-nockpt-bs2",
        marks=pytest.mark.xfail(strict=True, reason=Z3_NO_CKPT_MISS),
    ),
]


# Published (GiB, max_memory_allocated) -> ours (total - 0.6 context), error, verdict at the 10% bar:
#   [DSCHAT-SFT] OPT-1.3B ZeRO-2 fp16 16 x V100, 8 x 512:       22.95 -> 22.05  -3.9%  pass
#   [CYFZ2] ZeRO-2 ckpt + optimizer offload, BS 1 / 64:          16.9  -> 17.62  +4.3%  pass
#   [CYFZ2] ZeRO-3 ckpt, BS 2 / 64:                              20.4  -> 20.49  +0.4%  pass
#   [CYFZ2] ZeRO-3 ckpt + optimizer offload, BS 2 / 64:          9.4   -> 8.96   -4.7%  pass
#   [CYFZ2] ZeRO-3 ckpt, BS 8 / 64:                              39.1  -> 41.25  +5.5%  pass
#   [CYFZ2] ZeRO-3 no ckpt, BS 2 / 64:                           75.7  -> 56.54  -25.3% strict xfail, UNEXPLAINED
@pytest.mark.parametrize(("spec", "published", "ours"), CASES)
def test_published_zero_peak_memory(spec, published, ours):
    allocated = _allocated_gib(spec)
    assert allocated == pytest.approx(ours, abs=0.01)
    assert allocated == pytest.approx(published, rel=LLM_MEMORY)


def test_dschat_opt_backward_peak_stands_over_the_zero2_step():
    # Case 1, the mechanism: zstep's step is 8 B x P / 16 (0.61 GiB for OPT-1.3B's 1,315.8M parameters) beside
    # weights + states; the backward holds 16.56 GiB of activations + the 2 B x P / 16 partition + the one 5e8-element
    # fp16 ipg buffer (0.93 GiB): gradients_gib is the backward's, exactly, and the step is far below it.
    parts = _breakdown(DSCHAT_SFT)
    params = parts["weights_gib"] * GIB / 2.0  # fp16 weights, 2 B a parameter
    # 1,311,164,416 counted against OPT-1.3B's 1,315,758,080: the spec has no field for OPT's learned positional
    # embedding (2,050 x 2,048 = 4.2M, 0.35%); immaterial here
    assert params == pytest.approx(1_315_758_080, rel=0.005)
    backward_gradients = 2.0 * params / 16 / GIB + 500_000_000 * 2 / GIB
    assert parts["gradients_gib"] == pytest.approx(backward_gradients, rel=1e-6)
    step = 8.0 * params / 16 / GIB
    assert step < 0.05 * (parts["gradients_gib"] + parts["activations_gib"])


@pytest.mark.parametrize(
    ("spec", "on_gpu_gradients_gib"),
    [
        # optimizer offload: the 16-bit partition goes to the host; only the ipg bucket (5e8 x 2 B) stays
        (_cyfz2(2, 1, ckpt=True, offload="optimizer"), 500_000_000 * 2 / GIB),
        # ZeRO-3: the sharded 16-bit gradients, 2 B x 6,738,415,616 / 8
        (_cyfz2(3, 2, ckpt=True), 2 * 6_738_415_616 / 8 / GIB),
        (_cyfz2(3, 2, ckpt=True, offload="optimizer"), 0.0),
    ],
    ids=["zero2-optoffload", "zero3", "zero3-optoffload"],
)
def test_zstep_leaves_offload_and_zero3_rows_alone(spec, on_gpu_gradients_gib):
    # By hand from the configs: none of these runs steps stage_1_and_2.py's on-GPU cast (cpu_offload steps a host
    # fp32 buffer; ZeRO-3 is stage3.py), so no 8 B x P / dp term may appear in gradients_gib.
    assert _breakdown(spec)["gradients_gib"] == pytest.approx(on_gpu_gradients_gib, rel=1e-6, abs=1e-9)
