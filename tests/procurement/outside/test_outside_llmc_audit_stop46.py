"""Outside audit aud46t (stop 46) of train46's `training_stack: llm_c` (commits 86e0a322, b2fe3bf7).

Hand checks of the change's count and arithmetic first (no database), then llm.c measurements of my own that no
test had (grepped tests/ for each: "PR #323", "#378", "#591", "run_gpt3_124M", "145K", "200,50" found nothing),
sized through the product the way a user would (size_spec_document, POST /api/size/). Tolerance (reviewer notes):
LLM speed 15%.

Sources opened:
  [LLMC-A0D] karpathy/llm.c train_gpt2.cu @a0d5dbbda6ff10172d83ab2506aed0245c3b210b (2024-05-30, "scripts folder",
      the commit that wrote the "~300ms" / "~820ms" lines): gpt2_forward, gpt2_backward, gpt2_update,
      gpt2_multi_gpu_accumulate / _gather, fused_classifier_kernel5, layernorm_backward_kernel10, matmul_backward;
      main() defaults B 4, T 1024, recompute 1 ("1 = recompute gelu"), use_master_weights 1, zero_stage 0.
      Same defaults at ee4b056d (2024-06-14), 039904ee and c6efd90 (gelu_fusion -1 -> 0 there).
  [LLMC-GPT3-124] scripts/run_gpt3_124M.sh @a0d5dbb: "on 8X A100 80GB SXM ($14/hr) steps in ~300ms/iter",
      -b 32 -t 2048 -d 524288 -r 0 -z 1 -e "d12", USE_CUDNN=1 (a sequence length none of train46's rows has).
  [PR323] karpathy/llm.c pull request #323 "feature/cudnn for flash-attention", karpathy, 2024-05-01: "Running on
      my A100 40GB PCIE GPU", llm.c bf16 + cuDNN flash attention, ./train_gpt2cu ... -b 32 (T 1024 default):
      "tok/s: 145K"; PyTorch (bf16, torch.compile, flash) on the same card "tok/s: 115K".
  [PR378] karpathy/llm.c pull request #378 (ademeure, 2024-05-07), "Locking GPU clocks at 1275MHz on an A100 SXM4
      40GB": "BEFORE: ... (127.596542 ms, 192607.046875 tok/s)", "AFTER: ... (122.571777 ms, 200502.906250 tok/s)":
      200,502.9 x 0.1225718 s = 24,576 tokens a step = B 24 x T 1024, one GPU.
  [PR591] karpathy/llm.c pull request #591 "Fused Forward GELU (again)" (ademeure, 2024-06-14): on H100 with CUDA
      12.5 "about ~144K/s to ~145K/s for the default settings of train_gpt2cu" (B 4, T 1024, -r 1, one GPU; the
      card's form factor is not stated). 144K is the unfused-GELU figure (-ge 0, what the engine counts).
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

LLM_SPEED = 0.15


def _candidate(spec: dict, gpu: str, count: int) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu])
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == count)


def _per_gpu_tokens(spec: dict, gpu: str, count: int) -> float:
    return _candidate(spec, gpu, count)["throughput"]["training_tokens_per_second"] / count


def _error(estimate: float, published: float) -> float:
    return estimate / published - 1.0


def _gpt2(layers: int, width: int, heads: int, micro_batch: int, gpus: int, seq_len: int = 1024) -> dict:
    """llm.c's GPT-2 as a user states it: -e dN, padded vocabulary 50,304, tied embeddings, bf16 (llm.c's
    default build), training_stack llm_c; ZeRO-1 (-z 1) where the run has several GPUs."""
    tokens_per_step = {1: micro_batch * seq_len}.get(gpus, 524_288)
    parallelism = {"gpus": gpus, "zero_stage": 1} if gpus > 1 else {"gpus": 1}
    return {
        "name": f"llmc-gpt2-d{layers}",
        "task": "pretrain",
        "model": {
            "name": f"gpt2-d{layers}",
            "num_layers": layers,
            "hidden_size": width,
            "num_attention_heads": heads,
            "intermediate_size": 4 * width,
            "vocab_size": 50304,
            "gated_mlp": False,
            "tie_word_embeddings": True,
        },
        "micro_batch_size": micro_batch,
        "seq_len": seq_len,
        "gradient_accumulation_steps": tokens_per_step // (gpus * micro_batch * seq_len),
        "parallelism": parallelism,
        "training_tokens": 10_000_000_000,
        "training_stack": "llm_c",
    }


# ------------------------------------------------------------------------------------------ hand checks


def test_the_45d_count_redone_from_train_gpt2_cu_a0d5dbb():
    """[LLMC-A0D] per token and layer, bf16 elements of width C, the memory-bound kernels outside cuBLAS / cuDNN:
    forward: fused_residual_forward5 x 2 (reads residual + branch, writes residual + ln: 4C each), gelu_forward
    (reads fch 4C, writes fch_gelu 4C); backward: gelu_backward(dl_bt4c, l_fch, dl_bt4c) (reads 4C + 4C, writes
    4C), layernorm_backward_kernel10 x 2 (dout, inp, dinp read-modify-write: 4C each; the second read of dout/inp
    is a row of C, cache-resident), matmul_backward_bias_kernel9 on dout of fcproj (C), fc (4C), attproj (C),
    qkv (3C). 45C = 90 B at C bf16: train46's assumption is right. fused_classifier_kernel5 reads the row twice
    (the second "hopefully still in cache") and writes V (not the padded P) dlogits: 4 B a logit, right to 0.1%.
    Left out, sized here: (1) -r 1, llm.c's DEFAULT (main(): `int recompute = 1`), re-runs gelu_forward in the
    backward, +8C: docs/workload-spec.md's "Counted for llm.c's defaults (-r 0, -ge 0)" is wrong on -r (the
    scripts pass -r 0, so the rows are unaffected). (2) AdamW once a step (adamw_kernel3 with master weights: param
    2+2, grad 2, m 4+4, v 4+4, master 4+4 = 30 B a parameter of the shard) + global_norm_squared over ALL grads
    (2 B) + gpt2_zero_grad's memset (2 B). (3) ZeRO-1's reduce-scatter and all-gather, issued after backward,
    not overlapped at a0d5dbb. (4) encoder fwd/bwd, the first layernorm, lnf backward: ~28 B x C a token, 2%."""
    forward = 4 + 4 + (4 + 4)
    backward = 12 + 4 + 4 + (1 + 4 + 1 + 3)
    assert forward + backward == 45
    assert (forward + backward + 8) * 2 == 106  # with -r 1, llm.c's default
    # (2) AdamW per step, GPT-2 124M (124.5M parameters with the padded wte), 8 GPUs under ZeRO-1 vs 1 GPU
    params = 124_475_904
    eight = (30 * params / 8 + 4 * params) / (0.70 * 2039e9)
    one_h100 = 34 * params / (0.70 * 3350e9)
    assert eight == pytest.approx(0.00068, abs=0.00002)  # 0.68 ms of a 278 ms step: 0.2%
    assert one_h100 == pytest.approx(0.00180, abs=0.00002)  # 1.8 ms: 23% of the engine's 8.0 ms B-4 step


def test_the_124m_a100_row_and_the_1558m_h100_row_by_hand():
    """train46's arithmetic redone. GPT-2 124M on an A100 80GB (312 TFLOPS, 2,039 GB/s), the engine's 798,147,072
    FLOPs a token: FLOP time 798.147e6 / (0.726 x 312e12) = 3.5236e-6 s; bytes 90 x 12 x 768 + 4 x 50,304 =
    1,030,656 at 0.70 x 2,039e9 = 7.2210e-7 s; efficiency 0.726 / 1.20493 = 0.6025; 235,530 tokens/s a GPU; a
    65,536-token step per GPU 0.2782 s against the script's ~0.300 s: +7.8%. Held out, 1558M on an H100 SXM (989,
    3,350): 9.803e9 / (0.535 x 989e12) = 1.8527e-5 s, 7,113,216 B / 2.345e12 = 3.0334e-6 s, 0.4597: 46.4K, -0.9%
    against 1,048,576 / 8 / 2.80 = 46,811. With the script's -ge 1 (41C): 0.4654, +1.2% (train46 says +1.0%)."""
    flop = 798_147_072 / (0.726 * 312e12)
    memory = (90 * 12 * 768 + 4 * 50_304) / (0.70 * 2039e9)
    efficiency = 0.726 / (1 + memory / flop)
    tokens = efficiency * 312e12 / 798_147_072
    assert efficiency == pytest.approx(0.6025, abs=1e-4)
    assert tokens == pytest.approx(235_530, rel=1e-3)
    assert 65_536 / tokens == pytest.approx(0.2782, abs=1e-4)
    assert _error(tokens, 524_288 / 8 / 0.300) == pytest.approx(0.078, abs=0.001)
    flop = 9.803e9 / (0.535 * 989e12)
    fused = 0.535 / (1 + (82 * 48 * 1600 + 4 * 50_304) / (0.70 * 3350e9) / flop)
    counted = 0.535 / (1 + (90 * 48 * 1600 + 4 * 50_304) / (0.70 * 3350e9) / flop)
    assert counted == pytest.approx(0.4597, abs=1e-4)
    assert fused / counted - 1 == pytest.approx(0.012, abs=0.001)


