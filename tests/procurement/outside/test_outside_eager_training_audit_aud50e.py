"""Outside audit aud50e (stop 50) of fix50a's eager-attention training term (throughput.eager_score_seconds_per_token:
image_model.eager_score_training_bytes, 24 + 32 B a score element under 16-bit autocast, at 0.70 of the card's
bandwidth) on published BERT-large SQuAD runs the change did not use (grepped tests/ and docs/ for each source and
figure: none there), and on the code those runs executed.

Sources (figures verbatim):
  [DLEV100] NVIDIA/DeepLearningExamples @a07d20a1 (HEAD of PyTorch/LanguageModeling/BERT; modeling.py last changed
            a9e2c1d5, the Jan 2022 release the pytorch:21.11-py3 tables describe) README.md "Fine-tuning NVIDIA DGX-1
            With 32G", SQuAD, "| 1 | 8 and 16 | 12 | 52 |" and "| 8 | 8 and 16 | 85.5 | 382 |" (GPUs, batch / GPU FP32
            and FP16, FP32 and mixed-precision sequences/s), V100-SXM2 32GB, max_seq_length 384.
            The stack: run_squad.py `amp.initialize(model, optimizer, opt_level="O2", ...)` (apex; the whole model
            in fp16, torch functions not patched, so F.softmax runs in fp16); modeling.py BertSelfAttention:
            `torch.bmm(query_layer, key_layer)`, `/ math.sqrt(...)`, `+ attention_mask` (cast to the fp16 weights'
            dtype, BertModel.forward line 871), `F.softmax`, `self.dropout`, `torch.bmm(attention_probs, value_layer)`.
  [PDFMHA]  NVIDIA/DeepLearningExamples @a5388a45 ("[BERT/Paddle] Update base image and integrate cuDNN fused MHA",
            paddlepaddle:23.06-py3; scripts/run_squad.sh `fuse_mha=${18:-"true"}`, utils/config.py keeps it on with
            AMP on sm80 and cuDNN >= 8.9.1) PaddlePaddle/LanguageModeling/BERT/README.md "Fine-tuning NVIDIA DGX A100
            (8x A100 80GB)", SQuAD: "| 1 | 32 and 32 | 83 | 123 |" and "| 8 | 32 and 32 | 629 | 929 |"; changelog
            "Optimize AMP training with cuDNN fused dot product attention kernel". The same table at @cfdbf4ed /
            @eb4b0ab2 (paddlepaddle:22.08-py3, paddle.incubate FusedTransformerEncoderLayer, softmax on AMP's white
            list) is fix50a's own 120 / 876.
  [HFBERT]  transformers modeling_utils.get_extended_attention_mask: `extended_attention_mask.to(dtype=self.dtype)`
            (the parameters' dtype: fp32 under native AMP / Trainer fp16=True), so BertSelfAttention's
            `attention_scores + attention_mask` promotes the fp16 scores to fp32 before softmax and dropout.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model, throughput
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.validation import BERT_LARGE

LLM_SPEED = 0.15


def err(ours: float, published: float) -> float:
    return ours / published - 1


def squad(
    gpus: int, micro_batch: int, precision: str = "fp16", flash: bool = False, mixed="half_model"
) -> dict:
    """BERT-large SQuAD v1.1 fine-tune at 384 tokens, stated as the runs ran (eager unless told; apex O2 / Paddle's
    fused op in the AMP dtype: mixed_precision half_model, the field fix50e added on this audit's fix 1)."""
    return {
        "task": "full_finetune",
        "model": dict(BERT_LARGE),
        "precision": precision,
        "mixed_precision": mixed,
        "micro_batch_size": micro_batch,
        "seq_len": 384,
        "flash_attention": flash,
        "parallelism": {"gpus": gpus},
        "training_tokens": 2 * 88641 * 384,
    }


def seq_per_s(spec: dict, gpu: str) -> float:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    gpus = spec["parallelism"]["gpus"]
    c = next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == gpus)
    return c["throughput"]["training_tokens_per_second"] / 384


