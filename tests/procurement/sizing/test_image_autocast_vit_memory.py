"""What a ViT keeps under torch.autocast (fix43v, from aud43v's FlagPerf torchvision vit_b_16 AMP row,
tests/procurement/outside/test_outside_audit_stop43v.py): eager softmax in fp32 keeps 6 bytes a score element
(its fp32 output and the fp16 copy attn @ v takes) and the fp32 residual stream keeps both pre-norms' inputs at
4 bytes (PyTorch autocast op reference: softmax and layer_norm autocast to float32). Hand figures for ViT-B/16
at 224 px: 197 tokens, 12 layers, 12 heads, width 768."""

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec

TOKENS, LAYERS, HEADS, WIDTH = 197, 12, 12, 768
SCORES = LAYERS * HEADS * TOKENS * TOKENS  # softmax elements a sample
NORM_INPUTS = LAYERS * 2 * WIDTH * TOKENS  # pre-norm inputs a sample


def _vit(precision="fp16", batch=256, **extra):
    return parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "vit-b-16"},
            "precision": precision,
            "micro_batch_size": batch,
        }
        | extra
    )


def _as_pure_16_bit(spec):
    """The same spec with 16-bit master weights (no autocast): the old byte count applies."""
    return parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "vit-b-16"},
            "precision": spec.precision,
            "micro_batch_size": spec.micro_batch_size,
            "flash_attention": spec.flash_attention,
            "master_weights_fp32": False,
        }
    )


def test_it_counts_six_bytes_a_score_and_fp32_norm_inputs_for_eager_amp_training():
    spec = _vit(flash_attention=False)
    added = im.training_activation_bytes(spec, False) - im.training_activation_bytes(
        _as_pure_16_bit(spec), False
    )
    assert added == pytest.approx(256 * (4 * SCORES + 2 * NORM_INPUTS), rel=1e-9)
    # 5.33 GiB of scores + 1.73 GiB of norm inputs at batch 256 (the audit's sizing)
    assert added / 2**30 == pytest.approx(5.33 + 1.73, abs=0.01)


def test_it_widens_only_the_norm_inputs_with_sdpa():
    spec = _vit()
    added = im.training_activation_bytes(spec, True) - im.training_activation_bytes(
        _as_pure_16_bit(spec), True
    )
    assert added == pytest.approx(256 * 2 * NORM_INPUTS, rel=1e-9)


def test_it_keeps_fp32_bf16_pure_16_bit_and_inference_counts_apart():
    assert im.autocast_vit_training(_vit("bf16"))
    assert not im.autocast_vit_training(_vit("fp32"))
    assert not im.autocast_vit_training(_as_pure_16_bit(_vit()))
    assert not im.autocast_vit_training(_inference())
    assert not im.autocast_vit_training(parse_workload_spec(_yolo()))


def _inference():
    return parse_workload_spec(
        {"task": "inference", "model": {"preset": "vit-b-16"}, "precision": "fp16", "micro_batch_size": 64}
    )


def _yolo():
    return {
        "task": "full_finetune",
        "model": {"preset": "yolov8m"},
        "precision": "fp16",
        "micro_batch_size": 16,
    }


def test_it_states_the_autocast_bytes_in_the_memory_assumptions():
    notes = im.memory_notes(_vit(flash_attention=False))
    assert any("LayerNorm inputs are kept at 4 bytes" in note for note in notes)
    assert any("6 bytes a score element" in note for note in notes)
    assert not any("score" in note for note in im.memory_notes(_vit()))
    assert im.memory_notes(_vit("fp32")) == []