def test_the_pr323_and_pr591_remainders_by_hand():
    """llmc48, the two strict xfails' arithmetic. PR #323 at its own code (train_gpt2.cu@7d0042d, the PR head):
    no fp32 master copy (adamw_kernel3 22 B a parameter, not 30), residual_forward + layernorm_forward_kernel3
    unfused (5C a layer-norm site against fused_residual_forward5's 4C, two sites a layer) and gpt2_zero_grad's
    memset of the activation gradients (bt4c + residual3 = 5C a token with cuDNN) every step: bytes a token at
    0.70 x 1,555 GB/s against ours 195,850 (5.106 us a token). PR #591's base (train_gpt2.cu@0e69e3a) built
    without cuDNN (Makefile USE_CUDNN ?= 0): permute, cuBLAS strided-batched preatt, softmax_forward_kernel5,
    att @ v; backward datt, dv, softmax_autoregressive_backward_inplace, dq, dk: ~8.5 bf16 passes of the
    B x NH x T x T matrix a layer (an estimate: the causal kernels touch about half of each row)."""
    pcie = 0.70 * 1555e9
    master_saving = 8 * 124_475_904 / 32_768 / pcie
    unfused = (2 * 12 * 768 * 2 + 5 * 768 * 2) / pcie
    ours = 1 / 195_850
    assert master_saving / ours == pytest.approx(0.0055, abs=0.0005)  # ours would be 0.5% faster, not slower
    assert unfused / ours == pytest.approx(0.008, abs=0.001)  # under 1% of the time
    missing = 1 / 145_000 - ours
    assert missing == pytest.approx(1.79e-6, abs=0.01e-6)
    assert missing * 32_768 == pytest.approx(0.0587, abs=0.0005)  # 58.7 ms of the 226 ms step
    scores = 4 * 12 * 1024 * 1024 * 2  # B x NH x T x T bf16, one layer
    attention = 8.5 * scores * 12 / (0.70 * 3350e9)
    assert scores == 100_663_296
    assert attention == pytest.approx(0.00438, abs=0.00005)
    assert 0.0098 + attention + 0.0005 == pytest.approx(0.0147, abs=0.0001)
    assert 4096 / 0.0147 / 144_000 - 1 == pytest.approx(0.935, abs=0.01)  # still +94%
    assert 144_000 * 798_147_072 / 989e12 == pytest.approx(0.116, abs=0.001)
    assert 46_811 * 9.803e9 / 989e12 == pytest.approx(0.464, abs=0.001)
    # PR #378's "before" profile_gpt2cu.py report (A100 SXM4 40GB locked at 1,275 MHz, B 24 x T 1024): ampere_bf16
    # 88.62 ms; cudnn_generated_fort_native_sdpa 18.31 + rearrange_n_convert_dq 1.73 + compute_dot_do_o 0.77 ms
    clock = 312e12 * 1275 / 1410
    assert 88.62e-3 / 24_576 == pytest.approx(
        (798_147_072 - 6 * 12 * 1024 * 768) / (0.726 * clock), rel=0.005
    )
    attention_s_per_flop = 20.81e-3 / 24_576 / (6 * 12 * 1024 * 768) * 1275 / 1410  # at full clock
    excess_t1024 = 6 * 12 * 1024 * 768 * (attention_s_per_flop - 1 / (0.726 * 312e12))
    excess_t2048 = 2 * excess_t1024
    assert excess_t1024 == pytest.approx(0.516e-6, abs=0.002e-6)
    assert 1 / (1 / 216_096 + excess_t1024) / 200_503 - 1 == pytest.approx(
        -0.030, abs=0.002
    )  # PR #378 stays in
    assert 1 / (1 / 222_434 + excess_t2048) / (524_288 / 8 / 0.300) - 1 == pytest.approx(-0.172, abs=0.002)
    assert 1 / (ours + excess_t1024) == pytest.approx(177_900, rel=0.002)
    assert 1 / (ours + excess_t1024 / 0.872) == pytest.approx(175_600, rel=0.002)


