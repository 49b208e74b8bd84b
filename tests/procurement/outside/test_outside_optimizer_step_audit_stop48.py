"""Outside audit of peft48 (aud48p, stop 48): the once-a-step optimizer term (procurement/sizing/optimizer_step.py,
23 accesses x the trainable parameters' bytes at the achieved bandwidth, pure 16-bit AdamW on training_stack other).

Published short-step full fine-tunes that no test in tests/ used before (grepped tests/ and docs/validation.md for
each figure and source), sized as a user states them through the sizing API (`size_spec_document`, what
`manage.py size` runs, calibration off), judged at 15% speed (LLM target), plus a check of the pass count against
the torch release the audited run used.

Sources (published figures verbatim):
  [PEFT29] huggingface/peft @a99942694efe9abae7563ab3f973e54942fc98af
           method_comparison/MetaMathQA/results/full-finetuning--llama-3.2-3B-lr_0.00001.json (the 2026-01-09
           rerun, "torch-version": "2.9.0+cu128", "transformers-version": "4.57.1", "accelerator": "NVIDIA L40S";
           "dtype": "bfloat16", "batch_size": 4, "optimizer_type": "AdamW", "use_amp": false, "grad_norm_clip": 1.0,
           "num_trainable_params": 3212749824): twenty windowed "tokens / sec" 2248.7 .. 2342.7, median 2,285.4.
           The audited test uses the torch 2.7.1 run (@0a179c1e, 2,310) and peft48 cross-checked the torch 2.13
           run (@5d602fdb, 2,315.3); this torch 2.9 run is used nowhere.
  [HFA]    huggingface/transformers @c0c397c2ef8d96efb688d01cf2bf3cec10bedc7d docs/source/zh/perf_train_gpu_one.md
           (the 2022 English page's runs, kept verbatim; the same "Time: 57.82 / Samples/second: 8.86" in
           @7d5e65fe docs/source/en/model_memory_anatomy.md): bert-large-uncased sequence classification, 512
           random sequences of 512 tokens, one epoch, HF Trainer defaults, "Tesla V100-SXM2... 16160MiB"
           (nvidia-smi dated Tue Jan 11 2022; the page's optimizer list then was "{adamw_hf,adamw_torch,
           adamw_torch_xla,adamw_apex_fused,adafactor}", so the default is transformers' own AdamW, adamw_hf, a
           per-tensor loop: exp_avg.mul_(beta1).add_(grad) 5, exp_avg_sq.mul_(beta2).addcmul_(grad, grad) 5,
           exp_avg_sq.sqrt().add_(eps) 4, p.data.addcdiv_ 4 = 18 element accesses a parameter at Trainer's
           weight_decay 0.0 (AdamW.step as vendored from transformers 4.x in public repos, find_string id
           17044047886), + clip_grad_norm_ 3 at max_grad_norm 1.0 = 21, against the engine's 23):
             per_device_train_batch_size=4 (fp32):           "Time: 57.82  Samples/second: 8.86"
             per_device_train_batch_size=4, fp16=True:        "Time: 27.46  Samples/second: 18.64"
             per_device_train_batch_size=4, optim="adafactor": "Time: 64.31  Samples/second: 7.96"
           (the validation table uses this page's nvidia-smi memory only, hf-anatomy-bert-large-*; no speed.)
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import optimizer_step
from procurement.sizing.validation import BERT_LARGE

LLM_SPEED = 0.15


def err(ours: float, published: float) -> float:
    return ours / published - 1


def tokens_per_second(spec: dict, gpu: str, *, term: bool = True) -> float:
    """The sizing API's training tokens/s on one `gpu` (calibration off); term=False sizes the tree before peft48
    (optimizer_step.applies forced False) for the before/after figures in the reasons."""
    original = optimizer_step.applies
    if not term:
        optimizer_step.applies = lambda spec: False
    try:
        report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    finally:
        optimizer_step.applies = original
    c = next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == 1)
    return c["throughput"]["training_tokens_per_second"]


PEFT29 = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.2-3b"},
    "micro_batch_size": 4,
    "seq_len": 210,  # 4,198,051 train tokens over 20,000 samples
    "cross_entropy": "huggingface",
    "master_weights_fp32": False,  # bf16 model, no AMP: torch AdamW keeps bf16 states
    "parallelism": {"gpus": 1},
    "training_tokens": 4198051,
}


def hf_anatomy(**fields) -> dict:
    """[HFA]: bert-large-uncased, batch 4 of 512 tokens, one V100-SXM2-16GB, Trainer defaults (fp32 unless told)."""
    spec = {
        "task": "full_finetune",
        "model": dict(BERT_LARGE),
        "precision": "fp32",
        "master_weights_fp32": False,
        "micro_batch_size": 4,
        "seq_len": 512,
        "flash_attention": False,
        "parallelism": {"gpus": 1},
        "training_tokens": 512 * 512,
    }
    return spec | fields


HFA_FP32 = hf_anatomy()
HFA_FP16 = hf_anatomy(precision="fp16", master_weights_fp32=True)
HFA_ADAFACTOR = hf_anatomy(optimizer="adafactor")

R_HFA_FP32 = (
    "UNEXPLAINED: V100 2,396 tokens/s vs the transformers docs' 8.86 samples/s x 512 = 4,536 (-47.2%; -45.4% "
    "before fix50a counted the eager scores' bytes (flash_attention false, 44 B a score element in fp32), -41.9% "
    "before peft48, which adds 23 x 4 B x 335M = 30.8 GB at 0.70 x 900 GB/s = 49 ms to a 0.78 s step). The "
    "term is about the right size here (adamw_hf's per-tensor mul_.add_ / mul_.addcmul_ / sqrt().add_ / "
    "addcdiv_ at weight_decay 0 + clip_grad_norm_ = 21 accesses of fp32, 45 ms), but the engine's fp32 rate on a V100 is the gap: the published "
    "step is 4,536 x ~2.16 GFLOP a token = 9.8 TFLOPS, 62% of the V100's 15.7 fp32 peak, against the engine's "
    "36%. Lead: a V100 fp32 (no tensor core) rate; no fp32 V100 speed row is in the validation table."
)
R_HFA_FP16 = (
    "UNEXPLAINED: V100 13,647 tokens/s vs 18.64 samples/s x 512 = 9,544 (+43.0%; +60.8% at fix50a's 56 B a score "
    "element, +119.7% before fix50a counted the eager scores). Rechecked at this stack's count (fix50e, stop 50): HF "
    "Trainer fp16 is native autocast, and transformers' BertSelfAttention adds the extended mask in the parameters' "
    "fp32, which promotes the scores before softmax and dropout: 37 + 45 = 82 B, 24 x 16 x 512 elements = 16.1 MB a "
    "token at 0.70 x 900 GB/s = 25.6 us (aud50e's count; mixed_precision autocast, the default). The rest is the "
    "optimizer step, which is a big share of this small step (4 x 512 tokens): adamw_hf over the fp32 master "
    "weights (and clip_grad_norm_ on the fp32 gradients) is 21 accesses at 4 B, 28.1 GB = 45 ms at 0.70 x 900 GB/s, "
    "21% of the published 0.2146 s step, and the engine counts none of it (peft48's optimizer_step term leaves "
    "master_weights_fp32 true out of its scope). Counting it would give 4 x 512 / (0.1501 + 0.0447) = 10,515 "
    "(+10.2%, inside the target; 11,493 at fix50a's count). Lead: extend optimizer_step.applies to fp32-master "
    "mixed precision (the step's 4-byte master, gradient and moments), checked on this row and its neighbours."
)
R_HFA_ADAFACTOR = (
    "UNEXPLAINED: V100 2,542 tokens/s vs 7.96 samples/s x 512 = 4,075 (-37.6%; -35.4% before fix50a's eager "
    "scores; adafactor is outside "
    "peft48's scope). The page's own pair shows Adafactor's step 0.0503 s longer than AdamW's (4/7.96 - 4/8.86), "
    "where the engine now prices AdamW 49 ms slower than Adafactor (and Adafactor's step at nothing) (2,396 vs 2,542): the optimizer order is "
    "inverted (published Adafactor/AdamW 0.898, engine 1.061; before peft48 1.000). Lead: HF Adafactor's own "
    "per-tensor step (factored row/column statistics, RMS, update clipping) counted like the AdamW term."
)


def test_the_23_accesses_match_torch_213s_foreach_adamw_and_clip_grad_norm():
    """Traced, not read: torch 2.13 (the @5d602fdb run's release; requirements-bench.txt pins it) dispatches
    clip_grad_norm_(foreach) + AdamW(foreach) as _foreach_norm 1, _foreach_mul_ 2, [_foreach_mul_ 2 weight
    decay, _foreach_lerp_ 3, _foreach_mul_ 2, _foreach_addcmul_ 4 (grads passed twice), _foreach_sqrt 2 (a new
    tensor), _foreach_div_ 2, _foreach_add_ 2, _foreach_addcdiv_ 4] = 24 nominal element accesses a parameter;
    the engine's 23 counts addcmul's second read of the same grad element once (same thread, cache hit)."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    sizes = [1 << 20, 1 << 18, 3000]
    total = sum(sizes)
    ops: list[tuple[str, float]] = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            tensors = [
                t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor) and t.numel() > 1
            ]
            reads = sum(t.numel() for t in tensors)
            if func._schema.name.endswith("_"):
                first = args[0] if isinstance(args[0], (list, tuple)) else [args[0]]
                writes = sum(t.numel() for t in first if t.numel() > 1)
            else:
                writes = sum(
                    t.numel() for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.numel() > 1
                )
            if reads + writes:
                ops.append((func._schema.name, (reads + writes) / total))
            return out

    params = [torch.nn.Parameter(torch.zeros(n, dtype=torch.bfloat16)) for n in sizes]
    opt = torch.optim.AdamW(params, lr=1e-5, foreach=True)  # what fused=None, foreach=None picks on CUDA
    for _ in range(2):
        for p in params:
            p.grad = torch.ones_like(p)
        ops.clear()
        with Count():
            torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
            opt.step()
    assert sum(a for _, a in ops) == pytest.approx(24.0)
    assert ("aten::_foreach_addcmul_", 4.0) in ops  # grads twice
    assert optimizer_step.FOREACH_ADAMW_ACCESSES + optimizer_step.CLIP_GRAD_NORM_ACCESSES == 23.0


