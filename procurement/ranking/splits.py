"""What a tensor-parallel degree must split, as the engines check it (issue 26, class 3, aud49k): the attention
heads (gate ``tp_heads``) and the MLP's width with its quantization groups or blocks (gate ``tp_mlp``), and the
serving engines' answer where no degree splits a replica's GPUs: a pipeline over them (vLLM's guide)."""

from __future__ import annotations

import numpy as np

from procurement.sizing import WorkloadSpec
from procurement.sizing.bytes_model import int4_group_size

# AWQ and GPTQ checkpoints quantize in groups of 128 input channels (AutoAWQ's and AutoGPTQ's default
# q_group_size / group_size 128, the group every int4 checkpoint of the presets ships with): the group of an
# unstated inference.quant_format; a stated gptq / awq format checks its inference.quant_group_size instead.
INT4_GROUP_SIZE = 128
# Block-wise FP8 weights (DeepSeek-V3's and Qwen3's FP8 checkpoints: quantization_config weight_block_size
# [128, 128]), the FP8 MoE checkpoints the engines serve.
FP8_BLOCK_SIZE = 128


def tensor_parallel_splits_heads(spec: WorkloadSpec, tensor_parallel) -> np.ndarray:
    """Per shape: the TP degree splits the attention heads the way the engines require. Every engine refuses a
    degree that does not divide the query heads (vLLM: "Total number of attention heads (32) must be divisible by
    tensor parallel size (3)", vllm/config.py ModelConfig.verify_with_parallel_config; TensorRT-LLM and SGLang
    likewise). Serving engines split the KV heads (kv % tp == 0) or replicate them whole (tp % kv == 0: vLLM's
    QKVParallelLinear, SGLang's copy of it, TensorRT-LLM); Megatron-Core never replicates them (it requires
    num_query_groups % tp == 0), so training needs kv % tp == 0 (aud49k). A 3-GPU instance holds no TP group of
    a 32-head model."""
    tp = np.asarray(tensor_parallel, dtype=float)
    if spec.model.is_image or not spec.model.num_attention_heads:
        return np.ones(np.shape(tp), dtype=bool)
    heads = float(spec.model.num_attention_heads)
    kv = float(spec.model.num_key_value_heads or spec.model.num_attention_heads)
    degree = np.maximum(tp, 1.0)
    kv_split = np.mod(kv, degree) == 0
    if not spec.is_training:
        kv_split = kv_split | (np.mod(degree, kv) == 0)
    return (np.mod(heads, degree) == 0) & kv_split


def mlp_widths(spec: WorkloadSpec) -> tuple[int, ...]:
    """The MLP widths a tensor-parallel group splits: the dense MLP's and, for an MoE model whose experts are
    not expert-parallel (whole experts a rank), its experts'."""
    model = spec.model
    widths = {int(model.intermediate_size or 0)}
    if model.is_moe and model.moe_intermediate_size and spec.parallelism.expert_parallel == 1:
        widths.add(int(model.moe_intermediate_size))
    return tuple(sorted(width for width in widths if width > 1))


def mlp_split_unit(spec: WorkloadSpec) -> tuple[int, tuple[int, ...], str]:
    """(the multiple each rank's MLP slice must be, the widths it applies to, why): 1 unless the serving engine
    quantizes the slices in groups or blocks (int4: every MLP width; block FP8: an MoE model's experts)."""
    if spec.is_training or spec.model.is_image:
        return 1, (), ""
    if spec.weight_quantization == "int4":
        return int4_split_unit(spec)
    experts_split = spec.model.is_moe and spec.parallelism.expert_parallel == 1  # else whole experts a rank
    if experts_split and spec.precision == "fp8" and spec.model.moe_intermediate_size:
        experts = (int(spec.model.moe_intermediate_size),)
        return FP8_BLOCK_SIZE, experts, f"FP8 expert blocks of {FP8_BLOCK_SIZE}"
    return 1, (), ""


def int4_split_unit(spec: WorkloadSpec) -> tuple[int, tuple[int, ...], str]:
    """The int4 formats' TP rule (inference.quant_format). unstated, gptq, awq: each rank's slice holds whole groups
    of the stated size (vLLM v0.6.3 gptq.py / awq.py create_weights: input_size_per_partition % group_size != 0
    raises); per output channel (-1) nothing to hold whole. mxfp4: none: vLLM's gpt-oss loader splits the width in
    whole 32-wide blocks, cdiv(blocks, tp) a rank, the last rank the rest (vllm/model_executor/models/gpt_oss.py
    _load_weights_mxfp4: per_rank_intermediate_size_block = cdiv(intermediate_size_block, tp_size)), and mxfp4.py
    Mxfp4MoEMethod.create_weights pads each rank's slice up to a multiple of 64 "to hold non-uniform sharded
    tensor" (vLLM's gpt-oss release line, 0.10.1), so no degree is refused for its blocks."""
    fmt = spec.inference.quant_format
    group = int4_group_size(spec)
    if fmt == "mxfp4" or group == -1:
        return 1, (), ""
    if group is None:
        return INT4_GROUP_SIZE, mlp_widths(spec), f"int4 groups of {INT4_GROUP_SIZE} (AWQ/GPTQ)"
    return group, mlp_widths(spec), f"{fmt} groups of {group} (inference.quant_group_size)"