# ------------------------------------------------------------------------------------------ own cases


@pytest.mark.django_db
def test_gpt3_124m_script_at_seq_2048_on_8_a100_80gb(bundled_catalog):
    """[LLMC-GPT3-124] the counted commit's own GPT-3-shaped script: d12 at T 2048, -b 32, 524,288 tokens a step
    on 8 A100 80GB, "~300ms": 218,453 tokens/s a GPU (524,288 x 854.8M / 0.300 / 8 = 187 TFLOPS, 60% of the peak:
    possible, unlike run_gpt3_125M.sh's later ~150 ms). Caveat: the same ~300 ms as run_gpt2_124M.sh at the same
    commit, so it may be a carried-over line. Ours 222,434 (+1.8%); the unstated stack 146,521 (-32.9%)."""
    spec = _gpt2(12, 768, 12, 32, 8, seq_len=2048)
    ours = _per_gpu_tokens(spec, "a100-sxm4-80gb", 8)
    published = 524_288 / 8 / 0.300
    assert ours == pytest.approx(222_434, rel=0.005)
    unstated = _per_gpu_tokens(dict(spec, training_stack="other"), "a100-sxm4-80gb", 8)
    assert _error(unstated, published) == pytest.approx(-0.329, abs=0.001)
    assert abs(_error(ours, published)) <= LLM_SPEED, (
        f"{ours:,.0f} vs {published:,.0f} ({_error(ours, published):+.1%})"
    )