@pytest.mark.django_db
def test_peft_full_finetune_torch29_rerun_on_an_l40s(bundled_catalog):
    """[PEFT29] 2,285.4 tokens/s (median of 20 windows), torch 2.9.0: ours 2,253 (-1.4%); 6,537 (+186%) before."""
    ours = tokens_per_second(PEFT29, "l40s")
    assert abs(err(ours, 2285.4)) <= LLM_SPEED, f"ours {ours:,.0f} vs 2,285.4 ({err(ours, 2285.4):+.1%})"
    assert tokens_per_second(PEFT29, "l40s", term=False) / 2285.4 - 1 > 1.5  # the case peft48 moved in


@pytest.mark.django_db
def test_optimizer_offload_pays_no_gpu_optimizer_step(bundled_catalog):
    """fix48p (aud48p's fix list 1): ZeRO-Offload steps the optimizer on the CPU, so `parallelism.offload:
    optimizer` / `optimizer_and_params` pays OFFLOAD_OVERHEAD, not the GPU foreach term on top (it did: 2,253 ->
    1,922 tokens/s with offload set)."""
    for offload, zero in (("optimizer", 2), ("optimizer_and_params", 3)):
        spec = PEFT29 | {"parallelism": {"gpus": 1, "zero_stage": zero, "offload": offload}}
        assert tokens_per_second(spec, "l40s") == pytest.approx(tokens_per_second(spec, "l40s", term=False))
    spec = PEFT29 | {"parallelism": {"gpus": 1, "zero_stage": 2}}
    # without offload the term still applies
    assert tokens_per_second(spec, "l40s") < 0.5 * tokens_per_second(spec, "l40s", term=False)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_HFA_FP32)
