"""16-bit full fine-tuning and LoRA on NVSwitch Hopper train at the width ceiling, as pretraining does (mfu26).

Checks, not fits: the ceiling's constants come from MosaicML's MPT H100 sweep (assumptions.training_width_*).

Sources (figures quoted where used):
  [AM]   NVIDIA-NeMo/Automodel docs/performance-summary.mdx @2013a4dd6 (2026-04-10), "Fine-Tuning (LoRA)
         Performance", DGX-H100, BF16, "TE + triton (+ fsdp2_prefetch)": Qwen2.5 7B | 1 GPU | GBS 32 | MBS 2 |
         4096 | 14110.05 tokens/s/GPU; Qwen2.5 32B | 8 | TP 2 | FSDP 4 | 2250.31; Llama3 70B 2-node | 16 |
         TP 2 | FSDP 8 | 984.85; Qwen2.5 32B 2-node | 16 | TP 2 | FSDP 8 | 2072.89. Recipes at the same commit,
         examples/llm_finetune/: qwen/qwen2_5_7b_peft_benchmark.yaml (dim 16, match_all_linear, no
         checkpointing), qwen/custom_qwen2_5_32b_peft_benchmark{,_2nodes}.yaml and
         llama3_3/custom_llama3_3_70b_instruct_peft_benchmark_2nodes.yaml (activation_checkpointing: true).
         The same table @822effa16 (2026-01-27), before fsdp2_prefetch: "Llama3 70B | 8 | 32 | 1 | 4 | 4 |
         4096 | 2 | 4 | 1 | - | 10 | 1 | - | 24.87 | 190 | 658.62" (TP 2, PP 4, VP 10, PyTorch pipelining with
         pp_microbatch_size 1 and local batch 4, activation_checkpointing: true).
  [NEMO] NVIDIA/NeMo docs/source/performance/performance_summary.md @8e3d65dcfe (NeMo 24.07, DGX-H100, FP8):
         pretraining "LLAMA2-7B | 8 | 128 | 1 | 4096 | 1 | 1 | 1 | 1 | 16934"; finetuning (SQuAD packed to
         4096) "LLAMA2-7B | SFT | 8 | 32 | 1 | 4096 | 1 | 1 | 16891".
"""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.mfu import default_mfu, width_ceiling

RELABEL48_AM_PIPELINED = (
    "UNEXPLAINED (relabelA48: rechecked at 972.8, +47.7%. (a) fails: no source opened sizes a pipelining "
    "cost for this recipe. Checked: the product already charges the interleaved bubble (p - 1) / (v m) = "
    "3 / 40 = 0.075 (pipeline_bubble 0.075, step 2.105 s); at VP 1 (bubble 0.75) it gives 608.5 (-7.6%). "
    "The published rate implies a step 2.105 x 972.8 / 658.62 = 3.110 s, 0.59 over the bubble-free 1.958 "
    "s: between the interleaved (0.075) and plain 1F1B (0.75) bubbles. Best lead: how AutoModel's PyTorch"
    " ScheduleInterleaved1F1B ran 4 micro-batches at PP 4 x VP 10, not opened here; (c) would need a "
    "field for the pipelining implementation, which no held-out row sizes). "
)


H100 = gpu_by_slug("h100-sxm5-80gb")
# Qwen/Qwen2.5-32B config.json: 64 layers, hidden 5120, 40 heads, 8 KV heads, FFN 27648, vocab 152064, QKV bias.
QWEN25_32B = {
    "name": "qwen2.5-32b",
    "num_layers": 64,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "intermediate_size": 27648,
    "vocab_size": 152064,
    "attention_qkv_bias": True,
}


def automodel_lora(model, gpus: int, checkpointing: str, accumulation: int, micro_batch: int = 2, **plan):
    return parse_workload_spec(
        {
            "task": "lora",
            "model": {"preset": model} if isinstance(model, str) else dict(model),
            "precision": "bf16",
            "lora": {"rank": 16, "targets": "all-linear"},
            "micro_batch_size": micro_batch,
            "seq_len": 4096,
            "gradient_accumulation_steps": accumulation,
            "gradient_checkpointing": checkpointing,
            "parallelism": {"gpus": gpus} | plan,
            "training_tokens": 1e8,
        }
    )


def tokens_per_gpu(spec) -> float:
    row = size_workload(spec, [H100])["candidates"][0]
    return row["throughput"]["training_tokens_per_second"] / row["gpus"]