# --- the score bytes each stack's code moves (per score element, forward + backward) ---------------------------
# Forward, all fp16 (apex O2, [DLEV100]): bmm writes 2; div r2 w2; + mask r2 w2; softmax r2 w2; dropout r2 w2 + its
# uint8 mask w1; bmm reads 2 = 21. Backward: bmm writes the probabilities' grad 2 and reads the probabilities for
# V's grad 2; dropout backward r2 + mask r1, w2; softmax backward r2 (output) r2 (grad) w2; the add passes the
# gradient through (the mask needs none); div backward r2 w2; bmm backward reads the scores' grad for Q and K 2 + 2
# = 23. Total 44 B.
# Native autocast with the fp32 mask ([HFBERT]): forward 2 + div 4 + add r2 w4 (promoted) + softmax r4 w4 + dropout
# r4 w4 + 1 + autocast's cast for bmm r4 w2 + bmm r2 = 37; backward 2 + 2 + cast r2 w4 + dropout r4 r1 w4 + softmax
# r4 r4 w4 + the add's cast back r4 w2 + div r2 w2 + 2 + 2 = 45. Total 82 B.
# Paddle 22.08's fused_attention (FMHARef, find_string id 318396823, a 2022 phi-era fmha_ref.h; the whole op in the
# AMP dtype T): forward BatchedGEMM (scale in alpha) w2, mask add r2 w2 (src_mask_out kept), softmax r2 w2, dropout
# r2 w2 + uint8 mask w1, GEMM r2 = 17; backward dV GEMM reads dropout_out 2, d(dropout_out) w2, dropout grad r2 r1
# w2, softmax backward r2 r2 w2, TensorCopy of the mask-add gradient r2 w2, dK / dQ GEMMs r2 + r2 = 23. Total 40 B.
PADDLE_FMHA_REF = (2 + 4 + 4 + 5 + 2, 2 + 2 + 5 + 6 + 4 + 4)
DLE_APEX_O2 = (2 + 4 + 4 + 4 + 5 + 2, 4 + 5 + 6 + 0 + 4 + 4)
HF_AUTOCAST = (2 + 4 + 6 + 8 + 9 + 6 + 2, 4 + 6 + 9 + 12 + 6 + 4 + 4)


def test_the_runs_code_moves_44_or_82_bytes_a_score_element_not_the_diffusers_56():
    """The term's 24 + 32 B is diffusers' get_attention_scores under autocast (fp32 softmax, a cast back, no mask
    add, no dropout); BERT's eager attention has a scale, a mask add and a dropout on the probabilities, and its
    dtype path is set by the stack: 44 B under apex O2 (DeepLearningExamples' run_squad.py), 82 B under native
    autocast (HF Trainer fp16=True). Before fix50e the engine charged 56 B for both; it now reads the stack from
    mixed_precision (half_model 44, autocast 82 for a model with dropout). Paddle's op (40 B) folds the scale into
    the GEMM: 4 B under the half_model count."""
    assert sum(DLE_APEX_O2) == 44 and sum(HF_AUTOCAST) == 82 and sum(PADDLE_FMHA_REF) == 40
    assert image_model.LANGUAGE_EAGER_SCORE_BYTES[("half_model", True)] == DLE_APEX_O2
    assert image_model.LANGUAGE_EAGER_SCORE_BYTES[("autocast", True)] == HF_AUTOCAST
    assert image_model.eager_score_training_bytes(parse_workload_spec(squad(1, 32))) == 44.0
    assert image_model.eager_score_training_bytes(parse_workload_spec(squad(1, 32, mixed="autocast"))) == 82.0


@pytest.mark.django_db
def test_fix50a_held_out_pytorch_dgx_row_lands_only_at_the_diffusers_count(bundled_catalog, monkeypatch):
    """Sized: with the count DeepLearningExamples' PyTorch code moves (44 B, apex O2; mixed_precision half_model since
    fix50e) the held-out DGX A100 row (846.7 seq/s, fix50a's [BERTPT]) reads 986.8 (+16.5%, outside 15%: now the
    strict xfail R_BERTPT8 in test_outside_ranking_audit_stop50a.py) and the 1-GPU row 123.4 (+11.6%); at HF
    autocast's 82 B the 1-GPU row reads 104.0. fix50a's 56 B landed the 8-GPU row at +10.1%. fix50a's own Paddle
    rows at their code's 40 B (FMHARef): 125.8 (+4.8%) / 1,006.5 (+14.9%, at the target's edge)."""
    one, eight = seq_per_s(squad(1, 32), "a100-sxm4-80gb"), seq_per_s(squad(8, 32), "a100-sxm4-80gb")
    assert (one, eight) == (pytest.approx(123.35, rel=2e-3), pytest.approx(986.8, rel=2e-3))
    assert err(eight, 846.7) == pytest.approx(0.165, abs=0.003)
    monkeypatch.setitem(image_model.LANGUAGE_EAGER_SCORE_BYTES, ("half_model", True), PADDLE_FMHA_REF)
    paddle = (seq_per_s(squad(1, 32), "a100-sxm4-80gb"), seq_per_s(squad(8, 32), "a100-sxm4-80gb"))
    assert paddle == (pytest.approx(125.81, rel=2e-3), pytest.approx(1006.5, rel=2e-3))
    assert err(paddle[1], 876.0) == pytest.approx(0.149, abs=0.003)  # fix50a's own DGX row, at the edge
    assert seq_per_s(squad(1, 32, mixed="autocast"), "a100-sxm4-80gb") == pytest.approx(104.0, rel=2e-3)