def test_hf_anatomy_bert_large_fp32_batch4_on_a_v100(bundled_catalog):
    """[HFA] fp32, batch 4: 8.86 samples/s = 4,536 tokens/s; the peft48 term applies (4 B, master false)."""
    ours = tokens_per_second(HFA_FP32, "v100-sxm2-16gb")
    assert abs(err(ours, 8.86 * 512)) <= LLM_SPEED, (
        f"ours {ours:,.0f} vs 4,536 ({err(ours, 8.86 * 512):+.1%})"
    )


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_HFA_FP16)
def test_hf_anatomy_bert_large_fp16_amp_batch4_on_a_v100(bundled_catalog):
    """[HFA] fp16 AMP (fp32 master weights, adamw_hf), batch 4: 18.64 samples/s = 9,544 tokens/s."""
    ours = tokens_per_second(HFA_FP16, "v100-sxm2-16gb")
    assert abs(err(ours, 18.64 * 512)) <= LLM_SPEED, (
        f"ours {ours:,.0f} vs 9,544 ({err(ours, 18.64 * 512):+.1%})"
    )


@pytest.mark.django_db
def test_hf_anatomy_fp16_row_at_the_autocast_score_count_and_its_unpriced_optimizer_step(bundled_catalog):
    """[HFA] fp16 AMP (fix50e, stop 50): BERT's eager scores under autocast are 82 B an element (transformers' fp32
    extended mask; image_model.LANGUAGE_EAGER_SCORE_BYTES), 196,608 x 82 B = 16.1 MB a token, 25.6 us at 0.70 x
    900 GB/s: ours 13,647 (+43.0%). adamw_hf + clip_grad_norm_ over fp32 masters, 21 x 4 B x 335,141,888 = 28.2 GB =
    44.7 ms a step (aud48p's count), is not priced: with it the 4 x 512-token step reads 10,515 (+10.2%)."""
    ours = tokens_per_second(HFA_FP16, "v100-sxm2-16gb")
    assert ours == pytest.approx(13647, rel=2e-3)
    optimizer_s = 21 * 4 * 335141888 / (0.70 * 900e9)
    assert optimizer_s == pytest.approx(0.0447, abs=2e-4)
    with_step = 4 * 512 / (4 * 512 / ours + optimizer_s)
    assert err(with_step, 18.64 * 512) == pytest.approx(0.102, abs=0.003)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_HFA_ADAFACTOR)
def test_hf_anatomy_bert_large_fp32_adafactor_batch4_on_a_v100(bundled_catalog):
    """[HFA] fp32, optim="adafactor", batch 4: 7.96 samples/s = 4,075 tokens/s."""
    ours = tokens_per_second(HFA_ADAFACTOR, "v100-sxm2-16gb")
    assert abs(err(ours, 7.96 * 512)) <= LLM_SPEED, (
        f"ours {ours:,.0f} vs 4,075 ({err(ours, 7.96 * 512):+.1%})"
    )
