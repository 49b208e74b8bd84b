"""lora.modules_to_save (issue 26, lemb49): PEFT's trainable copies of the embedding table and the output layer.

Source of the run: [QWEN-EMB] QwenLM/Qwen @e8e15962 README.md "Profiling of Memory and Speed" (one A100-SXM4-80G,
"LoRA (emb) refers to training the embedding and output layer"; the same rows at @e6f2a7a) and finetune.py 320-334
(`modules_to_save = ["wte", "lm_head"]` for the base models). The mechanism: peft v0.5.0 (7d0324e3)
src/peft/utils/other.py 151-161, ModulesToSaveWrapper.update: `copy.deepcopy(self.original_module)`, the copy
trained, the original kept. Qwen-7B: vocabulary 151,936, hidden 4,096 (Qwen-7B config.json, as
tests/procurement/outside/test_outside_audit_stop43l.py QWEN_7B states it).

Every figure below is the engine's term rebuilt by hand from those counts; nothing is fitted on a README row.
"""

from __future__ import annotations

import pytest

from procurement.sizing import bytes_model, optimizer_step, throughput
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

V, D = 151_936, 4_096  # Qwen-7B (above)
A100_BANDWIDTH = 2_039e9  # A100-SXM4-80GB datasheet, the catalog's memory_bandwidth_gbps
ACHIEVED = 0.70  # assumptions.achieved_bandwidth_fraction
GIB = 1024**3


def _spec(modules=None, **lora):
    data = qwen_lora_spec(MODELS["7b"], 256, 1)
    data["lora"] = data["lora"] | lora | ({"modules_to_save": modules} if modules is not None else {})
    return parse_workload_spec(data)


def test_names_map_to_the_two_kinds_in_order_each_once():
    assert _spec(["lm_head", "wte"]).lora.modules_to_save == ("embeddings", "output")
    assert _spec(["embed_tokens", "word_embeddings"]).lora.modules_to_save == ("embeddings",)
    assert _spec(["output"]).lora.modules_to_save == ("output",)
    assert _spec([]).lora.modules_to_save == ()
    assert _spec().lora.modules_to_save == ()


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (["wte", "c_attn"], "lora.modules_to_save[1]"),
        ([1], "lora.modules_to_save[0]"),
        ({"a": 1}, "lora.modules_to_save"),
        (["wte"] * 9, "lora.modules_to_save"),
    ],
)
def test_a_bad_value_is_refused_by_its_field(value, path):
    with pytest.raises(WorkloadSpecError) as raised:
        _spec(value)
    assert path in [error.path for error in raised.value.errors]


def test_an_image_lora_spec_refuses_it():
    data = {
        "task": "lora",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "lora": {"rank": 4, "targets": "attention", "modules_to_save": ["lm_head"]},
        "image": {"resolution_px": 512},
    }
    with pytest.raises(WorkloadSpecError) as raised:
        parse_workload_spec(data)
    assert "lora.modules_to_save" in [error.path for error in raised.value.errors]


