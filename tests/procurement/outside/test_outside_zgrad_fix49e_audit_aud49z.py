"""aud49z (stop 49): outside audit of zgrad (`zero_grad: set_to_none`) and fix49e (lora.modules_to_save's fp32 copies
and step peak). Held-out published memory figures and the facts the audit rests on; no product code touched.

Sources:
[PEFT-RES] huggingface/peft method_comparison/MetaMathQA/results/*.json (mirror @5d602fdb history): full-finetuning
  --llama-3.2-3B-lr_0.00001.json (torch 2.7.1, max_seq_length 768, 5000 steps x 4, cuda_memory_max 37,241,225,216 B,
  per-250-step 'tokens / sec' and 'train time', 'train total tokens' 4,198,051); adaptionprompt--llama-3.2-3B-lr_5e-3
  .json (@4585111d, torch 2.13.0, max_seq_length 512, the same seed 0 / template / data sha aa4f34d, 3000 steps x 4,
  per-500-step windows, 'train total tokens' 2,517,926). run.py: total_tokens appends sum(len(input_ids)) + batch
  (one EOS a sample) per step, tokens / sec = that window's token sum / its train time, so tokens/sec x train time
  recovers each window's exact integer token count.
[QWEN] QwenLM/Qwen README.md "Profiling of Memory and Speed" (one A100-SXM4-80G, "Pytorch 2.0", flash attention 2,
  batch 1 x 8 accumulation): LoRA (emb) and LoRA memory at 1024-8192 tokens for 7B / 14B (stored copy id 3738032153),
  1.8B rows from README_JA.md (id 61002671, as aud49e read them). fix49e landed only the 7B / 14B 256 / 512 rows.
"""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_lora_emb_audit_stop49e import _emb_spec
from tests.procurement.outside.test_outside_ranking_audit_stop48 import PEFT_FT, PEFT_LORA
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

GIB = 2.0**30
LLM_MEMORY = 0.10

# [PEFT-RES] (train time s, tokens / sec) of the full fine-tune's first twelve 250-step windows (768 cap) and the
# 512-cap run's six 500-step windows, verbatim.
FT_768_WINDOWS = (
    (90.81602771116013, 2331.295535996918),
    (90.41340426202805, 2300.488535938847),
    (91.4961106939445, 2343.27993150631),
    (89.8546926038689, 2318.5878662838986),
    (90.3596406209981, 2307.86663787969),
    (90.81503154609527, 2305.025901948283),
    (90.68820026615867, 2308.5142210956765),
    (90.44998777209548, 2296.252383398064),
    (91.58726547904371, 2346.920162707366),
    (89.29193754095468, 2306.6696240691504),
    (90.41624103189679, 2343.3953632871467),
    (90.9437831780233, 2295.165130654474),
)
CAP_512_WINDOWS = (
    (112.01070689901462, 3745.936541390501),
    (112.10970904298847, 3769.334552799188),
    (111.5118726079927, 3746.8297341645816),
    (112.06999585100493, 3719.0061160893906),
    (111.85313353802849, 3761.691663800805),
    (111.66449880098298, 3764.849209140938),
)
CAP_512_TOTAL = 2517926
FT_MAX = {"2.7.1": 37241225216 / GIB, "2.9.0": 38549848064 / GIB, "2.13.0": 38868615168 / GIB}
LORA_R64_MAX_2_7_1 = 22540189696 / GIB


def _tokens(windows) -> list[int]:
    return [round(t * r) for t, r in windows]


def _ours(spec: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)["total_per_gpu_gib"] - CUDA_CONTEXT_GIB


def _ft(longest: int) -> dict:
    return PEFT_FT | {"max_seq_len": longest, "zero_grad": "set_to_none"}


def test_the_harness_logs_show_samples_past_512_tokens_but_not_how_far():
    """[PEFT-RES] the same 12,000 samples in the same order under a 768 and a 512 cap: every 2,000-sample window's
    token count agrees to within 262 tokens (0.06%), the 768-cap run always the larger, 972 tokens in all. So the
    first 12,000 samples hold at least four samples past 512 tokens (972 / 256 > 3), and the longest batch is
    somewhere in 513..768: the logs do not place it (a few near the cap or ~100 samples a few dozen tokens past
    512 give the same sum). The 768 the FIXED spec states is data.py's truncation cap, as aud49p said."""
    ft = _tokens(FT_768_WINDOWS)
    pairs = [ft[2 * i] + ft[2 * i + 1] for i in range(6)]
    cap = _tokens(CAP_512_WINDOWS)
    assert sum(cap) == CAP_512_TOTAL
    excess = [a - b for a, b in zip(pairs, cap, strict=True)]
    assert excess == [129, 158, 53, 262, 158, 212]
    assert sum(excess) == 972 and all(e > 0 for e in excess)
    assert sum(_tokens(FT_768_WINDOWS)) / 12000 == pytest.approx(
        209.9, abs=0.1
    )  # the mean the spec's seq_len is


