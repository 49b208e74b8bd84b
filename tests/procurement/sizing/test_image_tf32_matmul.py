"""`image.tf32_matmul`: an fp32 image network whose matmuls run on TF32 tensor cores, as NVIDIA's NGC PyTorch
containers (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) and PyTorch 1.7-1.11 (torch.backends.cuda.matmul.allow_tf32
True by default) run them. The default, false, is upstream PyTorch >= 1.12's and changes nothing."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import spec_peak_tflops
from procurement.sizing.image_knobs import IMAGE_KNOB_DEFAULTS, image_knob_value
from procurement.views.sizing_image_fields import image_form_fields


def _spec(precision: str = "fp32", **image) -> object:
    return parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": "sd-1.5"},
            "precision": precision,
            "micro_batch_size": 8,
            "image": {"steps": 30} | image,
        }
    )


def test_the_default_keeps_the_matmuls_on_the_cuda_cores():
    default, stated = _spec(), _spec(tf32_matmul=False)
    assert default.image.tf32_matmul is False
    a100 = gpu_by_slug("a100-sxm4-40gb")
    assert spec_peak_tflops(default, a100) == spec_peak_tflops(stated, a100) < 100.0


def test_stated_every_flop_runs_at_the_tf32_peak_on_an_a100():
    # A100 TF32 dense 156 TFLOPS (A100 datasheet): convolutions and matmuls alike
    assert spec_peak_tflops(_spec(tf32_matmul=True), gpu_by_slug("a100-sxm4-40gb")) == pytest.approx(156.0)


def test_a_volta_card_has_no_tf32_and_is_unchanged():
    v100 = gpu_by_slug("v100-sxm2-16gb")
    assert spec_peak_tflops(_spec(tf32_matmul=True), v100) == spec_peak_tflops(_spec(), v100)


def test_sixteen_bit_generations_are_unchanged():
    a100 = gpu_by_slug("a100-sxm4-40gb")
    assert spec_peak_tflops(_spec("fp16", tf32_matmul=True), a100) == spec_peak_tflops(_spec("fp16"), a100)


def test_lambda_diffusers_fp32_run_in_an_ngc_container():
    """LambdaLabsML/lambda-diffusers benchmarks/benchmark.csv (commit 8571d8d4; scripts/Dockerfile FROM
    nvcr.io/nvidia/pytorch:22.11-py3), SD 1.4, A100-SXM4-40GB, 'single', 8 images, 30 steps: 10.16 s. With
    the container's TF32 matmuls stated the product says 9.36 s (-7.9%); without, 21.01 s (+107%). The
    outside test of the same row (test_outside_image_workloads_6) sizes the spec without the field."""
    a100 = gpu_by_slug("a100-sxm4-40gb")

    def seconds(spec) -> float:
        peak = spec_peak_tflops(spec, a100) * 1e12
        per_image = im.inference_seconds_per_image(
            spec, peak, a100.memory_bandwidth_gbps * 1e9, a100.generation
        )
        return 8 * float(per_image)

    stated = _spec(runtime="pytorch-2.0", tf32_matmul=True)
    assert seconds(stated) == pytest.approx(10.16, rel=0.10)
    assert seconds(_spec(runtime="pytorch-2.0")) > 2 * seconds(stated)


def test_the_summary_shows_it_for_fp32_only():
    assert im.image_summary(_spec(tf32_matmul=True))["tf32_matmul"] is True
    assert "tf32_matmul" not in im.image_summary(_spec("fp16"))


def test_the_form_has_a_box_for_it():
    (field,) = [f for f in image_form_fields(IMAGE_KNOB_DEFAULTS, {}) if f["name"] == "tf32_matmul"]
    assert field["kind"] == "checkbox" and field["value"] == "false"
    assert image_knob_value("tf32_matmul", "true") is True
    assert image_knob_value("tf32_matmul", "false") is None  # the default: left out of the document
