"""Issue 26, judged from outside (round x26g): published runs no earlier test used, from sources no test or fit
had read (NVIDIA's DGX Cloud benchmarking recipes, IBM's fms-fsdp README, TensorRT-LLM's v1.0 performance overview),
plus three rankings judged by hand on their top five rows.

Speeds and memory go through `size_spec_document` (what `manage.py size` runs, calibration off); rankings through
the service `manage.py recommend` uses, as tests/procurement/outside/test_outside_recommendations_x26b.py and
x26f do (their helpers are imported). Tolerances are the issue's: LLM speed within 15%, memory within 10%. Misses
are strict xfails with the published figure, the product's, the gap and the cause I read.

Sources (figures quoted where used):
  [DGXFT]  NVIDIA/dgxc-benchmarking @741c886025a7665a1d690c05ff12ac29c1be7252 ft_llama3/README_70b.md and
           README_8b.md (NeMo 24.12 fine-tuning, DGX H100, "average time from the last 20 training steps";
           tokens/s = seq x GBS / step time). The plans are the READMEs' tables; ft_llama3/llama3_finetune.py
           builds NeMo's `finetune_recipe(peft_scheme=..., performance_mode=True)` on SQuAD (packed to the sequence
           length in NeMo's performance recipes: my reading, not stated; e26a: stated, PACKED_SQUAD), distributed
           optimizer. LoRA stated as NeMo's performance-mode Llama 3 70B adapter (rank 16 on linear_qkv: my
           reading of NeMo 24.12's performance mode, not quoted by the README; the NeMo recipe copy I could read predates performance_mode. All-linear
           rank 32 instead moves the rate -0.7%).
  [MAXT]   same repository @143b90dd91f9be958fed4773ae95d941a3356a82 maxtext/README_70b.md: "Maxtext LLama2 70b
           BF16 (FSDP+DP MBS=2)", 64x H100 (FSDP=64 GBS=128), seq 4096: step 6.999 s, 74,908.99 tokens/s; FP8 4.324 s,
           121,250.69 tokens/s (JAX, ghcr.io/nvidia/jax:maxtext-2024-12-09; remat policy not stated).
  [FMS]    foundation-model-stack/fms-fsdp @0d319983c4b3b7f7b3b5e2c5e7f746746b6f73a9 README.md table, "128 * A100" (the
           README does not say 40 or 80 GB; sized on the 80 GB part, the only one the 34B/70B rows fit), seq 4096
           (the README's "4k context length"), FSDP/HSDP with SDPA flash attention: "7b | HSDP | False | 2 | 3760",
           "13b | HSDP | False | 1 | 1700", "34b | FSDP | True | 8 | 772", "70b | FSDP | True | 6 | 380"
           token/gpu/sec; and "trained to 2.2T tokens ... on 128 A100 GPUs for a total of 162k GPU hours, ... 3500
           tokens/sec/GPU".
  [TRT10]  NVIDIA/TensorRT-LLM @00f37686aa854010d68bcbd0f4ab000221541ca6 docs/source/performance/perf-overview.md
           (v1.0, PyTorch backend, trtllm-bench throughput, kv_cache_free_gpu_mem_fraction 0.95, ModelOpt FP8
           checkpoints): "Llama 3.1 8B | H100 TP1 (FP8) | 1000/1000 | 15,220" and "Llama 3.3 70B | H100 TP2 (FP8) |
           1000/1000 | 4,205" total output tokens/s; the 70B one-GPU rows "B200 TP1 (FP4) 7,007", "GB200 TP1 (FP4)
           7,326", "H200 TP1 (FP8) 2,909".
  [DGXINF] NVIDIA/dgxc-benchmarking @2fc17d4e99fdbcd01d39a8c7af55ace875b21cfb llama3.3/inference/README.md: the listing
           of the nvidia/Llama-3.3-70B-Instruct-FP4 weights folder ("total 40G").
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from procurement.sizing.assumptions import (
    MFU_FP8_LINEARS,
    RECOMPUTE_FORWARD_TIME_SHARE,
    TRAINING_WIDTH_K_HOPPER,
    TRAINING_WIDTH_PEAK_HOPPER,
)
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.throughput import attention_forward_flops_per_token
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    describe,
    megatron_spec,
    ranked,
    tokens_per_gpu,
)

RELABEL48_MAXTEXT_70B = (
    "UNEXPLAINED (relabelA48: rechecked at 1,566.7, -17.3%. The e26a 'EXPLAINED' below is withdrawn: the "
    "fp8 linears at 0.51 of peak are the row's own figure, and no MaxText/JAX source or held-out row sets"
    " that efficiency (a, b); 'STATABLE' names the fields (a remat-policy field, a MaxText ceiling) but "
    "nothing sizes them outside the case's own table). "
)


H100 = "h100-sxm5-80gb"
A100 = "a100-sxm4-80gb"
B200 = "b200"
FEASIBLE = {"fits", "tight", "oversized"}
# e26a: the reading is the recipe's: NeMo @25ec4e98 recipes/llama3_70b.py line 313 "recipe.peft.dim = 16" and, in
# finetune_performance_optimizations, line 389 "recipe.peft.target_modules = ['linear_qkv']".
QKV_RANK16 = {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj"]}


# e26a: the packing is stated, not a reading. ft_llama3/setup.sh pins NeMo ("NEMO_COMMIT=25ec4e98...", pip-installed
# for the run) and llama3_finetune.py calls finetune_recipe(..., performance_mode=True); at NVIDIA/NeMo
# @25ec4e9894c6938c3562ebb1df3280cf5a01f4da nemo/collections/llm/recipes/llama3_8b.py lines 279-309 (llama3_70b.py
# 292-330 alike): "packed_sequence = performance_mode", "seq_length = 4096 if packed_sequence else 2048",
# "PackedSequenceSpecs, packed_sequence_size=seq_length". The samples' length is not published; the same function's
# comment "most samples in SQuAD dataset are shorter than 2K" bounds it: stated as 2,048 (packed_sample_tokens).
# Every row below keeps its outcome for any sample length from 64 to 2,048
# (test_nemo_rows_keep_their_outcome_for_any_squad_sample_length).
PACKED_SQUAD = 2048


def nemo_ft(
    model: str,
    gpus: int,
    tp: int,
    pp: int,
    gbs: int,
    *,
    vp: int = 1,
    precision: str = "bf16",
    lora=None,
    packed: int = PACKED_SQUAD,
):
    """A [DGXFT] row: seq 4,096, MBS 1, the README's TP/PP/VP and GBS, ZeRO-1 (distributed optimizer), no
    recomputation beyond flash attention ('selective' keeps no score matrix), SQuAD packed (PACKED_SQUAD)."""
    spec = megatron_spec(model, gpus, 4096, tp, pp, vp=vp, global_batch=gbs, precision=precision)
    spec["task"] = "lora" if lora else "full_finetune"
    spec["packed_sample_tokens"] = packed
    # stack26: the run's stack, stated. ft_llama3/llama3_finetune.py builds NeMo's (Megatron-Core, Transformer
    # Engine) finetune_recipe; training_stack megatron runs it at that stack's 16-bit ceiling (assumptions.
    # training_width_peak_hopper_megatron, fitted on NeMo 24.09 pretraining rows of the same repository's llama3.1
    # READMEs, not on these rows). The fp8 rows keep mfu_fp8_linears_hopper: the stack moves 16-bit ceilings only.
    spec["training_stack"] = "megatron"
    if tp > 1:
        # llama3_finetune.py sets the recipe's comm-overlap callback's tp_comm_bootstrap_backend = "mpi", which only
        # TP communication overlap (Transformer Engine userbuffers) reads: the 70B rows ran with it.
        spec["parallelism"]["tp_comm_overlap"] = True
    return spec | ({"lora": lora} if lora else {})


def fsdp(
    model, gpus: int, mbs: int, checkpointing: str, *, precision: str = "bf16", tokens: float = 1e10
) -> dict:
    return {
        "task": "pretrain",
        "model": {"preset": model} if isinstance(model, str) else model,
        "precision": precision,
        "micro_batch_size": mbs,
        "seq_len": 4096,
        "gradient_checkpointing": checkpointing,
        "parallelism": {"gpus": gpus, "zero_stage": "fsdp"},
        "training_tokens": tokens,
    }


def rate(spec: dict, gpu: str = H100) -> float:
    return tokens_per_gpu(candidate(spec, gpu))


# --- 1. NeMo fine-tuning on DGX H100 ([DGXFT]) ----------------------------------------------------------------------------
FT70_SFT_BF16 = nemo_ft("llama-3-70b", 32, 4, 4, 32, vp=5)
FT70_SFT_FP8 = nemo_ft("llama-3-70b", 32, 4, 4, 32, vp=5, precision="fp8")
FT70_LORA_BF16 = nemo_ft("llama-3-70b", 8, 2, 4, 32, vp=20, lora=QKV_RANK16)
FT70_LORA_FP8 = nemo_ft("llama-3-70b", 8, 2, 4, 32, vp=20, precision="fp8", lora=QKV_RANK16)
FT8_SFT_BF16 = nemo_ft("llama-3-8b", 8, 1, 1, 32)
FT8_SFT_FP8 = nemo_ft("llama-3-8b", 8, 1, 1, 32, precision="fp8")
# fix41: the same row with packed_sample_tokens unset (the audit's NeMo 24.07 pair). pack42: the FP8 speed case is
# judged packed again (below); this spec stays as the uncredited reference.
FT8_SFT_FP8_UNCREDITED = {k: v for k, v in FT8_SFT_FP8.items() if k != "packed_sample_tokens"}

REASON_NEMO_8B = (
    "Audit aud26: REJECTED as an explanation, it restates the gap (the same stack's 70B SFT BF16 row runs 1.08x "
    "the ceiling at d 8,192 where this one needs 1.36x at d 4,096): UNEXPLAINED. Was EXPLAINED (e26a): the width "
    "ceiling. The 8B rows run at TP 1, DP 8: no tensor or pipeline communication, "
    "no bubble; the engine runs 16-bit Hopper training at training_width_peak_hopper's ceiling, 0.535 / "
    "(1 + 838 / d) = 0.444 at d 4,096, fitted on llm-foundry's 2023 MPT H100 sweep (7B 0.447). NeMo 24.12's "
    "packed SFT does 12,412 x 4.82e10 = 5.98e14 FLOP/s a GPU counting only the weights (6N, no attention: "
    "the packing's sub-2K samples make it the least the run can have done), 0.605 of the 989 TFLOPS BF16 peak; "
    "at the ceiling that work takes 0.605 / 0.444 = 1.36x as long: -26.6%, the gap left once packing is "
    "stated (-28.9% at samples of 2,048). The recipe runs the Transformer Engine kernels the MPT sweep did not "
    "(NeMo @25ec4e98 gpt/model/llama.py lines 105-109, Llama3Config: bias_activation_fusion, "
    "bias_dropout_fusion, apply_rope_fusion; gpt/model/base.py 175-176: cross_entropy_loss_fusion, "
    "gradient_accumulation_fusion) and "
    "dgxc-benchmarking's PerfEnvPlugin(enable_vboost=True) (llama3_finetune.py): the memory-bound work k = 838 "
    "charges is smaller there; k would have to fall below 0 at e 0.535 to reach 0.605, so the fix needs a new "
    "e for Transformer Engine stacks, not a new k. The same table's 70B SFT BF16 row does 0.52 at d 8,192 (TP 4 "
    "x PP 4), 1.08x the ceiling there, within tolerance."
)

# stack26: what is left once the stack is stated. The Megatron ceiling's single e is a compromise between the two
# NeMo 24.09 pretraining rows it was fitted on (the same repository's llama3.1 READMEs): 8B (d 4,096) -7.7%, 70B
# (d 8,192) +8.5%; the llm-foundry width shape (k 838) it keeps makes narrow models slower than that stack runs
# them. Against the fitted 0.517, this row needs 0.625 (the engine's FLOPs, packed at 2,048): 0.517 x 1.083 (the
# fit's own residual at d 4,096, the 24.09 8B row needing 0.560) x 1.116 (this NeMo 24.12 SFT row over that 24.09
# pretraining row). The first factor is the fit's width shape (quantified by its residual); the second, the
# 24.12 release over 24.09 and this recipe's PerfEnvPlugin(enable_vboost=True), is not separated by any source:
# that 10% stays UNEXPLAINED.
REASON_NEMO_8B_STACK = (
    "PARTLY EXPLAINED (stack26): 0.625 of the peak needed against the Megatron ceiling's 0.517: 1.083x is the "
    "fit's own residual at d 4,096 (NeMo 24.09's Llama 3.1 8B pretraining row, a fit row, sits at -7.7%: one e "
    "for both widths with llm-foundry's k), 1.116x is this 24.12 SFT row over that 24.09 row, not separated by "
    "any source (release, vboost). Before stack26: " + REASON_NEMO_8B
)


@pytest.mark.django_db
# The 70B rows were -21.3% (SFT BF16), -16.8% (SFT FP8) and -15.3% (LoRA BF16) before I read llama3_finetune.py:
# it configures the recipe's TP comm-overlap callback, so NeMo overlapped the TP collectives; stated as
# tp_comm_overlap (nemo_ft), exposed communication falls from 0.38 s to 0.02 s a step and the rows agree.
@pytest.mark.parametrize(
    ("name", "spec", "published"),
    [
        # 3.36 s a step = 1,219.0 tokens/s/GPU; product 1,047.0 (-14.1%), 74.3 GiB 'tight'; packed (e26a) 1,066.4
        # (-12.5%); stack26 (training_stack megatron, 0.565 at d 8,192 for 0.485) 1,240.5 (+1.8%)
        ("70b_sft_bf16", FT70_SFT_BF16, 4096 * 32 / 3.36 / 32),
        # 2.26 s = 1,812.4; product 1,737.5 (-4.1%); packed 1,799.6 (-0.7%)
        ("70b_sft_fp8", FT70_SFT_FP8, 4096 * 32 / 2.26 / 32),
        # 9.118 s = 1,796.9; product 1,590.6 (-11.5%); packed 1,634.4 (-9.0%); stack26 1,901.2 (+5.8%)
        ("70b_lora_bf16", FT70_LORA_BF16, 4096 * 32 / 9.118 / 8),
        # 6.5 s = 2,520.6; product 2,597.7 (+3.1%); packed 2,734.3 (+8.5%)
        ("70b_lora_fp8", FT70_LORA_FP8, 4096 * 32 / 6.5 / 8),
        # Was a strict xfail: "8,549.6 (-31.1%); packed 8,826.1 (-28.9%); stack26 10,277.9 (-17.2%; -14.5% at samples
        # of 64)"; pack42 sized it as two in-tolerance errors against NeMo 24.12's own pretraining row (pretraining
        # -8.6% x SFT / pretraining ratio -9.4%). Now 10,567.4 (-14.9%) because moe42's FLOP count charges nothing for the
        # 128,256 x 4,096 input embedding (a lookup; 3.15e9 of 51.6e9 FLOPs a token at 4k), with the Megatron ceiling
        # refitted on its own two rows for that count (0.623 -> 0.600). Just inside: the stack26 reason's 1.116x (24.12
        # SFT over 24.09 pretraining) is still there, smaller (REASON_NEMO_8B_STACK kept for the record).
        ("8b_sft_bf16", FT8_SFT_BF16, 4096 * 32 / 1.32 / 8),
        # Was a strict xfail (fix41): 17,246 published; 14,557.5 (-15.6%) judged without packed_sample_tokens, because
        # NeMo 24.07's Llama 2 7B pair (NeMo 1.x) showed no packing gain. Removed twice, for two reasons, kept as one
        # case judged packed. pack42: 15,417.1 (-10.6%) with the recipe's packing stated at the 2,048 bound (16,257.0,
        # -5.7%, at 256-token samples) because the like-for-like pair is this row's own release: NeMo 24.12's Llama
        # 3.1 8B pretraining on 8 H100 (dgxc-benchmarking @8f5cbb37 llama3.1/README_8b.md, nemo:24.12) puts NVIDIA's
        # SFT / pretraining at 1.2423, which the credit gives (1.1771 at 2,048, 1.2413 at 256) and the uncredited spec
        # misses (1.1115, -10.5%): test_outside_packing_stop42.py. The 24.07 pair's missing gain stays unexplained
        # there (test_outside_audit_stop41.py). moe42: uncredited 14,557.5 -> 15,397.5 (-10.7%) because its FLOP count
        # charges nothing for the input embedding lookup. Merged (int42): packed 16,362.4 (-5.1%), uncredited 15,397.5 (-10.7%);
        # with mfu_fp8_linears_hopper refitted on its ten rows under the new count (0.425 -> 0.42): packed 16,169.9
        # (-6.2%), uncredited 15,216.4 (-11.8%).
        ("8b_sft_fp8", FT8_SFT_FP8, 4096 * 32 / 0.95 / 8),
    ],
)
def test_nemo_finetune_speed_within_15_percent(bundled_catalog, name, spec, published):
    assert rate(spec) == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_nemo_finetune_plans_fit_where_nvidia_ran_them(bundled_catalog):
    """[DGXFT]: "at least 8 (for LoRA) or 32 (for SFT) H100 GPUs with at least 80 GB ... will not fit on fewer".
    Product: 70B SFT 74.3 GiB ('tight'), FP8 70.1, LoRA 60.8, 8B SFT 67.4 ('tight'); all run. The SFT plan on 16 GPUs
    (TP 4 x PP 4, DP 1: the distributed optimizer has nothing to shard over) needs 100.2 GiB: does not fit, as NVIDIA
    says."""
    for spec in (FT70_SFT_BF16, FT70_SFT_FP8, FT70_LORA_BF16, FT8_SFT_BF16):
        assert candidate(spec, H100)["verdict"] in FEASIBLE
    assert candidate(nemo_ft("llama-3-70b", 16, 4, 4, 32, vp=5), H100)["verdict"] == "does_not_fit"


# --- 2. MaxText Llama 2 70B, pure FSDP on 64 H100 ([MAXT]) ----------------------------------------------------------------
# MBS 2 x 4,096 tokens a GPU, FSDP 64. NVIDIA's 1.82e15 FLOPs a sequence gives 52.6% MFU (BF16). The remat policy is
# not stated; MaxText's 'full' would put the hardware at 70% of peak, implausible, so it keeps more than full
# recomputation does. The product's two choices bracket the run: 'full' 837.7 (-28.4%), 'selective' 1,117.0 (-4.6%)
# but 232.8 GiB a GPU (does_not_fit). Neither is what ran: the spec has no MaxText-style partial remat
# (save_qkv_proj / save_dot_except_mlp) that keeps some matmul outputs and fits 80 GB.
#
# e26a: the policy IS stated, in the recipe's maxtext/configure.sh (same repository @143b90dd): bf16 "remat_policy=
# custom query_proj=device value_proj=device key_proj=device qkv_proj=device out_proj=device mlpwo=device", fp8 the
# same without mlpwo; every other named tensor stays at MaxText's default 'remat' (AI-Hypercomputer/maxtext
# @8e55ab1a, the last commit before the 2024-12-09 image, MaxText/configs/base.yml lines 168-178: "context: 'remat'",
# "mlpwi_0: 'remat'", "mlpwi_1: 'remat'"), with XLA's own rematerialization pass off. So backward runs the MLP's
# gate and up GEMMs (mlpwi_0/1) and the attention core (context) again: 2 x 2 x 8,192 x 28,672 x 80 = 75.2 GFLOPs
# plus one attention forward, 5.4 GFLOPs, a token (MAXT_POLICY_FLOPS); the down projection's output and everything
# backward reads besides are kept. Its memory by hand: the layer input, Q, K, V, out_proj's and (bf16) mlpwo's
# outputs, 8h + 4 x 1,024 = 69,632 B a token and layer, x 8,192 tokens x 80 layers = 42.5 GiB, against the 10.0
# GiB of layer inputs 'full' keeps: 33.3 + 32.5 = 65.8 GiB a GPU, it fits the 80 GB card (XLA_PYTHON_CLIENT_
# MEM_FRACTION 0.94). The spec cannot state the policy (no MaxText remat names); costed by hand from the product's
# own no-recomputation rate, it gives 940.8 (bf16, -19.6%) and 1,580.3 (fp8, -16.6%): still outside, so the policy
# is not the gap (test_maxtext_stated_remat_policy_leaves_the_efficiency_gap).
# stack26: the stack stated (training_stack maxtext: recorded, sized at the unstated ceiling: no MaxText row outside
# these two exists to fit a MaxText ceiling on; the numbers below are unchanged).
MAXT_BF16 = fsdp("llama-2-70b", 64, 2, "full") | {"training_stack": "maxtext"}
MAXT_FP8 = fsdp("llama-2-70b", 64, 2, "full", precision="fp8") | {"training_stack": "maxtext"}
MAXT_POLICY_FLOPS = 2 * 2 * 8192 * 28672 * 80  # + one attention forward, added from the engine below
REASON_MAXT = (
    "EXPLAINED (e26a): the efficiencies, not the remat policy. configure.sh states remat_policy custom (the comment "
    "above): at the product's own rates that policy gives 940.8 bf16 / 1,580.3 fp8 tokens/s/GPU (-19.6% / -16.6%). "
    "bf16: the run does 1,170.5 x 510.5e9 (the policy's FLOPs a token: the engine's 430.0e9 without recomputation "
    "+ 80.5e9 recomputed) = 5.98e14 FLOP/s, 0.604 of the 989 TFLOPS peak, where the engine caps 16-bit Hopper "
    "training at training_width_peak_hopper's 0.485 at d 8,192 (0.535 / (1 + 838 / 8,192), fitted on llm-foundry's "
    "2023 MPT sweep): 0.485 / 0.604 = 0.803, the whole -19.6%. fp8: the bf16 part (attention, 4 passes, and the "
    "head, 23.0 GFLOPs a token) at that ceiling takes 48 us of the run's 527.8 us a token, so its fp8 linears "
    "(487.5 GFLOPs with the recomputed ones) run at 0.51 of the 1,979 TFLOPS fp8 peak, where mfu_fp8_linears_hopper "
    "is 0.425 (fitted on NeMo 24.07's H100 rows). The same pattern as the NeMo 8B rows above: NVIDIA's Dec-2024 "
    "stacks (JAX/XLA with Transformer Engine's cuDNN flash attention here) run above both fitted efficiencies."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "published"),
    [
        # Was a strict xfail: product 837.7 tokens/s/GPU with full recomputation (-28.4%); REASON_MAXT. Now 1,000.3
        # (-14.5%) because the forward full recomputation runs again is charged at recompute_forward_time_share (0.35)
        # of its FLOPs' time (eff42: fitted on llm-foundry's FSDP full-checkpointing rows against the same tables'
        # rows without it, this case held out; the ceiling was fitted on runs that did not recompute). The stated
        # remat policy (80.5e9 FLOPs a token recomputed, not full's) at the same share: 1,047.9 (-10.5%)
        # (test_maxtext_stated_remat_policy_at_the_recompute_share). int42 (moe42's FLOP count merged, the share
        # refitted on the same rows: 0.35 again): 1,004.3 (-14.2%); the stated policy 1,051.9 (-10.1%).
        (MAXT_BF16, 74908.99 / 64),
    ],
)
def test_maxtext_70b_fsdp64_within_15_percent(bundled_catalog, spec, published):
    assert rate(spec) == pytest.approx(published, rel=0.15)


def maxtext_fp8_at_its_remat_policy() -> float:
    """The FP8 row at the remat policy configure.sh states (custom: context, mlpwi_0 and mlpwi_1 recomputed; the
    comment above MAXT_BF16), costed from the product's no-recomputation row: MAXT_POLICY_FLOPS at the fp8 linears'
    mfu_fp8_linears_hopper of the 1,979 TFLOPS fp8 peak plus one attention forward at the bf16 rate, charged whole
    (recompute_forward_time_share is not applied to 8-bit training). The spec cannot state this policy:
    recompute_modules takes Megatron-Core's names, whose `mlp` recomputes the whole MLP (the down projection too,
    3 GEMMs where MaxText's policy runs 2) and keeps none of the saved projections MaxText names."""
    model = parse_workload_spec(MAXT_BF16).model
    attention = attention_forward_flops_per_token(model, 4096)
    bf16 = candidate(MAXT_BF16 | {"gradient_checkpointing": "selective"}, H100)
    fp8 = candidate(MAXT_FP8 | {"gradient_checkpointing": "selective"}, H100)
    extra_s = MAXT_POLICY_FLOPS / (MFU_FP8_LINEARS.value * 1979e12) + attention / (
        bf16["throughput"]["mfu"] * 989e12
    )
    return 1 / (1 / tokens_per_gpu(fp8) + extra_s)