def test_the_copies_memory_is_two_tables_at_bf16_with_bf16_gradients_and_adamw_states():
    """Copies 2 x V x d = 1,244,659,712 parameters: bf16 weight (2 B, the deepcopy of the bf16 model: Qwen's
    modeling_qwen.py autosets bf16 on an A100), bf16 gradient (2 B), torch AdamW's exp_avg / exp_avg_sq in the
    parameter's dtype (2 x 2 B, zeros_like; HF Trainer's default adamw_torch, no master copy without DeepSpeed):
    8 B = 9.958e9 B = 9.274 GiB. The engine's total also carries its fragmentation fraction on it."""
    plain, emb = _spec(), _spec(["wte", "lm_head"])
    copies = 2 * V * D
    assert bytes_model.saved_module_params(emb) == copies == 1_244_659_712
    a, b = memory_breakdown_scalar(plain, 1), memory_breakdown_scalar(emb, 1)
    assert (b["weights_gib"] - a["weights_gib"]) * GIB == pytest.approx(copies * 2.0, rel=1e-9)
    assert (b["gradients_gib"] - a["gradients_gib"]) * GIB == pytest.approx(copies * 2.0, rel=1e-9)
    assert (b["optimizer_states_gib"] - a["optimizer_states_gib"]) * GIB == pytest.approx(
        copies * 4.0, rel=1e-9
    )
    # fix49e: the step's peak (test_the_peak_by_hand) adds 4 B a copy parameter in place of the activations (0.24 GiB
    # here): (12 x copies - activations) x 1.05 fragmentation = 14.35 GiB (was 9.74, 8 B static only). [QWEN-EMB]
    # LoRA (emb) minus LoRA at 7B 256: "33.7G" - "20.1G" = 13.6 G.
    # qwenmem (stop 50): the plain run's activations now carry Qwen-1's loss under autocast (cross_entropy
    # shifted_autocast, 12 B x V a token in place of 4: +8 x 151,936 x 256 B = 0.29 GiB, 0.24 -> 0.53 GiB), which the
    # step's peak replaces: 14.35 -> 14.05 GiB.
    expected = (12.0 * copies - a["activations_gib"] * GIB) * 1.05 / GIB
    assert b["total_per_gpu_gib"] - a["total_per_gpu_gib"] == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(14.05, abs=0.01)


