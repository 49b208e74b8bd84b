"""Outside audit aud51w: issue 26 item 7, LoRA / QLoRA on the 12 / 16 GB GeForce cards (`cards`' catalog rows).

Sources (tests/ and procurement/ grepped for each source and figure first; the 12 / 16 / 8 GB rows are used by no
test, only quoted in test_outside_recommendations_x26d.py's header and aud51p's "Not kept"):
  [UNSLOTH] unslothai/unsloth @e3162dc5bf88bf4c2b598c74cbcaba0706c4067b README.md "Llama 3.1 (8B) max. context
            length": "4bit QLoRA on all linear layers (Q, K, V, O, gate, up and down) with rank = 32 with a batch
            size of 1. We padded all sequences to a certain maximum sequence length"; column "Hugging Face + FA2":
            8 GB OOM, 12 GB 932, 16 GB 2,551 (24 GB 5,789 and up used elsewhere). Spec as the x26d module states
            that stack (cross_entropy huggingface, full checkpointing, bf16).
  [4080SMI] a captured `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv` line, "NVIDIA GeForce
            RTX 4080, 16376 MiB, 595.84" (find_string id 63491698180; the same 16376 MiB in ids 59806149860,
            61212205178, 62539246501, 54004310074).
Bar: LLM memory 10% (rules). A max-context row is a memory figure: the product's peak at the stated context is
judged against the card's usable memory (capacity_gib), and the stated context must fit the card (and the next
row's must not fit the smaller card).
Observation used in the reasons: the README's HF + FA2 column is one straight line in GiB, 12 GiB at 932 plus
2,653 KB a token (12 -> 16 -> 24 -> 40 -> 80 GiB all on it: (80 - 12) GiB / (28,454 - 932) = 2,653,138 B), i.e.
9.70 GiB at zero tokens; the product's line is 7.49 GiB plus 2,336,947 B a token (-11.9% a token, -2.21 GiB fixed).
"""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.validation import Case, _max_context

MEMORY = 0.10
GIB = 2**30
SIXTEEN_GB_CARDS = ("rtx-4080", "rtx-4070-ti-super", "rtx-4060-ti-16gb")


def unsloth_hf_qlora(seq: int):
    return parse_workload_spec(
        {
            "task": "qlora",
            "model": {"preset": "llama-3.1-8b"},
            "precision": "bf16",
            "lora": {"rank": 32, "targets": "all-linear"},
            "micro_batch_size": 1,
            "seq_len": seq,
            "gradient_checkpointing": "full",
            "parallelism": {"gpus": 1},
            "training_tokens": 1e7,
            "cross_entropy": "huggingface",
        }
    )


def _peak(seq: int) -> float:
    return memory_breakdown_scalar(unsloth_hf_qlora(seq))["total_per_gpu_gib"]


def _verdicts(seq: int, cards) -> dict:
    report = size_workload(unsloth_hf_qlora(seq), [gpu_by_slug(card) for card in cards], [1])
    return {row["gpu"]: row["verdict"] for row in report["candidates"]}


def _err(ours: float, published: float) -> float:
    return (ours - published) / published


# ---- 1. 12 GB row: 932 tokens on the RTX 3060 12GB --------------------------------------------------------------
def test_unsloth_hf_932_tokens_fit_the_rtx_3060():
    # product: 9.52 GiB, 'fits' (79% of 12.0 GiB)
    assert _verdicts(932, ["rtx-3060"]) == {"rtx-3060": "fits"}


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51w): [UNSLOTH] HF + FA2 fits only 932 tokens in 12 GB: the peak there is the card's "
    "12.0 GiB; ours 9.52 GiB (-20.7%), so validation._max_context reads 2,063 tokens on the rtx-3060 (+121%). "
    "Of the 2.48 GiB: 2.21 fixed (the README's line is 9.70 GiB at zero tokens, ours 7.49) and 0.27 per token "
    "(2,653 KB a token published vs 2,337 KB). Lead, sized not located: peft's prepare_model_for_kbit_training "
    "(which TRL's SFTTrainer calls on a 4-bit model) casts the bf16 embeddings and head to fp32 (peft v0.5.0 "
    "other.py:98-101, already cited in bytes_model for modules_to_save copies only): 2 x 525.3M x 2 B = 1.96 GiB, "
    "79% of the gap; the README does not publish the HF script, so (a) is not established. kbit: the cast is now "
    "a spec field (quantization.prepare_kbit: 11.57 GiB here, -3.6%), not stated on this row: no HF script is "
    "published, and TRL's SFTTrainer under bf16 casts embed_tokens / lm_head back to bf16 after it (trl v0.9.6 "
    "sft_trainer.py 240 then 272 peft_module_casting_to_bf16, utils.py 765-772; artidoro/qlora qlora.py 402-405 "
    "the same), so the lead holds only for a stack that does not recast.",
)
def test_unsloth_hf_12gb_peak_at_932_tokens_within_10_percent():
    assert abs(_err(_peak(932), gpu_by_slug("rtx-3060").capacity_gib)) < MEMORY