@pytest.mark.django_db
def test_pr378_one_a100_sxm4_40gb_at_batch_24(bundled_catalog):
    """[PR378] one A100 SXM4 40GB, d12, B 24, T 1024, clocks locked at 1275 MHz (of 1410): 200,503 tokens/s
    (llm.c of 2024-05-07, before a0d5dbb). Ours 223,689 at full clock, +11.6%. The spec cannot lock a clock; by
    hand, the FLOP part at 1275 MHz (x 1410 / 1275) with the memory part unchanged: 3.5236e-6 x 1.1059 +
    9.4686e-7 s a token = 206,450, +3.0%. Inside either way (the unstated stack: 156,916, -21.7%)."""
    spec = _gpt2(12, 768, 12, 24, 1)
    ours = _per_gpu_tokens(spec, "a100-sxm4-40gb", 1)
    # fix46t: 223,689 -> 216,096 (+7.8%) because llm_c now counts the once-a-step AdamW (30 B), gradient-norm and
    # zero-grad (4 B) bytes a parameter from train_gpt2.cu@a0d5dbb: 34 x 124,475,904 / 24,576 tokens = 172 KB a
    # token more at 0.70 x 1,555 GB/s (the A100 SXM4 40GB's datasheet bandwidth).
    assert ours == pytest.approx(216_096, rel=0.005)
    unstated = _per_gpu_tokens(dict(spec, training_stack="other"), "a100-sxm4-40gb", 1)
    assert _error(unstated, 200_503) == pytest.approx(-0.217, abs=0.001)
    locked = 1 / (798_147_072 / (0.726 * 312e12) * 1410 / 1275 + 1_030_656 / (0.70 * 1555e9))
    assert locked == pytest.approx(206_450, rel=0.002)
    assert abs(_error(ours, 200_503)) <= LLM_SPEED
    assert abs(_error(locked, 200_503)) <= LLM_SPEED


