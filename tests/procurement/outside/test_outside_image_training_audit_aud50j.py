"""Outside audit aud50j (stop 50) of fix50i: the 8-bit T5 in image training, the task-field refusals and the
kohya SDXL LoRA host floor (transformers Adafactor loop, all-linear adapters, trained text encoders).

Cases chosen by the auditor (grepped tests/ for each source and figure first: none used before, except
[KOHYA-827], whose command is re-read here for a setting fix50i did not use).

Sources (verbatim where quoted):
  [TF-4.30.2] transformers-4.30.2-py3-none-any.whl, transformers/optimization.py (the release kohya-ss
      sd-scripts pinned at b99cd2a9): Adafactor._get_lr (lines 610-618): "rel_step_sz = param_group["lr"]" /
      "if param_group["relative_step"]: ..." / "param_scale = 1.0" / "if param_group["scale_parameter"]:
      param_scale = max(param_group["eps"][1], param_state["RMS"])" / "return param_scale * rel_step_sz";
      step(): "state["RMS"] = self._rms(p_data_fp32)" is computed whatever the flags.
  [KOHYA-827] github.com/kohya-ss/sd-scripts/issues/827 (2023-09-20), the command of fix50i's own row:
      '--optimizer_type="Adafactor" --optimizer_args scale_parameter=False relative_step=False
      warmup_init=False' (also in [KOHYA-834] and kohya-ss/sd-scripts issue #661, 2kpr, 3080 Ti: the
      community's SDXL preset). kohya's get_optimizer sets relative_step True only when the args do not name it.
  [KOHYA-834] github.com/kohya-ss/sd-scripts/issues/834 "Still very poor Rtx 4090 perfomance": littleyeson
      (2024-03-25) "On my 4090 I get 2.26s/it ... Win11", command sdxl_train_network.py --resolution="1024,1024"
      --network_module=networks.lora --text_encoder_lr=0.0001 --unet_lr=0.0001 --network_dim=32
      --mixed_precision="bf16" (no --full_bf16) --train_batch_size="1" --cache_latents --cache_latents_to_disk
      --optimizer_type="Adafactor" --optimizer_args scale_parameter=False relative_step=False warmup_init=False
      --max_grad_norm="1" --max_data_loader_n_workers="1" (no --network_train_unet_only); etha302 (2023-09-27)
      in the same thread: "My speed is currently on sdxl lora training 1.45s/it [a 4090] ... 3090 gets around
      1.2s/it easily" (settings not stated).
  [BNB-8BIT] bitsandbytes bitsandbytes/optim/optimizer.py Optimizer8bit.step (find_string id 534774826, the
      release with page_mng): "self.prefetch_state(p)" / "self.update_step(group, p, gindex, pindex)" /
      "torch.cuda.synchronize()" inside the per-tensor loop (AdamW8bit is Optimizer2State(Optimizer8bit)).
  [ST-VAE-TILING] bghira/SimpleTuner simpletuner/helpers/models/common.py (find_string id 1227176821): "if
      self.config.vae_enable_tiling: ... self.vae.enable_tiling()" when the trainer loads the VAE that encodes
      (caches) the training latents; its Metal notes (id 55151841241): the 2048 px runs without
      vae_enable_tiling "failed during VAE latent cache generation" (MPS out of memory), "With
      vae_enable_tiling=true, the 2048px VAE cache completed".
  [KOHYA-LORA] kohya-ss/sd-scripts networks/lora.py LoRAModule.forward (find_string id 34561816848, the
      2023 layout with LoRAInfModule): "org_forwarded = self.org_forward(x)" / "lx = self.lora_down(x)" /
      "lx = self.lora_up(lx)" / "return org_forwarded + lx * self.multiplier * scale" (dropout, rank and module
      dropout None by default).
  [T5-XXL] google/t5-v1_1-xxl config (the FLUX.1 text_encoder_2): d_model 4096, d_ff 10240, 24 encoder layers,
      64 heads x d_kv 64, gated-gelu (wi_0, wi_1, wo), vocab 32,128.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import WorkloadSpecError, image_model, parse_workload_spec

SPEED = 0.25
GIB = 2.0**30
OP = 7e-6  # optimizer_op_host_s
KERNEL = 31e-6  # eager_kernel_host_s
SYNC = 7.1e-6  # host_sync_s (JuliaGPU/CUDA.jl pull request #896: a small kernel + blocking synchronize, 7.095 us)


def _size(spec: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


def _kohya(
    full_bf16: bool = True, optimizer: str = "adafactor", train_te: bool = True, scale_parameter: bool = False
) -> dict:
    """The kohya runs' recipe: kohya's LoRAModule (image.lora_module kohya, fix50j) and, with Adafactor, the
    published presets' scale_parameter=False relative_step=False (image.adafactor_scale_parameter false, the
    default) unless `scale_parameter`."""
    image = {
        "resolution_px": 1024,
        "train_steps": 1000,
        "cache_latents": True,
        "train_text_encoder": train_te,
        "lora_module": "kohya",
    }
    if scale_parameter:
        image["adafactor_scale_parameter"] = True
    return {
        "task": "lora",
        "model": {"preset": "sdxl"},
        "precision": "bf16",
        "master_weights_fp32": not full_bf16,
        "optimizer": optimizer,
        "micro_batch_size": 1,
        "lora": {"rank": 32, "targets": "all-linear"},
        "gradient_checkpointing": "none",
        "image": image,
    }


# ---------------------------------------------------------------- [TF-4.30.2] x [KOHYA-827] Adafactor op count

R_ADAFACTOR_ARGS = (
    "UNEXPLAINED (aud50j): fix50i counts 26 ops a factored tensor with relative_step and scale_parameter True "
    "('kohya builds Adafactor with them at their defaults'), but the row it fixed ([KOHYA-827]) and the "
    "community preset ([KOHYA-834], sd-scripts #661) pass scale_parameter=False relative_step=False: at 4.30.2 "
    "_get_lr then returns a Python float, so the max(eps2, RMS) comparison and param_scale x rel_step_sz (2 "
    "ops) are not launched: 24 + 3 casts = 27 a bf16 tensor, 1,972 x 27 x 7 us = 0.3727 s; ours 29, 0.4003 s "
    "(+7.4% on the optimizer term, +0.028 s a step). No spec field states Adafactor's relative_step / "
    "scale_parameter; lead: charge 24 (the kohya preset) and add 2 ops plus the per-tensor host sync of "
    "max()'s truth test on a CUDA tensor only under a field stating relative_step / scale_parameter true"
)


def test_adafactor_ops_with_kohyas_optimizer_args():
    """FIXED (fix50j; was a strict xfail UNEXPLAINED, R_ADAFACTOR_ARGS): ADAFACTOR_OPS_PER_TENSOR is 24 with
    scale_parameter=False relative_step=False (image.adafactor_scale_parameter false, the default: HF Trainer's
    optim adafactor and kohya's published presets), + 3 casts on bf16 tensors: 0.4003 -> 0.3727 s."""
    spec = parse_workload_spec(_kohya())
    assert image_model.lora_layers(spec) == 986
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(1972 * (24 + 3) * OP, rel=1e-3)


def test_adafactor_count_holds_when_the_flags_are_true():
    """fix50i's 26 is right for transformers' defaults (scale_parameter True: image.adafactor_scale_parameter),
    read at 4.30.2 [TF-4.30.2]: _rms(p) 2; max(eps2, RMS) 1; param_scale x rel_step_sz 1; grad**2 + eps 2;
    row/col mean-mul_-add_ 6; _approx_sq_grad 5; update.mul_(grad) 1; clip (_rms 2, /, clamp_, div_) 5;
    mul_(lr) 1; neg + add_ 2 = 26; bf16 adds grad.float(), p.float(), p.copy_ = 3. fix50j adds the host sync of
    max()'s truth test on the 0-d CUDA RMS, one a tensor at host_sync_s: 1,972 x (29 x 7 + 7.1) us = 0.4143 s."""
    spec = parse_workload_spec(_kohya(scale_parameter=True))
    assert image_model.ADAFACTOR_OPS_PER_TENSOR == 2 + 2 + 6 + 5 + 1 + 5 + 1 + 2
    assert image_model.ADAFACTOR_SCALE_PARAMETER_OPS == 1 + 1
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(1972 * (29 * OP + SYNC), rel=1e-6)
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(0.4143, abs=1e-4)


@pytest.mark.django_db
def test_kohya_827_lands_with_the_runs_own_adafactor_args(bundled_catalog):
    """[KOHYA-827] 1.12 s/it (RTX 3090 Ti, Windows 10): the floor with the run's own optimizer args (27 ops a
    tensor, not 29) is 0.9889 - 1,972 x 2 x 7 us = 0.9613 s (-14.2%): the FIXED verdict survives the count
    error. fix50j: with kohya's LoRAModule kernels too (5 + 7 a module, not 4 + 6: + 986 x 2 x 31 us =
    0.0611 s), ours 0.9889 -> 1.0224 s (-11.7% -> -8.7%), host-bound: the same on the 3090 and the 4090."""
    corrected = 0.9889 - 1972 * 2 * OP + 986 * 2 * KERNEL
    assert abs(_err(corrected, 1.12)) <= SPEED
    ours = _size(_kohya(), "rtx-3090")["throughput"]["step_seconds"]
    assert ours == pytest.approx(corrected, abs=0.001)
    assert abs(_err(ours, 1.12)) <= SPEED


# ---------------------------------------------------------------- [KOHYA-834] held out: other card, fp32 adapters


@pytest.mark.django_db
def test_host_floor_makes_a_4090_no_faster_than_a_3090(bundled_catalog):
    """[KOHYA-834] / bmaltais/kohya_ss #1288: users find a 4090 no faster than a 3090 on this recipe (etha302:
    4090 1.45 s/it, "3090 gets around 1.2s/it easily"). The floor predicts exactly that: the step is the host's,
    the same on both cards. etha302's 3090 figure (settings not stated; the thread's preset assumed) lands
    -17.6% -> -14.8% (ours 0.9889 -> 1.0224 s, fix50j)."""
    on_3090 = _size(_kohya(), "rtx-3090")["throughput"]["step_seconds"]
    on_4090 = _size(_kohya(), "rtx-4090")["throughput"]["step_seconds"]
    assert on_4090 == pytest.approx(on_3090, rel=0.02)
    assert abs(_err(on_3090, 1.2)) <= SPEED


R_834 = (
    "UNEXPLAINED (aud50j): published 2.26 s/it (littleyeson, RTX 4090, Win11, kohya #834: Adafactor, rank 32, "
    "text encoders trained, fp32 adapters under bf16 autocast: no --full_bf16), ours 0.9475 -> 0.981 s (-58.1% "
    "-> -56.6%, fix50j: the run's scale_parameter=False Adafactor, 24 ops, and kohya's LoRAModule, 5 + 7 "
    "kernels). Ours is the host floor (UNet 2,138 x 3 + 986 adapters x 12 + encoders 904 x 3 at 31 us, "
    "Adafactor 24 ops on fp32 tensors at 7 us); lead: the thread is about Windows 4090s running slower than 3090s (etha302 4090 "
    "1.45 vs 3090 ~1.2 s/it), a host/driver cost no field states; not sized either: autocast's per-forward "
    "casts of the fp32 adapter weights and their gradients (~4 kernels a module, 986 x 4 x 31 us = 0.12 s) "
    "and --max_grad_norm's clip; the gradient-checkpointing flag is cut from the published excerpt"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_834)
def test_kohya_834_rtx_4090_fp32_adapters(bundled_catalog):
    ours = _size(_kohya(full_bf16=False), "rtx-4090")["throughput"]["step_seconds"]
    assert abs(_err(ours, 2.26)) <= SPEED, ours


# ---------------------------------------------------------------- [KOHYA-LORA] the adapters' kernels

R_KOHYA_LORA = (
    "UNEXPLAINED (aud50j): fix50i charges kohya's 986 adapters LORA_FORWARD_KERNELS 4 + LORA_BACKWARD_KERNELS 6 "
    "(peft's layer: A, B, * scaling, +=), but kohya's LoRAModule.forward [KOHYA-LORA] launches 5 beyond the "
    "original Linear (lora_down, lora_up, * multiplier, * scale, + org) and its backward 7 (the two scalar "
    "muls' grads 2, lora_up and lora_down grad-input and grad-weight 4, the add into x's grad from both "
    "paths 1; AccumulateGrad steals the grad after zero_grad(set_to_none)): 12 a module, 986 x 2 x 31 us = "
    "+0.061 s a step. With the Adafactor args too, [KOHYA-827] reads 0.9889 - 0.0276 + 0.0611 = 1.022 s "
    "(-8.7%, still inside 25%); lead: a per-stack adapter kernel count (kohya 5 + 7, peft 4 + 6)"
)


def test_kohya_lora_module_kernels():
    """FIXED (fix50j; was a strict xfail UNEXPLAINED, R_KOHYA_LORA): image.lora_module kohya charges
    KOHYA_LORA_FORWARD_KERNELS 5 + KOHYA_LORA_BACKWARD_KERNELS 7 a module [KOHYA-LORA]; peft keeps 4 + 6."""
    spec = parse_workload_spec(_kohya())
    assert image_model.lora_training_kernels(spec) == pytest.approx(986 * (5 + 7))
    peft = copy.deepcopy(_kohya())
    del peft["image"]["lora_module"]
    assert image_model.lora_training_kernels(parse_workload_spec(peft)) == pytest.approx(986 * (4 + 6))


# ---------------------------------------------------------------- [BNB-8BIT] AdamW8bit's per-tensor loop

R_BNB = (
    "UNEXPLAINED (aud50j): bitsandbytes' Optimizer8bit.step (AdamW8bit, kohya's and diffusers' --use_8bit_adam) "
    "steps each tensor in Python and calls torch.cuda.synchronize() after each update_step [BNB-8BIT]; "
    "optimizer_host_seconds charges 0 for adamw_8bit, so an SDXL LoRA with the text encoders off (722 "
    "adapters, 1,444 tensors) gets no optimizer term at all: at least 1,444 x (one launch at 7 us + a sync) "
    "~ 0.01-0.05 s a step is missing, more with update_step's Python (get_config, ctypes pointers); lead: count "
    "bnb's loop from its code at the run's release as fix50i did Adafactor's"
)


def test_adamw_8bit_loop_is_charged():
    """FIXED (fix50j; was a strict xfail UNEXPLAINED, R_BNB): 1 op (optimizer_update_8bit_blockwise) and 1
    torch.cuda.synchronize() a tensor [BNB-8BIT]: 1,444 x (7 + 7.1) us = 0.0204 s (was 0)."""
    spec = parse_workload_spec(_kohya(full_bf16=False, optimizer="adamw_8bit", train_te=False))
    assert image_model.lora_layers(spec) == 722
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(1444 * (OP + SYNC), rel=1e-6)
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(0.02036, abs=1e-5)


# ---------------------------------------------------------------- [T5-XXL] the 8-bit T5, counted not fitted


def test_t5_8_bit_saving_counted_from_the_config():
    """[T5-XXL]: a layer's linears 4 x 4096^2 (q, k, v, o) + 3 x 4096 x 10240 (wi_0, wi_1, wo) = 192.94e6;
    x 24 = 4.6305e9, one byte saved each (2 -> 1, quanto qfloat8; its per-channel scales, ~1 MB, left out):
    4.312 GiB, what fix50i charges (params_published less the embedding)."""
    linears = 24 * (4 * 4096**2 + 3 * 4096 * 10240)
    base = {
        "task": "lora",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "lora": {"rank": 16, "targets": "all-linear"},
        "image": {"train_steps": 10, "cache_latents": True, "cache_text_embeddings": False},
    }
    quantized = copy.deepcopy(base)
    quantized["image"]["quantize_text_encoders"] = True
    saved = image_model.text_encoder_quantization_saving_bytes(parse_workload_spec(quantized), 2.0, 1.0)
    assert saved == pytest.approx(linears, rel=0.005)
    assert image_model.text_encoder_quantization_saving_bytes(parse_workload_spec(base), 2.0, 1.0) == 0.0


# ---------------------------------------------------------------- refusals: is any legitimately set?


def test_training_refuses_vae_tiling():
    """The refusal stands with the engine as it is (no training spec sizes the VAE encode's peak, so the flag
    could change nothing); fix50j states that as the reason."""
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {"task": "lora", "model": {"preset": "sdxl"}, "image": {"train_steps": 10, "vae_tiling": True}}
        )
    assert "image.vae_tiling" in str(error.value.errors)


