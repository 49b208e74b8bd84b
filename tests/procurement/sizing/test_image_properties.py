"""Hypothesis properties of the image engine: memory grows with batch and resolution, checkpointing
and cached latents never add memory, FLOPs grow linearly with steps, ZeRO sharding never hurts."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

DIFFUSION = st.sampled_from(["sd-1.5", "sdxl", "sdxl-refiner-1.0", "sd3-medium", "flux.1-schnell"])
TRAINABLE = st.sampled_from(
    ["sd-1.5", "sdxl", "sd3-medium", "flux.1-dev", "yolov8n", "yolov8m", "yolo11n", "yolo11l", "vit-b-16"]
)
SIDES = st.sampled_from([256, 384, 512, 768, 1024])


def _total(fields):
    return memory_breakdown_scalar(parse_workload_spec(fields), None)["total_per_gpu_gib"]


def _training(preset, **extra):
    task = "full_finetune" if preset.startswith("yolo") else "lora"
    return {"task": task, "model": {"preset": preset}} | extra


@settings(max_examples=40, deadline=None)
@given(TRAINABLE, st.integers(1, 8), SIDES, SIDES, st.booleans())
def test_training_memory_grows_with_batch_and_resolution(preset, batch, side_a, side_b, flash):
    small, large = sorted((side_a, side_b))
    base = _training(preset, micro_batch_size=batch, flash_attention=flash)
    assert _total(base | {"image": {"resolution_px": small}}) <= _total(
        base | {"image": {"resolution_px": large}}
    )
    bigger = base | {"micro_batch_size": batch + 1, "image": {"resolution_px": small}}
    assert _total(base | {"image": {"resolution_px": small}}) <= _total(bigger)


@settings(max_examples=30, deadline=None)
@given(TRAINABLE, st.integers(1, 4), st.booleans())
def test_checkpointing_and_cached_latents_never_add_memory(preset, batch, cached):
    base = _training(preset, micro_batch_size=batch, image={"cache_latents": cached})
    assert _total(base | {"gradient_checkpointing": "full"}) <= _total(base)
    assert _total(_training(preset, micro_batch_size=batch, image={"cache_latents": True})) <= _total(
        _training(preset, micro_batch_size=batch)
    )


@settings(max_examples=30, deadline=None)
@given(DIFFUSION, st.integers(1, 60), st.sampled_from(["cfg", "distilled"]))
def test_flops_are_linear_in_steps(preset, steps, guidance):
    def flops(n):
        return im.inference_flops_per_image(
            parse_workload_spec(
                {
                    "task": "inference",
                    "model": {"preset": preset},
                    "image": {"steps": n, "guidance": guidance},
                }
            )
        )

    per_step = flops(2) - flops(1)
    assert per_step > 0
    assert abs(flops(steps) - (flops(1) + (steps - 1) * per_step)) <= 1e-9 * flops(steps)


@settings(max_examples=30, deadline=None)
@given(TRAINABLE, st.sampled_from([2, 4, 8]), st.sampled_from([1, 2, 3]))
def test_zero_sharding_never_adds_memory(preset, gpus, stage):
    base = _training(preset, parallelism={"gpus": gpus})
    assert _total(base | {"parallelism": {"gpus": gpus, "zero_stage": stage}}) <= _total(base)


@settings(max_examples=60, deadline=None)
@given(st.floats(1.0, 1e6), st.floats(1.0, 1e6), st.floats(10.0, 5000.0), st.floats(10.0, 5000.0))
def test_work_per_kernel_efficiency_rises_with_rows_and_falls_with_the_cards_peak(rows_a, rows_b, tf_a, tf_b):
    """More rows per kernel never lower the efficiency, a faster card never raises it (its fixed per-kernel
    latency needs more work to hide), and it stays under image_peak_efficiency."""
    few, many = sorted((rows_a, rows_b))
    slow, fast = sorted((tf_a * 1e12, tf_b * 1e12))
    assert im.kernel_efficiency(few, slow) <= im.kernel_efficiency(many, slow) + 1e-12
    assert im.kernel_efficiency(few, fast) <= im.kernel_efficiency(few, slow) + 1e-12
    assert 0 < im.kernel_efficiency(many, slow) < 0.534 + 1e-12


@settings(max_examples=30, deadline=None)
@given(DIFFUSION, st.integers(1, 4), st.booleans(), st.booleans())
def test_hopper_attention_ceiling_never_speeds_a_pipeline_up(preset, batch, flash, fused):
    spec = parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": preset},
            "micro_batch_size": batch,
            "flash_attention": flash,
            "image": {"fused_kernels": fused},
        }
    )
    peak, bandwidth = 989.5e12, 3350e9
    # the generation also picks the eager host's rate (fix51a, image_model.eager_host_rate): one host for both
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(im, "eager_host_rate", lambda generation=None: 31e-6)
        hopper = im.inference_seconds_per_image(spec, peak, bandwidth, 90)
        other = im.inference_seconds_per_image(spec, peak, bandwidth, 80)
    assert hopper >= other
    if fused or not flash:
        assert hopper == other
