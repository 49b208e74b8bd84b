"""quantization.prepare_kbit: peft's prepare_model_for_kbit_training left the non-quantized weights fp32.

peft v0.5.0 src/peft/utils/other.py 92-101 casts every fp16 / bf16 parameter of a bitsandbytes 4- / 8-bit model to
fp32 (embeddings, LM head, norms) and skips the cast when quantization_method is "gptq". Stacks that cast the
embeddings and head back under bf16 (TRL's SFTTrainer, trl v0.9.6 sft_trainer.py 240 / 272 and utils.py 765-772;
artidoro/qlora qlora.py @7f4e95a6 402-405) keep the default, 16-bit.
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.bytes_model import weights_bytes
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError

GIB = 2**30
# Llama 3.1 8B (meta-llama/Llama-3.1-8B config.json: vocab 128,256, hidden 4,096, 32 layers, untied head): the
# parameters outside the block linears are the input table and the head, 2 x 128,256 x 4,096 = 1,050,673,152, and
# 2 x 32 + 1 RMSNorm weights of 4,096 = 266,240: 1,050,939,392.
LLAMA31_8B_NON_QUANTIZED = 2 * 128256 * 4096 + (2 * 32 + 1) * 4096


def qlora_spec(quantization: dict | None = None, weight_quantization: str = "nf4", task: str = "qlora"):
    data = {
        "task": task,
        "model": {"preset": "llama-3.1-8b"},
        "weight_quantization": weight_quantization,
        "lora": {"rank": 32, "targets": "all-linear"},
        "micro_batch_size": 1,
        "seq_len": 932,
        "gradient_checkpointing": "full",
        "parallelism": {"gpus": 1},
        "training_tokens": 1e7,
    }
    if task == "full_finetune":
        data.pop("lora")
    if quantization is not None:
        data["quantization"] = quantization
    return parse_workload_spec(data)


def test_it_counts_the_non_quantized_weights_at_fp32_when_stated():
    # 4 B instead of 2 B on 1,050,939,392 weights: + 2,101,878,784 B (1.9575 GiB)
    added = weights_bytes(qlora_spec({"prepare_kbit": True})) - weights_bytes(qlora_spec())
    assert LLAMA31_8B_NON_QUANTIZED == 1_050_939_392
    assert added == pytest.approx(2 * LLAMA31_8B_NON_QUANTIZED)


def test_it_keeps_todays_count_by_default():
    # stated false is the default: the same total as the unstated spec, to the byte
    unstated = memory_breakdown_scalar(qlora_spec())["total_per_gpu_gib"]
    assert memory_breakdown_scalar(qlora_spec({"prepare_kbit": False}))["total_per_gpu_gib"] == unstated


def test_it_counts_the_cast_on_an_8_bit_bitsandbytes_model_too():
    # the same function, the same cast on load_in_8bit (other.py: `loaded_in_kbit` covers both)
    added = weights_bytes(qlora_spec({"prepare_kbit": True}, "int8")) - weights_bytes(
        qlora_spec(None, "int8")
    )
    assert added == pytest.approx(2 * LLAMA31_8B_NON_QUANTIZED)


@pytest.mark.parametrize(
    ("weight_quantization", "task", "quantization", "says"),
    [
        ("int4", "qlora", {"prepare_kbit": True}, "GPTQ"),  # peft skips the cast on a GPTQ model
        ("none", "lora", {"prepare_kbit": True}, "qlora"),  # a 16-bit model is not k-bit
        ("none", "full_finetune", {"prepare_kbit": True}, "qlora"),
        ("nf4", "qlora", {"prepare_kbit": True, "lm_head_4bit": True}, "Lightning"),
    ],
)
def test_it_refuses_prepare_kbit_where_peft_does_not_cast(weight_quantization, task, quantization, says):
    with pytest.raises(WorkloadSpecError) as error:
        qlora_spec(quantization, weight_quantization, task)
    text = str(error.value)
    assert "quantization.prepare_kbit" in text and says in text


def test_it_refuses_a_non_boolean():
    with pytest.raises(WorkloadSpecError) as error:
        qlora_spec({"prepare_kbit": "sometimes"})
    assert "quantization.prepare_kbit" in str(error.value)


def test_the_sizing_form_states_it_on_qlora_only():
    from procurement.sizing.documents import spec_from_knobs

    knobs = {"task": "qlora", "preset": "llama-3.1-8b", "prepare_kbit": "true"}
    assert spec_from_knobs(knobs)["quantization"] == {"prepare_kbit": True}
    # the default is left out of the document; a lora form never carries the knob
    assert "quantization" not in spec_from_knobs(knobs | {"prepare_kbit": "false"})
    assert "quantization" not in spec_from_knobs(knobs | {"task": "lora"})
