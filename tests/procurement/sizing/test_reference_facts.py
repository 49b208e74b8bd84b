"""DESIGN.md's reference facts, reproduced exactly where they are arithmetic."""

import pytest

from procurement.sizing.assumptions import GB, GIB
from procurement.sizing.bytes_model import optimizer_bytes_per_param, state_bytes
from procurement.sizing.params import count_params, kv_elems_per_token, lora_params
from procurement.sizing.spec import LoraSpec
from tests.procurement.sizing.helpers import memory, spec

# ZeRO paper (Rajbhandari et al. 2019, Figure 1): 7.5B params, Nd = 64, K = 12.
ZERO_PARAMS = 7.5e9


def _zero_states_gb(zero_stage):
    workload = spec(
        model={"preset": "llama-2-7b", "params": ZERO_PARAMS},
        parallelism={"gpus": 64, "zero_stage": zero_stage},
    )
    result = memory(workload)
    gathered = state_bytes(workload).largest_layer_bytes / GIB if zero_stage == 3 else 0.0
    states_gib = result["weights_gib"] - gathered + result["gradients_gib"] + result["optimizer_states_gib"]
    return states_gib * GIB / GB


@pytest.mark.parametrize(("zero_stage", "expected_gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_it_reproduces_the_zero_paper_model_states(zero_stage, expected_gb):
    # ZeRO paper Figure 1: baseline 120 GB, Pos 31.4 GB, Pos+g 16.6 GB, Pos+g+p 1.9 GB.
    assert _zero_states_gb(zero_stage) == pytest.approx(expected_gb, abs=0.05)


def test_it_counts_7b_fp16_weights_as_14_gb():
    # DESIGN: a 7B model in fp16 is about 14 GB (7e9 x 2 bytes).
    workload = spec(task="inference", precision="fp16", model={"preset": "llama-2-7b", "params": 7e9})
    assert state_bytes(workload).weight_bytes == 14e9


def test_it_counts_70b_fp16_weights_as_140_gb():
    workload = spec(task="inference", precision="fp16", model={"preset": "llama-2-70b", "params": 70e9})
    assert state_bytes(workload).weight_bytes == 140e9


# Llama-2-7B (config.json shapes): the block linears, 32 x (4 x 4096^2 + 3 x 4096 x 11008), are quantized;
# the untied embeddings and LM head (2 x 32000 x 4096) and 65 RMSNorms of 4096 stay 16-bit.
LLAMA2_7B_BLOCK_LINEARS = 32 * (4 * 4096**2 + 3 * 4096 * 11008)  # 6,476,005,376
LLAMA2_7B_SIXTEEN_BIT = 2 * 32000 * 4096 + 65 * 4096  # 262,410,240


@pytest.mark.parametrize(
    ("quantization", "bits"),
    [
        ("int4", 4.25),  # 4 bits + an fp16 scale and a 4-bit zero per group of 128 (AWQ/GPTQ default)
        ("nf4", 4.127),  # QLoRA paper: NF4, blocksize 64, double quantization = 4 + 0.127 bits
        ("int8", 8.0),  # LLM.int8 / per-channel int8: scales per output channel
    ],
)
def test_it_counts_quantized_weights_with_metadata_and_16_bit_embeddings(quantization, bits):
    workload = spec(task="inference", weight_quantization=quantization)
    # The split adds up to the preset's 6,738,415,616 (params_computed from HF shapes).
    assert count_params(workload.model) == LLAMA2_7B_BLOCK_LINEARS + LLAMA2_7B_SIXTEEN_BIT
    expected = LLAMA2_7B_BLOCK_LINEARS * bits / 8 + LLAMA2_7B_SIXTEEN_BIT * 2
    assert state_bytes(workload).weight_bytes == pytest.approx(expected, rel=1e-12)


def test_it_puts_4_bit_weights_above_the_half_byte_floor():
    # DESIGN: 7B in 4 bits is about 3.5 GB before quantization metadata. The engine adds the metadata
    # and keeps embeddings/head/norms in 16 bits, so it must land above 7e9 x 0.5 bytes, and below 5 bits.
    workload = spec(
        task="inference", weight_quantization="int4", model={"preset": "llama-2-7b", "params": 7e9}
    )
    assert 3.5e9 < state_bytes(workload).weight_bytes < 7e9 * 5 / 8


def test_it_holds_16_bytes_per_parameter_for_mixed_precision_adam():
    # DESIGN: fp16 weights 2 + grads 2 + fp32 master, m, v 12 = 16 bytes per parameter; 7B -> 112 GB.
    workload = spec(model={"preset": "llama-2-7b", "params": 7e9})
    state = state_bytes(workload)
    per_param = state.weight_bytes / 7e9 + state.grad_bytes_per_param + optimizer_bytes_per_param(workload)
    assert per_param == 16.0
    result = memory(workload)
    states_gib = result["weights_gib"] + result["gradients_gib"] + result["optimizer_states_gib"]
    assert states_gib * GIB == pytest.approx(112e9)


def test_it_computes_llama2_7b_kv_cache_as_512_kib_per_token():
    workload = spec(task="inference")
    assert kv_elems_per_token(workload.model) * 2 == 512 * 1024


def test_it_computes_2_gib_per_4k_request_and_64_gib_for_32():
    # DESIGN: Llama-2-7B, 2 GiB per 4K-token request, 64 GiB for 32 concurrent.
    one = spec(task="inference", inference={"concurrency": 1, "context_len": 4096})
    many = spec(task="inference", inference={"concurrency": 32, "context_len": 4096})
    assert memory(one)["kv_cache_gib"] == 2.0
    assert memory(many)["kv_cache_gib"] == 64.0


def test_it_computes_llama3_8b_kv_cache_as_128_kib_per_token():
    workload = spec(task="inference", model={"preset": "llama-3-8b"})
    assert kv_elems_per_token(workload.model) * 2 == 128 * 1024


def test_it_counts_lora_parameters_for_llama32_3b():
    # DESIGN/issue: Llama-3.2-3B, r = 32 on q_proj and v_proj = 9,175,040 trainable parameters.
    workload = spec(model={"preset": "llama-3.2-3b"})
    assert lora_params(workload.model, LoraSpec(rank=32, targets=("q_proj", "v_proj"))) == 9_175_040


@pytest.mark.parametrize(
    ("preset", "params"),
    [
        ("llama-2-7b", 6_738_415_616),
        ("llama-3-8b", 8_030_261_248),
        ("llama-3.2-3b", 3_212_749_824),
        ("mixtral-8x7b", 46_702_792_704),
        ("qwen2.5-7b", 7_615_616_512),
    ],
)
def test_it_counts_preset_parameters_from_their_shapes(preset, params):
    # params_computed in model_architectures.json (from HF config.json shapes).
    workload = spec(model={"preset": preset})
    assert count_params(workload.model) == params
