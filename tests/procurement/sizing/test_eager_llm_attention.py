"""Eager attention in language-model training (flash_attention false, or a card without FlashAttention): the
scores' bytes a trained token (throughput.eager_score_seconds_per_token, fix50a; by mixed_precision and the
model's dropout, and charged on the pre-Ampere fallback, fix50e, stop 50), checked by hand."""

from __future__ import annotations

import pytest

from procurement.sizing.image_model import eager_score_training_bytes
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import eager_score_seconds_per_token
from procurement.sizing.validation import BERT_LARGE

BERT_SQUAD = {
    "task": "full_finetune",
    "model": dict(BERT_LARGE),
    "precision": "fp16",
    "micro_batch_size": 32,
    "seq_len": 384,
    "flash_attention": False,
}


NO_DROPOUT = BERT_SQUAD | {"model": BERT_LARGE | {"dropout": False}}


def test_it_charges_bert_larges_scores_by_the_stacks_code():
    """24 layers x 16 heads x 384 keys = 147,456 score elements a token. Under autocast (the default) BERT's
    attention (transformers' BertSelfAttention: the fp32 extended mask promotes the scores) moves 37 + 45 = 82 B an
    element, 12.09 MB a token, 8.47 us at 0.70 x 2,039 GB/s (A100 80GB); with the model cast to fp16 (half_model:
    DeepLearningExamples' modeling.py under apex O2) 21 + 23 = 44 B, 6.49 MB, 4.546 us (aud50e's counts)."""
    autocast = float(eager_score_seconds_per_token(parse_workload_spec(BERT_SQUAD), 2039.0))
    assert autocast == pytest.approx(24 * 16 * 384 * 82 / (0.70 * 2039e9), rel=1e-9)
    assert autocast == pytest.approx(8.472e-6, rel=1e-3)
    half = parse_workload_spec(BERT_SQUAD | {"mixed_precision": "half_model"})
    assert float(eager_score_seconds_per_token(half, 2039.0)) == pytest.approx(4.546e-6, rel=1e-3)


def test_it_keeps_the_diffusers_count_for_a_model_without_dropout():
    """No dropout, autocast: 24 + 32 = 56 B (diffusers' get_attention_scores, unchanged from fix50a); half_model:
    the same ops in 16 bits, 8 + 14 = 22 B (30 B with full recomputation, aud50e's GPT-NeoX count)."""
    assert eager_score_training_bytes(parse_workload_spec(NO_DROPOUT)) == 56.0
    half = NO_DROPOUT | {"mixed_precision": "half_model"}
    assert eager_score_training_bytes(parse_workload_spec(half)) == 22.0
    assert eager_score_training_bytes(parse_workload_spec(half | {"gradient_checkpointing": "full"})) == 30.0


def test_it_reads_autocast_by_default_and_refuses_an_unknown_style():
    assert parse_workload_spec(BERT_SQUAD).mixed_precision == "autocast"
    with pytest.raises(WorkloadSpecError, match="mixed_precision"):
        parse_workload_spec(BERT_SQUAD | {"mixed_precision": "apex_o2"})


def test_it_charges_the_pre_ampere_fallback_to_eager_attention():
    """flash_attention true on a card without FlashAttention (V100, T4): the card runs eager attention
    (compatibility warns) and the rows pay the same bytes as flash_attention false; rows that run it pay none."""
    flash = parse_workload_spec(BERT_SQUAD | {"flash_attention": True})
    eager = float(eager_score_seconds_per_token(parse_workload_spec(BERT_SQUAD), 900.0))
    rows = eager_score_seconds_per_token(flash, [900.0, 2039.0], flash_capable=[False, True])
    assert rows.tolist() == [pytest.approx(eager, rel=1e-12), 0.0]


def test_it_replays_the_forward_under_full_recomputation_and_uses_4_byte_passes_in_fp32():
    full = parse_workload_spec(BERT_SQUAD | {"gradient_checkpointing": "full"})
    assert float(eager_score_seconds_per_token(full, 2039.0)) == pytest.approx(
        24 * 16 * 384 * (2 * 37 + 45) / (0.70 * 2039e9), rel=1e-9
    )
    fp32 = parse_workload_spec(BERT_SQUAD | {"precision": "fp32"})
    assert float(eager_score_seconds_per_token(fp32, 2039.0)) == pytest.approx(
        24 * 16 * 384 * 4 * (4 + 7) / (0.70 * 2039e9), rel=1e-9
    )


def test_it_charges_nothing_with_flash_attention_serving_or_no_bandwidth():
    assert (
        float(
            eager_score_seconds_per_token(parse_workload_spec(BERT_SQUAD | {"flash_attention": True}), 2039.0)
        )
        == 0
    )
    assert float(eager_score_seconds_per_token(parse_workload_spec(BERT_SQUAD), None)) == 0
