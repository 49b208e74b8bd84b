"""training_stack gpt_neox (neox, stop 50): the GPT-NeoX stack's A100 pretraining rate, e / (1 + k / d_model) with
MPT's k (training_width_k_ampere 621) and the stack's own e (training_width_peak_ampere_gpt_neox 0.524, fitted on
Llemma 7B's published A100 hours; the fit and held-out rows are tests/procurement/outside/
test_outside_gpt_neox_stack_stop50.py). Where it applies, and that every other spec keeps its figure."""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import MFU_PRETRAIN_AMPERE
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.mfu import default_mfu, estimate_mfu, width_text
from procurement.sizing.spec import TRAINING_STACKS, parse_workload_spec

PYTHIA_1B = {
    "name": "pythia-1b",
    "num_layers": 16,
    "hidden_size": 2048,
    "num_attention_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 50304,
    "gated_mlp": False,
}


def spec(stack: str = "gpt_neox", **extra):
    document = {
        "task": "pretrain",
        "model": PYTHIA_1B,
        "seq_len": 2048,
        "micro_batch_size": 16,
        "parallelism": {"gpus": 64, "zero_stage": 1},
        "training_stack": stack,
    }
    return parse_workload_spec(document | extra)


def test_it_is_added_after_the_existing_stacks():
    assert TRAINING_STACKS == ("other", "megatron", "maxtext", "torchtitan", "llm_c", "gpt_neox")


@pytest.mark.parametrize("slug", ["a100-sxm4-40gb", "a100-sxm4-80gb"])
def test_it_sets_an_a100_pretrain_at_the_stacks_width_rate(slug):
    """Hand: 0.524 / (1 + 621 / 2,048) = 0.524 / 1.30322 = 0.40208; the unstated stack keeps LLaMA-1's 0.51."""
    gpu = gpu_by_slug(slug)
    assert default_mfu(spec(), gpu) == pytest.approx(0.40208, abs=1e-5)
    assert default_mfu(spec("other"), gpu) == MFU_PRETRAIN_AMPERE.value == 0.51


def test_it_says_so_in_the_speed_sentence():
    text = width_text(spec(), gpu_by_slug("a100-sxm4-40gb"))
    assert text.startswith(
        "speed: on GPT-NeoX (training_stack gpt_neox) a 2048-wide model pretrains at 40.2%"
    )
    assert "Llemma 7B" in text and "51%" in text


@pytest.mark.parametrize(
    ("slug", "extra"),
    [
        ("h100-sxm5-80gb", {}),  # Hopper: no GPT-NeoX row fitted there
        ("a100-sxm4-40gb", {"task": "full_finetune"}),  # fitted on pretraining only
        ("a100-sxm4-40gb", {"precision": "fp32"}),  # 16-bit runs only
        ("a100-sxm4-40gb", {"mfu": 0.3}),  # a stated MFU wins
    ],
)
def test_elsewhere_it_is_sized_as_the_unstated_stack(slug, extra):
    gpu = gpu_by_slug(slug)
    neox, other = spec(**extra), spec("other", **extra)
    assert estimate_mfu(neox, gpu) == estimate_mfu(other, gpu)
    if "mfu" not in extra:
        assert "GPT-NeoX" not in width_text(neox, gpu)
