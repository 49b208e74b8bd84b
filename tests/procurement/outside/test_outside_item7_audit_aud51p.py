"""Outside audit aud51p: issue 26 item 7, GPU-hours of 30-180B pretraining runs no test uses.

Sources (tests/ and procurement/ grepped for each source and figure first; none used):
  [L2-T2]   Llama 2 paper (arXiv:2307.09288) Table 2 "CO2 emissions during pretraining": 34B, 1,038,336 GPU hours
            (A100-80GB, 350 W); sec 2.2: 2.0T tokens, context 4,096, GQA for 34B/70B, global batch 4M tokens.
            Shape (Table 1 / the released Code Llama 34B config): 48 layers, 8,192 hidden, 64 heads, 8 KV heads,
            SwiGLU 22,016, vocab 32,000. GPU count and TP not stated: the repo's own Meta convention (2,048 A100s,
            selective recomputation, ZeRO-1; procurement/sizing/validation._meta_a100_run) with TP 4 as its 33B row.
  [L3-CARD] meta-llama/llama3 MODEL_CARD.md "Training Factors": Llama 3 70B 6.4M GPU hours, H100-80GB, 15T+ tokens,
            context 8k. No plan stated: engine defaults.
  [L31-CARD] Llama 3.1 MODEL_CARD.md table: Llama 3.1 70B 7.0M GPU hours, H100-80GB (stored copy id 58953587338),
            ~15T tokens. No plan stated: engine defaults.
  [F180]    HF blog "Spread Your Wings: Falcon 180B is here" (stored pages copy): "trained on 3.5 trillion tokens on up
            to 4096 GPUs simultaneously ... a total of ~7,000,000 GPU hours"; plan from the tiiuae/falcon-180B card /
            Falcon paper (arXiv:2311.16867, read from memory, not opened here): A100 40GB, 3D parallelism TP 8 PP 8
            DP 64 with ZeRO, sequence 2,048, batch 2,048 sequences (micro-batch 1 -> 32 micro-batches a replica).
            Shape: 80 layers, 14,848 hidden, 232 heads, 8 KV groups, 4x GELU MLP (59,392), vocab 65,024.
Bar: pretraining GPU-hours within 15% (brief). Every case misses: strict xfails, UNEXPLAINED.
Not kept: the Unsloth README HF+FA2 max-context rows at 12 GB / 16 GB (Llama 3.1 8B QLoRA r32: 932 / 2,551 tokens):
the catalog has no 12 GB or 16 GB consumer card (gpu_by_slug('rtx-4080') / ('rtx-3060') -> KeyError); the 24 GB row
(5,789) is already in tests/procurement/sizing/test_cross_entropy_memory.py.
"""

from __future__ import annotations

import pytest

from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.validation import Case, _estimate

GPU_HOURS = 0.15

L2_34B = {
    "num_layers": 48,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 22016,
    "vocab_size": 32000,
    "gated_mlp": True,
    "tie_word_embeddings": False,
}
FALCON_180B = {
    "num_layers": 80,
    "hidden_size": 14848,
    "num_attention_heads": 232,
    "num_key_value_heads": 8,
    "intermediate_size": 59392,
    "vocab_size": 65024,
    "gated_mlp": False,
    "tie_word_embeddings": False,
}


def _gpu_hours(spec: dict, gpu: str) -> float:
    # the same path as procurement/sizing/validation (training_throughput at the card's default MFU)
    return _estimate(parse_workload_spec(spec), Case(spec, "gpu_hours", gpu))