# moe44: the FP8 row was compared at 'full' recomputation (the spec's MAXT_FP8: 1,400.0, -26.1%), a policy the run
# did not use (outside audit expl44, row 95 and flag 8); it is compared at the policy the run states instead.
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_MAXTEXT_70B
    + "[MAXT] FP8 Llama 2 70B on 64 H100 (FSDP 64, MBS 2): published 1,894.5 tokens/s/GPU; ours at the run's "
    "stated remat policy (configure.sh: remat_policy custom, context and the MLP's gate and up GEMMs recomputed, "
    "80.5 GFLOPs a token, charged whole at the product's fp8 and bf16 rates) 1,566.7 (-17.3%; the audit's -16.6% "
    "is the moe42 figure 1,580.3, before int42 refitted mfu_fp8_linears_hopper 0.425 -> 0.42). For reference the "
    "spec's 'full' gives 1,400.0 (-26.1%) and no recomputation 1,863.3 (-1.6%) but does not fit the 80 GB card. "
    "The spec cannot state the policy (recompute_modules has Megatron's names; `mlp` recomputes the down "
    "projection too). What is left is the efficiency: the run's fp8 linears at 0.51 of the fp8 peak where "
    "mfu_fp8_linears_hopper is 0.42 (fitted on NeMo 24.07's H100 rows), and a MaxText/JAX ceiling has no other "
    "published row to fit (stack26). STATABLE by the audit's class (a MaxText ceiling and a remat-policy field), "
    "not landed here. acc44: the only other MaxText H100 FP8 rows found are this README's own 128 to 2,048-GPU "
    "columns (MFU 40.37% to 36.34%): a maxtext fp8 efficiency set on them would be set on the case's own table. "
    "Earlier reason (e26a, its numbers of then): " + REASON_MAXT,
)
def test_maxtext_70b_fp8_at_its_stated_remat_policy_within_15_percent(bundled_catalog):
    assert maxtext_fp8_at_its_remat_policy() == pytest.approx(121250.69 / 64, rel=0.15)