@pytest.mark.django_db
def test_zgrad_row_lands_at_any_longest_batch_the_logs_allow():
    """The FIXED row (torch 2.7.1) is inside its bar wherever the longest batch lies in 512..768: the step phase
    (weights + bf16 states + gradients + the _foreach_sqrt temporary = 31.42 GiB with the 5% fragmentation, -9.4%)
    floors the reading below ~630 tokens; -2.0% only at the 768 cap. The label holds; the headline figure is a
    range, -9.4%..-2.0%, not -2.0%."""
    readings = {n: _ours(_ft(n)) / FT_MAX["2.7.1"] - 1 for n in (512, 600, 700, 768)}
    assert readings[512] == pytest.approx(readings[600], abs=1e-9)  # the step-phase floor
    assert readings[512] == pytest.approx(-0.094, abs=0.001)
    assert readings[768] == pytest.approx(-0.020, abs=0.001)
    assert all(abs(r) < LLM_MEMORY for r in readings.values())


@pytest.mark.django_db
@pytest.mark.parametrize("release", ["2.9.0", "2.13.0"])
def test_zgrad_held_out_reruns_at_the_cap(release):
    """Held out [PEFT-RES]: the same full fine-tune rerun on torch 2.9.0 / 2.13.0 (same data, 4,198,051 tokens),
    cuda_memory_max 35.90 / 36.20 GiB; ours with zero_grad set_to_none at the 768 cap 33.97 GiB: -5.4% / -6.2%."""
    assert abs(_ours(_ft(768)) / FT_MAX[release] - 1) < LLM_MEMORY


@pytest.mark.django_db
@pytest.mark.parametrize("release", ["2.9.0", "2.13.0"])
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud49z): at a longest batch of 600 tokens (inside the 513..768 the harness logs allow) ours "
        "31.42 GiB reads -12.5% / -13.2% against the torch 2.9.0 / 2.13.0 reruns' 35.90 / 36.20 GiB, so the held-out "
        "reruns land only if the longest batch is >= ~690 tokens. Ruled out: the eval generation (batch 50 x <= 800 "
        "tokens x 112 KiB = 4.27 GiB of KV cache) runs right after a step whose freed 5.98 GiB _foreach_sqrt "
        "segments are still reserved (run.py empties the cache after the eval block), so it need not grow the "
        "reserve. Lead: the longest batch's token count (one tokenizer pass over the 20,000 samples seen: "
        "seed 0, BucketIterator) or a per-phase max_memory_reserved; until then the 768 cap is an upper bound."
    ),
)
def test_zgrad_held_out_reruns_at_a_600_token_longest_batch(release):
    assert abs(_ours(_ft(600)) / FT_MAX[release] - 1) < LLM_MEMORY


@pytest.mark.django_db
def test_zgrad_leaves_adapter_runs_where_they_were():
    """Scope: on a LoRA run the rule counts all adapter gradients as 'first' (conservative), so set_to_none moves
    nothing there: the PEFT LoRA r64 sibling reads the same either way at every length (19.03 GiB at 768, -9.3% of
    its 20.99 GiB)."""
    for n in (512, 768):
        base = PEFT_LORA | {"max_seq_len": n}
        assert _ours(base | {"zero_grad": "set_to_none"}) == pytest.approx(_ours(base), abs=1e-9)
    assert abs(_ours(PEFT_LORA | {"max_seq_len": 768}) / LORA_R64_MAX_2_7_1 - 1) < LLM_MEMORY


# [QWEN] held out: LoRA (emb) and LoRA memory (G, read as GiB) at the lengths fix49e did not land.
QWEN_EMB_HELD_OUT = {
    ("7b", 1024): (35.2, 21.5),
    ("7b", 2048): (35.1, 23.8),
    ("7b", 4096): (39.2, 29.7),
    ("7b", 8192): (48.5, 36.6),
    ("14b", 1024): (51.5, 35.3),
    ("14b", 2048): (54.1, 37.4),
    ("14b", 4096): (56.8, 42.5),
    ("14b", 8192): (67.7, 55.2),
    ("1.8b", 256): (13.7, 6.7),
    ("1.8b", 512): (14.0, 7.4),
    ("1.8b", 1024): (14.0, 8.4),
    ("1.8b", 2048): (15.1, 11.0),
    ("1.8b", 4096): (19.7, 16.2),
    ("1.8b", 8192): (27.7, 21.8),
}


def _total(spec: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)["total_per_gpu_gib"]


