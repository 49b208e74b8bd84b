"""Hypothesis properties of the memory model: monotone in batch, sequence and size; sharding never hurts."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

TASKS = st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "inference"])
PRESETS = st.sampled_from(["llama-2-7b", "llama-3.2-3b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b"])
CHECKPOINTING = st.sampled_from(["none", "selective", "full"])
STATE_KEYS = ("weights_gib", "gradients_gib", "optimizer_states_gib")


@st.composite
def workloads(draw, **overrides):
    task = draw(TASKS)
    data = {
        "task": task,
        "model": {"preset": draw(PRESETS)},
        "micro_batch_size": draw(st.integers(1, 16)),
        "seq_len": draw(st.integers(1, 16384)),
        "gradient_checkpointing": draw(CHECKPOINTING),
        "flash_attention": draw(st.booleans()),
        "optimizer": draw(st.sampled_from(["adamw", "adamw_8bit", "sgd", "adafactor"])),
        "inference": {"concurrency": draw(st.integers(1, 64)), "context_len": draw(st.integers(300, 32768))},
        "headroom": draw(st.floats(0, 1)),
    }
    return data | overrides


def _total(data) -> float:
    return memory_breakdown_scalar(parse_workload_spec(data))["total_per_gpu_gib"]


@settings(max_examples=60, deadline=None)
@given(workloads(), st.integers(1, 8))
def test_it_never_shrinks_when_batch_grows(data, extra):
    bigger = data | {"micro_batch_size": data["micro_batch_size"] + extra}
    bigger["inference"] = data["inference"] | {"concurrency": data["inference"]["concurrency"] + extra}
    assert _total(bigger) >= _total(data)


@settings(max_examples=60, deadline=None)
@given(workloads(), st.integers(1, 4096))
def test_it_never_shrinks_when_sequence_grows(data, extra):
    longer = data | {"seq_len": data["seq_len"] + extra}
    longer["inference"] = data["inference"] | {"context_len": data["inference"]["context_len"] + extra}
    assert _total(longer) >= _total(data)


@settings(max_examples=60, deadline=None)
@given(workloads(), st.floats(1.0, 3.0))
def test_it_never_shrinks_when_parameters_grow(data, factor):
    small = data | {"model": {"preset": data["model"]["preset"], "params": 1e9}}
    large = data | {"model": {"preset": data["model"]["preset"], "params": 1e9 * factor}}
    assert _total(large) >= _total(small)


TRAINING_TASKS = st.sampled_from(["pretrain", "full_finetune", "lora", "qlora"])
ZERO_STAGES = st.sampled_from([0, 1, 2, 3, "fsdp"])
PER_GPU_KEYS = (*STATE_KEYS, "activations_gib", "kv_cache_gib", "total_per_gpu_gib")


def _per_gpu(data, parallelism) -> dict[str, float]:
    return memory_breakdown_scalar(parse_workload_spec(data | {"parallelism": parallelism}))


def _never_grows(fewer: dict, more: dict, keys) -> None:
    for key in keys:
        assert more[key] <= fewer[key] * (1 + 1e-12) + 1e-12, key


@settings(max_examples=80, deadline=None)
@given(
    workloads(),
    TRAINING_TASKS,
    ZERO_STAGES,
    st.sampled_from([1, 2]),
    st.sampled_from([1, 2]),
    st.integers(0, 5),
)
def test_it_never_grows_per_gpu_state_with_more_data_parallel_gpus(data, task, zero, tp, pp, doublings):
    # ZeRO-1/2/3 and FSDP over data-parallel replicas, for full training, LoRA and QLoRA, with or
    # without tensor/pipeline parallelism underneath: doubling the replicas never grows weights,
    # gradients or optimizer state per GPU (ZeRO-3's gathered largest layer is a constant).
    data = data | {"task": task}
    plan = {"zero_stage": zero, "tensor_parallel": tp, "pipeline_parallel": pp}
    fewer = _per_gpu(data, plan | {"gpus": tp * pp * 2**doublings})
    more = _per_gpu(data, plan | {"gpus": tp * pp * 2 ** (doublings + 1)})
    _never_grows(fewer, more, STATE_KEYS)


@settings(max_examples=80, deadline=None)
@given(workloads(), ZERO_STAGES, st.sampled_from([1, 2, 4]), st.sampled_from([1, 2]))
def test_it_never_grows_per_gpu_memory_with_more_tensor_parallel_gpus(data, zero, tp, pp):
    # Tensor parallel splits weights, their training state, activations (sequence parallel) and
    # KV heads: 2tp GPUs never hold more per GPU than tp, for every task (inference included).
    assume(data["model"]["preset"] != "qwen2.5-7b" or tp < 4)  # 28 heads: tensor parallel 8 is invalid
    plan = {"zero_stage": zero if data["task"] != "inference" else 0, "pipeline_parallel": pp}
    fewer = _per_gpu(data, plan | {"gpus": tp * pp, "tensor_parallel": tp})
    more = _per_gpu(data, plan | {"gpus": 2 * tp * pp, "tensor_parallel": 2 * tp})
    _never_grows(fewer, more, PER_GPU_KEYS)


@settings(max_examples=80, deadline=None)
@given(workloads(), st.sampled_from([1, 2, 4]), st.sampled_from([1, 2]), st.integers(1, 64))
def test_it_never_grows_per_gpu_memory_with_more_pipeline_stages(data, pp, tp, accumulation):
    # Pipeline parallel splits the layers: each stage's weights and state shrink, and 1F1B's first
    # stage keeps min(stages, micro-batches) micro-batches of fewer layers, never more activations.
    data = data | {"gradient_accumulation_steps": accumulation}
    fewer = _per_gpu(data, {"gpus": tp * pp, "tensor_parallel": tp, "pipeline_parallel": pp})
    more = _per_gpu(data, {"gpus": 2 * tp * pp, "tensor_parallel": tp, "pipeline_parallel": 2 * pp})
    _never_grows(fewer, more, PER_GPU_KEYS)


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_it_requires_at_least_the_total(data):
    result = memory_breakdown_scalar(parse_workload_spec(data))
    assert result["required_per_gpu_gib"] >= result["total_per_gpu_gib"] > 0