@pytest.mark.django_db
def test_maxtext_70b_published_rate_lies_between_full_and_selective(bundled_catalog):
    """The bracket the product can give a buyer: full recomputation below, no recomputation above."""
    for spec, published in ((MAXT_BF16, 74908.99 / 64), (MAXT_FP8, 121250.69 / 64)):
        low = rate(spec)
        high = rate(spec | {"gradient_checkpointing": "selective"})
        assert low * 0.95 <= published <= high * 1.15


@pytest.mark.django_db
def test_maxtext_stated_remat_policy_leaves_the_efficiency_gap(bundled_catalog):
    """REASON_MAXT's numbers, from the product's no-recomputation rows and the policy's recomputed FLOPs charged
    whole, as before eff42 (test_maxtext_stated_remat_policy_at_the_recompute_share charges them at the share)."""
    model = parse_workload_spec(MAXT_BF16).model
    attention = attention_forward_flops_per_token(model, 4096)
    recomputed = MAXT_POLICY_FLOPS + attention
    assert recomputed == pytest.approx(80.5e9, rel=0.001)
    bf16 = candidate(MAXT_BF16 | {"gradient_checkpointing": "selective"}, H100)
    flops = bf16["throughput"]["flops_per_token"]
    ceiling = TRAINING_WIDTH_PEAK_HOPPER.value / (1 + TRAINING_WIDTH_K_HOPPER.value / 8192)
    assert bf16["throughput"]["mfu"] == pytest.approx(ceiling, abs=1e-3) == pytest.approx(0.485, abs=1e-3)
    at_policy = tokens_per_gpu(bf16) * flops / (flops + recomputed)
    assert at_policy == pytest.approx(943.7, rel=0.001)  # moe42: 940.8 with the input embedding counted
    assert at_policy < 74908.99 / 64 * 0.85  # the stated policy alone leaves the row outside
    achieved = 74908.99 / 64 * (flops + recomputed) / 989e12
    assert achieved == pytest.approx(0.602, abs=0.001)  # moe42: 0.604 with the input embedding counted
    assert bf16["throughput"]["mfu"] / achieved == pytest.approx(at_policy / (74908.99 / 64), rel=2e-3)
    at_policy_fp8 = maxtext_fp8_at_its_remat_policy()
    # int42: 1,566.7 with mfu_fp8_linears_hopper refitted to 0.42 (1,585.0 at 0.425; moe42: 1,580.3 with the input
    # embedding counted)
    assert at_policy_fp8 == pytest.approx(1566.7, rel=0.001)
    assert at_policy_fp8 < 121250.69 / 64 * 0.85


