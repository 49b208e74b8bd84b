"""`image.engine`: the inference engine an image network runs under (pytorch, the default; tensorrt;
fastertransformer). The engine sets image.fused_kernels and image.tf32_matmul's defaults; fastertransformer adds
FasterTransformer's ViT kernels between its GEMMs (NVIDIA/FasterTransformer src/fastertransformer/models/vit/
ViT.cc @4c014fba, unchanged at release/v5.3_tag) and its padded fused attention, sized as its last release, v5.3
(3rdparty/trt_fused_multihead_attention/qkvToContext.cu @release/v5.3_tag d21dc02)."""

import numpy as np
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


def test_fastertransformer_runs_fp32_in_full_fp32_unless_told():
    """FasterTransformer's fp32 GEMMs are cublasGemmEx with CUDA_R_32F on a default-math handle
    (cublasMMWrapper.cc, examples/cpp/vit/vit_example.cc @release/v5.3_tag: no cublasSetMathMode); TF32 only
    under NVIDIA_TF32_OVERRIDE=1 (docs/bert_guide.md, docs/swin_guide.md @release/v5.3_tag). vit44 had it on
    by default (aud44v: its guide's A100 FP32 ViT-B/16 384 px row +404.1%)."""
    spec = _vit("fp32", engine="fastertransformer")
    assert spec.image.fused_kernels is True and spec.image.tf32_matmul is False
    assert _vit("fp32", engine="fastertransformer", tf32_matmul=True).image.tf32_matmul is True
    a100 = gpu_by_slug("a100-sxm4-40gb")
    # not the A100's TF32 dense 156 TFLOPS (A100 datasheet): the linears at the SIMT rate
    assert spec_peak_tflops(spec, a100) < 156.0
    assert spec_peak_tflops(
        _vit("fp32", engine="fastertransformer", tf32_matmul=True), a100
    ) == pytest.approx(156.0)
    assert im.image_summary(spec)["tf32_matmul"] is False


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


def test_fastertransformer_pads_as_its_last_release_v5_3():
    """getSFromMaxSeqLen @release/v5.3_tag: 32, 64, 96, 128, 192, 256, 384, 512 (v5.0 had no 32 or 192); on
    sm70 32 -> 64 and 192 -> 256. ViT-B/16 at 208 px: 13^2 + 1 = 170 tokens -> 192 (256 on a V100); at 80 px:
    5^2 + 1 = 26 -> 32 (64 on a V100)."""
    assert im.FASTERTRANSFORMER_VERSION == "v5.3"
    assert im.FASTERTRANSFORMER_FMHA_LENGTHS == (32, 64, 96, 128, 192, 256, 384, 512)
    at_208 = _vit(engine="fastertransformer", resolution_px=208)
    assert im.attention_padding(at_208) == pytest.approx((192 / 170) ** 2)
    volta_and_ampere = im.attention_padding(at_208, np.array([70, 80]))
    assert volta_and_ampere == pytest.approx([(256 / 170) ** 2, (192 / 170) ** 2])
    at_80 = _vit(engine="fastertransformer", resolution_px=80)
    assert im.attention_padding(at_80, np.array([70, 80])) == pytest.approx([(64 / 26) ** 2, (32 / 26) ** 2])
    # ftattn44: an H100 (90) runs fp16 ViT attention unfused (getAttentionType @release/v5.3_tag), its sequence
    # padded to a multiple of 8 (ViT.cc need_padding): 170 -> 176, 26 -> 32 (by the multiple of 8, not the FMHA list)
    assert im.attention_padding(at_208, np.array([90])) == pytest.approx([(176 / 170) ** 2])
    assert im.attention_padding(at_80, np.array([90])) == pytest.approx([(32 / 26) ** 2])


