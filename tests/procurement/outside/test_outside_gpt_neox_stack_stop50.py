"""Issue 26 class 7 (neox, stop 50): `training_stack: gpt_neox`, the GPT-NeoX stack's A100 pretraining rate, its fit
row and its held-out rows, sized on the publisher's own GPU (`size_spec_document`, calibration off) with aud48r's
helpers.

The rate (procurement/sizing/assumptions.py training_width_peak_ampere_gpt_neox) is e / (1 + k / d_model): MPT's
width shape (training_width_k_ampere, 621, fitted on llm-foundry's A100 sweep) with an e of this stack's own, fitted
on one published run, [LLEMMA7B]. The brief's intended fit source, the Pythia paper's GPU-hour appendix (Biderman
et al. 2023, arXiv:2304.01373 Appendix D; EleutherAI/pythia issue #87 "Found report in Appendix D"), could not be
read from here (pages, docs, code searched for the paper, its HTML and its figures), so the Pythia-1B row is held
out, not a fit row.

Sources:
  [LLEMMA7B]  EleutherAI/math-lm @9575d138bc0ca06fce07d6537b05854339ec2b62 blog/main.md: "We trained Llemma 7B for
              200B tokens and Llemma 34B for 50B tokens. This amounts to 23,000 A100 hours for Llemma 7B and 47,000
              A100 hours for the 34B. Our training stack is built on ... GPT-NeoX ... and FlashAttention-2"; the paper
              (Azerbayev et al. 2023, via ri.k117.org's and zhangtemplar.github.io's quotes): "bfloat16 mixed
              precision using the GPT-NeoX library ... across 256 A100 40GB GPUs". Config (same repository @e4f8ee6,
              pretraining/llemma_7b.yml, "a cleaned-up version of the config file used to train Llemma-7b"):
              model_parallel_size 2, pipe_parallel_size 0, 32 layers, hidden 4,096, 32 heads, seq 4,096, llama MLP,
              ZeRO stage 1, train_micro_batch_size_per_gpu 4, gradient_accumulation_steps 2 (128 data-parallel
              ranks: 1,024 sequences, "a batch size of 4M tokens"), checkpoint_activations true, bf16, flash
              attention. Code Llama 7B's shape (intermediate 11,008, vocabulary 32,016). 200e9 / (23,000 x 3,600)
              = 2,415.5 tokens/s a GPU.
  [LLEMMA34B] same sources, pretraining/llemma_34b.yml: model_parallel_size 8, 48 layers, hidden 8,192, 64 heads,
              num_kv_heads 8, seq 4,096, micro-batch 2 x 16 accumulation (32 data-parallel ranks), ZeRO stage 1,
              checkpoint_activations true, bf16, flash; Code Llama 34B's intermediate 22,016, vocabulary 32,000.
              50e9 / (47,000 x 3,600) = 295.5 tokens/s a GPU.
  [NEOX20B]   GPT-NeoX-20B (Black et al. 2022, arXiv:2204.06745), as its config ran it: EleutherAI/gpt-neox
              @ea7aefd8f8e183256992d9fede4d7c71a46d67a5 configs/20B.yml ("as it was trained on 96x 40GB A100 GPUs"):
              pipe_parallel_size 4, model_parallel_size 2, 44 layers, hidden 6,144, 64 heads, seq 2,048,
              no_weight_tying, ZeRO stage 1, micro-batch 4 x 32 accumulation (12 data-parallel ranks: 1,536
              sequences), checkpoint_activations true, fp16, train_iters 150,000; vocabulary padded to 50,432 (the
              HF card). Duration "training time: 1,830 hours" is from a secondary summary of the paper
              (nl2code.github.io/posts/GPT-NeoX; the paper's text was not reachable here): 150,000 x 1,536 x 2,048 /
              (1,830 x 3,600 x 96) = 746.1 tokens/s a GPU.
  Pythia-1B and StableLM-3B-4E1T: test_outside_ranking_audit_stop49.py [PYTHIA1B] and
  test_outside_ranking_audit_stop50a.py [SLM3B] (now stated with training_stack gpt_neox).
"""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import (
    MFU_PRETRAIN_AMPERE,
    TRAINING_WIDTH_K_AMPERE,
    TRAINING_WIDTH_PEAK_AMPERE_GPT_NEOX,
)
from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    LLM_SPEED,
    candidate,
    err,
    tokens_per_gpu,
)

A100_40 = "a100-sxm4-40gb"


def llemma(name: str, layers: int, width: int, heads: int, kv: int, mlp: int, vocab: int) -> dict:
    return {
        "name": name,
        "num_layers": layers,
        "hidden_size": width,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "intermediate_size": mlp,
        "vocab_size": vocab,
        "gated_mlp": True,
    }


