"""Issue 26, outside audit at stop 45 (aud45c): cls45c's synchronised-micro-batch bound on eager PEFT steps.

cls45c: HF Trainer checks every micro-batch's loss for NaN / Inf on the host (transformers 4.31.0 trainer.py
_inner_training_loop: `args.logging_nan_inf_filter and not is_torch_tpu_available() and (torch.isnan(tr_loss_step)
or torch.isinf(tr_loss_step))`, tr_loss_step = training_step's `loss.detach() / gradient_accumulation_steps`, a CUDA
tensor; training_args.py `logging_nan_inf_filter: bool = field(default=True)`; read from the PyPI wheel
transformers-4.31.0-py3-none-any.whl), so an eager PEFT step is no shorter than its forward's host time plus the
GPU's work after the forward (lora_host "Synchronised micro-batches", throughput.forward_share).

Cases of my own choosing that no test of the project had (grep of tests/ for the README's Q-LoRA rows: the project
holds 7B 1k-8k, 72B 256 / 1k / 8k and 14B 1k / 2k / 8k; never 1.8B, nor 7B or 14B at 256 / 512), sized the way
`manage.py size` sizes them (`size_spec_document`, calibration off). Tolerance: LLM speed 15%. Misses are strict
xfails with the published figure, ours, and the diagnosis.

Source:
  [QWEN]  QwenLM/Qwen @03cd81f5e4da6ab60fc8f97f3b8aa1206fdb08a9 README.md "Profiling of Memory and Speed": one
          A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, FlashAttention 2, batch 1, gradient accumulation 8, HF Trainer
          (finetune.py; requirements.txt pins transformers 4.31.0) with PEFT; Q-LoRA is the Int4 (GPTQ) model through
          finetune.py's GPTQConfig(bits=4, disable_exllama=True), the same run the project's held Q-LoRA rows
          state (qwen_lora_spec | task qlora, weight_quantization int4). s/it at 256 / 512 / 1,024 / 2,048 tokens:
            1.8B Q-LoRA   1.4 / 1.4 / 1.4 / 2.0
            7B   Q-LoRA   3.0 / 3.0 / 3.5 / 7.0      (1k, 2k held by test_outside_audit_stop43l)
            14B  Q-LoRA   5.3 / 6.3 / 8.2 / 11.8     (1k, 2k held by test_outside_qlora_audit_stop44)
          LoRA rows of the same table (for the Q-LoRA minus LoRA gaps below): 1.8B 1.0 / 1.0 / 1.1 / 1.7, 7B 1.2 /
          1.5, 14B 1.6 / 2.4.

Finding (not a case): forward_share is a FLOP share (the blocks' forward over the step's FLOPs, 0.27-0.31 with full
recomputation) applied to the whole compute_s, which on QLoRA includes qlora_dequant's unpacking time. GPTQ int4
unpacks in the forward and the recomputed forward only (qlora_dequant.DEQUANTIZE int4: 1 + 1 passes), so half of
the unpacking is before the first forward ends, not 0.27-0.31 of it (nf4 with recomputation: 1/3 of 3 passes,
about right; int8: none in the forward). Charged at 1/2, the bound moves the held-out rows below by less than the
engine says: 7B 256 +67.5% -> +65.6% (engine +46.8%), 7B 512 +25.4% -> +25.4% (the GPU's work binds; engine +21.9%),
1.8B 2k +38.3% -> +24.8% (engine +21.0%).
fixc45 acted on the finding (throughput.training_throughput: the FLOPs at forward_share, the unpacking at
qlora_dequant.first_forward_share, its passes read in AutoGPTQ v0.4.2 / bitsandbytes 0.41.1-0.49.2): the three rows
moved as predicted, 7B 256 +46.8% -> +65.6%, 7B 512 +21.9% -> +25.4%, 1.8B 2k +21.0% -> +24.8% (strict xfails kept).
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_audit_stop43l import (
    MODELS,
    published_tokens_per_second,
    tokens_per_second,
)
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

# (size, seq) -> [QWEN] Q-LoRA s/it
QLORA_SHORT_STEPS = {
    ("1.8b", 256): 1.4,
    ("1.8b", 2048): 2.0,
    ("7b", 256): 3.0,
    ("7b", 512): 3.0,
    ("14b", 256): 5.3,
    ("14b", 512): 6.3,
}

# lora46: AutoGPTQ's eager unpacking runs at 0.378 of the card's bandwidth, measured at the version the README ran
# (huggingface/optimum @0963862 tests/benchmark/README.md, prefill-only, Llama-2-13B on one A100-SXM4-80GB:
# autogptq-cuda-old 368.13 ms minus fp16 96.38 ms = 271.75 ms for one pass of 16.5 B x 12.688e9 weights;
# assumptions.GPTQ_EAGER_UNPACK_BANDWIDTH), not the streaming 0.70; fit on optimum's table only, these rows held out.
# Was a strict xfail [7b-256] (UNEXPLAINED, GPTQ_SHORT: "the README's Q-LoRA minus LoRA steps need the GPTQ unpacking
# at 0.47 / 0.56 (7B) and 0.44 / 0.42 (14B) of the peak bandwidth, 0.70 charged"): 1,130.4 tokens/s against 682.7
# (+65.6%; step 1.812 s). Now 728.5 (+6.7%; step 2.811 s) because the unpacking runs at optimum's measured rate
# (0.277 s a micro-batch, 2.22 s a step, was 1.198 s).
# Was a strict xfail [7b-512]: 1,712.6 against 1,365.3 (+25.4%; step 2.392 s). Now 1,200.4 (-12.1%; step 3.412 s),
# same mechanism.
# Was a strict xfail [14b-256]: 597.6 against 386.4 (+54.6%; step 3.427 s). Now 378.3 (-2.1%; step 5.414 s), same
# mechanism (0.540 s a micro-batch, 4.32 s a step, was 2.33 s).
# Was a strict xfail [14b-512]: 903.4 against 650.2 (+39.0%; step 4.534 s). Now 628.2 (-3.4%; step 6.521 s), same
# mechanism.
QLORA_SHORT_MISSES = {
    ("1.8b", 2048): (
        "UNEXPLAINED: [QWEN] 1.8B Q-LoRA 2k: published 8,192.0 tokens/s (2.0 s a step); ours 9,650.5 (+17.8%; step "
        "1.698 s, the phase bound: forward host 24 x 8 x 101 x 31 us = 0.601 s + 0.728 x the FLOPs' 1.221 s + 1/2 x "
        "the unpacking's 0.416 s). lora46: was 10,226.8 (+24.8%; step 1.602 s) with the unpacking at 0.70 of the "
        "bandwidth (0.225 s a step); now at optimum's measured 0.378 for AutoGPTQ's eager path (2 x 16.5 B x 1.214e9 "
        "weights = 52 ms a micro-batch, 0.416 s a step; the README's Q-LoRA minus LoRA here is 0.3 s +- 0.1). The "
        "rest is the 2,048-wide Qwen-1.8B LoRA 2k row's own gap (+35.8%, test_outside_audit_stop43l, UNEXPLAINED: "
        "the width gap and the host floor near the crossover). History: fixc45 placed the unpacking by its passes "
        "(1/2 after the first forward, AutoGPTQ v0.4.2), 9,910.4 (+21.0%) -> 10,226.8; before cls45c 11,332.5 "
        "(+38.3%)"
    ),
}


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        pytest.param(*key, marks=pytest.mark.xfail(strict=True, reason=QLORA_SHORT_MISSES[key]))
        if key in QLORA_SHORT_MISSES
        else key
        for key in QLORA_SHORT_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_gptq_qlora_short_rows_on_one_a100(size, seq, bundled_catalog):
    # [1.8b-256] passing: published 1,462.9 tokens/s (1.4 s); ours 1,568.4 (+7.2%; step 1.306 s, the whole-step host
    # floor 24 x 8 x (2 x 101 x 31 + 77 x 7 us), above the GPU's 0.366 s and cls45c's bound 0.601 + 0.726 x 0.366 s;
    # unmoved by cls45c). The README's 1.8B Q-LoRA step is flat 1.4 s from 256 to 1k, as a host floor makes it.
    spec = qwen_lora_spec(MODELS[size], seq, 1, qlora=True) | {"task": "qlora", "weight_quantization": "int4"}
    published = published_tokens_per_second(seq, QLORA_SHORT_STEPS[(size, seq)])
    assert tokens_per_second(spec) == pytest.approx(published, rel=0.15)
