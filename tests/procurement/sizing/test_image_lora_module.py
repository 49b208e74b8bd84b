"""image.lora_module and image.adafactor_scale_parameter (fix50j, after aud50j): the adapter module's kernels and
all-linear targets per training stack, and the Adafactor flags' ops."""

from __future__ import annotations

import pytest

from procurement.sizing import WorkloadSpecError, image_model, parse_workload_spec


def _lora(preset: str, module: str | None = None, **top) -> dict:
    image = {"train_steps": 10}
    if module is not None:
        image["lora_module"] = module
    return {
        "task": "lora",
        "model": {"preset": preset},
        "lora": {"rank": 16, "targets": "all-linear"},
        "image": image,
    } | top


def test_it_adapts_sd_1_x_proj_convolutions_under_kohya_only():
    """SD 1.5's 16 Transformer2DModels (3 attention levels x (2 down + 3 up) + the mid block) keep proj_in /
    proj_out as 1x1 Conv2d (unet/config.json has no use_linear_projection): kohya's networks/lora.py adapts
    them (Linear and 1x1 Conv2d), peft's all-linear (nn.Linear only) does not: 16 blocks x 10 = 160 (peft),
    + 16 x 2 = 192 (kohya)."""
    assert image_model.lora_layers(parse_workload_spec(_lora("sd-1.5"))) == 160
    assert image_model.lora_layers(parse_workload_spec(_lora("sd-1.5", "kohya"))) == 192


def test_it_keeps_sdxl_linear_projections_under_either_module():
    """SDXL's unet/config.json sets use_linear_projection: proj_in / proj_out are Linear, adapted by both:
    70 blocks x 10 + 11 x 2 = 722 (aud50i's count)."""
    assert image_model.lora_layers(parse_workload_spec(_lora("sdxl"))) == 722
    assert image_model.lora_layers(parse_workload_spec(_lora("sdxl", "kohya"))) == 722


def test_it_charges_kohyas_module_kernels():
    """peft 4 + 6 a layer, kohya's LoRAModule 5 + 7 (aud50j's count from networks/lora.py)."""
    assert image_model.lora_training_kernels(parse_workload_spec(_lora("sdxl"))) == 722 * 10
    assert image_model.lora_training_kernels(parse_workload_spec(_lora("sdxl", "kohya"))) == 722 * 12


def test_it_refuses_a_kohya_module_without_a_diffusion_lora():
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {
                "task": "full_finetune",
                "model": {"preset": "sdxl"},
                "image": {"train_steps": 10, "lora_module": "kohya"},
            }
        )
    assert "image.lora_module" in str(error.value.errors)


def test_it_refuses_scale_parameter_without_adafactor():
    spec = _lora("sdxl", optimizer="adamw")
    spec["image"]["adafactor_scale_parameter"] = True
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(spec)
    assert "image.adafactor_scale_parameter" in str(error.value.errors)


def test_it_adds_two_ops_and_a_sync_under_scale_parameter():
    """fp32 adapters (master_weights_fp32 default): 24 ops a tensor; scale_parameter: 26 + one host sync at
    host_sync_s. SDXL all-linear, 722 layers, 1,444 tensors: 1,444 x 24 x 7 us = 0.24259 s; 1,444 x (26 x 7 +
    7.1) us = 0.27307 s."""
    plain = _lora("sdxl", optimizer="adafactor")
    scaled = _lora("sdxl", optimizer="adafactor")
    scaled["image"] = {**scaled["image"], "adafactor_scale_parameter": True}
    assert image_model.optimizer_host_seconds(parse_workload_spec(plain)) == pytest.approx(1444 * 24 * 7e-6)
    assert image_model.optimizer_host_seconds(parse_workload_spec(scaled)) == pytest.approx(
        1444 * (26 * 7e-6 + 7.1e-6)
    )
