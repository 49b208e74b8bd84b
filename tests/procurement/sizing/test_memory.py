"""Memory breakdown per task kind and sharding mode, against hand-computed figures."""

import numpy as np
import pytest

from procurement.sizing import memory_breakdown_gib
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB, FRAGMENTATION_FRACTION, GIB
from procurement.sizing.bytes_model import layer_activation_bytes_per_token, state_bytes
from procurement.sizing.params import embedding_params, lora_params, quantizable_params
from tests.procurement.sizing.helpers import LLAMA3_8B, memory, spec

P7 = 6_738_415_616  # Llama-2-7B parameters (model_architectures.json)


def test_it_reproduces_korthikanti_activations_for_a_gpt_layer():
    # Korthikanti et al. 2022 eq. 1: sbh(34 + 5as/h) per layer (dropout, 4h GeLU MLP, MHA).
    gpt = spec(
        model={
            "num_layers": 24,
            "hidden_size": 2048,
            "num_attention_heads": 16,
            "intermediate_size": 8192,
            "vocab_size": 50000,
            "gated_mlp": False,
            "dropout": True,
        }
    )
    h, a, s = 2048, 16, 1024
    assert layer_activation_bytes_per_token(gpt.model, s, True) == h * (34 + 5 * a * s / h)
    assert layer_activation_bytes_per_token(gpt.model, s, False) == 34 * h


def test_it_sizes_full_finetuning_with_checkpointing_by_hand():
    workload = spec(micro_batch_size=2, seq_len=1024, gradient_checkpointing="full")
    result = memory(workload)
    # Full recomputation keeps 2sbh per layer, one full layer during backward, and fp32 logits.
    tokens, h, layers = 2 * 1024, 4096, 32
    full_layer = layer_activation_bytes_per_token(workload.model, 1024, False)
    expected = tokens * (layers * 2 * h + full_layer + 4 * 32000)
    assert result["activations_gib"] == pytest.approx(expected / GIB)
    assert result["weights_gib"] == pytest.approx(P7 * 2 / GIB)
    assert result["gradients_gib"] == pytest.approx(P7 * 2 / GIB)
    assert result["optimizer_states_gib"] == pytest.approx(P7 * 12 / GIB)


def test_it_makes_pretraining_and_full_finetuning_the_same_size():
    assert memory(spec(task="pretrain")) == memory(spec(task="full_finetune"))


def test_it_drops_the_attention_score_term_with_flash_attention_or_selective_recompute():
    eager = memory(spec(flash_attention=False, seq_len=4096))["activations_gib"]
    flash = memory(spec(flash_attention=True, seq_len=4096))["activations_gib"]
    selective = memory(spec(flash_attention=False, gradient_checkpointing="selective", seq_len=4096))[
        "activations_gib"
    ]
    # Llama-2-7B: 2 a s^2 b bytes per layer without dropout = 2*32*4096^2*32 layers.
    assert eager - flash == pytest.approx(2 * 32 * 4096 * 4096 * 32 / GIB)
    assert selective == flash


def test_it_trains_only_adapters_with_lora():
    workload = spec(task="lora", lora={"rank": 16, "targets": "all-linear"})
    adapters = lora_params(workload.model, workload.lora)
    result = memory(workload)
    # PEFT: fp32 adapters (4 bytes), fp32 gradients (4), AdamW m and v (8).
    assert result["gradients_gib"] == pytest.approx(adapters * 4 / GIB)
    assert result["optimizer_states_gib"] == pytest.approx(adapters * 8 / GIB)
    assert result["weights_gib"] == pytest.approx((P7 * 2 + adapters * 4) / GIB)


def test_it_keeps_embeddings_16_bit_under_qlora():
    workload = spec(task="qlora", model=dict(LLAMA3_8B))
    model = workload.model
    adapters = lora_params(model, workload.lora)
    quantized = quantizable_params(model)
    expected = quantized * 4.127 / 8 + (model.params - quantized) * 2 + adapters * 4
    assert state_bytes(workload).weight_bytes == pytest.approx(expected)
    # The untied 128k-vocabulary embedding and head alone are ~2 GB in 16 bits.
    assert embedding_params(model) * 2 / 1e9 == pytest.approx(2.1, abs=0.01)


