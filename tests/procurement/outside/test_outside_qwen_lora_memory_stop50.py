"""qwenmem (stop 50): the Qwen (v1) README's plain LoRA memory rows at every length, and the loss term that moved them.

Sources:
[QWEN] QwenLM/Qwen README.md "Profiling of Memory and Speed" (one A100-SXM4-80G, CUDA 11.8, "Pytorch 2.0", flash
  attention 2, batch 1 x 8 accumulation, finetune_lora_single_gpu.sh): the 7B / 14B LoRA rows as at @e6f2a7a (stored
  copy id 3738032153: 7B "20.1G / 1.2s/it" ... "36.6G / 21.3s/it", 14B "34.6G" ... "55.2G"), the 1.8B LoRA row
  added with the 1.8B release (@e8e15962; the same figures in README_JA.md id 61002671 and README_FR.md id 358372660:
  "6.7G / 1.0s/it" ... "21.8G / 6.8s/it"). G read as GiB, as every other Qwen memory test here does.
[QWEN-CODE] Qwen-1's remote modeling code, QWenLMHeadModel.forward (the Hugging Face repos' modeling_qwen.py; read in
  the Qwen-72B copy mapengAdam/qianwen-72B@3334bfe3, the 1.8B / 72B release line): `lm_logits =
  self.lm_head(hidden_states)` with `self.lm_head.bfloat16()` under config.bf16 (autoset on an A100), then
  `shift_logits = lm_logits[..., :-1, :].contiguous()` and `CrossEntropyLoss()`: no upcast in the model.
[AMP] PyTorch 2.0 docs, amp.rst "CUDA Ops that can autocast to float32": cross_entropy, log_softmax, nll_loss. The
  single-GPU LoRA run is HF Trainer --bf16 without DeepSpeed, i.e. under torch autocast (lora48's reading of
  finetune_lora_single_gpu.sh @e8e15962, qwen_lora_spec).

The count (bytes_model.logits_bytes_per_token, cross_entropy shifted_autocast): forward, at log_softmax, the bf16
logits (2), the bf16 shifted copy (2), autocast's fp32 copy of it (4) and the fp32 log-softmax (4); backward, at
log_softmax's, the saved log-softmax, nll_loss's fp32 gradient and the fp32 input gradient (4 + 4 + 4): 12 bytes x V
a token either way, where the product charged the default 4 (Megatron-Core's in-place fp32 softmax). Nothing here
is fitted on a README row: the 12 is counted from the code, and the rows check it.
"""

from __future__ import annotations

import pytest

from procurement.sizing.bytes_model import logits_bytes_per_token
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

GIB = 2.0**30
LLM_MEMORY = 0.10
LENGTHS = (256, 512, 1024, 2048, 4096, 8192)

# [QWEN] LoRA memory (G), verbatim, 256 ... 8192 tokens
QWEN_LORA_MEMORY = {
    "1.8b": (6.7, 7.4, 8.4, 11.0, 16.2, 21.8),
    "7b": (20.1, 20.4, 21.5, 23.8, 29.7, 36.6),
    "14b": (34.6, 35.1, 35.3, 37.4, 42.5, 55.2),
}
# Ours, total_per_gpu_gib, before (the default 4 B x V loss) -> after (shifted_autocast, 12 B x V):
#  1.8B  5.23 (-22.0%) -> 5.53 (-17.4%), 5.42 (-26.7%) -> 6.03 (-18.5%), 5.82 (-30.8%) -> 7.03 (-16.3%),
#        6.60 (-40.0%) -> 9.03 (-17.9%), 8.17 (-49.6%) -> 13.04 (-19.5%), 11.30 (-48.2%) -> 21.04 (-3.5%)
#  7B   18.20 (-9.5%) -> 18.50 (-8.0%), 18.45 (-9.5%) -> 19.06 (-6.6%), 18.96 (-11.8%) -> 20.18 (-6.1%),
#       19.99 (-16.0%) -> 22.42 (-5.8%), 22.04 (-25.8%) -> 26.91 (-9.4%), 26.14 (-28.6%) -> 35.88 (-2.0%)
#  14B  32.10 (-7.2%) -> 32.41 (-6.3%), 32.40 (-7.7%) -> 33.01 (-6.0%), 33.01 (-6.5%) -> 34.23 (-3.0%),
#       34.22 (-8.5%) -> 36.66 (-2.0%), 36.64 (-13.8%) -> 41.51 (-2.3%), 41.49 (-24.8%) -> 51.23 (-7.2%)
OURS = {
    "1.8b": (5.53, 6.03, 7.03, 9.03, 13.04, 21.04),
    "7b": (18.50, 19.06, 20.18, 22.42, 26.91, 35.88),
    "14b": (32.41, 33.01, 34.23, 36.66, 41.51, 51.23),
}
QWEN_1_8B_SHORT_MISS = (
    "UNEXPLAINED (qwenmem; fix50q; fix50q2): [QWEN] Qwen-1.8B LoRA {seq} tokens {pub} G, ours {ours} GiB ({gap}); "
    "before the loss term {before}. The residual is neither fixed nor per-token: the 1.8B is short by 1.17 / 1.37 / "
    "1.37 / 1.97 / 3.16 / 0.76 GiB from 256 to 8,192 tokens (it rises to 4k, then falls: the 4k row is out of line "
    "with its neighbours). A least-squares slope over the README's six lengths (aud50q: 1.05 fragmentation, the "
    "kept inputs removed) implies 12.4 / 12.7 / 14.9 B x V a token for the 1.8B / 7B / 14B against the 12 counted "
    "from code (bytes_model shifted_autocast), so a part may scale with length (unlocated) and the rest, 0.8-1.2 "
    "GiB at 256 and 8k, does not. Leads, unsized: a fixed ~1 GiB of a one-GPU HF Trainer run (the caching "
    "allocator's reserve as the README's tool read it, CUDA / cuBLAS / flash-attn workspaces) plus a per-token "
    "term beyond the loss chain; a per-step allocated peak from the run would separate them."
)
MISSES = {
    ("1.8b", 256): ("5.53", "-17.4%", "-22.0%"),
    ("1.8b", 512): ("6.03", "-18.5%", "-26.7%"),
    ("1.8b", 1024): ("7.03", "-16.3%", "-30.8%"),
    ("1.8b", 2048): ("9.03", "-17.9%", "-40.0%"),
    ("1.8b", 4096): ("13.04", "-19.5%", "-49.6%"),
}