# --- [DLEV100] DGX-1 V100 32GB, SQuAD, pytorch:21.11 ----------------------------------------------------------------


@pytest.mark.django_db
def test_dle_pytorch_bert_squad_one_v100_mixed_precision(bundled_catalog):
    """[DLEV100] FIXED (fix50e, stop 50; was aud50e's strict xfail R_V100_FP16_1): 52 mixed-precision sequences/s
    (DGX-1 32G SQuAD, 1 GPU, batch 16 of 384, apex O2). Ours 55.1 (+6.0%) before fix50a, 43.1 (-17.0%) at fix50a's
    56 B (diffusers' count), 45.25 (-13.0%) with the run stated as it ran (mixed_precision half_model: apex O2's
    all-fp16 bmm, div, mask add, softmax, dropout, bmm, 44 B a score element: 24 x 16 x 384 x 44 B = 6.49 MB a token
    at 0.70 x 900 GB/s = 10.3 us)."""
    ours = seq_per_s(squad(1, 16), "v100-sxm2-32gb")
    assert ours == pytest.approx(45.25, rel=3e-3)
    assert abs(err(ours, 52.0)) <= LLM_SPEED, (ours, err(ours, 52.0))


@pytest.mark.django_db
def test_dle_pytorch_bert_squad_dgx1_v100_mixed_precision(bundled_catalog):
    """[DLEV100] 382 sequences/s on 8 V100s: ours 362.0 (-5.2%) at the run's 44 B (fix50e); 345.1 (-9.7%) at
    fix50a's 56 B; 440.9 (+15.4%) before fix50a."""
    ours = seq_per_s(squad(8, 16), "v100-sxm2-32gb")
    assert abs(err(ours, 382.0)) <= LLM_SPEED, ours
    assert ours == pytest.approx(362.0, rel=3e-3)


R_V100_FP32 = (
    "UNEXPLAINED (aud50e): published {pub} FP32 sequences/s (DeepLearningExamples PyTorch BERT README, DGX-1 32G "
    "SQuAD, {gpus}, batch 8 of 384), ours {ours} ({e}); {before} before fix50a (its 44 B fp32 score term moves this "
    "little: the rate is the gap). Same shape as the transformers-docs V100 fp32 BERT row "
    "(test_outside_optimizer_step_audit_stop48 R_HFA_FP32, -47.2%): the engine's V100 fp32 (no tensor core) rate is "
    "~0.55x what two independent stacks measure. Lead: a measured V100 fp32 efficiency (15.7 TFLOPS peak, CUDA "
    "cores) in mfu._fitted_mfu."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpus", "published", "reason"),
    [
        (1, 12.0, R_V100_FP32.format(pub=12, gpus="1 GPU", ours="6.74", e="-43.8%", before="6.92 (-42.3%)")),
        (
            8,
            85.5,
            R_V100_FP32.format(pub=85.5, gpus="8 GPUs", ours="53.9", e="-37.0%", before="55.4 (-35.2%)"),
        ),
    ],
)
def test_dle_pytorch_bert_squad_v100_fp32(bundled_catalog, request, gpus, published, reason):
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    ours = seq_per_s(squad(gpus, 8, "fp32"), "v100-sxm2-32gb")
    assert abs(err(ours, published)) <= LLM_SPEED, (ours, err(ours, published))


# --- [PDFMHA] the same Paddle SQuAD table with cuDNN fused attention --------------------------------------------------