def tensor_parallel_splits_mlp(spec: WorkloadSpec, tensor_parallel) -> np.ndarray:
    """Per shape: the TP degree splits the MLP as the engines require. Column/row-parallel linears divide the
    width by the degree (vLLM's ``divide`` asserts it; Megatron-Core's ColumnParallelLinear likewise). Serving
    int4 weights quantized in groups of 128 need each rank's slice of the down projection's input to hold whole
    groups (vLLM awq.py / gptq.py create_weights: "The input size is not aligned with the quantized weight shape.
    This can be caused by too large tensor parallel size."; Qwen2-72B-Instruct-AWQ's width 29,568 = 231 groups is
    padded to 29,696 for TP 2, 4, 8); block-FP8 MoE experts need whole 128-wide blocks a rank (vLLM fp8.py
    Fp8MoEMethod.create_weights: "The output_size of gate's and up's weight = 96 is not divisible by weight
    quantization block_n = 128", Qwen3-30B-A3B-FP8 at TP 8). Training checks the width only (expert-parallel
    layouts vary)."""
    degree = np.maximum(np.asarray(tensor_parallel, dtype=float), 1.0)
    keep = np.ones(np.shape(degree), dtype=bool)
    if spec.model.is_image:
        return keep
    for width in mlp_widths(spec):
        keep &= np.mod(float(width), degree) == 0
    unit, grouped, _ = mlp_split_unit(spec)
    # at TP 1 nothing is split: the checkpoint loads in the layout it was quantized in (a published int4 / FP8
    # checkpoint holds whole groups of its own; gpt-oss's MXFP4 groups are 32 wide, not AWQ's 128, x26e)
    split = degree > 1
    for width in grouped:
        keep &= ~split | (np.mod(float(width) / degree, float(unit)) == 0)
    return keep


def tensor_parallel_splits(spec: WorkloadSpec, tensor_parallel) -> np.ndarray:
    """Per shape: the degree splits both the heads and the MLP (``tp_heads`` and ``tp_mlp``)."""
    return tensor_parallel_splits_heads(spec, tensor_parallel) & tensor_parallel_splits_mlp(
        spec, tensor_parallel
    )


def serving_stage_tensor_parallel(spec: WorkloadSpec) -> int:
    """The tensor-parallel degree of each stage of a stated serving pipeline: the stated ``tensor_parallel``; else
    the stated ``gpus`` (a replica's) over the stated ``pipeline_parallel`` where it divides them (vLLM's world size
    is tensor x pipeline, vllm/config.py ParallelConfig.world_size); else 1 (vLLM's default TP)."""
    par = spec.parallelism
    if "tensor_parallel" in par.stated:
        return int(par.tensor_parallel)
    pipeline = int(par.pipeline_parallel)
    if "gpus" in par.stated and pipeline > 1 and par.gpus % pipeline == 0:
        return int(par.gpus) // pipeline
    return 1


def serving_pipeline_plans(spec: WorkloadSpec, grid) -> np.ndarray:
    """Per shape: the whole-instance model-parallel plan a serving replica runs as a pipeline, TP t x PP n / t
    over the instance's n GPUs. vLLM's distributed-serving guide (docs/serving/distributed_serving.md): "if the
    model fits in a single node with multiple GPUs, but the number of GPUs cannot divide the model size evenly,
    you can use pipeline parallelism, which splits the model along layers and supports uneven splits. In this
    case, the tensor parallel size should be 1 and the pipeline parallel size should be the number of GPUs." So:
    where TP n does not split the model (``tensor_parallel_splits``), TP 1 x PP n; where the spec states
    ``pipeline_parallel: p``, the instances of p x t GPUs (t: ``serving_stage_tensor_parallel``), each stage a TP
    group of t (the guide's multi-node form, "tensor parallel size the number of GPUs in each node, pipeline
    parallel size the number of nodes", which vLLM also runs inside one node: [SUBSTRATUS] PP 4 x TP 2 on 8 x L4).
    Training and image models: none."""
    none = np.zeros(np.shape(grid.tensor_parallel), dtype=bool)
    if spec.is_training or spec.model.is_image:
        return none
    par = spec.parallelism
    whole = grid.uses_tp & (grid.partial_tp == 0) & (grid.per_instance > 1)
    if "pipeline_parallel" in par.stated and par.pipeline_parallel > 1:
        replica = par.pipeline_parallel * serving_stage_tensor_parallel(spec)
        return whole & (grid.per_instance == replica)
    if "tensor_parallel" in par.stated and par.tensor_parallel > 1:
        return none  # the stated degree is the plan (contract.py); the heads gate says why it does not run
    return whole & ~tensor_parallel_splits(spec, grid.tensor_parallel)