PR323_REASON = (
    "UNEXPLAINED: karpathy/llm.c PR #323 (2024-05-01), one A100 40GB PCIe, llm.c bf16 + cuDNN, -b 32, T 1024: "
    "145K tokens/s. aud46t: ours with training_stack llm_c 223,689 (+54.3%), the unstated stack 136,817 (-5.6%). "
    "fix46t: 195,850 (+35.1%): llm_c now takes the PCIe derating the unstated stack applies (mfu.llm_c_part_share, "
    "0.35 / 0.401 = 0.872 on the GEMMs' e, 0.726 -> 0.633) and AdamW's once-a-step bytes (34 B a parameter over "
    "32,768 tokens); the A100 SXM4 40GB gives 217,945, so the PCIe part is 0.899x it. llmc48 counted the PR's own "
    "code (train_gpt2.cu@7d0042d, the PR head, merged as 38b478d): bf16 parameters with no fp32 master copy "
    "(adamw_kernel3 22 B, not 30: ours would rise 0.5%), residual_forward + layernorm_forward unfused (+2C a layer) "
    "and the per-step memset of the activation gradients (+5C a token): +4% bytes, under 1% of the time, ruled out. "
    "What remains, 1.79 us a token (58.7 ms of the 226 ms step), is time without bytes at that commit: "
    "matmul_backward_bias_kernel4 on OC/32 blocks (24 for OC 768 on 108 SMs), layernorm_backward_kernel6's "
    "shared-memory atomicAdds, scalar gelu_backward, and the 250 W card's sustained clock; no published row sizes "
    "them, and the spec cannot state an llm.c commit. Lead sized (not landed): PR #378's published profile (A100 "
    "SXM4 40GB at 1,275 MHz, B 24, code of 2024-05-07) has the GEMMs at 3.606 us a token (the engine: 3.620) but "
    "cuDNN attention at 0.847 us (the engine's e 0.726: 0.276); charged at that rate, ours here is 175.6K to "
    "177.9K (+21% to +23%), still out, and the T 2048 script row (twice the attention) would fall to -17%."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=PR323_REASON)
def test_pr323_one_a100_40gb_pcie_at_batch_32(bundled_catalog):
    spec = _gpt2(12, 768, 12, 32, 1)
    ours = _per_gpu_tokens(spec, "a100-pcie-40gb", 1)
    unstated = _per_gpu_tokens(dict(spec, training_stack="other"), "a100-pcie-40gb", 1)
    assert ours == pytest.approx(195_850, rel=0.005)  # fix46t (was 223,689): PCIe derating + AdamW bytes
    assert unstated == pytest.approx(136_817, rel=0.005)
    assert _error(unstated, 145_000) == pytest.approx(-0.056, abs=0.001)
    assert abs(_error(ours, 145_000)) <= LLM_SPEED, f"{ours:,.0f} vs 145,000 ({_error(ours, 145_000):+.1%})"


