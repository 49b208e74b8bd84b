"""Issue 26, outside audit at stop 46 (aud46l): lora46's GPTQ int4 unpacking rate (0.378 of the card's bandwidth).

Published GPTQ Q-LoRA measurements that no test of the project had and lora46 did not use, sized the way `manage.py
size` sizes them (`size_spec_document`, calibration off). Tolerance: LLM speed 15%. Misses would be strict xfails
with published, ours, error and diagnosis (none miss at lora46).

Sources:
  [QWEN-OCT23] QwenLM/Qwen @ee5350521ede55e6d64f2fb619e84f99262084b1 (2023-10-08; first published at b5fad3d
           "fix single-gpu qlora, and add profiling") README.md "Profiling of Memory and Speed": one
           A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, batch 1, gradient accumulation 8, s/it at 256 / 512 / 1,024 /
           2,048 tokens; Q-LoRA is the Int4 (GPTQ) model through finetune.py's GPTQConfig(bits=4,
           disable_exllama=True) (same file at that commit, line 305), so AutoGPTQ's qlinear_cuda_old eager path
           (auto_gptq v0.4.2 utils/import_utils.py: exllama off and desc_act False; Qwen's own run_gptq.py sets
           desc_act=False). Rows "7B | Q-LoRA": 3.0 / 3.6 / 4.8 / 7.3 s/it; "14B | Q-LoRA": 5.4 / 6.4 / 8.5 /
           12.4 s/it. This is an earlier, separate measurement from the @03cd81f5 table the project tests (there
           7B Q-LoRA is 3.0 / 3.0 / 3.5 / 7.0, 14B 5.3 / 6.3 / 8.2 / 11.8); it does not state FlashAttention 2.
  [QWEN-VL] QwenLM/Qwen-VL @aa00ed04091eea5fcdd32985e7915f1c53e7d599 README.md "Profiling of Memory and Speed" (table
           since 0f31930, 2023-10-07): one A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, batch 1, gradient accumulation 8,
           each sample one image; s/it at 384 / 512 / 1,024 / 2,048 tokens: "LoRA (Chat)" 2.2 / 2.3 / 3.5 / 5.9,
           "Q-LoRA" 4.2 / 4.5 / 5.5 / 7.9 (Qwen-VL-Chat-Int4: the README says Q-LoRA "uses the quantized large
           language model"; finetune.py loads it with GPTQConfig(bits=4, disable_exllama=True), ViT frozen in
           both). The LLM is Qwen-7B; the ViT-bigG encoder and the rest are the same in both rows, so the Q-LoRA
           minus LoRA (Chat) step, 2.0 / 2.2 / 2.0 / 2.0 s, is the GPTQ premium on Qwen-7B's block linears.
  [OPTIMUM-BNB] huggingface/optimum @3ffebf994fbd579ab9acb589edc401fa66413928 ("Add bitsandbytes benchmark", the
           commit lora46 cites for its library versions: "AutoGPTQ 0.4.2, PyTorch 2.0.1, bitsandbytes 0.41.1,
           transformers 4.32") tests/benchmark/README.md "Prefill-only benchmark results": the same Llama-2-13B,
           512-token prefill on one A100-SXM4-80GB as lora46's GPTQ rows, plus bitsandbytes 4-bit
           (benchmark_gptq.py --bitsandbytes: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="fp4",
           bnb_4bit_compute_dtype=torch.float16)): 139.17 / 212.76 / 349.18 / 643.42 / 1,256.88 ms at 1 / 2 / 4 / 8
           / 16 prompts against fp16 96.38 / 169.95 / 305.99 / 600.47 / 1,209.07.
"""

from __future__ import annotations

import pytest

from procurement.sizing import qlora_dequant
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS, tokens_per_second
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec


def step_seconds(spec: dict) -> float:
    """Seconds an optimizer step on one A100 80GB: 8 micro-batches of one sequence."""
    return 8 * spec["seq_len"] / tokens_per_second(spec)


