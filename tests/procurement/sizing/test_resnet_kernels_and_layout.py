"""ResNet-50's eager kernel count, its convolutions' NCHW transposes (image.memory_format) and the LoRA refusal
(fixrn; the TF32 gate, the nchw default and the answer's note: fixrn2). Counts are torchvision's models/resnet.py walked by hand; the transposes' rule is stated in
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


def test_nchw_transposes_are_counted_where_convolutions_use_tensor_cores():
    """image.memory_format nchw: 2 x conv_io x 2 B = 87.1 MB a forward an image in fp16 on any card; in fp32,
    4 B x the same count on Ampere and later (TF32 tensor-core convolutions, torch.backends.cudnn.allow_tf32's
    default True: pytorch/pytorch aten/src/ATen/Context.h `bool allow_tf32_cudnn = true;`) and nothing on
    Volta / Turing (SIMT, NCHW-native) or an unknown card. channels_last adds nothing (fixrn2, audrn item 2)."""
    nchw = parse_workload_spec(_spec(memory_format="nchw"))
    assert image_model.nchw_transpose_bytes_per_sample(nchw) == 2 * 21_776_384 * 2
    assert image_model.nchw_transpose_bytes_per_sample(nchw, 70) == 2 * 21_776_384 * 2
    last = parse_workload_spec(_spec(memory_format="channels_last"))
    assert image_model.nchw_transpose_bytes_per_sample(last, 90) == 0.0
    fp32 = parse_workload_spec(_spec(precision="fp32", memory_format="nchw"))
    assert image_model.nchw_transpose_bytes_per_sample(fp32) == 0.0
    assert image_model.nchw_transpose_bytes_per_sample(fp32, 70) == 0.0  # V100: SIMT
    assert image_model.nchw_transpose_bytes_per_sample(fp32, 75) == 0.0  # T4: SIMT
    assert image_model.nchw_transpose_bytes_per_sample(fp32, 80) == 2 * 21_776_384 * 4  # A100: TF32
    per_card = image_model.nchw_transpose_bytes_per_sample(fp32, [70.0, 80.0, float("nan"), 100.0])
    assert list(per_card) == [0.0, 2 * 21_776_384 * 4, 0.0, 2 * 21_776_384 * 4]


def test_unstated_memory_format_is_nchw_on_an_eager_convnet_only():
    """fixrn2, audrn item 3: PyTorch's default contiguous layout is what timm train.py (--channels-last default
    False), torchvision's references, DLE's main.py (--memory-format default nchw) and Lambda's runs use, so an
    unstated layout is nchw on an eager convnet; a ViT, a UNet and a fused convnet read channels_last (and
    refuse a stated nchw, test_memory_format_refused_where_it_changes_nothing)."""
    assert parse_workload_spec(_spec()).image.memory_format == "nchw"
    assert parse_workload_spec(_spec(task="full_finetune")).image.memory_format == "nchw"
    assert parse_workload_spec(_spec(fused_kernels=True)).image.memory_format == "channels_last"
    for preset in ("vit-b-16", "sd-1.5"):
        spec = {"task": "inference", "model": {"preset": preset}, "precision": "fp16", "micro_batch_size": 1}
        assert parse_workload_spec(spec).image.memory_format == "channels_last"


def test_nchw_adds_the_transposes_to_the_inference_traffic():
    base = image_model.inference_traffic_bytes_per_image(
        parse_workload_spec(_spec(memory_format="channels_last"))
    )
    nchw = image_model.inference_traffic_bytes_per_image(parse_workload_spec(_spec(memory_format="nchw")))
    assert nchw - base == pytest.approx(2 * 21_776_384 * 2)
    assert image_model.inference_traffic_bytes_per_image(parse_workload_spec(_spec())) == nchw


def test_the_answer_states_the_layout_and_its_upper_bound():
    """fixrn2, audrn items 1 and 5: an nchw answer says the transposes are counted for every convolution (an
    upper bound under cudnn.benchmark), that their NHWC buffers are left out of memory, and how channels_last
    changes it; an fp32 answer on a SIMT card says none are counted; channels_last says nothing."""
    note = image_model.memory_format_note(parse_workload_spec(_spec()), 86)
    assert "upper bound" in note and "87.1 MB" in note and "not counted in memory" in note
    assert "image.memory_format channels_last" in note
    fp32 = parse_workload_spec(_spec(precision="fp32"))
    assert "no NHWC transposes" in image_model.memory_format_note(fp32, 70)
    assert "upper bound" in image_model.memory_format_note(fp32, 80)
    assert (
        image_model.memory_format_note(parse_workload_spec(_spec(memory_format="channels_last")), 80) is None
    )


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
    """The image form's knob: nchw (the convnet's default, fixrn2) leaves the document unchanged; channels_last
    is stated."""
    assert IMAGE_KNOB_DEFAULTS["memory_format"] == "nchw"
    assert image_knob_value("memory_format", "nchw") is None
    assert image_knob_value("memory_format", "channels_last") == "channels_last"


def test_the_nchw_buffers_left_out_of_memory_by_hand():
    """fixrn2, audrn item 5: the transposes' NHWC copies (a convolution's input and output) are transient. The
    largest, layer2's first 1x1 conv (256 x 3,136 in + 128 x 3,136 out = 1,204,224 elements an image; its
    downsample the same), runs when 10,787,840 of the 21,878,784 saved elements exist (49%), so it does not
    raise the training peak (all saved activations at the end of the forward); there the last convolution's are
    512 x 49 + 2,048 x 49 = 125,440 (0.6% of the saved): left out of memory, as the answer and docs say."""
    largest, live_before = 0, 3 * 224 * 224 + 2 * 64 * 112 * 112 + 64 * 56 * 56 * 5  # the stem's saved
    side, c_in, last = 56, 64, 0
    for stage, (blocks, width) in enumerate(zip(RESNET50["stages"], RESNET50["widths"], strict=True)):
        for block in range(blocks):
            out = side // (2 if block == 0 and stage > 0 else 1)
            p_in, p = side * side, out * out
            first = c_in * p_in + width * p_in
            if first > largest:
                largest, live_at_largest = first, live_before
            last = width * p + 4 * width * p  # conv3
            live_before += 2 * width * p_in + 2 * width * p + 4 * width * p * (3 if block == 0 else 2)
            c_in, side = 4 * width, out
    saved = live_before + 2048
    assert saved == resnet_cost(RESNET50, 224).saved == 21_878_784
    assert largest == 1_204_224 and live_at_largest == 10_787_840
    assert live_at_largest / saved == pytest.approx(0.493, abs=0.001)
    assert last == 125_440 and last / saved == pytest.approx(0.0057, abs=0.0001)