def _err(ours: float, published: float) -> float:
    return (ours - published) / published


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51p): Llama 2 34B [L2-T2] 1,038,336 A100-hours; ours 780,910 at the repo's Meta plan "
    "(-24.8%; -29.2% at engine defaults). The sibling llama2-70b row runs +18.5% high on the same plan, so the "
    "34B/70B pair straddles the bar in opposite directions; 0% sized (the 34B run's real plan and restarts are "
    "unpublished).",
)
def test_llama2_34b_gpu_hours():
    spec = {
        "task": "pretrain",
        "model": L2_34B,
        "training_tokens": 2.0e12,
        "seq_len": 4096,
        "gradient_checkpointing": "selective",
        "gradient_accumulation_steps": 2,  # 4M tokens / (4,096 x 512 replicas)
        "parallelism": {"gpus": 2048, "tensor_parallel": 4, "zero_stage": 1},
    }
    assert abs(_err(_gpu_hours(spec, "a100-sxm4-80gb"), 1_038_336)) < GPU_HOURS


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51p): Llama 3 70B [L3-CARD] 6.4M H100-hours; ours 3.90M at defaults (-39.1%). "
    "Probably the card's hours cover more than one clean 15T pass (the repo already says so of llama31-8b), "
    "unsized.",
)
def test_llama3_70b_gpu_hours():
    spec = {"task": "pretrain", "model": {"preset": "llama-3-70b"}, "training_tokens": 15e12, "seq_len": 8192}
    assert abs(_err(_gpu_hours(spec, "h100-sxm5-80gb"), 6.4e6)) < GPU_HOURS


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51p): Llama 3.1 70B [L31-CARD] 7.0M H100-hours; ours 3.90M at defaults (-44.3%); "
    "same cause suspected as Llama 3 70B (hours beyond one pass: long-context stage, restarts), unsized.",
)
def test_llama31_70b_gpu_hours():
    spec = {
        "task": "pretrain",
        "model": {"preset": "llama-3.1-70b"},
        "training_tokens": 15e12,
        "seq_len": 8192,
    }
    assert abs(_err(_gpu_hours(spec, "h100-sxm5-80gb"), 7.0e6)) < GPU_HOURS


def test_falcon_180b_global_batch_gives_the_hand_accumulation():
    # ppm: 2,048 sequences [F180] / (micro-batch 1 x DP 64) = 32, the count aud51p wrote by hand; both specs
    # read the same hours (8.67M); left at gradient_accumulation_steps 1 it read 53.7M (+667%, aud51p).
    base = {
        "task": "pretrain",
        "model": FALCON_180B,
        "training_tokens": 3.5e12,
        "seq_len": 2048,
        "parallelism": {"gpus": 4096, "tensor_parallel": 8, "pipeline_parallel": 8, "zero_stage": 1},
    }
    stated = parse_workload_spec(base | {"global_batch_tokens": 2048 * 2048})
    assert stated.gradient_accumulation_steps == 32
    by_hand = _gpu_hours(base | {"gradient_accumulation_steps": 32}, "a100-sxm4-40gb")
    assert _gpu_hours(base | {"global_batch_size": 2048}, "a100-sxm4-40gb") == pytest.approx(by_hand)
    # one micro-batch a step: bubble 1 + 7/1 = 8 against 1 + 7/32 = 1.219, 6.56x the compute (per-step
    # communication does not scale with it, so the whole step a little less)
    assert _gpu_hours(base, "a100-sxm4-40gb") > 6 * by_hand


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51p): Falcon-180B [F180] ~7.0M A100-40GB hours; ours 8.67M at TP8 PP8 DP64, "
    "global_batch_size 2,048 -> 32 micro-batches (+23.9%, the 20-26% high band item 7 names). Candidates: the "
    "1 + (p-1)/m bubble (7/32 = +21.9% alone; Falcon's Gigatron may interleave) and the A100-40GB MFU; not sized "
    "against a Falcon row.",
)
def test_falcon_180b_gpu_hours():
    spec = {
        "task": "pretrain",
        "model": FALCON_180B,
        "training_tokens": 3.5e12,
        "seq_len": 2048,
        "micro_batch_size": 1,
        # ppm: the source's batch through the new field (was gradient_accumulation_steps 32 by hand): 2,048
        # sequences / (1 x 4,096 / (8 x 8)) = 32 micro-batches a step; 8.67M before -> 8.67M after (unchanged)
        "global_batch_size": 2048,
        "parallelism": {"gpus": 4096, "tensor_parallel": 8, "pipeline_parallel": 8, "zero_stage": 1},
    }
    assert abs(_err(_gpu_hours(spec, "a100-sxm4-40gb"), 7.0e6)) < GPU_HOURS