@pytest.mark.django_db
def test_maxtext_stated_remat_policy_at_the_recompute_share(bundled_catalog):
    """eff42: the policy configure.sh states (MAXT_POLICY_FLOPS + one attention forward recomputed a token), its
    recomputed FLOPs charged at recompute_forward_time_share as full recomputation's now are: 1,051.9 bf16 (-10.1%),
    beside the spec's 'full' at 1,004.3 (-14.2%) (1,047.9 / 1,000.3 before moe42's FLOP count). The fp8 row keeps the whole charge (8-bit is outside the fit)."""
    model = parse_workload_spec(MAXT_BF16).model
    recomputed = MAXT_POLICY_FLOPS + attention_forward_flops_per_token(model, 4096)
    bf16 = candidate(MAXT_BF16 | {"gradient_checkpointing": "selective"}, H100)
    flops = bf16["throughput"]["flops_per_token"]
    at_policy = tokens_per_gpu(bf16) * flops / (flops + RECOMPUTE_FORWARD_TIME_SHARE.value * recomputed)
    # int42: 1,047.9 / 1,000.3 / 1,409.2 before moe42's FLOP count (no input embedding FLOPs); fp8 1,416.6 with it
    # at mfu_fp8_linears_hopper 0.425, 1,400.0 refitted to 0.42
    assert at_policy == pytest.approx(1051.9, abs=0.5)
    assert at_policy == pytest.approx(74908.99 / 64, rel=0.15)
    assert rate(MAXT_BF16) == pytest.approx(1004.3, abs=0.1)
    assert rate(MAXT_FP8) == pytest.approx(1400.0, abs=0.1)