def _breakdown(size: str, seq: int, **fields) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(qwen_lora_spec(MODELS[size], seq, 1) | fields), 1)


def _params():
    out = []
    for size, published in QWEN_LORA_MEMORY.items():
        for i, seq in enumerate(LENGTHS):
            marks = ()
            if (size, seq) in MISSES:
                ours, gap, before = MISSES[(size, seq)]
                reason = QWEN_1_8B_SHORT_MISS.format(
                    seq=seq, pub=published[i], ours=ours, gap=gap, before=before
                )
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            out.append(pytest.param(size, seq, published[i], OURS[size][i], marks=marks, id=f"{size}-{seq}"))
    return out


def test_the_run_states_qwen1s_loss_under_autocast_at_12_bytes_a_vocabulary_entry():
    """[QWEN-CODE] + [AMP]: 2 + 2 + 4 + 4 = 12 B x 151,936 = 1,823,232 B a token on the single-GPU runs; the
    ZeRO-3 and Q-LoRA runs (DeepSpeed's own bf16 / fp16, no autocast) run the same loss in 16 bits (fix50q, aud50q
    item 5): shifted_16bit, 2 + 2 + 2 = 6 B x 151,936 = 911,616 B a token."""
    spec = parse_workload_spec(qwen_lora_spec(MODELS["7b"], 1024, 1))
    assert spec.cross_entropy == "shifted_autocast"
    assert logits_bytes_per_token(spec) == 12 * 151_936 == 1_823_232
    for zero3_or_qlora in (
        parse_workload_spec(qwen_lora_spec(MODELS["7b"], 1024, 2)),
        parse_workload_spec(qwen_lora_spec(MODELS["7b"], 1024, 1, qlora=True)),
    ):
        assert zero3_or_qlora.cross_entropy == "shifted_16bit"
        assert logits_bytes_per_token(zero3_or_qlora) == 6 * 151_936 == 911_616


@pytest.mark.parametrize("size", list(QWEN_LORA_MEMORY))
def test_the_term_adds_8_bytes_a_vocabulary_entry_and_token_to_the_activations(size):
    """Against the default (4 B x V): + 8 x V x seq bytes of activations, by hand (V 151,936 for 1.8B / 7B,
    152,064 for 14B as MODELS states them)."""
    vocab = {"1.8b": 151_936, "7b": 151_936, "14b": 152_064}[size]
    for seq in (512, 8192):
        after = _breakdown(size, seq)["activations_gib"]
        before = _breakdown(size, seq, cross_entropy="fp32_softmax")["activations_gib"]
        assert (after - before) * GIB == pytest.approx(8.0 * vocab * seq, rel=1e-9)


def test_the_growth_with_length_is_the_loss_chains():
    """[QWEN] the memory a model adds from 512 to 8,192 tokens, published vs ours: 1.8B 14.4 vs 15.01 G (+4.2%), 7B
    16.2 vs 16.82 (+3.8%), 14B 20.1 vs 18.22 (-9.4%); before the term 5.88 (-59%), 7.69 (-53%), 9.09 (-55%). The
    length-independent terms cancel, so this checks the per-token count alone."""
    for size, published in QWEN_LORA_MEMORY.items():
        ours = _breakdown(size, 8192)["total_per_gpu_gib"] - _breakdown(size, 512)["total_per_gpu_gib"]
        assert abs(ours / (published[5] - published[1]) - 1) < LLM_MEMORY, size


@pytest.mark.parametrize(("size", "seq", "published", "ours"), _params())
def test_qwen_lora_memory_on_one_a100(size, seq, published, ours):
    """[QWEN] LoRA memory at every length, bar 10%: 13 of 18 pass; the 1.8B at 256-4,096 tokens miss by 1.2-3.2
    GiB that is not proportional to length (strict xfails, UNEXPLAINED)."""
    total = _breakdown(size, seq)["total_per_gpu_gib"]
    assert total == pytest.approx(ours, abs=0.01)  # the figure NOTES records
    assert total == pytest.approx(published, rel=LLM_MEMORY)  # one memory case of the outside ledger
