"""Issue 26, outside audit at stop 49 (aud49b) of bnb49 (spec quantization.bnb_version / lm_head_4bit).

Held-out cases (no test had them: grep of tests/ for "config_hub" / "13.68" / "14.29" / "5.24 GB": none): a later
LitGPT table with a stated bitsandbytes release, stated with bnb49's fields.

Source [HUB]: Lightning-AI/litgpt @e54939861b6f35ddd945c2e95cfc7abac0fba75a config_hub/finetune/README.md ("All
experiments were conducted using bfloat-16 precision on the Alpaca2k dataset"; "Peak memory"), pyproject.toml at the
same commit pins "bitsandbytes==0.42.0" and lightning==2.3.0.dev20240428, whose plugin still quantizes from torch.half
(src/lightning/fabric/plugins/precision/bitsandbytes.py `weight.contiguous().to(device=device, dtype=torch.half)`;
unchanged at Lightning HEAD 7f0c3436cd) and replaces every nn.Linear (the LM head 4-bit). Configs at that commit
(config_hub/finetune/<model>/qlora.yaml): precision bf16-true, quantize bnb.nf4 (NOT double-quantized), lora_r 32,
alpha 16, dropout 0.05, q and v only, max_seq_length 512. Rows (1xA10G): "llama-2-7b/qlora.yaml | 4 | 512 | 2 |
13.68 GB", "mistral-7b/qlora.yaml | 4 | 512 | 2 | 14.29 GB", "stablelm-base-alpha-3b/qlora.yaml | 4 | 512 | 1 |
5.24 GB"; bf16 LoRA siblings 19.77 / 20.66 / 8.58 GB. Memory bar 10%. fix49b states bnb.nf4 as
quantization.nf4_double_quant false (the config's quantize: bnb.nf4).
"""

from __future__ import annotations

import pytest

from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_qlora_fp16copy_audit_stop49 import SHAPES

GIB = 1024**3
# [HUB] pyproject pin; Lightning plugin: 4-bit head (so fp16 storage, implied: bnb_memory.stores_fp16); quantize
# bnb.nf4, not bnb.nf4-dq (fix49b: quantization.nf4_double_quant false, a float32 absmax per 64 weights)
HUB_BNB = {"bnb_version": "0.42.0", "lm_head_4bit": True, "nf4_double_quant": False}
MICRO_BATCH = {"llama-2-7b": 2, "mistral-7b": 2, "stablelm-alpha-3b": 1}
LORA_GB = {"llama-2-7b": 19.77, "mistral-7b": 20.66, "stablelm-alpha-3b": 8.58}
QLORA_GB = {"llama-2-7b": 13.68, "mistral-7b": 14.29, "stablelm-alpha-3b": 5.24}


def hub_spec(model: str, quantized: bool) -> dict:
    spec = {
        "task": "qlora" if quantized else "lora",
        "model": SHAPES[model] if model in SHAPES else {"preset": model},
        "precision": "bf16",
        "master_weights_fp32": False,
        "seq_len": 512,
        "micro_batch_size": MICRO_BATCH[model],
        "gradient_checkpointing": "none",
        "lora": {"rank": 32, "targets": ["q_proj", "v_proj"], "dropout": 0.05},
        "gradient_accumulation_steps": 8 // MICRO_BATCH[model],
        "training_tokens": 1e7,
    }
    return spec | ({"weight_quantization": "nf4", "quantization": HUB_BNB} if quantized else {})


def gb(model: str, quantized: bool) -> float:
    return (
        memory_breakdown_scalar(parse_workload_spec(hub_spec(model, quantized)))["total_per_gpu_gib"]
        * GIB
        / 1e9
    )


@pytest.mark.parametrize("model", list(LORA_GB))
def test_hub_bf16_lora_siblings(model):
    # ours 19.32 (-2.3%), 20.61 (-0.2%), 9.24 (+7.6%): the engine's LoRA baseline holds, so a QLoRA miss is the 4-bit path
    assert gb(model, False) == pytest.approx(LORA_GB[model], rel=0.10)


HUB_MISS = (
    "UNEXPLAINED: [HUB] {model} qlora.yaml, bitsandbytes 0.42.0, 4-bit head, bnb.nf4 (no double quantization), "
    "stated with bnb49's and fix49b's fields: published {pub} GB, ours {ours} GB ({err}; {dq} with double "
    "quantization, aud49b); unstated {unstated} GB. The bf16 LoRA sibling lands ({sib}), so the 4-bit path is short by "
    "{gap} GB after bnb49's and fix49b's terms (saved inputs 1.53 GB, head copies 0.52 GB). Ruled out: NF4 without double "
    "quantization (now charged, quantization.nf4_double_quant false: +0.31-0.33 GB of weights, 4.5 vs 4.127 bits), "
    "Lightning's fp16 storage (counted: 4-bit head, and 0.42.0 < 0.43.0). Best lead: a torch.cuda.memory_snapshot of "
    "this config at the peak (Alpaca2k's padded length per micro-batch is also unstated: fewer than 512 tokens widens "
    "the gap)."
)


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(
            "llama-2-7b",
            marks=pytest.mark.xfail(
                strict=True,
                reason=HUB_MISS.format(
                    model="Llama 2 7B",
                    pub=13.68,
                    ours=11.50,
                    gap=2.18,
                    err="-15.9%",
                    dq="11.18, -18.3%",
                    unstated=9.23,
                    sib="-2.3%",
                ),
            ),
        ),
        pytest.param(
            "mistral-7b",
            marks=pytest.mark.xfail(
                strict=True,
                reason=HUB_MISS.format(
                    model="Mistral 7B",
                    pub=14.29,
                    ours=12.26,
                    gap=2.03,
                    err="-14.2%",
                    dq="11.92, -16.6%",
                    unstated=9.74,
                    sib="-0.2%",
                ),
            ),
        ),
        "stablelm-alpha-3b",  # ours 5.43 GB (+3.5%; 5.26, +0.3% with double quantization); unstated 4.22 (-19.5%)
    ],
)
def test_hub_nf4_qlora_memory_held_out(model):
    assert gb(model, True) == pytest.approx(QLORA_GB[model], rel=0.10)