# --- 3. IBM fms-fsdp on 128 A100 80GB ([FMS]) -----------------------------------------------------------------------------
# HSDP = FSDP inside a node, replicas across the 16 nodes; the spec has FSDP over all 128 ranks only (the same bytes a
# GPU, more of them over the fabric). Activation checkpointing "True" = full.
#
# e26a: what IBM ran, from the repository at the commit that published the table (3d28d72, "update perf table",
# 2024-02-21). The 34b and 70b example scripts: scripts/34b.sh @a9cc1e3 and scripts/70b.sh @82731b2
# "--fsdp_activation_checkpointing=True", "--selective_checkpointing=1", "--sharding_strategy=fsdp", batch 8 and 6;
# fms_fsdp/policies/ac_handler.py checkpoints every LLaMABlock whose count % 1 == 0, i.e. every block (full). The
# models: fms_fsdp/utils/config_utils.py get_model_config "34b" (emb_dim 8192, nheads 64, nlayers 48,
# hidden_grow_factor 22016 / 8192) and "70b" (nlayers 80, 28672 / 8192), vocabulary 32,000, and no kvheads: fms's
# LLaMABlock takes kvheads = nheads when it is 0 (foundation-model-stack/foundation-model-stack fms/models/llama.py, "if
# self.config.kvheads == 0: kvheads = self.config.nheads"), so the repository at 3d28d72 builds multi-head attention.
#
# fms26 (stop 41): that reading is not what IBM measured. (1) Six minutes before 3d28d72, on another branch, the same
# author committed 247f22c "align with FMS config" (2024-02-21 12:49), which gives "34b" and "70b" kvheads=8, as
# fms's own _70b_config (fms/models/llama.py @3bf23213: "nheads=64, kvheads=8"); every later README table was
# published from a tree that has it. (2) IBM's own MFU / HFU columns for the same model names on the same 128 A100s (README @5e522b4,
# eager, "Full AC", batch 2: 34b 700 tokens/s MFU 0.47 HFU 0.64, 70b 370 MFU 0.50 HFU 0.67; README @3b1ce15,
# compiled, batch 2: 820 / 410, MFU 0.55 / 0.55, HFU 0.74 / 0.74) are the published rate x FLOPs a token / 312
# TFLOPS: in the engine's own count the GQA shapes reproduce all eight within 2.8%, multi-head attention misses every
# one by 15-18% (test_fms_ibms_own_mfu_and_hfu_columns_count_the_gqa_models). (3) Under multi-head attention the
# 772 / 380 rows would have run at 0.811 / 0.790 of peak, above the 0.74 IBM reports for its later compiled runs;
# under GQA at 0.700 / 0.698, between IBM's eager batch-2 HFU (0.64 / 0.67) and its compiled one. The specs below
# state GQA (8 KV heads); multi-head gave 485.2 (-37.1%) and 245.4 (-35.4%).
FMS_34B = {  # fms-fsdp's "34b" as measured: Llama 2 34B's layers and MLP, 8 KV heads (fms _34b / _70b config)
    "name": "fms-llama-34b",
    "num_layers": 48,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 22016,
    "vocab_size": 32000,
}
FMS_70B = FMS_34B | {"name": "fms-llama-70b", "num_layers": 80, "intermediate_size": 28672}
# The reason the 34B / 70B rows carried as strict xfails until eff42 (kept for the record).
REASON_FMS_AC = (
    "[FMS] {size} on 128 A100, FSDP, every block checkpointed (selective_checkpointing=1: ac_handler.py wraps every "
    "LLaMABlock whose count % 1 == 0), batch {b}, sequence 4,096, no compile, 8 KV heads (comment above): {pub} "
    "tokens/s/GPU; product {prod} ({err}), {gib} GiB a GPU, 'fits'. EXPLAINED (fms26): the engine's A100 ceiling. "
    "The run does {pub} x {fpt} FLOPs a token (the engine's count with recomputation, which reproduces IBM's own "
    "HFU columns within 2.8%) = {hw} of the A100's 312 TFLOPS; the engine runs every A100 training step at 0.51 "
    "(mfu in the row), and 0.51 / {hw} = {ratio}, the whole gap. IBM's README states this level for these models "
    "on these GPUs: HFU 0.64 / 0.67 eager at batch 2 (@5e522b4), 0.74 / 0.74 compiled (@3b1ce15); the batch {b} "
    "rows sit {over} above the eager batch-2 HFU (the README: larger batches add 'a few percentage points'). The "
    "cause is not width (a100w, fitted on every A100 row but these): llm-foundry's A100 80GB rows with full "
    "checkpointing (mosaicml/llm-foundry @c90b9b31 scripts/train/benchmarking/README.md) need 0.68-0.78 of peak from "
    "d 4,096 to 8,192, flat, while the rows that set the engine's 0.51 (Meta, Megatron, OPT, BLOOM on 384-3,072 "
    "GPUs) need 0.41-0.62; a width term fitted on them gives 0.52-0.57 at d 8,192 (-19..-26% here). IBM's 34B / 70B "
    "differ from its 7B / 13B rows (0.526 / 0.453) in checkpointing and micro-batch (8 and 6 against 2 and 1) at "
    "once, as llm-foundry's do: which of the two lifts FSDP runs to ~0.70 no published source separates (UNEXPLAINED)."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model", "mbs", "checkpointing", "published"),
    [
        ("llama-2-7b", 2, "none", 3760),
        ("llama-2-13b", 1, "none", 1700),
        # Was a strict xfail: product 562.6 tokens/s/GPU (-27.1%), REASON_FMS_AC (the run needs 0.700 of the A100's
        # peak at the hardware count, 8N with every block recomputed, where the engine charged all of it at 0.51).
        # Now 671.7 (-13.0%) because the recomputed forward is charged at recompute_forward_time_share (0.35) of its
        # FLOPs' time: the 0.51 was fitted on LLaMA's runs without full recomputation, and llm-foundry's published
        # full-checkpointing rows (four BF16 tables, FSDP like this run) run 1.14-1.23x the hardware rate of that
        # charge against the same tables' rows without it; fitted (eff42) on them, this case held out
        # (test_fms_recomputed_forward_costs_the_fitted_share). int42 (moe42's FLOP count merged, the share refitted
        # on the same rows: 0.35 again): 677.3 (-12.3%).
        (FMS_34B, 8, "full", 772),
        # Was a strict xfail: product 277.6 (-27.0%, 0.698 of peak needed). Now 331.4 (-12.8%), the same cause; int42:
        # 332.8 (-12.4%).
        (FMS_70B, 6, "full", 380),
    ],
)
def test_fms_fsdp_128_a100_within_15_percent(bundled_catalog, model, mbs, checkpointing, published):
    spec = fsdp(model, 128, mbs, checkpointing)
    assert candidate(spec, A100)["verdict"] in FEASIBLE
    assert rate(spec, A100) == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_fms_recomputed_forward_costs_the_fitted_share(bundled_catalog):
    """The published rate x the engine's FLOPs a token / 312 TFLOPS (the hardware rate the runs reached), and the
    charge that now sizes them: the A100's 0.51 over the FLOPs without recomputation plus recompute_forward_time_share
    of the recomputed forward's. Before eff42 the whole 8N was charged at 0.51: 0.51 / 0.700 = 0.729 of the
    published rate, the whole -27.1% (0.730, -27.0% for 70B); under moe42's FLOP count 0.51 / 0.693 = 0.736
    (-26.4%; 70B 0.51 / 0.695, -26.6%)."""

    def achieved(model, mbs, checkpointing, published):
        row = candidate(fsdp(model, 128, mbs, checkpointing), A100)
        return published * row["throughput"]["flops_per_token"] / 312e12

    # moe42 (no FLOPs for the 32,000-row input embedding lookup, the output layer 6 a weight under recomputation):
    # 0.526 / 0.453 / 0.700 / 0.698 / 0.811 / 0.790 before
    own = [achieved("llama-2-7b", 2, "none", 3760), achieved("llama-2-13b", 1, "none", 1700)]
    assert own == [pytest.approx(0.517, abs=0.001), pytest.approx(0.448, abs=0.001)]
    assert achieved(FMS_34B, 8, "full", 772) == pytest.approx(0.693, abs=0.001)
    assert achieved(FMS_70B, 6, "full", 380) == pytest.approx(0.695, abs=0.001)
    share = RECOMPUTE_FORWARD_TIME_SHARE.value
    for model, mbs, before, now in ((FMS_34B, 8, 567.8, 677.3), (FMS_70B, 6, 278.8, 332.8)):
        row = candidate(fsdp(model, 128, mbs, "full"), A100)
        assert row["throughput"]["mfu"] == pytest.approx(0.51)
        hardware = row["throughput"]["flops_per_token"]
        without = candidate(fsdp(model, 128, mbs, "none"), A100)["throughput"]["flops_per_token"]
        charged = without + share * (hardware - without)
        # compute-bound (the FSDP traffic hides under it): the rate is the charge at 0.51
        assert tokens_per_gpu(row) == pytest.approx(312e12 * 0.51 / charged, rel=0.005)
        assert tokens_per_gpu(row) == pytest.approx(now, abs=0.1)
        # the former charge, the whole hardware count at 0.51: 567.8 / 278.8 (562.6 / 277.6 before moe42's FLOP count)
        assert 312e12 * 0.51 / hardware == pytest.approx(before, abs=0.1)
    mha = {"num_key_value_heads": 64}
    assert achieved(FMS_34B | mha, 8, "full", 772) == pytest.approx(0.805, abs=0.001)
    assert achieved(FMS_70B | mha, 6, "full", 380) == pytest.approx(0.787, abs=0.001)