R_VAE_REASON = (
    "UNEXPLAINED (aud50j): the refusal's reason, 'training decodes no image (latents in, noise out)', is wrong "
    "as a reason: diffusers' enable_tiling tiles the encode too (AutoencoderKL.encode takes the tiled path "
    "over the tile size), and SimpleTuner sets vae_enable_tiling / vae_enable_slicing for training, where its "
    "2048 px latent cache went out of memory without it [ST-VAE-TILING]. The honest reason: the engine does not "
    "size the training VAE encode's (latent caching's) peak; lead: say so, or size the encode peak and accept "
    "the flag for training without cache_latents-from-disk"
)


@pytest.mark.parametrize("flag", ["vae_tiling", "vae_slicing"])
def test_training_vae_tiling_refusal_states_the_encode(flag):
    """FIXED (fix50j; was a strict xfail UNEXPLAINED, R_VAE_REASON): the reason names the encode and what is
    not sized, and no longer says training decodes no image."""
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {"task": "lora", "model": {"preset": "sdxl"}, "image": {"train_steps": 10, flag: True}}
        )
    text = str(error.value.errors)
    assert "encode" in text and "the training encode's peak is not sized" in text
    assert "decodes no image" not in text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "spec, field",
    [
        (
            {"task": "lora", "model": {"preset": "sdxl"}, "image": {"train_steps": 10, "steps": 30}},
            "image.steps",
        ),
        (
            {
                "task": "inference",
                "model": {"preset": "flux.1-dev"},
                "image": {"cache_text_embeddings": True},
            },
            "image.cache_text_embeddings",
        ),
        (
            {
                "task": "lora",
                "model": {"preset": "sdxl"},
                "image": {"train_steps": 10, "quantize_text_encoders": True},
            },
            "image.quantize_text_encoders",
        ),
    ],
)
def test_api_refuses_a_field_with_no_meaning_naming_it(bundled_catalog, engineer_client, spec, field):
    """The refusals reach the API as a 400 that names the field (diffusers' validation sampling during training
    sets steps, and a generation with precomputed prompt_embeds drops its encoders: both are refused, the
    second pointing at image.text_encoder_offload, which sizes the same GPU memory)."""
    response = engineer_client.post("/api/size/?gpu=h100-sxm5-80gb", spec, content_type="application/json")
    assert response.status_code == 400, response.content[:500]
    assert field in response.content.decode()
