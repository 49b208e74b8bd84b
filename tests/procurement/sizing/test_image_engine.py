"""`image.engine`: the inference engine an image network runs under (pytorch, the default; tensorrt;
fastertransformer). The engine sets image.fused_kernels and image.tf32_matmul's defaults; fastertransformer adds
FasterTransformer's ViT kernels between its GEMMs (NVIDIA/FasterTransformer src/fastertransformer/models/vit/
ViT.cc @4c014fba) and its padded fused attention."""

import pytest

from procurement.sizing import WorkloadSpecError, gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import spec_peak_tflops
from procurement.sizing.image_knobs import IMAGE_KNOB_DEFAULTS, image_knob_applies, image_knob_value
from procurement.views.sizing_image_fields import image_form_fields


def _vit(precision: str = "fp16", task: str = "inference", preset: str = "vit-b-16", **image) -> object:
    return parse_workload_spec(
        {
            "task": task,
            "model": {"preset": preset},
            "precision": precision,
            "micro_batch_size": 32,
            "image": image,
        }
    )


def test_the_default_is_pytorch_and_changes_nothing():
    default, stated = _vit(), _vit(engine="pytorch")
    assert default.image.engine == "pytorch"
    assert default.image == stated.image
    assert default.image.fused_kernels is False and default.image.tf32_matmul is False
    assert "engine" not in im.image_summary(default)


def test_tensorrt_is_fused_and_runs_fp32_in_tf32_unless_told():
    spec = _vit("fp32", engine="tensorrt")
    assert spec.image.fused_kernels is True and spec.image.tf32_matmul is True
    assert _vit("fp32", engine="tensorrt", tf32_matmul=False).image.tf32_matmul is False  # trtexec --noTF32
    assert _vit("fp32", fused_kernels=True).image.tf32_matmul is False  # no engine named: PyTorch's default
    # A100 TF32 dense 156 TFLOPS (A100 datasheet) for every FLOP of the engine
    assert spec_peak_tflops(spec, gpu_by_slug("a100-sxm4-40gb")) == pytest.approx(156.0)
    assert im.image_summary(spec)["engine"] == "tensorrt"


def test_a_fused_engine_stated_unfused_is_refused():
    with pytest.raises(WorkloadSpecError) as caught:
        _vit(engine="tensorrt", fused_kernels=False)
    assert "image.fused_kernels" in str(caught.value)


def test_engines_are_for_inference_and_fastertransformer_for_vits():
    with pytest.raises(WorkloadSpecError) as caught:
        _vit(task="full_finetune", engine="tensorrt", epochs=1, dataset_images=1000)
    assert "image.engine" in str(caught.value)
    with pytest.raises(WorkloadSpecError) as caught:
        _vit(preset="yolov8n", engine="fastertransformer")
    assert "image.engine" in str(caught.value)
    _vit(preset="yolov8n", engine="tensorrt")  # a TensorRT detector is fine


def test_fastertransformer_traffic_is_counted_from_its_kernels():
    """ViT-B/16 at 224 px: 197 tokens x 768 x 12 layers x 23 elements x 2 B = 83.5 MB an image (hand count of
    FASTERTRANSFORMER_VIT_LAYER_PASSES from ViT.cc); other engines move none outside a fused forward."""
    ft = _vit(engine="fastertransformer")
    assert im.inference_traffic_bytes_per_image(ft) == pytest.approx(197 * 768 * 12 * 23 * 2)
    assert im.inference_traffic_bytes_per_image(_vit(engine="tensorrt")) == 0.0


def test_fastertransformer_pads_197_tokens_to_256_in_its_fused_attention():
    assert im.attention_padding(_vit(engine="fastertransformer")) == pytest.approx((256 / 197) ** 2)
    # 384 px: 577 tokens, past the longest fused-attention length (512): counted unpadded
    assert im.attention_padding(_vit(engine="fastertransformer", resolution_px=384)) == 1.0
    assert im.attention_padding(_vit(engine="tensorrt")) == 1.0


def test_the_form_has_a_select_for_it_in_inference():
    (field,) = [f for f in image_form_fields(IMAGE_KNOB_DEFAULTS, {}) if f["name"] == "image_engine"]
    assert field["kind"] == "select" and field["value"] == "pytorch"
    assert [value for value, _ in field["options"]] == ["pytorch", "tensorrt", "fastertransformer"]
    assert image_knob_value("image_engine", "pytorch") is None  # the default: left out of the document
    assert image_knob_value("image_engine", "tensorrt") == "tensorrt"
    assert image_knob_applies("image_engine", "inference") and not image_knob_applies("image_engine", "lora")