def test_it_sizes_inference_weights_kv_and_overhead():
    workload = spec(task="inference", inference={"concurrency": 8, "context_len": 4096, "output_tokens": 256})
    result = memory(workload)
    tensors = sum(result[k] for k in ("weights_gib", "activations_gib", "kv_cache_gib"))
    assert result["kv_cache_gib"] == 16.0  # 512 KiB x 4096 x 8
    assert result["framework_overhead_gib"] == pytest.approx(
        CUDA_CONTEXT_GIB + FRAGMENTATION_FRACTION * tensors
    )
    assert result["total_per_gpu_gib"] == pytest.approx(tensors + result["framework_overhead_gib"])
    assert result["required_per_gpu_gib"] == pytest.approx(result["total_per_gpu_gib"] * 1.2)


def test_it_halves_the_kv_cache_with_fp8():
    bf16 = memory(spec(task="inference", inference={"kv_cache_dtype": "bf16"}))["kv_cache_gib"]
    fp8 = memory(spec(task="inference", inference={"kv_cache_dtype": "fp8"}))["kv_cache_gib"]
    assert fp8 == bf16 / 2


def test_it_splits_weights_and_kv_over_tensor_parallel_ranks():
    one = memory(spec(task="inference", model=dict(LLAMA3_8B)))
    four = memory(
        spec(task="inference", model=dict(LLAMA3_8B), parallelism={"gpus": 4, "tensor_parallel": 4})
    )
    assert four["weights_gib"] == pytest.approx(one["weights_gib"] / 4)
    assert four["kv_cache_gib"] == pytest.approx(one["kv_cache_gib"] / 4)


def test_it_replicates_kv_heads_when_tensor_parallel_exceeds_them():
    # Llama-3-8B has 8 KV heads: at TP 16 each rank still holds one whole head (1/8 of the cache).
    one = memory(spec(task="inference", model=dict(LLAMA3_8B)))["kv_cache_gib"]
    sixteen = memory(
        spec(task="inference", model=dict(LLAMA3_8B), parallelism={"gpus": 16, "tensor_parallel": 16})
    )
    assert sixteen["kv_cache_gib"] == pytest.approx(one / 8)


def test_it_keeps_all_moe_experts_resident():
    mixtral = spec(task="inference", model={"preset": "mixtral-8x7b"})
    assert memory(mixtral)["weights_gib"] == pytest.approx(46_702_792_704 * 2 / GIB)


@pytest.mark.parametrize(
    ("zero_stage", "sharded"),
    [
        (0, set()),
        (1, {"optimizer_states_gib"}),
        (2, {"optimizer_states_gib", "gradients_gib"}),
        (3, {"optimizer_states_gib", "gradients_gib", "weights_gib"}),
    ],
)
def test_it_shards_state_by_zero_stage(zero_stage, sharded):
    single = memory(spec(parallelism={"gpus": 1}))
    eight = memory(spec(parallelism={"gpus": 8, "zero_stage": zero_stage}))
    for key in ("optimizer_states_gib", "gradients_gib"):
        assert eight[key] == pytest.approx(single[key] / 8 if key in sharded else single[key])
    if zero_stage == 3:  # ZeRO-3 keeps the largest layer gathered whole: a block of 202,383,360 params
        gathered = (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) * 2 / GIB
        assert eight["weights_gib"] == pytest.approx(single["weights_gib"] / 8 + gathered)


def test_it_divides_weights_by_pipeline_stages_but_keeps_first_stage_activations():
    base = dict(micro_batch_size=1, gradient_accumulation_steps=8)
    one = memory(spec(**base))
    four = memory(spec(**base, parallelism={"gpus": 4, "pipeline_parallel": 4}))
    assert four["weights_gib"] == pytest.approx(one["weights_gib"] / 4)
    # 1F1B: the first stage holds 4 micro-batches of 8 layers = 32 layers' activations (no logits).
    logits = 2048 * 4 * 32000 / GIB
    assert four["activations_gib"] == pytest.approx(one["activations_gib"] - logits)