@pytest.mark.parametrize("key", list(QWEN_EMB_HELD_OUT))
def test_fix49e_copies_delta_on_held_out_qwen_rows(key):
    """The copies' cost alone (LoRA (emb) less LoRA, ours vs the README's) anchored on the published LoRA sibling:
    published LoRA + ours (emb - LoRA) within 11% of the published LoRA (emb) on all 14 held-out rows (worst 1.8B
    2048, +10.8%). The README's delta shrinks with length (7B 13.6 G at 256 -> 9.5 at 4k) as the max(activations,
    step transient) rule predicts (ours 13.6 -> 11.0)."""
    size, seq = key
    emb_pub, lora_pub = QWEN_EMB_HELD_OUT[key]
    delta = _total(_emb_spec(size, seq)) - _total(qwen_lora_spec(MODELS[size], seq, 1))
    assert abs((lora_pub + delta) / emb_pub - 1) < 0.11, delta


# qwenmem (stop 50): the long-sequence term the reason below named was Qwen-1's loss under autocast (cross_entropy
# shifted_autocast, 12 B x V a token against the default 4), now stated by qwen_lora_spec: of the 9 LoRA (emb) strict
# xfails (1.8B 512-8k, 7B / 14B 4k / 8k; 1.8B 256 already passed at -9.97%) seven pass; 1.8B 512 / 1024 stay (the
# LoRA (emb) peak there is the optimizer step's, which the loss term does not reach, and the 1.8B's LoRA rows still
# miss by 1.2-3.2 GiB not proportional to length, test_outside_qwen_lora_memory_stop50.py).
QWEN_EMB_ABSOLUTE_MISS = (
    "UNEXPLAINED (aud49z; qwenmem), inherited from the LoRA sibling, not the copies: [QWEN] {size} {seq} LoRA (emb) "
    "{pub} G, ours {ours:.2f} GiB ({gap:+.1%}); the same README's LoRA row at this length reads {lora_gap:+.1%} in "
    "ours, while the copies' delta lands (test_fix49e_copies_delta_on_held_out_qwen_rows). The long-sequence term "
    "is landed (cross_entropy shifted_autocast). What is left is not fixed (fix50q corrects qwenmem's reading; "
    "fix50q2's numbers, the loss chain and the recomputed block summed): the 1.8B LoRA rows miss by 1.17 / 1.37 / "
    "1.37 / 1.97 / 3.16 / 0.76 GiB from 256 to 8,192 tokens (7B 1.60 to 0.72, 14B 2.19 to 0.74 GiB, inside the "
    "bar on their larger totals), and the README's slopes imply 12.4 / 12.7 / 14.9 B x V a token (1.8B / 7B / "
    "14B, aud50q's least squares) against the 12 counted: part of it may scale with length. Leads, unsized: a "
    "fixed ~1 GiB of a one-GPU HF Trainer run (the caching allocator's reserve as the README's tool read it, CUDA "
    "/ library workspaces) plus a per-token term beyond the loss chain (test_outside_qwen_lora_memory_stop50.py "
    "QWEN_1_8B_SHORT_MISS)."
)


def _absolute_params():
    out = []
    for (size, seq), (pub, lora_pub) in QWEN_EMB_HELD_OUT.items():
        ours = _total(_emb_spec(size, seq))
        gap = ours / pub - 1
        marks = ()
        if abs(gap) >= LLM_MEMORY:
            lora_gap = _total(qwen_lora_spec(MODELS[size], seq, 1)) / lora_pub - 1
            reason = QWEN_EMB_ABSOLUTE_MISS.format(
                size=size, seq=seq, pub=pub, ours=ours, gap=gap, lora_gap=lora_gap
            )
            marks = (pytest.mark.xfail(strict=True, reason=reason),)
        out.append(pytest.param(size, seq, pub, marks=marks, id=f"{size}-{seq}"))
    return out


@pytest.mark.parametrize(("size", "seq", "pub"), _absolute_params())
def test_fix49e_held_out_qwen_lora_emb_memory(size, seq, pub):
    """[QWEN] LoRA (emb) memory at the held-out lengths, bar 10%: 7B 1k / 2k -7.5 / -4.9%, 14B 1k / 2k -2.8 /
    -6.9% pass; qwenmem (Qwen-1's loss under autocast stated): 7B 4k / 8k -3.4 / -3.4%, 14B 4k / 8k -2.8 / -4.1%,
    1.8B 256 / 2k / 4k / 8k -10.0 (-9.97) / -3.9 / -6.0 / -4.3% pass; 1.8B 512 / 1024 (-11.9 / -10.6%) miss with
    their LoRA siblings (strict xfails, reasons computed)."""
    assert abs(_total(_emb_spec(size, seq)) / pub - 1) < LLM_MEMORY
