"""ResNet-50's eager kernel count, its convolutions' NCHW transposes (image.memory_format) and the LoRA refusal
(fixrn). Counts are torchvision's models/resnet.py walked by hand; the transposes' rule is stated in
image_model.nchw_transpose_bytes_per_sample."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.image_knobs import IMAGE_KNOB_DEFAULTS, image_knob_value
from procurement.sizing.resnet_shapes import resnet_cost
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec

RESNET50 = {"stages": [3, 4, 6, 3], "widths": [64, 128, 256, 512], "expansion": 4, "classes": 1000}


def _spec(task: str = "inference", precision: str = "fp16", **image) -> dict:
    spec = {"task": task, "model": {"preset": "resnet-50"}, "precision": precision, "micro_batch_size": 8}
    if image:
        spec["image"] = image
    return spec


def test_resnet50_eager_forward_kernels_by_hand():
    """torchvision's ResNet-50 forward, one eager kernel a module (eval: BatchNorm is its own kernel, ReLU inplace
    is one, nothing fuses): stem conv1 + bn1 + relu + maxpool = 4; 16 Bottlenecks x (3 convs, 3 BNs, 2 ReLUs,
    the add, the last ReLU) = 160; 4 downsamples x (conv + BN) = 8; avgpool + fc = 2 (flatten is a view): 174.
    GEMM kernels (convolutions and the fc) 1 + 48 + 4 + 1 = 54."""
    cost = resnet_cost(RESNET50, 224)
    assert image_model.forward_kernels(cost) == 4 + 16 * 10 + 4 * 2 + 2 == 174
    assert cost.gemm_kernels == 1 + 16 * 3 + 4 + 1 == 54
    assert len(cost.unit_marks) == 1 + 16 + 1  # the stem, each block, the head: the launch queue's units


def test_resnet50_conv_inputs_and_outputs_by_hand():
    """Cost.conv_io, the elements the 53 convolutions read and write an image at 224 px: the stem 3 x 224^2 in,
    64 x 112^2 out; a block at side p (its first block's conv1, conv2 and downsample read the previous side's
    p_in): conv1 c_in x p_in + w x p_in, conv2 w x p_in + w x p, conv3 w x p + 4w x p, downsample c_in x p_in +
    4w x p. Sum 21,776,384."""
    total = 3 * 224 * 224 + 64 * 112 * 112
    c_in, side = 64, 56
    for stage, (blocks, width) in enumerate(zip(RESNET50["stages"], RESNET50["widths"], strict=True)):
        for block in range(blocks):
            out = side // 2 if (block == 0 and stage > 0) else side
            p_in, p = side * side, out * out
            total += c_in * p_in + width * p_in  # conv1 (1x1, stride 1)
            total += width * p_in + width * p  # conv2 (3x3, the stride)
            total += width * p + 4 * width * p  # conv3
            if block == 0:
                total += c_in * p_in + 4 * width * p  # downsample
            c_in, side = 4 * width, out
    assert resnet_cost(RESNET50, 224).conv_io == total == 21_776_384


def test_nchw_transposes_are_counted_in_16_bit_only():
    """image.memory_format nchw: 2 x conv_io x 2 B = 87.1 MB a forward an image in fp16; channels_last (the
    default) and fp32 (SIMT convolutions on Volta / Turing, no transposes; TF32 not modelled) add nothing."""
    nchw = parse_workload_spec(_spec(memory_format="nchw"))
    assert image_model.nchw_transpose_bytes_per_sample(nchw) == 2 * 21_776_384 * 2
    assert parse_workload_spec(_spec()).image.memory_format == "channels_last"
    assert image_model.nchw_transpose_bytes_per_sample(parse_workload_spec(_spec())) == 0.0
    fp32 = parse_workload_spec(_spec(precision="fp32", memory_format="nchw"))
    assert image_model.nchw_transpose_bytes_per_sample(fp32) == 0.0


def test_nchw_adds_the_transposes_to_the_inference_traffic():
    base = image_model.inference_traffic_bytes_per_image(parse_workload_spec(_spec()))
    nchw = image_model.inference_traffic_bytes_per_image(parse_workload_spec(_spec(memory_format="nchw")))
    assert nchw - base == pytest.approx(2 * 21_776_384 * 2)


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            {
                "task": "inference",
                "model": {"preset": "sd-1.5"},
                "precision": "fp16",
                "micro_batch_size": 1,
                "image": {"memory_format": "nchw"},
            },
            "image.memory_format",
        ),
        (_spec(memory_format="nchw", fused_kernels=True), "image.memory_format"),
        (_spec(memory_format="nhwc"), "image.memory_format"),
    ],
)
def test_memory_format_refused_where_it_changes_nothing(spec, path):
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(spec)
    assert path in str(error.value)


@pytest.mark.parametrize("task", ["lora", "qlora"])
def test_lora_on_a_convnet_is_refused_naming_the_task(task):
    """A convnet has no attention or block linears for LoRA's targets (only the fc head): refused, not sized
    with zero adapters."""
    spec = _spec(task=task, precision="fp16")
    spec["lora"] = {"rank": 8}
    if task == "qlora":
        spec["precision"] = "nf4"
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(spec)
    message = str(error.value)
    assert "task" in message and "resnet-50" in message and "no adapters to place" in message


def test_resnet50_full_finetune_still_sizes():
    spec = parse_workload_spec(_spec(task="full_finetune"))
    assert image_model.is_convnet(spec)


def test_memory_format_form_knob():
    """The image form's knob: channels_last (default) leaves the document unchanged; nchw is stated."""
    assert IMAGE_KNOB_DEFAULTS["memory_format"] == "channels_last"
    assert image_knob_value("memory_format", "channels_last") is None
    assert image_knob_value("memory_format", "nchw") == "nchw"