AUTOMODEL_LORA_ROWS = {
    # At the 0.40 card default (before mfu26): -15.4%, -19.1%, -13.4%, -12.2%; now -8.3%, -7.7%, +4.2%, +0.2%.
    "qwen2.5-7b x1": (automodel_lora("qwen2.5-7b", 1, "none", 16), 14110.05),
    "qwen2.5-32b x8 tp2": (
        automodel_lora(QWEN25_32B, 8, "full", 4, zero_stage="fsdp", tensor_parallel=2),
        2250.31,
    ),
    "llama3-70b x16 tp2": (
        automodel_lora("llama-3-70b", 16, "full", 2, zero_stage="fsdp", tensor_parallel=2),
        984.85,
    ),
    "qwen2.5-32b x16 tp2": (
        automodel_lora(QWEN25_32B, 16, "full", 2, zero_stage="fsdp", tensor_parallel=2),
        2072.89,
    ),
}


@pytest.mark.parametrize("row", sorted(AUTOMODEL_LORA_ROWS))
def test_automodel_bf16_lora_on_h100_within_15_percent(row):
    spec, published = AUTOMODEL_LORA_ROWS[row]
    assert tokens_per_gpu(spec) == pytest.approx(published, rel=0.15)


def test_16_bit_fine_tunes_take_pretrainings_ceiling_and_qlora_and_fp8_keep_the_default():
    def llama(task, precision="bf16"):
        return parse_workload_spec(
            {"task": task, "model": {"preset": "llama-2-7b"}, "precision": precision, "training_tokens": 1e9}
        )

    ceiling = width_ceiling(llama("pretrain"), H100)
    assert ceiling == pytest.approx(0.535 / (1 + 838 / 4096))
    assert [default_mfu(llama(task), H100) for task in ("pretrain", "full_finetune", "lora")] == [ceiling] * 3
    assert default_mfu(llama("qlora"), H100) == 0.40
    # fp8 keeps its own figure whatever the task: mfu_fp8_linears_hopper's 0.42 (int42 refit; 0.425 before) over the bf16 attention core's
    # and output layer's time (fp826; Llama 2 7B at 2,048 by hand in test_mfu.py: 1.0581, moe42)
    assert default_mfu(llama("full_finetune", "fp8"), H100) == pytest.approx(0.42 / 1.0581, abs=1e-4)
    assert default_mfu(llama("full_finetune", "fp8"), H100) == default_mfu(llama("pretrain", "fp8"), H100)


def test_nemo_fp8_sft_runs_at_its_pretraining_rate_as_the_engine_assumes():
    """[NEMO] 24.07: Llama 2 7B SFT 16,891 against pretraining 16,934 tokens/s/GPU on 8 H100 (0.997x), same
    micro-batch, sequence and plan: the task does not change the GEMMs' rate. The engine gives the same speed
    to both (FP8: both at the fp8 linears' efficiency, mfu_fp8_linears_hopper; 0.40 before fp826)."""

    def run(task, global_batch):
        return parse_workload_spec(
            {
                "task": task,
                "model": {"preset": "llama-2-7b"},
                "precision": "fp8",
                "micro_batch_size": 1,
                "seq_len": 4096,
                "gradient_checkpointing": "selective",
                "gradient_accumulation_steps": global_batch // 8,
                "parallelism": {"gpus": 8, "zero_stage": 1},
                "training_tokens": 1e9,
            }
        )

    ratio = tokens_per_gpu(run("full_finetune", 32)) / tokens_per_gpu(run("pretrain", 128))
    assert ratio == pytest.approx(16891 / 16934, rel=0.05)


@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_AM_PIPELINED
    + "[AM] @822effa16: Llama 3 70B LoRA on 8 H100 at TP 2 x PP 4 x VP 10 (AutoModel's PyTorch pipelining, "
    "before fsdp2_prefetch), 658.62 tokens/s/GPU; product 955.3 (+45.0%; +20.5% at the 0.40 default before "
    "mfu26). The same stack's later TP 2 x FSDP recipe on the same model and card runs 1,091.85 (the product "
    "1,025.9): the gap is this recipe's pipelining at 4 micro-batches a schedule, which the spec cannot tell "
    "from Megatron's (the same table's Qwen2.5 32B at PP 4 x VP 8 is +7.0%).",
)
def test_automodel_older_pipelined_70b_lora_within_15_percent():
    plan = {"tensor_parallel": 2, "pipeline_parallel": 4, "virtual_pipeline": 10}
    spec = automodel_lora("llama-3-70b", 8, "full", 4, micro_batch=1, **plan)
    assert tokens_per_gpu(spec) == pytest.approx(658.62, rel=0.15)
