"""parallelism.activation_offload_layers: the saved activations of N transformer layers wait for backward in
host memory (Megatron-Core's --cpu-offloading-num-layers; Megatron-Bridge's GB200 Llama 3 70B recipes set
20-40 of 80 layers), checked by hand, and the limits Megatron-Core itself puts on it (TransformerConfig:
no pipeline parallelism, no activation recomputation, fewer layers than the model has).

Llama-2-7B: 32 layers, hidden 4,096, 32 heads of 128 (no GQA), SwiGLU intermediate 11,008, no dropout.
"""

import pytest

from procurement.sizing import WorkloadSpecError
from procurement.sizing.bytes_model import memory_assumptions
from tests.procurement.sizing.helpers import memory, spec

GIB = 2**30
# Bytes a layer keeps per token in 16 bits with flash attention (bytes_model.layer_activation_bytes_per_token):
# q/k/v input 2h, Q 2h, K and V 4h, attention output 2h; MLP input 2h, gate + up + SiLU out 6I, down input
# 2I; two norm inputs 4h: 16h + 8I = 65,536 + 88,064 = 153,600.
LAYER_BYTES_PER_TOKEN = 16 * 4096 + 8 * 11008


def _pretrain(offload_layers=None, **fields):
    parallelism = {"gpus": 1} | fields.pop("parallelism", {})
    if offload_layers is not None:
        parallelism["activation_offload_layers"] = offload_layers
    data = {"task": "pretrain", "training_tokens": 1e9, "seq_len": 2048, "parallelism": parallelism} | fields
    return spec(**data)


def _errors(**fields) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain(**fields)
    return {error.path: error.message for error in raised.value.errors}


def test_it_moves_the_offloaded_layers_activations_to_the_host():
    kept, offloaded = memory(_pretrain()), memory(_pretrain(16))
    moved_gib = 16 * LAYER_BYTES_PER_TOKEN * 2048 / GIB  # 16 layers x 2,048 tokens: 4.6875 GiB
    assert moved_gib == pytest.approx(4.6875)
    assert kept["activations_gib"] - offloaded["activations_gib"] == pytest.approx(moved_gib, rel=1e-9)
    assert offloaded["host_ram_gib"] - kept["host_ram_gib"] == pytest.approx(moved_gib, rel=1e-9)
    # what stays on the GPU is exactly the other 16 layers' share plus the unchanged logits
    assert offloaded["total_per_gpu_gib"] < kept["total_per_gpu_gib"] - moved_gib


def test_it_divides_the_offloaded_bytes_like_the_activations_over_tensor_parallel_ranks():
    plan = {"gpus": 2, "tensor_parallel": 2}
    kept, offloaded = memory(_pretrain(parallelism=plan)), memory(_pretrain(16, parallelism=plan))
    moved_gib = 16 * LAYER_BYTES_PER_TOKEN * 2048 / 2 / GIB  # sequence parallel: 1 / tp a GPU
    assert kept["activations_gib"] - offloaded["activations_gib"] == pytest.approx(moved_gib, rel=1e-9)
    # host_ram_gib is per node: both GPUs' shares
    assert offloaded["host_ram_gib"] - kept["host_ram_gib"] == pytest.approx(2 * moved_gib, rel=1e-9)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"offload_layers": 32}, "must be < model.num_layers (32)"),
        ({"offload_layers": 2000}, "must be <= 1024"),
        ({"offload_layers": -1}, ">= 0"),
        ({"offload_layers": 8, "parallelism": {"gpus": 2, "pipeline_parallel": 2}}, "pipeline_parallel 1"),
        ({"offload_layers": 8, "gradient_checkpointing": "full"}, "not with gradient_checkpointing full"),
        ({"offload_layers": 8, "task": "inference"}, "training only"),
    ],
)
def test_it_refuses_what_megatron_core_refuses(fields, message):
    errors = _errors(**fields)
    assert message in errors.get("parallelism.activation_offload_layers", ""), errors


def test_the_estimate_says_what_it_offloads():
    notes = memory_assumptions(_pretrain(16))
    assert any("16 of the 32 layers wait for backward in host memory" in note for note in notes), notes
    assert not any("activation offload" in note for note in memory_assumptions(_pretrain())), notes
