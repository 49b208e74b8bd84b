"""torchtitan's op-level selective activation checkpointing (gradient_checkpointing: selective_op) and its eager
loss (cross_entropy: torchtitan), counted by hand from pytorch/torchtitan @9dec370ad26b5f8e9a7333a0e36165018262644b:
torchtitan/parallelisms/parallelize_llama.py `_save_list` (aten.mm except every second call, the SDPA ops,
reduce_scatter) and train.py's loss_fn (F.cross_entropy(pred.flatten(0, 1).float(), labels), `del pred` before
backward). Llama 3.1 8B: h 4,096, 32 heads of 128, 8 KV heads, intermediate 14,336, 32 layers, vocabulary 128,256.
"""

import pytest

from procurement.sizing.bytes_model import logits_bytes_per_token, op_level_saved_bytes_per_token
from procurement.sizing.memory import _op_level_kept_per_layer, memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import recomputed_forward_flops_per_token

LLAMA_8B = {
    "task": "pretrain",
    "model": {"preset": "llama-3.1-8b"},
    "precision": "bf16",
    "micro_batch_size": 2,
    "seq_len": 8192,
    "gradient_checkpointing": "selective_op",
    "parallelism": {"gpus": 8, "zero_stage": "fsdp"},
}
GIB = 2**30


def test_it_keeps_the_input_every_other_matmul_and_attention_by_hand():
    # input 2 x 4,096; wq 2 x 4,096, wv 2 x 1,024, w1 2 x 14,336, w2 2 x 4,096 (matmuls 1, 3, 5, 7);
    # SDPA output 2 x 4,096 and its fp32 log-sum-exp 4 x 32: 8,192 + 55,296 - 8,192 + 8,320 = 63,616 B a token
    model = parse_workload_spec(LLAMA_8B).model
    assert op_level_saved_bytes_per_token(model) == 63616


def test_it_recomputes_wk_wo_and_w3_in_backward():
    # 2 x (4,096 x 1,024 + 4,096 x 4,096 + 4,096 x 14,336) x 32 layers = 5.100e9 FLOPs a token
    spec = parse_workload_spec(LLAMA_8B)
    assert recomputed_forward_flops_per_token(spec) == pytest.approx(2 * 4096 * (1024 + 4096 + 14336) * 32)


def test_it_counts_the_layers_at_what_they_keep_on_a_gpu():
    # 32 layers x 2 x 8,192 tokens x 63,616 B = 31.06 GiB, plus one layer recomputed in backward and the loss
    plain = memory_breakdown_scalar(parse_workload_spec(LLAMA_8B))
    megatron = memory_breakdown_scalar(
        parse_workload_spec(LLAMA_8B | {"gradient_checkpointing": "selective"})
    )
    layers = 32 * 16384 * 63616 / GIB
    assert layers < plain["activations_gib"] < layers + 12
    assert plain["activations_gib"] < megatron["activations_gib"] / 2


def test_it_keeps_the_full_width_partial_sum_of_w2_under_tensor_parallelism():
    # TP 2: everything of the 63,616 B splits over the two ranks (31,808) except w2's saved output, the partial
    # sum at the full 2 x 4,096 on each rank (4,096 more than its half), and the two reduce_scatter outputs
    # (wo, w2) 2 x 4,096 / 2 each (8,192): 31,808 + 4,096 + 8,192 = 44,096 B a token on a rank
    spec = parse_workload_spec(
        LLAMA_8B | {"parallelism": {"gpus": 8, "zero_stage": "fsdp", "tensor_parallel": 2}}
    )

    assert _op_level_kept_per_layer(spec, 2) / 2 == pytest.approx(44096)
    assert _op_level_kept_per_layer(spec, 1) == pytest.approx(63616)


def test_torchao_float8_keeps_the_same_matmul_outputs():
    # torchao's Float8Linear calls torch.mm on Float8Tensors: the policy counts and saves it as in bf16
    bf16 = memory_breakdown_scalar(parse_workload_spec(LLAMA_8B))
    fp8 = memory_breakdown_scalar(
        parse_workload_spec(LLAMA_8B | {"precision": "fp8", "fp8_recipe": "torchao"})
    )
    assert fp8["activations_gib"] == pytest.approx(bf16["activations_gib"])


def test_torchtitan_loss_peaks_at_twelve_bytes_a_vocabulary_entry():
    # backward of log_softmax: nll_loss's fp32 gradient, the saved fp32 log-softmax, the fp32 input gradient
    spec = parse_workload_spec(LLAMA_8B | {"cross_entropy": "torchtitan"})
    assert logits_bytes_per_token(spec) == 12 * 128256


def test_a_compiled_loss_holds_the_logits_and_their_gradient():
    spec = parse_workload_spec(LLAMA_8B | {"cross_entropy": "compiled"})
    assert logits_bytes_per_token(spec) == 2 * 2 * 128256


def test_torchtitan_loss_under_tensor_parallelism_is_pytorchs_loss_parallel():
    # loss_parallel's fused backward: saved log-softmax, zeros_like grad_input, exp(x) and their sum, 16 x V / tp
    spec = parse_workload_spec(LLAMA_8B | {"cross_entropy": "torchtitan"})
    assert logits_bytes_per_token(spec, tensor_parallel=True) == 16 * 128256


@pytest.mark.parametrize(
    "change",
    [
        {"precision": "fp8"},
        {"task": "lora", "lora": {"rank": 16, "targets": "all-linear"}},
        {"model": {"preset": "mixtral-8x7b"}},
    ],
)
def test_it_refuses_what_the_op_list_is_not_counted_for(change):
    with pytest.raises(WorkloadSpecError, match="selective_op"):
        parse_workload_spec(LLAMA_8B | change)


def test_fsdp_gathers_only_a_gpus_local_experts_under_expert_parallelism():
    # GPT-OSS-120B shape (36 layers, h 2,880, 64 heads of 64, 8 KV heads, 128 experts of width 2,880, top-4):
    # one MoE layer holds 128 x 3 x 2,880^2 = 3.185e9 expert weights; under EP 64 a GPU gathers 2 of them
    from procurement.sizing.params import largest_layer_params, layer_params

    gpt_oss = {
        "name": "gpt-oss-120b",
        "num_layers": 36,
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "intermediate_size": 2880,
        "moe_intermediate_size": 2880,
        "num_experts": 128,
        "experts_per_token": 4,
        "vocab_size": 201088,
    }
    model = parse_workload_spec({"task": "pretrain", "model": gpt_oss}).model
    assert layer_params(model) - layer_params(model, 64) == 126 * 3 * 2880 * 2880
    assert largest_layer_params(model) == layer_params(model)
    assert (
        largest_layer_params(model, 64) == 201088 * 2880
    )  # the embedding table is then the largest gathered