# IBM's README MFU / HFU tables for the same "34b" / "70b" on the same 128 A100 80GB (MFU: 6N + attention, no
# recomputation; HFU: PyTorch's FLOP counter, recomputation included; both over 312 TFLOPS). (rate, MFU, HFU):
FMS_IBM_COLUMNS = {
    # fms-fsdp README @5e522b4 (2024-03-13): eager, "Full AC", batch 2
    "eager": {"34b": (700, 0.47, 0.64), "70b": (370, 0.50, 0.67)},
    # fms-fsdp README @3b1ce15 (2024-05-09): torch.compile, batch 2 (HFU / MFU 1.35: every block recomputed)
    "compiled": {"34b": (820, 0.55, 0.74), "70b": (410, 0.55, 0.74)},
}


@pytest.mark.django_db
def test_fms_ibms_own_mfu_and_hfu_columns_count_the_gqa_models(bundled_catalog):
    """The FLOPs a token IBM's columns imply (column x 312e12 / rate) are the engine's for 8 KV heads within 2.8%;
    for multi-head attention the engine counts 15-18% more than IBM did in every one of the eight figures. moe42:
    without the input embedding's FLOPs (a lookup) and with the output layer 6 a weight under recomputation, the
    8-KV figures are 0.982-1.024 (the eager 34B HFU 0.982, was above 0.99), MHA 1.140-1.168: still within 2.8% and
    15-18% apart."""
    models = {"34b": (FMS_34B, 8), "70b": (FMS_70B, 6)}
    for rows in FMS_IBM_COLUMNS.values():
        for name, (published, mfu, hfu) in rows.items():
            model, mbs = models[name]
            for kv, band in ((8, (0.98, 1.028)), (64, (1.14, 1.18))):
                shape = model | {"num_key_value_heads": kv}
                with_recompute = candidate(fsdp(shape, 128, mbs, "full"), A100)["throughput"][
                    "flops_per_token"
                ]
                without = candidate(fsdp(shape, 128, mbs, "none"), A100)["throughput"]["flops_per_token"]
                assert band[0] < published * with_recompute / 312e12 / hfu < band[1]
                assert band[0] < published * without / 312e12 / mfu < band[1]


# --- 4. TensorRT-LLM v1.0 max-throughput serving on H100 ([TRT10]) ----------------------------------------------------------
# trtllm-bench fills the KV cache (0.95 of free memory); the table gives no concurrency, so I state the largest the
# product keeps runnable on the card (verdict not does_not_fit), FP8 KV as ModelOpt's FP8 checkpoints carry.
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("preset", "tp", "concurrency", "published"),
    [("llama-3.1-8b", 1, 512, 15220), ("llama-3.3-70b", 2, 256, 4205)],
)
def test_trtllm_v1_max_throughput_1000_1000_within_15_percent(
    bundled_catalog, preset, tp, concurrency, published
):
    """8B TP1 at 512 streams: 13,032 (-14.4%; flat from 256 streams up: the step is compute-bound there); 70B TP2 at
    256 streams ('tight', 77.2 GiB): 4,313 (+2.6%). One step more (1,024 / 384 streams) does not fit."""
    row = candidate(trtllm_spec(preset, "fp8", tp, concurrency, 1000, 1000), H100)
    assert row["verdict"] in FEASIBLE
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(published, rel=0.15)
    bigger = candidate(trtllm_spec(preset, "fp8", tp, concurrency * 3 // 2, 1000, 1000), H100)
    assert bigger["verdict"] == "does_not_fit"


# Same table, one GPU each, Llama 3.3 70B at 1000/1000: "B200 TP1 (FP4) 7,007", "GB200 TP1 (FP4) 7,326", "H200 TP1
# (FP8) 2,909". ModelOpt's exports carry an FP8 KV cache (hf_ptq.py's kv_cache_qformat default, my reading), stated
# for all three; concurrency: the largest of the product's runnable counts I tried (the B200/GB200 rate is flat
# from 192 streams up, so the count does not decide the FP4 rows).
def one_gpu_70b(precision: str, concurrency: int) -> dict:
    spec = trtllm_spec("llama-3.3-70b", precision, 1, concurrency, 1000, 1000)
    spec["inference"]["kv_cache_dtype"] = "fp8"
    return spec


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "precision", "concurrency", "published"),
    [
        # 192 streams 'tight' (133.1 GiB); 2,646 (-9.0%)
        ("h200-sxm-141gb", "fp8", 192, 2909),
        # Was a strict xfail: product 9,016 (+28.7%), FP4 GEMMs at prefill_efficiency_fp8's 0.47 of the FP4 peak.
        # Now 6,716 (-4.2%) at prefill_efficiency_fp4's 0.30, fitted on MLPerf Inference v5.0's B200 FP4 over GH200
        # FP8 Llama 2 70B Offline rows with these rows held out (fp4s26).
        (B200, "fp4", 384, 7007),
        # Was a strict xfail: product 9,596 (+31.0%), same cause. Now 7,226 (-1.4%) (fp4s26).
        ("gb200", "fp4", 384, 7326),
    ],
)
def test_trtllm_v1_one_gpu_70b_within_15_percent(bundled_catalog, gpu, precision, concurrency, published):
    row = candidate(one_gpu_70b(precision, concurrency), gpu)
    assert row["verdict"] in FEASIBLE
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_trtllm_v1_gb200_over_b200_within_15_percent(bundled_catalog):
    """Class 'accelerators at measured speed': published GB200 / B200 = 7,326 / 7,007 = 1.046; product 9,596 / 9,016
    = 1.064 (+1.8%); at prefill_efficiency_fp4 (fp4s26) 7,226 / 6,716 = 1.076 (+2.9%). The GB200 is not ranked at a
    datasheet lead over the B200."""
    gb200 = candidate(one_gpu_70b("fp4", 384), "gb200")["throughput"]["decode_tokens_per_second_total"]
    b200 = candidate(one_gpu_70b("fp4", 384), B200)["throughput"]["decode_tokens_per_second_total"]
    assert gb200 / b200 == pytest.approx(7326 / 7007, rel=0.15)