def test_it_moves_offloaded_state_to_host_ram():
    base = {"gpus": 2, "zero_stage": 3}
    on_gpu = memory(spec(parallelism=base))
    offloaded = memory(spec(parallelism=base | {"offload": "optimizer"}))
    assert offloaded["optimizer_states_gib"] == 0 and offloaded["gradients_gib"] == 0
    assert offloaded["host_ram_gib"] == pytest.approx(
        2 * (on_gpu["optimizer_states_gib"] + on_gpu["gradients_gib"])
    )
    params_too = memory(spec(parallelism=base | {"offload": "optimizer_and_params"}))
    assert params_too["weights_gib"] < on_gpu["weights_gib"] / 2  # only the gathered layer stays
    assert params_too["host_ram_gib"] > offloaded["host_ram_gib"]


def test_it_keeps_one_layer_of_gradients_with_the_optimizer_in_backward():
    fused = memory(spec(optimizer_in_backward=True))["gradients_gib"]
    assert fused < memory(spec())["gradients_gib"] / 10


@pytest.mark.parametrize(
    ("optimizer", "bytes_per_param"),
    [("adamw", 12.0), ("adamw_8bit", 6.0), ("paged_adamw_8bit", 6.0), ("sgd", 8.0)],
)
def test_it_sizes_each_optimizer(optimizer, bytes_per_param):
    # fp32 master (4) + states: AdamW fp32 m,v 8; 8-bit m,v 2; SGD momentum fp32 4.
    result = memory(spec(optimizer=optimizer, model={"preset": "llama-2-7b", "params": 1e9}))
    assert result["optimizer_states_gib"] == pytest.approx(1e9 * bytes_per_param / GIB)


def test_it_sizes_adafactor_below_a_byte_per_parameter():
    result = memory(spec(optimizer="adafactor", model={"preset": "llama-2-7b", "params": 1e9}))
    assert 1e9 * 4 / GIB < result["optimizer_states_gib"] < 1e9 * 5 / GIB  # fp32 master + factored moments


def test_it_vectorizes_over_plans_and_marks_invalid_ones_nan():
    workload = spec()
    counts = np.array([1, 2, 3, 4, 8])
    result = memory_breakdown_gib(workload, counts, zero_stage=3, tensor_parallel=2)
    assert np.isnan(result["total_per_gpu_gib"][[0, 2]]).all()  # 1 and 3 GPUs cannot hold TP 2
    single = [
        memory(workload, int(c), zero_stage=3, tensor_parallel=2)["total_per_gpu_gib"] for c in (2, 4, 8)
    ]
    assert result["total_per_gpu_gib"][[1, 3, 4]] == pytest.approx(single)


def test_it_scales_image_tier_activations_with_pixel_count():
    reference = memory(spec(task="full_finetune", model={"preset": "yolo-small"}))
    doubled = memory(
        spec(task="full_finetune", model={"preset": "yolo-small"}, image={"resolution_px": 1280})
    )
    assert doubled["activations_gib"] == pytest.approx(4 * reference["activations_gib"])
    # At the reference 640 px / batch 16 the tier estimate is the top of the guide's 8-12 GB range.
    assert reference["total_per_gpu_gib"] == pytest.approx(12e9 / GIB)


@pytest.mark.parametrize(
    ("preset", "task", "high_gb"),
    [("sd1x-tier", "lora", 16.0), ("sdxl-tier", "inference", 24.0), ("sdxl-tier", "lora", 24.0)],
)
def test_it_uses_the_guides_tiers_for_diffusion(preset, task, high_gb):
    assert memory(spec(task=task, model={"preset": preset}))["total_per_gpu_gib"] == pytest.approx(
        high_gb * 1e9 / GIB
    )