LLEMMA7B = {
    "task": "pretrain",
    "model": llemma("llemma-7b", 32, 4096, 32, 32, 11008, 32016),
    "precision": "bf16",
    "seq_len": 4096,
    "micro_batch_size": 4,
    "gradient_accumulation_steps": 2,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 256, "zero_stage": 1, "tensor_parallel": 2},
    "training_tokens": 200e9,
    "training_stack": "gpt_neox",
}
LLEMMA7B_PUBLISHED = 200e9 / (23000 * 3600)
LLEMMA34B = {
    "task": "pretrain",
    "model": llemma("llemma-34b", 48, 8192, 64, 8, 22016, 32000),
    "precision": "bf16",
    "seq_len": 4096,
    "micro_batch_size": 2,
    "gradient_accumulation_steps": 16,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 256, "zero_stage": 1, "tensor_parallel": 8},
    "training_tokens": 50e9,
    "training_stack": "gpt_neox",
}
LLEMMA34B_PUBLISHED = 50e9 / (47000 * 3600)
NEOX20B = {
    "task": "pretrain",
    "model": {
        "name": "gpt-neox-20b",
        "num_layers": 44,
        "hidden_size": 6144,
        "num_attention_heads": 64,
        "intermediate_size": 24576,
        "vocab_size": 50432,
        "gated_mlp": False,
    },
    "precision": "fp16",
    "seq_len": 2048,
    "micro_batch_size": 4,
    "gradient_accumulation_steps": 32,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 96, "zero_stage": 1, "tensor_parallel": 2, "pipeline_parallel": 4},
    "training_tokens": 150000 * 1536 * 2048,
    "training_stack": "gpt_neox",
}
NEOX20B_PUBLISHED = 150000 * 1536 * 2048 / (1830 * 3600 * 96)


def unstated(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k != "training_stack"}


def test_the_rate_is_mpt_width_shape_with_the_stacks_own_e():
    """e / (1 + 621 / d): 0.524 / 1.3032 = 0.402 at d 2,048 (Pythia-1B), 0.524 / 1.2426 = 0.422 at 2,560
    (StableLM-3B), 0.524 / 1.1516 = 0.455 at 4,096 (Llemma 7B), 0.524 / 1.1011 = 0.476 at 6,144 (GPT-NeoX-20B); all
    below mfu_pretrain_a100's 0.51 (LLaMA-1's stack), the rate an unstated A100 pretrain keeps."""
    e, k = TRAINING_WIDTH_PEAK_AMPERE_GPT_NEOX.value, TRAINING_WIDTH_K_AMPERE.value
    assert (e, k) == (0.524, 621.0)
    rates = [e / (1 + k / d) for d in (2048, 2560, 4096, 6144)]
    assert rates == [pytest.approx(r, abs=5e-4) for r in (0.4021, 0.4217, 0.4550, 0.4759)]
    assert max(rates) < MFU_PRETRAIN_AMPERE.value


@pytest.mark.django_db
def test_llemma_7b_is_the_fit_row(bundled_catalog):
    """[LLEMMA7B] the fit row: 2,415.5 tokens/s a GPU published; ours with training_stack gpt_neox 2,413.6 (-0.1%;
    e fitted to 0.5244 and rounded to 0.524), 2,694.6 (+11.6%) unstated (mfu_pretrain_a100 0.51)."""
    ours = tokens_per_gpu(candidate(LLEMMA7B, A100_40))
    assert LLEMMA7B_PUBLISHED == pytest.approx(2415.5, abs=0.1)
    assert err(ours, LLEMMA7B_PUBLISHED) == pytest.approx(-0.001, abs=0.003)
    assert err(tokens_per_gpu(candidate(unstated(LLEMMA7B), A100_40)), LLEMMA7B_PUBLISHED) == pytest.approx(
        0.116, abs=0.003
    )


@pytest.mark.django_db
def test_gpt_neox_20b_is_held_out_within_15_percent(bundled_catalog):
    """[NEOX20B] held out (TP 2 x PP 4, d 6,144): 746.1 tokens/s a GPU published (secondary duration); ours with
    training_stack gpt_neox 800.2 (+7.3%), 856.2 (+14.8%) unstated. Sized on a published run other than the fit
    row's, so the rate's width shape is checked at a third width and a pipeline plan."""
    ours = tokens_per_gpu(candidate(NEOX20B, A100_40))
    assert NEOX20B_PUBLISHED == pytest.approx(746.1, abs=0.1)
    assert abs(err(ours, NEOX20B_PUBLISHED)) <= LLM_SPEED
    assert err(ours, NEOX20B_PUBLISHED) == pytest.approx(0.073, abs=0.003)
    assert tokens_per_gpu(candidate(unstated(NEOX20B), A100_40)) == pytest.approx(856.2, rel=2e-3)


R_LLEMMA34B = (
    "UNEXPLAINED (neox, stop 50): published 295.5 tokens/s a GPU (Llemma 34B: 50B tokens in 47,000 A100 hours, 256 "
    "A100 40GB, GPT-NeoX, TP 8, ZeRO-1, micro-batch 2 of 4,096, checkpointed; EleutherAI/math-lm blog/main.md and "
    "pretraining/llemma_34b.yml), ours {ours:,.1f} ({e:+.1%}) with training_stack gpt_neox (unstated: 489.7, +65.7%). "
    "The stack's rate lands its 7B sibling (the fit row) and three held-out GPT-NeoX runs within 10%; this row would "
    "need 0.30 of the peak in the engine's count, against 0.487 for its width. Not ruled out: the 47,000 hours "
    "counting more than the 12,000 steps (restarts, the 34B's longer checkpoints), the TP 8 all-reduces of a "
    "40GB part at micro-batch 2 (the engine prices them over NVLink and hides the ZeRO-1 traffic), and the paper's "
    "own hours (the blog's figure only was read). Lead: the Llemma paper's training section and the run's "
    "wandb throughput (EleutherAI/math-lm analysis/)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_LLEMMA34B.format(ours=470.6, e=err(470.6, LLEMMA34B_PUBLISHED)))
def test_llemma_34b_tp8_a100_hours(bundled_catalog):
    ours = tokens_per_gpu(candidate(LLEMMA34B, A100_40))
    assert abs(err(ours, LLEMMA34B_PUBLISHED)) <= LLM_SPEED, (ours, LLEMMA34B_PUBLISHED)
