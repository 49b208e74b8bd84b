"""The host side of an eager LoRA training step (img29d, outside round x29h): the adapters' own kernels and a
per-tensor optimizer loop, on top of the frozen network's kernels (image_model.training_eager_seconds_per_image).

Counts by hand: SD 1.5's UNet has 16 transformer blocks (levels 0-2 attend: 2 down + 3 up each = 15, plus the mid
block's 1), 8 attention projections each (attn1 and attn2 q/k/v/out) = 128 adapted linears; SDXL's (levels 1-2
attend, 2 and 10 transformer layers: (5 x 2) + (5 x 10) + the mid block's 10 = 70) x 8 = 560. PEFT's Linear.forward
adds 4 forward kernels (lora_A, lora_B, x scaling, add) and 6 backward (scaling's, B's and A's input and weight
gradients, the sum of x's two gradients) an adapted layer: 1,280 and 5,600 kernels at eager_kernel_host_s (31 us) =
0.0397 s and 0.1736 s. SimpleTuner's adamw_bf16 steps each of the 2 tensors of a layer in a loop of 31 ops, at
optimizer_op_host_s (7 us, pytorch issue #41383): 256 x 31 x 7 us = 0.0556 s, 1,120 x 31 x 7 us = 0.2430 s."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.spec import parse_workload_spec


def _lora(preset: str, rank: int = 16, **fields) -> object:
    spec = {
        "task": "lora",
        "model": {"preset": preset},
        "precision": "bf16",
        "optimizer": "adamw",
        "master_weights_fp32": False,
        "micro_batch_size": 1,
        "lora": {"rank": rank},
        "image": {"cache_latents": True, "train_steps": 100},
    }
    return parse_workload_spec(spec | fields)


def test_adapted_layers_are_counted_from_the_unet():
    assert image_model.lora_layers(_lora("sd-1.5")) == 128
    assert image_model.lora_layers(_lora("sdxl", 8)) == 560


def test_each_adapted_layer_adds_ten_kernels_and_full_recomputation_replays_four():
    assert image_model.lora_training_kernels(_lora("sd-1.5")) == 1280
    assert image_model.lora_training_kernels(_lora("sdxl", 8)) == 5600
    assert image_model.lora_training_kernels(_lora("sd-1.5", gradient_checkpointing="full")) == 128 * 14


def test_a_pure_bf16_adamw_steps_each_adapter_tensor_in_a_loop():
    assert image_model.optimizer_host_seconds(_lora("sd-1.5")) == pytest.approx(0.055552)
    assert image_model.optimizer_host_seconds(_lora("sdxl", 8)) == pytest.approx(0.24304)


def test_fp32_adapters_under_torch_adamw_take_the_foreach_path():
    """master_weights_fp32 (PEFT's fp32 adapters, torch.optim.AdamW's foreach default on CUDA): no per-tensor
    loop counted; the adapters' kernels still are."""
    spec = _lora("sd-1.5", master_weights_fp32=True)
    assert image_model.optimizer_host_seconds(spec) == 0.0
    assert image_model.lora_training_kernels(spec) == 1280


def test_the_floor_grows_by_the_adapters_and_the_optimizer_when_host_bound(monkeypatch):
    """SD 1.5 at 512 px batch 1 on an H100 waits on the host, so the floor grows by exactly 0.0397 + 0.0556 s
    against the same step with neither the adapters' kernels nor the optimizer's loop."""
    spec = _lora("sd-1.5", image={"cache_latents": True, "train_steps": 100, "resolution_px": 512})
    bandwidth = 3.35e12
    with_adapters = image_model.training_eager_seconds_per_image(spec, bandwidth, 1e-3)
    monkeypatch.setattr(image_model, "lora_training_kernels", lambda spec: 0.0)
    monkeypatch.setattr(image_model, "optimizer_host_seconds", lambda spec: 0.0)
    without = image_model.training_eager_seconds_per_image(spec, bandwidth, 1e-3)
    assert with_adapters - without == pytest.approx(1280 * 31e-6 + 0.055552)
