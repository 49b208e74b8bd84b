"""Hypothesis properties of the memory model: monotone in batch, sequence and size; sharding never hurts."""

from hypothesis import given, settings
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


@settings(max_examples=60, deadline=None)
@given(workloads(task="full_finetune"), st.integers(0, 3), st.integers(0, 5))
def test_it_never_grows_per_gpu_state_with_more_sharding_gpus(data, zero_stage, doublings):
    spec = parse_workload_spec(data | {"parallelism": {"gpus": 1, "zero_stage": zero_stage}})
    fewer = memory_breakdown_scalar(spec, 2**doublings)
    more = memory_breakdown_scalar(spec, 2 ** (doublings + 1))
    for key in STATE_KEYS:
        assert more[key] <= fewer[key] + 1e-9


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_it_requires_at_least_the_total(data):
    result = memory_breakdown_scalar(parse_workload_spec(data))
    assert result["required_per_gpu_gib"] >= result["total_per_gpu_gib"] > 0