def test_the_answer_says_which_fastertransformer_it_sized():
    """The version decides a 384 px answer (v5.0, the guide's, ran 577 tokens unfused) and an fp32 one."""
    at_224 = im.fastertransformer_version_note(_vit(engine="fastertransformer"), 80)
    assert "FasterTransformer v5.3" in at_224 and "padded to 256" in at_224 and "v5.0" not in at_224
    at_384 = im.fastertransformer_version_note(_vit(engine="fastertransformer", resolution_px=384), 80)
    assert "577 tokens unpadded" in at_384 and "measured on v5.0" in at_384
    fp32 = im.fastertransformer_version_note(_vit("fp32", engine="fastertransformer"), 80)
    assert "full FP32" in fp32 and "NVIDIA_TF32_OVERRIDE=1" in fp32
    # ftattn44: the unfused attention is counted and the answer says how much (was 'not counted here'):
    # ViT-B fp32 224 px, 12 layers x (4 x 12 + 1) x 197^2 + 2 x 768 x 197) x 4 B = 106 MB an image
    assert "attention unfused in fp32" in fp32 and "197 tokens unpadded" in fp32 and "106 MB an image" in fp32
    # getAttentionType @release/v5.3_tag fuses ViT attention on sm70-sm86 only: an H100 runs it unfused, fp16
    # padded to a multiple of 8 (197 -> 200): 12 x (49 x 200^2 + 2 x 768 x 200) x 2 B = 54 MB
    h100 = im.fastertransformer_version_note(_vit(engine="fastertransformer"), 90)
    assert "attention unfused on this card" in h100 and "padded to 200" in h100 and "54 MB an image" in h100
    at_384_fp32 = im.fastertransformer_version_note(
        _vit("fp32", engine="fastertransformer", resolution_px=384), 80
    )
    assert "826 MB an image" in at_384_fp32 and "measured on v5.0" not in at_384_fp32
    assert im.fastertransformer_version_note(_vit(engine="tensorrt"), 80) is None
    for text in (at_224, at_384, fp32, h100, at_384_fp32):
        assert "not counted" not in text
        assert not any(token in text for token in ("True", "False", "None", "{'", "['"))


def test_fastertransformer_counts_its_unfused_attention_where_v5_3_runs_it():
    """UnfusedAttentionLayer.cc and invokeMaskedSoftmax @release/v5.3_tag d21dc02: Q.K^T writes the heads x S^2
    scores, the softmax reads and writes them, P.V reads them (4 passes), the softmax reads the S^2 mask (once an
    image and layer here) and invokeTransposeQKV moves 2 elements a hidden unit and token. ViT-B/16 384 px fp32
    (577 tokens, unpadded in fp32): 12 layers x (4 x 12 x 577^2 + 577^2 + 2 x 768 x 577) x 4 B = 825.6 MB an
    image (the fixv44 hand count, scores only: 12 x 577^2 x 4 B x 4 x 12 = 767 MB)."""
    fp32 = _vit("fp32", engine="fastertransformer", resolution_px=384)
    expected = 12 * (4 * 12 * 577**2 + 577**2 + 2 * 768 * 577) * 4
    assert expected == pytest.approx(825.6e6, rel=1e-3)
    assert float(im.fastertransformer_unfused_attention_bytes_per_image(fp32, 80)) == pytest.approx(expected)
    assert float(im.fastertransformer_unfused_attention_bytes_per_image(fp32)) == pytest.approx(expected)
    assert im.attention_padding(fp32, np.array([80])) == pytest.approx([1.0])  # fp32 is not padded
    assert im.attention_padding(_vit("fp32", engine="fastertransformer"), 80) == pytest.approx(1.0)
    # fp16: fused (no added bytes) on Volta, Turing and Ampere; unfused at 584 tokens on Ada, Hopper, Blackwell
    fp16 = _vit(engine="fastertransformer", resolution_px=384)
    moved = im.fastertransformer_unfused_attention_bytes_per_image(fp16, np.array([70, 75, 80, 89, 90, 100]))
    at_584 = 12 * (4 * 12 * 584**2 + 584**2 + 2 * 768 * 584) * 2
    assert moved == pytest.approx([0, 0, 0, at_584, at_584, at_584])
    # an unknown card: fused, as before
    assert im.fastertransformer_unfused_attention_bytes_per_image(fp16) == 0.0
    assert im.fastertransformer_unfused_attention_bytes_per_image(_vit("fp32", engine="tensorrt"), 80) == 0.0


def test_the_form_has_a_select_for_it_in_inference():
    (field,) = [f for f in image_form_fields(IMAGE_KNOB_DEFAULTS, {}) if f["name"] == "image_engine"]
    assert field["kind"] == "select" and field["value"] == "pytorch"
    assert [value for value, _ in field["options"]] == ["pytorch", "tensorrt", "fastertransformer"]
    assert image_knob_value("image_engine", "pytorch") is None  # the default: left out of the document
    assert image_knob_value("image_engine", "tensorrt") == "tensorrt"
    assert image_knob_applies("image_engine", "inference") and not image_knob_applies("image_engine", "lora")
