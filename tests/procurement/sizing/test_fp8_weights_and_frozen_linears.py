"""FP8 weight storage (`fp8_weights`) and the activations frozen linears do not keep, by hand on Llama 2 70B.

Llama 2 70B (model_architectures.json): h = 8192, 64 query heads and 8 KV heads of 128, SwiGLU
I = 28672, 80 layers, no dropout; 68,976,648,192 parameters, of which 68,451,041,280 are block
linears (the rest: a 32000 x 8192 embedding and head, 524,288,000, and the norms, 1,318,912).
"""

import pytest

from procurement.sizing import WorkloadSpecError, gpu_by_slug, size_workload
from procurement.sizing.bytes_model import layer_activation_bytes_per_token, state_bytes
from tests.procurement.sizing.helpers import memory, spec

LLAMA2_70B = {"preset": "llama-2-70b"}
PARAMS, LINEARS = 68_976_648_192, 68_451_041_280
ATTENTION_LORA = {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}
# Per token and layer, 16-bit, no score matrix: attention 2h (QKV input) + 2h (Q) + 4 x 1024 (K, V)
# + 2h (attention output) = 53,248; MLP 2h (gate/up input) + 8I (gate, up, SiLU, product) = 245,760;
# two norm inputs 4h = 32,768.
FULL_LAYER = 53_248 + 245_760 + 32_768
# Frozen gate/up/down without adapters: their input (2h) and the product feeding down (2I) go.
ATTENTION_LORA_LAYER = FULL_LAYER - 2 * 8192 - 2 * 28672


def llama70b(**fields):
    return spec(model=dict(LLAMA2_70B), **fields)


def layer_bytes(workload) -> float:
    return state_bytes(workload).layer_bytes_per_token_no_scores


def test_full_training_keeps_every_linear_input():
    assert layer_bytes(llama70b(task="full_finetune")) == FULL_LAYER == 331_776


def test_lora_on_attention_drops_what_only_the_frozen_mlp_weights_would_read():
    assert layer_bytes(llama70b(task="lora", lora=ATTENTION_LORA)) == ATTENTION_LORA_LAYER == 258_048
    # q and v alone still read the QKV input, so the attention side keeps it.
    assert layer_bytes(llama70b(task="lora", lora={"targets": ["q_proj", "v_proj"]})) == 258_048


def test_lora_on_every_linear_keeps_what_full_training_keeps():
    assert layer_bytes(llama70b(task="lora", lora={"targets": "all-linear"})) == FULL_LAYER


def test_an_adapter_only_on_the_output_projection_frees_the_qkv_input_too():
    assert layer_bytes(llama70b(task="lora", lora={"targets": ["o_proj"]})) == 258_048 - 2 * 8192


def test_qlora_frees_the_same_inputs_as_lora():
    # bitsandbytes' MatMul4Bit saves no input either (ctx.tensors = (None, B)).
    qlora = llama70b(task="qlora", lora={"targets": ["q_proj", "v_proj"]})
    assert layer_bytes(qlora) == 258_048


def test_a_plain_gelu_mlp_frees_its_input_and_the_gelu_output_when_frozen():
    gpt = {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 16, "intermediate_size": 4096}
    gpt |= {"vocab_size": 32000, "gated_mlp": False}
    model = spec(model=gpt).model
    full = layer_activation_bytes_per_token(model, 512, False)
    frozen = layer_activation_bytes_per_token(model, 512, False, trained=frozenset({"q_proj"}))
    assert full - frozen == 2 * 1024 + 2 * 4096


def test_fp8_weights_store_block_linears_in_one_byte():
    bf16 = llama70b(task="lora", precision="fp8", lora=ATTENTION_LORA)
    fp8 = llama70b(task="lora", precision="fp8", fp8_weights=True, lora=ATTENTION_LORA)
    adapters = 16 * (4 * 8192 + 2 * 1024 + 2 * 8192) * 80  # r (d_in + d_out) over q, k, v, o
    assert adapters == 65_536_000
    # fp32 adapters (PEFT/NeMo under mixed precision) in both
    assert state_bytes(bf16).weight_bytes == PARAMS * 2 + adapters * 4
    assert state_bytes(fp8).weight_bytes == LINEARS * 1 + (PARAMS - LINEARS) * 2 + adapters * 4
    # about 64.2 GiB of bf16 weights against 32.2 GiB stored in fp8, per GPU at TP 2
    assert memory(fp8, 8, tensor_parallel=2)["weights_gib"] == pytest.approx(32.49, abs=0.01)


def test_fp8_weights_default_to_off():
    assert llama70b(task="lora", precision="fp8").fp8_weights is False


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"precision": "bf16"}, "needs precision fp8, got bf16"),
        (
            {"precision": "fp8", "weight_quantization": "int8"},
            "set one of fp8_weights and weight_quantization",
        ),
    ],
)
def test_fp8_weights_refuse_a_spec_that_cannot_store_them(fields, message):
    with pytest.raises(WorkloadSpecError) as caught:
        llama70b(task="lora", fp8_weights=True, **fields)
    errors = {error.path: error.message for error in caught.value.errors}
    assert message in errors["fp8_weights"]


def test_the_report_states_the_weight_storage_and_the_inputs_frozen_linears_drop():
    fp8 = llama70b(task="lora", precision="fp8", fp8_weights=True, lora=ATTENTION_LORA)
    summary = size_workload(fp8, [gpu_by_slug("h200-sxm-141gb")])["workload"]
    assert summary["fp8_weights"] is True
    assert summary["memory_assumptions"] == [
        "block-linear weights stored in fp8 (1 byte); embeddings, LM head and norms 16-bit",
        "frozen linears without adapters keep no input for backward: the MLP input, the down_proj input",
    ]
    assert (
        size_workload(llama70b(task="full_finetune"), [gpu_by_slug("h200-sxm-141gb")])["workload"][
            "memory_assumptions"
        ]
        == []
    )


@pytest.mark.django_db
def test_the_sizing_page_shows_the_memory_assumptions(bundled_catalog, client_as):
    # The page's own form: QLoRA on the default q and v adapters leaves the whole MLP frozen.
    form = {
        "source": "fields",
        "name": "page",
        "task": "qlora",
        "preset": "llama-3.1-8b",
        "precision": "bf16",
    }
    form |= {"micro_batch_size": "1", "seq_len": "2048", "gradient_checkpointing": "none", "lora_rank": "16"}
    form |= {"gpus": "1", "zero_stage": "0", "concurrency": "8", "context_len": "4096", "resolution_px": ""}
    html = client_as("engineer").post("/size/", form).content.decode()
    assert 'id="memory-assumptions"' in html
    assert "keep no input for backward: the MLP input, the down_proj input." in html