R_FMHA = (
    "UNEXPLAINED (aud50e): published {pub} sequences/s (DeepLearningExamples PaddlePaddle BERT @a5388a45, cuDNN "
    "fused dot-product attention, AMP, A100 80GB, {gpus}), ours {ours} ({e}) stated flash_attention true (even "
    "charging the fp16 softmax a <=512 fused engine may keep for backward, ~10 B a score element, 1.0 us a token, "
    "ours would read ~148 on one GPU, +20%). The eager term does not apply here, so this is the "
    "pre-fix50a miss (aud50a's +31.0% / +43.6% on the eager rows) uncovered: the engine's A100 rate for a d-1,024 "
    "encoder at 12,288 tokens a micro-batch (MFU_DATACENTER 0.40, no width factor off Hopper) is high. Lead: "
    "mfu._fitted_mfu; the published row implies 123 x 384 x 2.067e9 / 312e12 = 0.313 of peak with attention fused, ours 0.40."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpus", "published", "reason"),
    [
        (1, 123.0, R_FMHA.format(pub=123, gpus="1 GPU", ours="157.2", e="+27.8%")),
        (8, 929.0, R_FMHA.format(pub=929, gpus="8 GPUs", ours="1,257.6", e="+35.4%")),
    ],
)
def test_paddle_bert_squad_a100_with_cudnn_fused_attention(bundled_catalog, request, gpus, published, reason):
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    ours = seq_per_s(squad(gpus, 32, flash=True), "a100-sxm4-80gb")
    assert abs(err(ours, published)) <= LLM_SPEED, (ours, err(ours, published))


R_AB = (
    "UNEXPLAINED (aud50e): the same README's A/B of the attention alone: fusing it (cuDNN fused MHA, @a5388a45) "
    "against Paddle's unfused-softmax FusedTransformerEncoderLayer (@cfdbf4ed, fix50a's own rows) gained 123 / 120 = "
    "1.025x on one A100 and 929 / 876 = 1.061x on eight (the container also moved, 22.08 to 23.06, a confounder "
    "that would more likely add speed than remove it); the engine's eager term makes that step 157.2 / 123.35 = "
    "1.274x at the run's code count (fix50e: 44 B a score element, half_model; 1.349x at fix50a's 56 B; 1.25x at "
    "Paddle's own 40 B). The scores' traffic is 21.5% of the step (4.55 of 21.11 us a token); the published switch "
    "removes at most 2.4-5.7% of it. The count is now the code's, so the term is not oversized by its bytes: either "
    "cuDNN's fused MHA at 384 in 23.06 runs slower than the engine's flash assumption (its max-512 backend keeps a "
    "16-bit softmax for backward, ~10 B an element) or the 23.06 step lost speed elsewhere. Lead: an A/B on one "
    "container; fix50a's FIXED labels on the 120 / 876 rows were withdrawn (fix50e): they pass at the code's count "
    "but part of what lands is this term covering R_FMHA's A100 GEMM-rate miss."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_AB)
def test_paddle_fused_attention_gain_matches_the_engines_eager_term(bundled_catalog):
    eager = seq_per_s(squad(1, 32), "a100-sxm4-80gb")
    fused = seq_per_s(squad(1, 32, flash=True), "a100-sxm4-80gb")
    assert (eager, fused) == (pytest.approx(123.35, rel=2e-3), pytest.approx(157.20, rel=2e-3))
    assert fused / eager == pytest.approx(123 / 120, abs=0.10), fused / eager


def test_the_term_is_a_fifth_of_the_bert_step_on_an_a100():
    """Sized: 4.546 us a token of eager-score traffic at the code's 44 B (5.786 us at fix50a's 56 B) beside 16.57 us
    of GEMMs = 21.5% of the step's time a token (25.9% before fix50e), the size the published fused-attention A/B
    above (2.4% / 5.7%) does not show."""
    s = float(throughput.eager_score_seconds_per_token(parse_workload_spec(squad(1, 32)), 2039.0))
    assert s == pytest.approx(24 * 16 * 384 * 44 / (0.70 * 2039e9), rel=1e-9)
    assert s == pytest.approx(4.546e-6, rel=1e-3)
    assert s / (s + 16.57e-6) == pytest.approx(0.215, abs=0.002)
    assert np.isclose(123 / 120 - 1, 0.025, atol=1e-3)


# --- fix50e fix 2: the narrow encoder's A100 gap, one candidate cause checked on held-out rows -------------------
# Hypothesis: an unfused stack runs LayerNorm, GELU, dropout and the bias + residual adds as separate kernels, bytes
# a token that scale with d while the FLOPs scale with d^2. The engine's eager-traffic model for image networks
# (image_model.training_eager_seconds_per_image: every saved activation written and read once a pass,
# TRAINING_KERNEL_PASSES = 3) applied to Korthikanti et al. 2022 (arXiv:2205.05198, eq. 1)'s 34 s b h bytes a layer
# (16-bit, with dropout masks; the 5 a s^2 b scores are the term above): 2 x 34 x 1,024 x 3 = 208,896 B a layer and
# token, x 24 layers = 5.01 MB a token. Not fitted: the image engine's count, unchanged.
ELEMENTWISE_BYTES = 2 * 34 * 1024 * image_model.TRAINING_KERNEL_PASSES * 24


