"""`image.unfused_lora_rank`: a LoRA loaded beside a UNet and not fused (diffusers load_lora_weights without
fuse_lora, as [LCM] in tests/procurement/outside/test_outside_image_workloads_4.py runs LCM-LoRA). Its PEFT
layers run on every call (image_model.unfused_adapters)."""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS
from procurement.sizing.compute_peak import spec_peak_tflops
from procurement.sizing.spec import WorkloadSpecError


def _spec(preset: str = "sdxl", task: str = "inference", **image) -> object:
    return parse_workload_spec(
        {"task": task, "model": {"preset": preset}, "precision": "fp16", "image": image}
    )


def _seconds(spec, gpu_slug: str) -> float:
    gpu = gpu_by_slug(gpu_slug)
    peak = spec_peak_tflops(spec, gpu) * 1e12
    return float(im.inference_seconds_per_image(spec, peak, gpu.memory_bandwidth_gbps * 1e9, gpu.generation))


def test_it_counts_the_lcm_lora_recipes_adapted_layers_in_sdxls_unet():
    """Hand, SDXL (block_out_channels 320/640/1280, transformer_layers 1/2/10, layers_per_block 2), the
    targets of diffusers' train_lcm_distill_lora_sdxl.py:
      transformer blocks: (2 down + 3 up) x 2 at 640 + (5 + 1 mid) x 10 at 1280 = 70, x 10 linears = 700
      proj_in/proj_out: 11 Transformer2DModels x 2                                     =  22
      ResNets: 6 down + 9 up + 2 mid = 17, x (conv1, conv2, time_emb_proj)             =  51
      conv_shortcut: the 9 up ResNets (skip concat) + the first down ResNet at 640 and 1280 = 11
      downsampler and upsampler convolutions: 2 + 2                                    =   4
    = 788."""
    layers, _, _, _ = im.unfused_adapters(_spec(unfused_lora_rank=64))
    assert layers == 788


@pytest.mark.parametrize(
    ("preset", "published_m"),
    [
        # huggingface.co/latent-consistency/lcm-lora-ssd-1b model card, 'Params / M': lcm-lora-sdxl 197M,
        # lcm-lora-sdv1-5 67.5 (both rank 64, the training script's default lora_rank)
        pytest.param("sdxl", 197.0, id="lcm-lora-sdxl"),
        pytest.param("sd-1.5", 67.5, id="lcm-lora-sdv1-5"),
    ],
)
def test_it_sizes_the_adapter_as_the_published_lcm_loras(preset, published_m):
    """SDXL 196.1M (-0.4%), SD 1.5 66.6M (-1.3%): the layer shapes reproduce both published adapters."""
    _, _, params, _ = im.unfused_adapters(_spec(preset, unfused_lora_rank=64))
    assert params / 1e6 == pytest.approx(published_m, rel=0.02)


def test_an_eager_step_launches_four_more_kernels_per_adapted_layer():
    """peft's LoRA forward adds lora_A, lora_B, the scaling multiply and the add: 788 x 4 = 3,152 kernels a
    step on SDXL. At 4 steps without CFG on an RTX 4090 the step is host-bound with them: the launch time
    grows by at least the adapter kernels' host time less the adapter's own GPU time."""
    plain, adapted = _spec(steps=4, guidance="none"), _spec(steps=4, guidance="none", unfused_lora_rank=64)
    gpu = gpu_by_slug("rtx-4090")
    peak, bandwidth = spec_peak_tflops(adapted, gpu) * 1e12, gpu.memory_bandwidth_gbps * 1e9
    efficiency = im.inference_efficiency(adapted, peak)
    step = im.denoiser_step_gpu_seconds(adapted, peak, bandwidth, efficiency, efficiency)
    kernels = im.forward_kernels(im.spec_network_cost(adapted)) + 788 * 4 + im.PIPELINE_STEP_KERNELS
    expected = 4 * (kernels * EAGER_KERNEL_HOST_SECONDS.value - step)
    assert expected > 0  # host-bound
    assert im.eager_launch_seconds_per_image(adapted, step) == pytest.approx(expected)
    assert _seconds(adapted, "rtx-4090") > _seconds(plain, "rtx-4090")


def test_a_compiled_unet_folds_the_adapters_kernels_but_keeps_their_flops():
    """A compiled 50-step CFG generation runs the adapter's matmuls 100 times (2 FLOPs a MAC) and no extra
    elementwise passes. Hand for the transformer blocks' share of the MACs a sample, rank 64: 10 blocks x
    26 x 640 x 4,096 tokens + 60 x 26 x 1,280 x 1,024 = 2.73e9, x 64 = 174.5 GMAC (the ResNets add the rest)."""
    compiled = _spec(steps=50, fused_kernels=True, unfused_lora_rank=64)
    plain = _spec(steps=50, fused_kernels=True)
    _, macs, _, _ = im.unfused_adapters(compiled)
    assert 174.5e9 < macs < 2 * 174.5e9
    assert im.inference_flops_per_image(compiled) - im.inference_flops_per_image(plain) == pytest.approx(
        2.0 * macs * 100
    )
    assert im.inference_traffic_bytes_per_image(compiled) == im.inference_traffic_bytes_per_image(plain)


def test_the_adapters_weights_sit_beside_the_unet():
    """196.1M adapter weights at rank 64 join the resident frozen parts (fp16: 0.37 GiB)."""
    adapted, plain = _spec(unfused_lora_rank=64), _spec()
    _, _, params, _ = im.unfused_adapters(adapted)
    assert im.frozen_parts_params(adapted) - im.frozen_parts_params(plain) == pytest.approx(params)


def test_no_adapter_leaves_every_estimate_as_it_was():
    assert im.unfused_adapters(_spec()) == (0.0, 0.0, 0.0, 0.0)
    assert im.unfused_adapter_flops_per_image(_spec()) == 0.0


@pytest.mark.parametrize(
    ("preset", "task"),
    [
        pytest.param("flux.1-dev", "inference", id="a-dit"),
        pytest.param("sdxl", "lora", id="training"),
        pytest.param("yolov8n", "inference", id="a-detector"),
    ],
)
def test_it_refuses_an_unfused_lora_where_it_is_not_counted(preset, task):
    with pytest.raises(WorkloadSpecError) as error:
        _spec(preset, task, unfused_lora_rank=64)
    assert "image.unfused_lora_rank" in str(error.value)