def qlora(model: str, seq: int) -> dict:
    return qwen_lora_spec(MODELS[model], seq, 1, qlora=True) | {
        "task": "qlora",
        "weight_quantization": "int4",
    }


# --- 1. Qwen-7B / Qwen-14B GPTQ Q-LoRA on one A100 80GB, the October 2023 measurement [QWEN-OCT23] -----------------
# By hand (lora46): Qwen-7B block linears 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008) = 6.477e9, unpacking 2 passes
# (forward + recomputed forward; the backward reuses the recompute's saved fp16 weight) x 16.5 B = 213.7 GB a
# micro-batch / (0.378 x 2,039 GB/s = 770.7 GB/s) = 0.277 s, 2.22 s a step of 8; Qwen-14B 12.61e9 -> 416 GB, 4.32 s.
# Ours (step s, tokens/s against published): 7B 2.81 / 3.41 / 4.64 / 7.17 s -> +6.7 / +5.5 / +3.5 / +1.8%;
# 14B 5.41 / 6.52 / 8.77 / 13.40 s -> -0.3 / -1.9 / -3.1 / -7.5%. At the old streaming 0.70 (before lora46) the same
# rows were 7B 1.81 / 2.39 / 3.62 / 6.15 s (+65.6 / +50.5 / +32.7 / +18.6%, all four out) and 14B 3.43 / 4.53 / 6.78
# / 11.41 s (+57.6 / +41.1 / +25.3 / +8.7%, three out): this held-out table confirms the rate. Its 7B 1k cell (4.8 s,
# ours -3.4%) also bears on lora46's 7B 1k strict xfail: the later @03cd81f5 table's 3.5 s for the same run is the
# outlier (its LoRA 1k moved 2.9 -> 2.8 s, its Q-LoRA 1k 4.8 -> 3.5 s).
QWEN_OCT23_QLORA_STEPS = {
    ("7b", 256): 3.0,
    ("7b", 512): 3.6,
    ("7b", 1024): 4.8,
    ("7b", 2048): 7.3,
    ("14b", 256): 5.4,
    ("14b", 512): 6.4,
    ("14b", 1024): 8.5,
    ("14b", 2048): 12.4,
}


@pytest.mark.parametrize(("model", "seq"), sorted(QWEN_OCT23_QLORA_STEPS))
@pytest.mark.django_db
def test_qwen_gptq_qlora_october_2023_rows_on_one_a100(model, seq, bundled_catalog):
    spec = qlora(model, seq)
    published = 8 * seq / QWEN_OCT23_QLORA_STEPS[(model, seq)]
    assert tokens_per_second(spec) == pytest.approx(published, rel=0.15)


# --- 2. Qwen-VL (Qwen-7B LLM) GPTQ Q-LoRA premium over LoRA on one A100 80GB [QWEN-VL] -------------------------------
# The product cannot state the ViT-bigG encoder, so the case is the premium itself: a user sizes Qwen-7B LoRA and
# Q-LoRA (int4) at the same length and reads the difference in step time. Published 2.0 / 2.2 / 2.0 / 2.0 s at 384 /
# 512 / 1k / 2k; flat in length, as a per-micro-batch unpacking is. Ours 2.01 / 2.10 / 2.22 / 2.22 s (+0.3 / -4.5 /
# +10.9 / +10.9%); at the streaming 0.70 it was 0.98 / 1.08 / 1.20 / 1.20 s (-51 / -51 / -40 / -40%). The rate the
# premium implies if it were all unpacking: 213.7 GB x 8 / 2.0-2.2 s = 777-855 GB/s = 0.381-0.419 of 2,039 (an upper
# bound on the unpacking's time, so a lower bound of 0.38 on its rate): lora46's 0.378 sits at its edge.
QWEN_VL_PREMIUM = {384: 4.2 - 2.2, 512: 4.5 - 2.3, 1024: 5.5 - 3.5, 2048: 7.9 - 5.9}


