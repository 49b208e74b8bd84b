"""Issue 26, outside audit at stop 44 (aud44w): lw44's width factor on the A100 LoRA row.

lw44 scales the measured A100 LoRA row (0.47, fitted on Qwen-7B, d 4,096) by (1 + 621 / 4,096) / (1 + 621 / d), the
shape and k of the MPT full-training sweep: x 0.884 at d 2,048, x 1.027 at 5,120, x 1.060 at 7,168. These cases hold
out its claim on rows of one table no test uses (grep of tests/ for yi-34b / max_length 4,096 / 8,192 rows: none;
aud43h reads the same table's 512-token rows only), sized the way `manage.py size` sizes them (`size_spec_document`,
calibration off) on one A100 80GB SXM. Tolerance: LLM speed 15%. Misses are strict xfails.

Source:
  [SWIFT] modelscope/ms-swift @6cfbc2ec39bd98eb920f9ef1b4041e16a298d6bc docs/source_en/LLM/Benchmark.md, "Model Type &
          Max Length" / "LoRA": A100 (80 GB: yi-34b-chat at 4,096 uses 78.72 GiB on one), CUDA 11.8, torch 2.1.1,
          flash_attn 2.3.4, batch 1, gradient accumulation 16, gradient checkpointing on, LoRA rank 8 on the
          DEFAULT target (Qwen-1: c_attn; Yi: swift's LoRATM.llama2, q/k/v), dataset cls-fudan-news-zh (3,234 +-
          2,548 Qwen tokens a sample, min 91, max 19,548). Training speed (samples/s, HF Trainer's
          train_samples_per_second) at max_length 4,096 / 8,192: qwen-1_8b-chat 5.92 / 4.19, qwen-7b-chat 2.05 /
          1.34, qwen-14b-chat 1.17 / 0.79; yi-6b-chat 1.99 / -, yi-34b-chat 0.47 / -. Script
          scripts/benchmark/test_memory_time/run_single.py sets no truncation_strategy, and swift 1.x's default is
          'delete': samples longer than max_length are DROPPED, not truncated, so the tokens a sample are unknown.
          They are the same for every model that shares a tokenizer (same dataset, same seeded 1,000-sample draw
          above 2,048), so the RATIO of two rows' samples/s is the ratio of their tokens/s: these cases compare
          ratios, where the unknown length cancels. The engine's ratios move < 1% between 1,300 and 3,234 tokens
          (1.8B/7B 4.17 -> 4.03, 14B/7B 0.542 -> 0.547, Yi-34B/Yi-6B 0.182 -> 0.186), so each is sized at a
          plausible kept mean: 2,950 at max_length 8,192 (the mean less the deleted tail), 2,048 at 4,096.
          (Aside for aud43h: its "at 512 nearly every sample is truncated to 512" is 'delete' too: the 512-token
          rows run the dataset's short tail; Yi-34B's 2.32 samples/s at 512 would need 0.79 of the 312 TFLOPS peak
          at 512 tokens a sample.)

By hand, Qwen-1.8B LoRA 8k on the Qwen README's run (lw44's held-out headline): block linears 24 x (4 x 2,048^2 +
3 x 2,048 x 5,504) = 1.2143e9 x 6 FLOPs (forward, recompute, input gradient) = 7.286e9 a token; causal attention
8 x 24 x 2,048 x 8,192 = 3.221e9; frozen output layer 4 x 2,048 x 151,936 = 1.245e9; rank-64 adapters on c_attn,
attn/mlp c_proj, w1, w2 64 x (8,192 + 4,096 + 3 x 7,552) x 24 = 53.7M x 8 = 0.43e9: 12.18e9 (engine 12.07e9, -0.9%).
Step 8 x 8,192 x 12.07e9 = 7.91e14 FLOPs / (0.47 x 0.8837 x 312e12) = 6.107 s (engine 6.1065 s), 10,732 tokens/s
against the README's 8 x 8,192 / 6.8 s = 9,637.6: +11.4% (at 0.47 alone 5.396 s, +26.0%). The README's step implies
0.373 of peak, 0.744 of the 7B's 0.501 at 8k, where the factor gives 0.884.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_audit_stop43h import swift_lora_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS, QWEN_1_8B, QWEN_7B, tokens_per_second

A100 = "a100-sxm4-80gb"

# Yi-6B / Yi-34B config.json (01-ai, Llama architecture): 32 x 4,096, 32 heads, 4 KV heads, intermediate 11,008 /
# 60 x 7,168, 56 heads, 8 KV heads, intermediate 20,480; vocabulary 64,000 for both.
YI_6B = {
    "preset": "llama-2-7b",
    "name": "Yi-6B",
    "num_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "intermediate_size": 11008,
    "vocab_size": 64000,
}
YI_34B = YI_6B | {
    "name": "Yi-34B",
    "num_layers": 60,
    "hidden_size": 7168,
    "num_attention_heads": 56,
    "num_key_value_heads": 8,
    "intermediate_size": 20480,
}
QWEN1 = {"eager_layer": "qwen1"}  # ms-swift runs Qwen-1's own modeling_qwen.py


def swift_spec(model: dict, seq: int) -> dict:
    """ms-swift's benchmark run (swift_lora_spec: bf16, batch 1, 16 accumulation, rank 8, full checkpointing); the
    Qwen-1 rows adapt c_attn, the Yi rows q/k/v (LoRATM.llama2)."""
    if model["name"].startswith("Yi"):
        return swift_lora_spec(model, seq) | {"lora": {"rank": 8, "targets": ["q_proj", "k_proj", "v_proj"]}}
    return swift_lora_spec(model | QWEN1, seq)


# (narrow or wide model, the 4,096-wide reference, kept tokens a sample, published samples/s of each) [SWIFT]
CASES = {
    # d 2,048 against 4,096 at max_length 8,192: qwen-1_8b-chat 4.19, qwen-7b-chat 1.34 samples/s
    "qwen-1.8b-over-7b-8192": (QWEN_1_8B, QWEN_7B, 2950, 4.19, 1.34),
    # d 5,120 against 4,096 at max_length 8,192: qwen-14b-chat 0.79, qwen-7b-chat 1.34
    "qwen-14b-over-7b-8192": (MODELS["14b"], QWEN_7B, 2950, 0.79, 1.34),
    # d 2,048 against 4,096 at max_length 4,096: qwen-1_8b-chat 5.92, qwen-7b-chat 2.05
    "qwen-1.8b-over-7b-4096": (QWEN_1_8B, QWEN_7B, 2048, 5.92, 2.05),
    # d 5,120 against 4,096 at max_length 4,096: qwen-14b-chat 1.17, qwen-7b-chat 2.05
    "qwen-14b-over-7b-4096": (MODELS["14b"], QWEN_7B, 2048, 1.17, 2.05),
    # d 7,168 against 4,096 at max_length 4,096, one A100 each: yi-34b-chat 0.47, yi-6b-chat 1.99
    "yi-34b-over-yi-6b-4096": (YI_34B, YI_6B, 2048, 0.47, 1.99),
}

# cls45c: kfit44's k 3,200 stays unlanded. The phase bound that fixes the README's 7B at 512 (lora_host,
# "Synchronised micro-batches") does not reach the 14B at 512 that blocked it (GPU-bound in its forward: 0.605 s of
# host against 0.69 s of forward GPU work at k 3,200), so at k 3,200 that passing case is +15.3% (+16.3% before).
# Candidate, tried on a scratch engine (not committed): a length-independent GPU cost a micro-batch, the frozen
# weights read once a GEMM pass (3 passes under full recomputation: forward, recomputed forward, input gradient; the
# output layer 2) at 0.70 of the card's bandwidth, added to the GEMMs' time (0.23 s a step on the 7B, 0.44 s on the
# 14B). With it the 7B fit rows' implied rate flattens from 0.406 / 0.448 / 0.484 / 0.501 to 0.442 / 0.469 / 0.495
# / 0.506 (the row 0.47 -> 0.482, the same median rule), and k refitted on kfit44's six README ratio rows is 3,400.
# Sized by the engine (A100 rows only): README LoRA 7B 256-8k +8.5 / +3.3 / +8.1 / +2.7 / -2.5 / -4.8%, 14B +0.5 /
# -1.9 / -2.1 / -3.6 / -3.6 / -4.0%, 1.8B 1k-8k +18.2 / +7.8 / -1.8 / -11.6%; held out: these five ratio cases +2.0
# / -1.2 / +12.7 / +1.5 / -9.9% (all inside), MLPerf 70B LoRA on 8 A100 2.38 h against 2.40 (-0.9%), 72B Q-LoRA 8k
# +3.3%, 72B ZeRO-3 1k / 2k / 4k / 8k +42.4 / +16.1 / +6.7 / +0.2% (2k, passing at -0.3%, falls out: the same
# ~11.5 s a step of ZeRO-3 gathers the 1k row's EXPLAINED reason names, which the engine hides; serial gathers
# added by hand give -8.4 / -10.2 / -7.0 / -6.5%); validate_sizing medians unchanged (no A100 LoRA case there).
# Not landed: the sum form (weight reads not overlapped with the GEMM's math) has no source, a passing case falls
# out without the serial-gather change, which the spec cannot select (DeepSpeed's prefetch bucket against FSDP's).
CLS45C = (
    ". cls45c: unchanged (the ratio's rows are GPU-bound; the phase bound moves neither); kfit44's k is blocked by "
    "the README's 14B at 512 (+15.3% at k 3,200 with the phase bound), which a length-independent GPU cost a "
    "micro-batch the size of the frozen weights' reads would clear (k 3,400, every README 7B / 14B row within "
    "8.5% and this case inside on a scratch engine; see the comment above MISSES): UNEXPLAINED, the candidate's "
    "sum form unsourced and the 72B ZeRO-3 2k row out without serial gathers"
)
# relabelB48 (stop 48): the reasons start with their label; facts unchanged, each gains STOP48.
STOP48 = (
    ". relabelB48 (stop 48): label set, figure unchanged; not EXPLAINED: (a) has no source (no measurement of an "
    "eager PEFT LoRA step's efficiency against width; the MPT sweep behind k 621 is fused full training), so a "
    "refit of k on these rows would be a fit, not a mechanism. Ruled out: the host floor (these rows are GPU-bound), "
    "the samples' unknown token count (it cancels in a ratio of the same data and max_length). Best lead: the "
    "eager step's memory-bound kernels a layer (norms, rotary, SwiGLU, dropout, the recomputed forward, the rank-8 "
    "adapters), which scale as d x s where the frozen GEMMs scale as d^2 x s: counted from the two stacks' "
    "modeling code, they would give a width curve with a source"
)
MISSES = {
    "qwen-1.8b-over-7b-8192": (
        "UNEXPLAINED: [SWIFT] 8,192: published qwen-1_8b / qwen-7b 4.19 / 1.34 = 3.127; ours 13,358.6 / 3,297.8 tokens/s = 4.051 "
        "(+29.5%; without lw44's x 0.884 it would be 4.58, +46.6%). The narrow model is slower against the 7B than "
        "the MPT curve allows: the ratio needs e(2,048) / e(4,096) ~ 0.68, where (1 + 621 / 4,096) / (1 + 621 / "
        "2,048) gives 0.884; k ~ 3,500 in the same form would meet it. The Qwen README's own 1.8B rows say the same "
        "(+11 / +24 / +39% at 8k / 4k / 2k after lw44). Diagnosis: the width curve was fitted on a fused, "
        "non-recomputing full-training stack (MPT), where a layer's memory-bound work is small against 8N GEMM "
        "FLOPs; an eager PEFT LoRA step keeps all of that work (norms, rotary, SwiGLU, dropout, the recomputed "
        "forward) plus the rank-8 adapter kernels (memory-bound, d x s each) against only 6N frozen GEMM FLOPs, so "
        "its k is larger. UNEXPLAINED as a sized term (a refit of k on adapter rows, not a spec field)"
        + CLS45C
        + STOP48
    ),
    "qwen-1.8b-over-7b-4096": (
        "UNEXPLAINED: [SWIFT] 4,096: published qwen-1_8b / qwen-7b 5.92 / 2.05 = 2.888; ours 13,865.5 / 3,369.5 = 4.115 (+42.5%; "
        "4.657 without the factor, +61.3%). Same cause as 8,192, larger at shorter samples; UNEXPLAINED"
        + CLS45C
        + STOP48
    ),
    "yi-34b-over-yi-6b-4096": (
        "UNEXPLAINED: [SWIFT] 4,096: published yi-34b / yi-6b 0.47 / 1.99 = 0.2362; ours 741.4 / 4,024.3 tokens/s = 0.1841 "
        "(-22.1%; 0.1737 without lw44's x 1.060, -26.5%). The wide model runs ~1.28x more efficiently against the 6B "
        "than the MPT curve's 1.060 gives (the 2,048 row says 0.273 against ours 0.183, -33%): the same steepness "
        "as the 1.8B case, on the other side of 4,096, and on a second stack (HF Llama with flash-attn 2, not "
        "Qwen-1's remote code). 14B / 7B passes (-7% / -5%) with the factor's 1.027 in the right direction. "
        "UNEXPLAINED as a sized term; the factor is the right sign but about a third of the size the held-out "
        "rows need" + CLS45C + STOP48
    ),
}


def ratio(narrow: dict, reference: dict, seq: int) -> float:
    return tokens_per_second(swift_spec(narrow, seq), A100) / tokens_per_second(
        swift_spec(reference, seq), A100
    )


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=MISSES[name]))
        if name in MISSES
        else name
        for name in CASES
    ],
)
@pytest.mark.django_db
def test_ms_swift_lora_speed_ratio_across_widths_within_15_percent(case, bundled_catalog):
    # Passing: 14B / 7B at 8,192 published 0.5896, ours 1,800.6 / 3,297.8 = 0.546 (-7.4%; -9.8% without the x 1.027);
    # at 4,096 published 0.5707, ours 1,832.9 / 3,369.5 = 0.544 (-4.7%; -7.2% without it).
    narrow, reference, seq, published_narrow, published_reference = CASES[case]
    assert ratio(narrow, reference, seq) == pytest.approx(published_narrow / published_reference, rel=0.15)