# --- 4b. Memory of an NVFP4 checkpoint ([DGXINF]) ---------------------------------------------------------------------
# NVIDIA/dgxc-benchmarking @2fc17d4e99fdbcd01d39a8c7af55ace875b21cfb llama3.3/inference/README.md: the
# nvidia/Llama-3.3-70B-Instruct-FP4 weights folder, "total 40G" by `ls -lh` (GiB): shards 4.7G x 7, 4.6G and 2.9G =
# 40.4 GiB, what TensorRT-LLM holds on the GPU for weights. By hand: NVFP4 keeps an FP8 scale per 16 weights (4.5 bits
# a weight) on the block linears, 68.5e9 x 4.5 / 8 = 38.5 GB, and ModelOpt leaves the embedding and lm_head in BF16,
# 2 x 128,256 x 8,192 x 2 = 4.2 GB: 42.7 GB = 39.8 GiB.
# Was a strict xfail: product weights_gib 32.85 (-18.7%), 70.55e9 parameters x 4 bits flat, no block scales and the
# embedding and LM head quantized too. Now 39.78 GiB (-1.5%): block linears at nvfp4_bits_per_param's 4.5 bits, the
# embedding, LM head and norms BF16 (fp4s26).
@pytest.mark.django_db
def test_nvfp4_70b_weights_within_10_percent(bundled_catalog):
    row = candidate(one_gpu_70b("fp4", 128), B200)
    assert row["memory"]["weights_gib"] == pytest.approx(4.7 * 7 + 4.6 + 2.9, rel=0.10)


# --- 5. Rankings judged by hand -----------------------------------------------------------------------------------------------
def first_row_by_hand(rows: list[dict]) -> Decimal:
    first = rows[0]
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * Decimal(str(first["hours"]))
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=Decimal("0.001"))
    parts = sum(Decimal(v) for k, v in first["cost_breakdown"].items() if k != "total")
    assert parts == Decimal(first["total_cost"]) == Decimal(first["cost_breakdown"]["total"])
    assert Decimal(first["total_cost"]) <= min(Decimal(r["total_cost"]) for r in rows)
    return compute


# R1. IBM's 7B run as a buyer restates it: Llama 2 7B, 2.2T tokens, 128 GPUs FSDP, 60-day deadline (1,440 h).
# Published 162k GPU-hours on 128 A100 = 1,265.6 h (3,500 tokens/s/GPU over the whole run).
FMS_7B_RUN = fsdp("llama-2-7b", 128, 2, "none", tokens=2.2e12)


@pytest.mark.django_db
def test_fms_7b_run_ranking_keeps_128_gpus_and_the_deadline(bundled_catalog):
    """By hand, first row: Nebius gpu-b200-sxm_8gpu-160vcpu-1792gb on demand, 16 instances x 44.00 USD/h x 208.552 h =
    146,820.64 USD compute (row 146,820.64), + setup 704.00 + storage 1,107.88 + reruns 29,364.13 (20%) = 177,996.65.
    Next: Nebius 16 x 8 H100 at 23.60 x 474.221 h = 179,066.01 compute, 217,144.27 total; then Nebius H200 at 28.00
    for the same 474.221 h (the H200 trains no faster than the H100 here: 7B at 4k is compute-bound). Rows 4-5: GCP
    a3-megagpu-8g on demand 45.81 and 46.05 a node-hour. All 128 GPUs, ZeRO-3, on demand, P90 = compute hours. I
    would buy row 1 if the B200 runs 2.27x the H100 (the product's), which nobody's 7B FSDP run I know publishes.
    moe42 (no FLOPs for the input embedding lookup): the same first row, 144,175.68 USD compute."""
    rows = ranked(FMS_7B_RUN, top=5, deadline_hours=1440)
    assert len(rows) == 5, describe(rows)
    assert all(r["gpus"] == 128 and r["plan"]["zero_stage"] == 3 and not r["differs_from_spec"] for r in rows)
    assert all(r["wall_clock"]["p90_hours"] <= 1440 for r in rows), describe(rows)
    assert first_row_by_hand(rows) == pytest.approx(Decimal("144175.68"), rel=Decimal("0.001"))
    # The A100 the run used is not in the top five (cheaper per token elsewhere); its hours match IBM's GPU-hours.
    a100_hours = 2.2e12 / (rate(FMS_7B_RUN, A100) * 128) / 3600
    assert a100_hours * 128 == pytest.approx(162_000, rel=0.15)  # product 1,309.8 h, 167,650 GPU-h (+3.5%)


# R2. [DGXFT]'s 70B LoRA plan (8 GPUs, TP 2, PP 4, VP 20, TP overlap) for 2e9 tokens, 60 h deadline. Measured on
# H100: 2e9 / 14,375 / 3,600 = 38.6 h; product 43.66 h (+13.0%, the -11.5% rate above); with the recipe's packing
# stated (e26a) 42.49 h (+10.1%, the -9.0% rate).
LORA_70B_JOB = FT70_LORA_BF16 | {"training_tokens": 2e9}