# ---- 2. 16 GB row: 2,551 tokens on the three 16 GB cards ---------------------------------------------------------
def test_unsloth_hf_2551_tokens_fit_every_16gb_card_and_not_the_12gb_one():
    # product 13.04 GiB: all three 'fits' (81.5%; rtx-4080 restated by kbit: 'tight', 87.5% of its decimal 14.90
    # -> 'fits', 81.5% of its driver 15.99), rtx-3060 does_not_fit
    verdicts = _verdicts(2551, (*SIXTEEN_GB_CARDS, "rtx-3060"))
    assert verdicts["rtx-3060"] == "does_not_fit"
    assert all(verdicts[card] in ("fits", "tight") for card in SIXTEEN_GB_CARDS), verdicts


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51w): [UNSLOTH] HF + FA2 fits only 2,551 tokens in 16 GB; ours 13.04 GiB against the "
    "rtx-4070-ti-super's 15.99 GiB (-18.5%; rtx-4060-ti-16gb the same; rtx-4080 -12.5% on its decimal 14.90 "
    "before kbit, -18.5% on its driver 15.99 after). _max_context reads 3,903 tokens on the 4070 Ti SUPER / "
    "4060 Ti (+53%), and on the 4080 3,391 (+33%) before kbit, 3,903 after. Same 2.21 GiB fixed + 12% a token "
    "as the 12 GB row; the peft fp32 cast lead (1.96 GiB) would be 66% of 2.95 (stated: 15.10 GiB, -5.6%; not "
    "stated, see the 12 GB row: TRL / qlora.py under bf16 cast the table and head back).",
)
def test_unsloth_hf_16gb_peak_at_2551_tokens_within_10_percent():
    for card in SIXTEEN_GB_CARDS:
        assert abs(_err(_peak(2551), gpu_by_slug(card).capacity_gib)) < MEMORY, card


def test_unsloth_hf_16gb_row_as_max_context_on_the_4070_ti_super_documents_the_overshoot():
    # the same gap read as a context (not a second judgment): ours 3,903 tokens where 2,551 is the limit
    ours = _max_context(unsloth_hf_qlora(2551), Case({}, "max_context", "rtx-4070-ti-super"))
    assert ours == pytest.approx(3903, abs=16)


# ---- 3. 8 GB row: HF + FA2 OOM at any length ---------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud51w): [UNSLOTH] HF + FA2 runs out of memory in 8 GB (the line puts its zero-token "
    "peak at 9.70 GiB); ours at 16 tokens is 7.52 GiB, under 8 GiB, so an 8 GB card would be told ~220 tokens "
    "fit. The fixed 2.21 GiB of the 12 GB row; the peft fp32-cast lead would put ours at 9.48 GiB (OOM, as "
    "published), unconfirmed for this run (kbit: quantization.prepare_kbit gives 9.58 GiB; not stated, the "
    "12 GB row says why).",
)
def test_unsloth_hf_8gb_row_is_out_of_memory():
    assert _peak(16) > 8.0


# ---- 4. the line's slope between the two new rows -----------------------------------------------------------------
def test_unsloth_hf_per_token_growth_12_to_16gb_within_10_percent_on_the_readme_gb_basis():
    # 16 - 12 = 4 GB over 2,551 - 932 = 1,619 tokens. Read as 10^9 B (the README writes "GB"): 2,470,661 B a token,
    # ours 2,336,947 (-5.4%, passes). Read as GiB: 2,653,138 B (-11.9%, would miss): the basis is not stated, so
    # the pass is on the README's own unit; the fixed-part misses above are what a buyer meets either way.
    ours = (_peak(2551) - _peak(932)) * GIB / (2551 - 932)
    assert abs(_err(ours, 4e9 / 1619)) < MEMORY


# ---- 5. the RTX 4080's capacity -----------------------------------------------------------------------------------
def test_rtx_4080_capacity_within_10_percent_of_the_driver_figure():
    # [4080SMI] 16,376 MiB = 15.99 GiB. Restated (kbit): before, the catalog's decimal fallback 16e9 B = 14.90 GiB
    # (-6.8%, inside the bar, costing the 4080 512 tokens of this workload: 3,391 vs the 4070 Ti SUPER's 3,903);
    # after, gpu_specs.csv memory_capacity_mib 16,376 with this line as its source: 15.99 GiB (0.0%), and the
    # 4080 reads 3,903 tokens as the 4070 Ti SUPER does. Pinned exactly so a lost figure fails here.
    assert gpu_by_slug("rtx-4080").capacity_gib == pytest.approx(16376 / 1024)
    ours = _max_context(unsloth_hf_qlora(2551), Case({}, "max_context", "rtx-4080"))
    assert ours == pytest.approx(3903, abs=16)