def with_elementwise(seq_s: float, bandwidth_gbps: float, gpus: int) -> float:
    """Sequences/s with the elementwise bytes added to each GPU's time a token."""
    per_token = gpus / (seq_s * 384) + ELEMENTWISE_BYTES / (0.70 * bandwidth_gbps * 1e9)
    return gpus / per_token / 384


@pytest.mark.django_db
def test_eager_elementwise_hypothesis_fails_the_v100_rows(bundled_catalog):
    """Sized, and rejected as the cause: the elementwise passes (5.01 MB a token: 3.51 us on an A100 80GB, 7.96 us
    on a V100 32GB) land the A100 rows (DLE PyTorch 110.5 / 846.7: 105.8 (-4.3%) / 846.0 (-0.1%); Paddle cuDNN fused
    123 / 929: 129.7 (+5.5%) / 1,037.9 (+11.7%)) but take the held-out DGX-1 V100 rows out (52 / 382: 39.8 (-23.6%) /
    318.0 (-16.8%)). Landing both needs a second, unsized change (the engine's V100 fp16 rate at 0.35 of peak where
    the V100 rows would imply 0.52), so nothing is changed in the product; the A100 BERT rows stay labelled as they
    stand (R_BERTPT8, R_FMHA, R_AB) with the A100 rate for a d-1,024 encoder as the lead."""
    assert ELEMENTWISE_BYTES == 5013504
    a100 = {g: seq_per_s(squad(g, 32), "a100-sxm4-80gb") for g in (1, 8)}
    fused = {g: seq_per_s(squad(g, 32, flash=True), "a100-sxm4-80gb") for g in (1, 8)}
    v100 = {g: seq_per_s(squad(g, 16), "v100-sxm2-32gb") for g in (1, 8)}
    errors = {
        "dle a100 1": err(with_elementwise(a100[1], 2039.0, 1), 110.5),
        "dle a100 8": err(with_elementwise(a100[8], 2039.0, 8), 846.7),
        "paddle fused 1": err(with_elementwise(fused[1], 2039.0, 1), 123.0),
        "paddle fused 8": err(with_elementwise(fused[8], 2039.0, 8), 929.0),
        "dle v100 1": err(with_elementwise(v100[1], 900.0, 1), 52.0),
        "dle v100 8": err(with_elementwise(v100[8], 900.0, 8), 382.0),
    }
    expected = {
        "dle a100 1": -0.043,
        "dle a100 8": -0.001,
        "paddle fused 1": 0.055,
        "paddle fused 8": 0.117,
        "dle v100 1": -0.236,
        "dle v100 8": -0.168,
    }
    assert errors == pytest.approx(expected, abs=0.003)
    assert [k for k, e in errors.items() if abs(e) > LLM_SPEED] == ["dle v100 1", "dle v100 8"]


# --- [PYTHIA-CFG] the GPT-NeoX "stack rate" of fix50a's EXPLAINED labels ---------------------------------------------
# EleutherAI/pythia @b14d5af9ae1809046209c079852e8891dca4678f models/1B/pythia-1b.yml: no flash "attention-config"
# (dense attention), "scaled-upper-triang-masked-softmax-fusion": true, "attention-dropout": 0, "fp16", "checkpoint-
# activations": true, "partition-activations": true, "synchronize-each-layer": true. GPT-NeoX's dense path
# (megatron/model/transformer.py @007003aa ParallelSelfAttention: torch.baddbmm into fp16 scores, self.scale_mask_softmax,
# attention_dropout, torch.bmm) materialises heads x seq x seq scores. StableLM-3B-4E1T's card (find_string id
# 28636923179): "rely on flash-attention as well as SwiGLU and Rotary Embedding kernels from FlashAttention-2".
# Code count, fp16, no dropout kernel at p 0: forward baddbmm w2, fused softmax r2 w2, bmm r2 = 8 B (twice under full
# recomputation); backward bmm's probability grad w2 + probabilities read r2, fused softmax backward r2 r2 w2,
# baddbmm backward r2 r2 = 14 B: 30 B a score element; 16 layers x 8 heads x 2,048 = 262,144 elements a token.
PYTHIA_PUBLISHED = 299892736000 / (3 * 86400 * 64)