@pytest.mark.django_db
def test_70b_lora_ranking_keeps_the_plan_and_meets_the_deadline_at_p90(bundled_catalog):
    """By hand, first row: Verda FIN-03 8B200.240V spot, 1 instance x 13.707082 USD/h x 19.230 h = 263.59 compute,
    + setup 13.71 + storage 10.34 + reruns 52.72 = 340.36; P90 19.253 h ('assumed band': no Spot Advisor data, read at
    the >20% band). Rows 2-4: AWS p6-b200.48xlarge spot at 21.04-21.76 USD/h, 514.86-532.09; row 5: Nebius 8 x H100
    spot at 10.01 USD/h for 43.658 h (P90 43.710), 546.24. Every row 8 GPUs, TP 2, PP 4, VP 20, P90 within 60 h. The
    B200 wins on its 2.27x (19.23 h against 43.66 h), the BF16 peak ratio; no B200 LoRA run of this plan is
    published that I found, so row 1's hours are the product's word.
    e26a, packing stated (PACKED_SQUAD): first row the same Verda offer, 13.707082 x 18.716 h = 256.54 compute (row
    256.53), + 13.71 + 10.31 + 51.31 = 331.86, P90 18.738 h; rows 2-4 AWS p6-b200.48xlarge spot 501.85-518.63; row 5
    Nebius 8 x H100 spot 10.012478 x 42.488 h = 425.41, total 532.12. Same order, same plans.
    stack26, the stack stated (training_stack megatron: 0.565 of the BF16 peak at d 8,192 for 0.485, on the B200 as on
    the H100): first row the same Verda offer, 13.707082 x 16.094 h = 220.59 compute, + 13.71 + 10.17 + 44.12 = 288.59,
    P90 16.113 h; rows 2-4 AWS p6-b200.48xlarge spot 435.53-450.06; row 5 Nebius 8 x H100 spot 10.012478 x 36.526 h =
    365.72, total 460.16. Same order, same plans."""
    rows = ranked(LORA_70B_JOB, top=5, deadline_hours=60)
    assert len(rows) == 5, describe(rows)
    for r in rows:
        plan = r["plan"]
        assert r["gpus"] == 8 and (
            plan["tensor_parallel"],
            plan["pipeline_parallel"],
            plan["virtual_pipeline"],
        ) == (
            2,
            4,
            20,
        ), describe(rows)
        assert not r["differs_from_spec"] and r["wall_clock"]["hours_at_probability"] <= 60
    # moe42: 225.69 (was 220.59): the Megatron ceiling refitted 0.623 -> 0.600 slows the 70B LoRA more than the
    # FLOP count fix (no input embedding FLOPs, frozen output layer 4 a weight) speeds it
    assert first_row_by_hand(rows) == pytest.approx(Decimal("225.69"), rel=Decimal("0.002"))
    h100 = [r for r in rows if r["gpu"] == H100]
    assert h100 and h100[0]["hours"] == pytest.approx(2e9 / (rate(FT70_LORA_BF16) * 8) / 3600, rel=0.001)


# R3. [DGXFT]'s 8B SFT in FP8 (DP 8, GBS 32) for 5e9 tokens: only cards with FP8 (Ada, Hopper, Blackwell) may rank,
# like for like; at a 6 h deadline the H100's 11.9 h (measured 5e9 / 137,970 / 3,600 = 10.1 h) must drop out
# (11.3 h with the recipe's packing stated, e26a).
SFT_8B_FP8_JOB = FT8_SFT_FP8 | {"training_tokens": 5e9}


@pytest.mark.django_db
def test_8b_fp8_ranking_is_fp8_cards_only_and_drops_rows_past_the_deadline(bundled_catalog):
    """24 h: first row Verda 8B200.240V spot, 13.712322 x 1 x 5.066 h = 69.47 compute (row 69.48), total 106.59; row 5
    Nebius 8 x H100 spot 10.016305 x 11.926 h = 119.45, total 163.25. e26a, packing stated: first row the same
    offer, 13.712322 x 4.783 h = 65.59 compute, total 101.92; row 5 Nebius H100 spot 10.016305 x 11.261 h = 112.79,
    total 155.22. 6 h: the H100 rows go, every row left
    finishes by 6 h at P90. moe42 (no FLOPs for the input embedding lookup): first row 61.80 compute. int42
    (mfu_fp8_linears_blackwell refitted 0.44 -> 0.43 with the Hopper figure): the same B200 offer, 4.612 h, 63.24
    compute; the H100 row 10.737 h still drops at 6 h. moe43 (mfu_fp8_linears_blackwell 0.43 -> 0.4275 in the fp8
    joint refit after the MoE cost constants' refit): the same offer, 4.639 h, 63.61 compute."""
    rows = ranked(SFT_8B_FP8_JOB, top=5, deadline_hours=24)
    assert len(rows) == 5, describe(rows)
    fp8_cards = {
        "h100-sxm5-80gb",
        "h100-nvl-94gb",
        "h100-pcie-80gb",
        "h200-sxm-141gb",
        "b200",
        "gb200",
        "l40s",
        "l4",
    }
    assert all(
        r["gpu"] in fp8_cards or r["gpu"].startswith(("h100", "h200", "b200", "b300", "gb")) for r in rows
    )
    assert all(r["gpus"] == 8 and r["plan"]["zero_stage"] == 1 and not r["differs_from_spec"] for r in rows)
    assert first_row_by_hand(rows) == pytest.approx(Decimal("63.61"), rel=Decimal("0.002"))
    tight = ranked(SFT_8B_FP8_JOB, top=5, deadline_hours=6)
    assert tight and all(r["wall_clock"]["hours_at_probability"] <= 6 for r in tight), describe(tight)
    assert all(r["gpu"] != H100 for r in tight), describe(tight)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "sample_tokens",
    [
        # Was a strict xfail (moe42): "at samples of 64 / 256 tokens the 70B LoRA FP8 row is +16.0% / +15.4% ...
        # mfu_fp8_linears_hopper, fitted on ten FP8 rows the same over-count slowed, is not refitted in moe42". Now
        # +14.6% / +14.0% (8B FP8 -0.2% / -0.8%) because int42 refitted mfu_fp8_linears_hopper on those ten rows
        # under the new FLOP count (0.425 -> 0.42, jointly with the Blackwell figure and moe_routed_bytes_fp8_share).
        64,
        256,
        512,
        2048,
    ],
)
def test_nemo_rows_keep_their_outcome_for_any_squad_sample_length(bundled_catalog, sample_tokens):
    """PACKED_SQUAD is a bound (the recipe's comment), not a measured length: from 64 to 2,048 tokens a sample the
    four 70B rows and the 8B FP8 row stay within 15% (at the extremes: 70B LoRA FP8 +8.5% at 2,048, +14.3% at 64;
    8B FP8 -10.6% and -5.2%). stack26 (training_stack megatron): the 70B BF16 rows +1.8% / +5.8% at 2,048, +3.6% /
    +8.7% at 64; the 8B BF16 row -17.2% at 2,048 and -14.5% at 64 (was -28.9% to -26.6%): its outcome now turns on
    the unpublished sample length, so this asserts its range. fix41: this asserts what the field computes, not that
    it is right: the stop-41 audit found the field's saving absent from NeMo 24.07's packed vs unpacked pairs.
    pack42: NeMo 24.12's own pair (these rows' release) has it (test_outside_packing_stop42.py), so the 8B FP8 speed
    case above is judged packed again."""
    rows = [
        ("llama-3-70b", 32, 4, 4, 32, 5, "bf16", None, 4096 * 32 / 3.36 / 32),
        ("llama-3-70b", 32, 4, 4, 32, 5, "fp8", None, 4096 * 32 / 2.26 / 32),
        ("llama-3-70b", 8, 2, 4, 32, 20, "bf16", QKV_RANK16, 4096 * 32 / 9.118 / 8),
        ("llama-3-70b", 8, 2, 4, 32, 20, "fp8", QKV_RANK16, 4096 * 32 / 6.5 / 8),
        ("llama-3-8b", 8, 1, 1, 32, 1, "fp8", None, 4096 * 32 / 0.95 / 8),
    ]
    for model, gpus, tp, pp, gbs, vp, precision, lora, published in rows:
        spec = nemo_ft(model, gpus, tp, pp, gbs, vp=vp, precision=precision, lora=lora, packed=sample_tokens)
        assert rate(spec) == pytest.approx(published, rel=0.15), (model, precision, lora)
    bf16_8b = rate(nemo_ft("llama-3-8b", 8, 1, 1, 32, packed=sample_tokens))
    # moe42 (no input embedding FLOPs; Megatron ceiling 0.600): -14.9% at 2,048 to -11.9% at 64 (was -17.2%..-14.5%)
    assert -0.155 < bf16_8b / (4096 * 32 / 1.32 / 8) - 1 < -0.115