def test_under_zero_with_masters_the_copies_take_deepspeeds_fp32_master_and_states():
    data = qwen_lora_spec(MODELS["7b"], 256, 2)
    data["lora"] = data["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    assert bytes_model.saved_module_optimizer_bytes(parse_workload_spec(data)) == 12.0  # 4 master + 2 x 4
    assert bytes_model.saved_module_optimizer_bytes(_spec(["wte"])) == 4.0  # zero_stage 0: 2 x 2


def test_the_output_copy_adds_its_weight_gradient_flops():
    """Frozen head 4 x V x d a token (forward + input gradient); trained copy 6 x V x d: + 2 x V x d = 1.2447e9."""
    plain, emb = _spec(), _spec(["wte", "lm_head"])
    extra = throughput.training_flops_per_token(emb) - throughput.training_flops_per_token(plain)
    assert extra == pytest.approx(2.0 * V * D, rel=1e-12)
    assert throughput.training_flops_per_token(_spec(["wte"])) == throughput.training_flops_per_token(plain)


def test_the_copies_gradient_passes_and_optimizer_step_by_hand():
    """8 micro-batches: the embedding backward's zero-filled V x d gradient each (8 writes), 7 accumulations into
    .grad of each copy (3 accesses): (8 + 2 x 7 x 3) x V x d x 2 B = 50 x 1.2447e9 B = 62.23 GB at 0.70 x 2,039 GB/s
    = 43.6 ms a step. The optimizer: (20 + 3) x 2 x V x d x 2 B = 57.25 GB = 40.1 ms (optimizer_step's foreach
    AdamW + clip_grad_norm_ count), charged here since the run's own term (pure 16-bit runs only) does not apply."""
    emb = _spec(["wte", "lm_head"])
    passes = throughput.saved_module_pass_seconds(emb, A100_BANDWIDTH / 1e9)
    assert float(passes) == pytest.approx(50 * V * D * 2.0 / (ACHIEVED * A100_BANDWIDTH), rel=1e-9)
    assert float(passes) == pytest.approx(0.0436, abs=0.0001)
    step = optimizer_step.saved_module_seconds_per_step(emb, 1.0, A100_BANDWIDTH)
    assert float(step) == pytest.approx(23 * 2 * V * D * 2.0 / (ACHIEVED * A100_BANDWIDTH), rel=1e-9)
    assert float(step) == pytest.approx(0.0401, abs=0.0001)
    assert float(optimizer_step.saved_module_seconds_per_step(_spec(), 1.0, A100_BANDWIDTH)) == 0.0


# fix49e (aud49e's fix list 1, 2, 3, 7) ------------------------------------------------------------------------------


def _qlora(quantization="nf4", zero=0, precision="bf16"):
    data = qwen_lora_spec(MODELS["7b"], 256, 1)
    data |= {"task": "qlora", "weight_quantization": quantization, "precision": precision}
    data["lora"] = data["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    data["parallelism"] = data["parallelism"] | {"zero_stage": zero}
    return parse_workload_spec(data)


def test_qlora_copies_are_fp32_as_prepare_model_for_kbit_training_casts_them():
    """peft v0.5.0 @4df9c5a2 src/peft/utils/other.py:98-101, prepare_model_for_kbit_training: "cast all non INT8
    parameters to fp32" (every fp16 / bf16 parameter, the embedding and head included) before get_peft_model deep-
    copies them: fp32 weight 4 + fp32 gradient 4 + AdamW exp_avg / exp_avg_sq 2 x 4 = 16 B a copy parameter, no
    master (already fp32). Qwen-7B: 16 x 1,244,659,712 = 19.91e9 B = 18.55 GiB (was 8 B, 9.27 GiB). GPTQ (int4) is
    skipped by the same function (:97, `if not is_gptq_quantized`): its copies stay 16-bit; under ZeRO DeepSpeed
    casts the module to 16 bits (engine.py _configure_distributed_model, stored id 57130323) and keeps an fp32 master
    and states (12 B, unchanged)."""
    spec = _qlora()
    assert bytes_model.saved_module_bytes(spec) == 4.0
    assert bytes_model.saved_module_optimizer_bytes(spec) == 8.0
    copies = bytes_model.saved_module_params(spec)
    state = bytes_model.state_bytes(spec)
    adapters = bytes_model.adapter_params(spec)
    assert state.trainable_params == adapters + copies
    # the copies' gradient and state bytes, out of the weighted means
    grads = state.trainable_params * state.grad_bytes_per_param - adapters * bytes_model._param_bytes(spec)
    assert grads == pytest.approx(4.0 * copies, rel=1e-9)
    assert (16.0 * copies) / GIB == pytest.approx(18.55, abs=0.01)
    assert bytes_model.saved_module_bytes(_qlora("int8")) == 4.0
    assert bytes_model.saved_module_bytes(_qlora("int4")) == 2.0  # GPTQ: not cast, bf16
    assert bytes_model.saved_module_bytes(_qlora(zero=2)) == 2.0
    assert bytes_model.saved_module_optimizer_bytes(_qlora(zero=2)) == 12.0


def test_fp16_without_deepspeed_keeps_fp32_copies_for_the_grad_scaler():
    """torch/cuda/amp/grad_scaler.py _unscale_grads_ (stored 2.x copy, pytorch @02f1c1a5, id 6723063455): `if (not
    allow_fp16) and param.grad.dtype == torch.float16: raise ValueError("Attempting to unscale FP16 gradients.")`,
    allow_fp16 False from unscale_ / step: an fp16 copy cannot train under HF Trainer's fp16 (GradScaler), so a
    working run holds it in fp32: 4 + 4 + 2 x 4 = 16 B. bf16 runs (no scaler) keep 16-bit copies; fp16 under ZeRO
    (DeepSpeed's own loss scaler over its fp32 master) keeps fp16 copies and 12 B of master and states."""
    data = qwen_lora_spec(MODELS["7b"], 256, 1)
    data["precision"] = "fp16"
    data["lora"] = data["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    fp16 = parse_workload_spec(data)
    assert bytes_model.saved_module_bytes(fp16) == 4.0  # weight, and its gradient at the same dtype
    assert 2 * bytes_model.saved_module_bytes(fp16) + bytes_model.saved_module_optimizer_bytes(fp16) == 16.0
    assert bytes_model.saved_module_bytes(_spec(["wte", "lm_head"])) == 2.0  # bf16
    zero = qwen_lora_spec(MODELS["7b"], 256, 2) | {"precision": "fp16"}
    zero["lora"] = zero["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    zero = parse_workload_spec(zero)
    assert bytes_model.saved_module_bytes(zero) == 2.0
    assert bytes_model.saved_module_optimizer_bytes(zero) == 12.0


def test_the_peak_by_hand():
    """bytes_model.saved_module_peak_bytes, Qwen-7B, 8 micro-batches, bf16 copies (2 B), torch AdamW:
    beside the activations, the output copy's fresh V x d gradient next to .grad: 151,936 x 4,096 x 2 = 1.245e9 B;
    after them, max(the embedding backward's zero-filled V x d beside .grad, 1.245e9 B; foreach AdamW's two state-sized
    transients over both copies, 2 x 2 x 1,244,659,712 = 4.979e9 B) = 4.979e9 B. One micro-batch: no accumulation
    buffers. adamw_8bit (bitsandbytes' fused in-place kernel): no step transient."""
    table = V * D
    beside, after = bytes_model.saved_module_peak_bytes(_spec(["wte", "lm_head"]))
    assert beside == pytest.approx(table * 2.0, rel=1e-12)
    assert after == pytest.approx(2 * 2.0 * 2 * table, rel=1e-12)
    assert bytes_model.saved_module_peak_bytes(_spec()) == (0.0, 0.0)
    data = qwen_lora_spec(MODELS["7b"], 256, 1) | {
        "gradient_accumulation_steps": 1,
        "optimizer": "adamw_8bit",
    }
    data["lora"] = data["lora"] | {"modules_to_save": ["wte"]}
    assert bytes_model.saved_module_peak_bytes(parse_workload_spec(data)) == (0.0, 0.0)
    data["gradient_accumulation_steps"] = 2
    assert bytes_model.saved_module_peak_bytes(parse_workload_spec(data)) == (0.0, table * 2.0)
    # QLoRA's fp32 copies: 2 x 4 B x 2 tables = 16 B a table element after the activations
    assert bytes_model.saved_module_peak_bytes(_qlora())[1] == pytest.approx(2 * 4.0 * 2 * table, rel=1e-12)
    # under ZeRO (DeepSpeed steps in place) the memory model charges none of it
    zero = qwen_lora_spec(MODELS["7b"], 256, 2)
    zero["lora"] = zero["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    plain = qwen_lora_spec(MODELS["7b"], 256, 2)
    a, b = (
        memory_breakdown_scalar(parse_workload_spec(plain)),
        memory_breakdown_scalar(parse_workload_spec(zero)),
    )
    assert b["activations_gib"] == pytest.approx(a["activations_gib"], rel=1e-12)


@pytest.mark.parametrize(
    ("value", "kinds"),
    [
        (
            "embed_tokens,lm_head",
            ("embeddings", "output"),
        ),  # LLaMA-Factory additional_target (split_arg at commas)
        ("lm_head", ("output",)),
        (" embed_tokens , lm_head ", ("embeddings", "output")),
        (["model.embed_tokens", "lm_head"], ("embeddings", "output")),  # PEFT matches by suffix
        (["transformer.wte", "base_model.model.lm_head"], ("embeddings", "output")),
    ],
)
def test_a_comma_string_and_dotted_names_are_read_as_peft_and_llama_factory_read_them(value, kinds):
    """LLaMA-Factory's finetuning_args additional_target is one string split at commas (`[item.strip() for item in
    arg.split(",")]`, stored id 1205423110); PEFT wraps each module whose full name ends with an entry (peft v0.5.0
    @4df9c5a2 utils/other.py:205, `key.endswith(target_key)`), so a dotted entry is its last component."""
    assert _spec(value).lora.modules_to_save == kinds


@pytest.mark.parametrize(
    ("value", "path"),
    [("wte,c_attn", "lora.modules_to_save[1]"), (["model.layers.0.mlp"], "lora.modules_to_save[0]")],
)
def test_a_bad_name_in_a_comma_string_or_dotted_path_is_still_refused(value, path):
    with pytest.raises(WorkloadSpecError) as raised:
        _spec(value)
    assert path in [error.path for error in raised.value.errors]
