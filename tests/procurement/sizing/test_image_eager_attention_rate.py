"""The measured eager ViT attention rate (vit45c, issue 29): image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD,
xformers' A100 fp16 eager-attention benchmark (facebookresearch/xformers PR #530 'A100 fw', 197 tokens, 1,024 heads
of width 64: 1,768.7 us). It prices an eager 16-bit ViT's attention at an unaligned token count on the A100 only;
aligned counts, fused or SDPA attention, fp32, other cards and unmeasured lengths keep the counted cost."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec


def _vit(preset="vit-b-16", px=224, batch=64, precision="fp16", flash=False, task="inference") -> object:
    return parse_workload_spec(
        {
            "task": task,
            "model": {"preset": preset},
            "precision": precision,
            "micro_batch_size": batch,
            "image": {"resolution_px": px},
            "flash_attention": flash,
        }
    )


def _excess(spec, slug: str) -> float:
    gpu = gpu_by_slug(slug)
    peak, bandwidth = gpu.dense_tflops(spec.precision) * 1e12, gpu.memory_bandwidth_gbps * 1e9
    return float(
        image_model.eager_attention_excess_seconds_per_image(spec, peak, bandwidth, gpu.generation, 0.6)
    )


def test_the_table_holds_the_measured_figure():
    assert image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD[("a100", 197, 64)] == pytest.approx(
        1.727e-6, rel=1e-3
    )


@pytest.mark.parametrize("slug", ["a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "a800-pcie-80gb"])
def test_vit_b_at_197_tokens_on_an_a100_pays_the_measured_rate(slug):
    # 144 heads at 1.727 us = 0.249 ms an image, less the counted GEMMs and score passes
    assert 0.15e-3 < _excess(_vit(), slug) < 0.249e-3


@pytest.mark.parametrize("slug", ["h100-sxm5-80gb", "l40s", "t4", "a10", "rtx-3090"])
def test_other_cards_are_unmeasured_and_unchanged(slug):
    try:
        gpu_by_slug(slug)
    except KeyError:
        pytest.skip(f"{slug} not in the bundled catalog")
    assert _excess(_vit(), slug) == 0.0
    note = image_model.eager_attention_rate_note(_vit(), gpu_by_slug(slug).generation, 1e12)
    assert "is for the A100 only" in note


@pytest.mark.parametrize(
    "spec",
    [
        _vit(flash=True),  # SDPA
        _vit(precision="fp32"),  # not measured in fp32
        _vit(preset="vit-l-16", px=384),  # 577 tokens: unaligned but not near 197, unmeasured
        _vit(px=256),  # 257 tokens: unmeasured
    ],
    ids=["sdpa", "fp32", "vit-l-384", "vit-b-256px"],
)
def test_specs_the_table_does_not_cover_keep_the_counted_cost(spec):
    assert _excess(spec, "a100-sxm4-40gb") == 0.0


def test_an_aligned_count_keeps_the_counted_cost(monkeypatch):
    monkeypatch.setattr(image_model, "vit_tokens", lambda spec: 256)
    assert image_model.eager_attention_measured_seconds_per_head(_vit()) is None
    assert image_model.eager_attention_rate_note(_vit(), 80, 1.555e12) is None


def test_only_the_measured_length_takes_the_measured_rate(monkeypatch):
    """aud45v: a window of nearby unaligned counts mixed alignment classes (197 odd, 196 a multiple of 4) with
    nothing measured between them, so only 197 itself takes xformers' rate; 196 keeps the counted cost."""
    assert image_model.eager_attention_measured_seconds_per_head(_vit()) == pytest.approx(1768.7e-6 / 1024)
    monkeypatch.setattr(image_model, "vit_tokens", lambda spec: 196)
    assert image_model.eager_attention_measured_seconds_per_head(_vit()) is None


def test_the_answer_states_the_rate_and_when_it_is_skipped():
    applied = image_model.eager_attention_rate_note(_vit(), 80, 1.555e12)
    assert "1.73 us a head" in applied and "144 heads an image" in applied
    training = image_model.eager_attention_rate_note(_vit(task="full_finetune"), 80, 1.555e12)
    assert "backward's GEMMs keep their counted cost" in training
    unmeasured = image_model.eager_attention_rate_note(_vit(preset="vit-l-16", px=384), 80, 1.555e12)
    assert "577 tokens" in unmeasured and "does not cover this length" in unmeasured