PR591_REASON = (
    "UNEXPLAINED: karpathy/llm.c PR #591 (2024-06-14), one H100, train_gpt2cu's defaults (B 4, T 1024, -r 1): "
    "~144K tokens/s. aud46t: ours with training_stack llm_c 513,556 on an H100 SXM (+256.6%), step 8.0 ms against "
    "the measured 28.4 ms. fix46t: 419,344 (+191.2%; H100 PCIe 290,612 = +101.8%), step 9.8 ms: llm_c now counts "
    "adamw_kernel3 with master weights (30 B), global_norm_squared (2 B) and zero_grad (2 B) a parameter once a "
    "step from train_gpt2.cu@a0d5dbb, 4.23 GB at 0.70 x 3,350 GB/s = 1.8 ms. -r 1's extra gelu_forward (+8C, "
    "0.3 ms) is not counted (the spec has no field for llm.c's -r). llmc48 read the PR's base "
    "(train_gpt2.cu@0e69e3a): total_batch_size -1 makes the step one micro-step of 4,096 tokens (no -d 524288 "
    "accumulation), the printed tok/s is a bias-corrected EMA of B x T / (cudaEvent start .. end), and a step drains "
    "the GPU at least six times (H2D inputs, D2H losses, cudaDeviceSynchronize in forward, zero_grad, backward, "
    "the grad-norm D2H in update): microseconds each, not 18 ms. Its Makefile builds without cuDNN by default "
    "(USE_CUDNN ?= 0); if the PR's build was so, the materialised B x NH x T x T attention (~8.5 bf16 passes of "
    "100.7 MB a layer, 10.3 GB a step) adds ~4.4 ms and the full-square batched GEMMs ~0.5 ms: 14.7 ms, still "
    "+94%. 144K on an H100 SXM is 11.6% of its dense peak (llm.c's 1558M H100 row: 46%), and the same author's "
    "PR #322 measured ~144K tokens/s on his RTX 4090 (B 24, cuDNN), a card PR #591 also names: which card gave the "
    "figure is not stated. The rest, ~14 to 18 ms, has no source (mfu.llm_c_note warns below 16,384 tokens a GPU)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=PR591_REASON)
def test_pr591_one_h100_at_the_default_batch_4(bundled_catalog):
    spec = _gpt2(12, 768, 12, 4, 1)
    ours = _per_gpu_tokens(spec, "h100-sxm5-80gb", 1)
    # fix46t (was 513,556 / 369,243 / 8.0 ms): AdamW's once-a-step bytes counted, the PCIe part derated
    assert ours == pytest.approx(419_344, rel=0.005)
    assert _per_gpu_tokens(spec, "h100-pcie-80gb", 1) == pytest.approx(290_612, rel=0.005)
    candidate = _candidate(spec, "h100-sxm5-80gb", 1)
    assert candidate["throughput"]["step_seconds"] == pytest.approx(0.0098, abs=2e-4)
    assert any("validated only for micro-steps" in w for w in candidate["warnings"])
    assert abs(_error(ours, 144_000)) <= LLM_SPEED, f"{ours:,.0f} vs 144,000 ({_error(ours, 144_000):+.1%})"


# ------------------------------------------------------------------------------------------ robustness

CRASH_REASON = (
    "UNEXPLAINED (bug): mfu.llm_c_efficiency divides by flop_seconds = FLOPs / (e x peak x 1e12) with peak = "
    "gpu.dense_tflops('bf16') or 0.0, which is 0 on parts without bf16 (V100, Turing); the `flop_seconds <= 0` "
    "guard comes after the division. _runs_llm_c admits any NVIDIA generation (its docstring says Ampere and "
    "later), so a bf16 llm_c spec sized on a V100 raises ZeroDivisionError, and so does every llm_c spec sized "
    "without a GPU list (the catalog holds v100-sxm2-16gb / -32gb, v100-pcie-16gb, rtx-2080-super)."
)


# Was a strict xfail (CRASH_REASON, kept as the record): ZeroDivisionError on a V100 and on the whole catalog. Now
# the V100 candidate is refused on precision like any other stack because fix46t's _runs_llm_c admits only Ampere
# and later parts with a dense peak and bandwidth in the spec's precision (elsewhere the unstated stack sizes it and
# the candidate's warnings say llm_c was not applied), and llm_c_efficiency guards peak <= 0 before dividing.
@pytest.mark.django_db
def test_llm_c_on_a_v100_is_sized_not_raised(bundled_catalog):
    spec = _gpt2(12, 768, 12, 16, 1)
    # control: any other stack is refused in the candidate, not raised
    other = _candidate(dict(spec, training_stack="other"), "v100-sxm2-32gb", 1)
    assert other["blocked_by"] == "precision" and "bf16 needs NVIDIA Ampere" in other["errors"][0]
    v100 = _candidate(spec, "v100-sxm2-32gb", 1)
    assert v100["blocked_by"] == "precision"
    assert any("llm_c is stated but not applied" in w for w in v100["warnings"])


# Was a strict xfail (CRASH_REASON): POST /api/size/ with no GPU list raised on the catalog's V100s and Turing card.
# Now 200 because those parts fall back to the unstated stack (fix46t, mfu._llm_c_skip_reason).
@pytest.mark.django_db
def test_the_api_sizes_an_llm_c_spec_on_the_whole_catalog(bundled_catalog, engineer_client):
    response = engineer_client.post("/api/size/", _gpt2(12, 768, 12, 64, 8), content_type="application/json")
    assert response.status_code == 200
