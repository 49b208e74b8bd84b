"""Eager attention in language-model training (flash_attention false): the scores' bytes a trained token
(throughput.eager_score_seconds_per_token, fix50a, stop 50), checked by hand."""

from __future__ import annotations

import pytest

from procurement.sizing.spec import parse_workload_spec
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


def test_it_charges_bert_larges_scores_at_56_bytes_an_element():
    """24 layers x 16 heads x 384 keys = 147,456 score elements a token; 24 B forward + 32 B backward under
    autocast (image_model.EAGER_SCORE_TRAINING_*_BYTES) = 8.258 MB; at 0.70 x 2,039 GB/s (A100 80GB) 5.786 us."""
    seconds = float(eager_score_seconds_per_token(parse_workload_spec(BERT_SQUAD), 2039.0))
    assert seconds == pytest.approx(24 * 16 * 384 * 56 / (0.70 * 2039e9), rel=1e-9)
    assert seconds == pytest.approx(5.786e-6, rel=1e-3)


def test_it_replays_the_forward_under_full_recomputation_and_uses_4_byte_passes_in_fp32():
    full = parse_workload_spec(BERT_SQUAD | {"gradient_checkpointing": "full"})
    assert float(eager_score_seconds_per_token(full, 2039.0)) == pytest.approx(
        24 * 16 * 384 * (2 * 24 + 32) / (0.70 * 2039e9), rel=1e-9
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