@pytest.mark.parametrize("seq", sorted(QWEN_VL_PREMIUM))
@pytest.mark.django_db
def test_qwen_vl_gptq_qlora_premium_over_lora_on_one_a100(seq, bundled_catalog):
    lora = qwen_lora_spec(MODELS["7b"], seq, 1)
    premium = step_seconds(qlora("7b", seq)) - step_seconds(lora)
    assert premium == pytest.approx(QWEN_VL_PREMIUM[seq], rel=0.15)


# --- 3. bitsandbytes 4-bit unpacking, one pass, Llama-2-13B on one A100 80GB [OPTIMUM-BNB] -----------------------------
# lora46 measures GPTQ's rate on this table and keeps bitsandbytes at the streaming 0.70, "no measurement of theirs
# here" (tests/procurement/sizing/test_qlora_dequant.py::test_gptq_rate_is_optimums_prefill_rows). The same file three
# days later has one, by the same method: bnb minus fp16 = 42.79 / 42.81 / 43.19 / 42.95 / 47.81 ms at 1-16 prompts
# (flat: least-squares intercept 41.89 ms, slope 0.33 ms a prompt), one dequantize_4bit pass over the 12.688e9 block
# weights (MatMul4Bit.forward, bitsandbytes 0.41.1; fp4 and nf4 share kDequantizeBlockwise). At the engine's 2.5 B a
# weight: 31.72 GB / 42.79 ms = 741 GB/s = 0.364 of 2,039 (intercept: 0.371), the GPTQ figure's neighbour (0.378),
# not 0.70. The engine's one pass (a user's Llama-2-13B nf4 QLoRA without recomputation: 2 passes, forward and
# backward, so half of it): 22.2 ms.
OPTIMUM_BNB_GAP_MS = 139.17 - 96.38  # batch 1, the figure lora46 takes for GPTQ (271.75 ms)
NF4_MISS = (
    "UNEXPLAINED: [OPTIMUM-BNB] bitsandbytes 0.41.1 4-bit (fp4, fp16 compute) prefill minus fp16 on Llama-2-13B, one "
    "A100-SXM4-80GB, 512 tokens: 42.79 ms a pass (intercept over 1-16 prompts 41.89 ms); ours 22.2 ms (-48%): the "
    "engine runs nf4's dequantize_4bit (2.5 B a weight x 12.688e9) at the streaming 0.70 of 2,039 GB/s where the "
    "same file by lora46's own method gives 0.364 (0.371 by intercept). Consistent with test_outside_qlora_audit_"
    "stop44's LitGPT nf4 unpacking misses (-66 / -71% at 0.70; at 0.364 they would read about -35 / -44%). lora46 "
    "changed int4 only and says no bitsandbytes measurement exists here; one does, at the commit it cites"
)


# Was a strict xfail (NF4_MISS): one dequantize_4bit pass 22.2 ms against optimum's 42.79 ms (-48%), nf4 at the
# streaming 0.70. Now 42.74 ms (-0.1%) because fix46l runs bitsandbytes' unpacking at the rate this table measures
# (assumptions.BNB_NF4_UNPACK_BANDWIDTH, 0.364 of 2,039 GB/s). This row is the fit row, so the pass checks only the
# arithmetic; the held-out checks are test_outside_qlora_audit_stop44's LitGPT rows (-66 / -71% -> -35 / -44%, still
# strict xfails) and the nf4 QLoRA cases of tests/procurement/outside (none moved out of or into tolerance).
def test_nf4_unpacking_pass_at_optimums_bitsandbytes_prefill_rate():
    workload = parse_workload_spec(
        {
            "task": "qlora",
            "model": {"preset": "llama-2-13b"},
            "weight_quantization": "nf4",
            "gradient_checkpointing": "none",
            "seq_len": 512,
            "micro_batch_size": 1,
        }
    )
    one_pass = float(qlora_dequant.seconds_per_step(workload, 2039.0, 1.0)) / 2  # forward + backward passes
    assert one_pass * 1e3 == pytest.approx(OPTIMUM_BNB_GAP_MS, rel=0.15)