def pythia_spec(**extra) -> dict:
    from tests.procurement.outside.test_outside_ranking_audit_stop49 import PYTHIA1B

    # aud50e judged fix50a's label on the engine's default A100 rate (0.51, training_stack other); neox (stop 50) then
    # stated training_stack gpt_neox on the stop-49 spec. These cases keep the rate they were written against; under
    # gpt_neox, flash_attention false reads 14,126 (-21.9%) at the engine's 80 B and -5.8% at the code's 30 B.
    spec = copy.deepcopy(PYTHIA1B) | extra
    spec.pop("training_stack", None)
    return spec


def tokens_per_gpu(spec: dict, gpu: str) -> float:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    gpus = spec["parallelism"]["gpus"]
    c = next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == gpus)
    return c["throughput"]["training_tokens_per_second"] / gpus


@pytest.mark.django_db
def test_pythia_1b_stated_with_its_configs_dense_attention(bundled_catalog):
    """[PYTHIA-CFG] 18,076 tokens/s a GPU published; stated as the config runs (flash_attention false: dense attention
    with the fused masked softmax) ours 16,698 (-7.6%) at the engine's 80 B a score element (24 x 2 + 32 under full
    recomputation), against 24,617 (+36.2%) with flash assumed. Pythia-1B's implied 0.3745 'stack rate' holds this
    eager traffic; StableLM-3B-4E1T ran FlashAttention-2, so that rate cannot carry over to it."""
    eager = pythia_spec(flash_attention=False)
    assert image_model.eager_score_training_bytes(parse_workload_spec(eager)) == 80.0
    ours = tokens_per_gpu(eager, "a100-sxm4-40gb")
    assert abs(err(ours, PYTHIA_PUBLISHED)) <= LLM_SPEED
    assert ours == pytest.approx(16698, rel=3e-3)
    assert tokens_per_gpu(pythia_spec(), "a100-sxm4-40gb") == pytest.approx(24617, rel=3e-3)


@pytest.mark.django_db
def test_pythia_1b_eager_scores_at_the_code_count_size_most_of_the_gap(bundled_catalog, monkeypatch):
    """[PYTHIA-CFG] at the code's 30 B (8 forward twice + 14 backward): 262,144 x 30 B = 7.86 MB a token at 0.70 x
    1,555 GB/s = 7.2 us, beside the published 55.3 us a token: ours 20,900 (+15.6%) against +36.2% without it. The
    eager scores the config states are a named, code-sized cause of 20 of the 36 points; the rest (+15.6%) is near
    the target, with 'synchronize-each-layer' (a host sync a layer) a named, unsized lead."""
    monkeypatch.setattr(image_model, "EAGER_SCORE_TRAINING_FORWARD_BYTES", 8.0)
    monkeypatch.setattr(image_model, "EAGER_SCORE_TRAINING_BACKWARD_BYTES", 14.0)
    spec = parse_workload_spec(pythia_spec(flash_attention=False))
    assert image_model.eager_score_training_bytes(spec) == 30.0
    assert float(throughput.eager_score_seconds_per_token(spec, 1555.0)) == pytest.approx(
        16 * 8 * 2048 * 30 / (0.70 * 1555e9), rel=1e-9
    )
    ours = tokens_per_gpu(pythia_spec(flash_attention=False), "a100-sxm4-40gb")
    assert err(ours, PYTHIA_PUBLISHED) == pytest.approx(0.156, abs=0.004)


@pytest.mark.django_db
def test_v100_default_and_stated_eager_attention_read_the_same(bundled_catalog):
    """FIXED (fix50e, stop 50; was aud50e's strict xfail R_FALLBACK): the same V100 run ([DLEV100], 52 sequences/s)
    read 55.1 (+6.0%) with flash_attention left at its default (the pre-Ampere fallback to eager, warned and not
    charged) and 43.1 (-17.0%) stated false. The fallback is now charged (throughput.eager_score_seconds_per_token's
    flash_capable, gpus.supports_flash_attention): both read 45.25 (-13.0%) at the run's 44 B."""
    default = squad(1, 16)
    del default["flash_attention"]
    stated = seq_per_s(squad(1, 16), "v100-sxm2-32gb")
    assert stated == pytest.approx(45.25, rel=3e-3)
    assert seq_per_s(default, "v100-sxm2-32gb") == pytest.approx(stated, rel=1e-9)
