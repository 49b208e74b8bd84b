"""aud45m: outside audit of moe45 (the GB200 in training priced from the B200 at 1.025, NVIDIA's four same-plan dense
Llama 3 8B DGX-GB200 / DGX-B200 pairs). Cases from NVIDIA's own tables that no test held, each checking the GB200
path away from the four 8-GPU pairs it was set on: a multi-node same-plan dense pair, a rack-scale 405B plan, a
64-GPU 70B plan, and a same-plan MoE pair across the fabric (NVL72 against 8-GPU NVLink + InfiniBand).

Sources:
[MBARCH] NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md @0a25f911b2ed6c6905a539504fdb8e5b40e3438b
  (the commit moe45 cites; "Tokens / sec / GPU").
[MBCFG1] the same repository, scripts/performance/configs/llama/llama31_workload_base_configs.py @1804c076f
  (2025-12-09): LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_MX_BASE_CONFIG = num_gpus 128, TP 4, PP 8, CP 2, VP 8, GBS 64,
  and LLAMA31_405B_PRETRAIN_CONFIG_B200_FP8_MX_BASE_CONFIG = the B200 FP8_CS config, the same numbers: the 25.09
  GB200 row's parenthesised MX run is the B200's plan.
[MBCFG2] the same file @e940d997d (2026-01-12, "V2 (GB300/GB200: num_gpus=256, GBS=1536)"):
  LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 = 256 GPUs, TP 4, PP 16, CP 1, VP 4, GBS 1536, use_megatron_fsdp
  False, cpu_offloading_num_layers None (the 25.11 GB200 row's plan).
Tolerance: LLM speed 15% (ratios of two speeds judged the same way).
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    megatron_spec,
    tokens_per_gpu,
)
from tests.procurement.outside.test_outside_recommendations_x26c import L405_B200
from tests.procurement.sizing import test_moe_published as moe


# --- 1 and 2. Llama 3.1 405B MXFP8 on 128 GPUs, the same plan on both systems ([MBARCH] 25.09, [MBCFG1]) ----------
# DGX-GB200 "LLAMA3.1_405B | 128 | 64 | 1 | 8192 | 64 (0) | 2 (4) | 1 (8) | 1 (2) | 1 (8) | 1 | 1 (32) | 729 (578)";
# DGX-B200  "LLAMA3.1_405B | 128 | 64 | 1 | 8192 | 0 | 4 | 8 | 2 | 8 | 1 | 32 | 664 (622)". The parentheses are the
# MXFP8 runs (the table's footnote: "different quantization granularities ... 32x32"); [MBCFG1] names the GB200 MX
# plan FSDP 0 / TP 4 / PP 8 / CP 2 / VP 8 / GBS 64 = the B200's. So GB200 / B200 = 578 / 622 = 0.929 on one plan
# across 16 nodes: the only multi-node same-plan dense pair in the table, and moe45 left it out ("mixes a plan and a
# precision"; the plan and precision are the same on both sides). The product has one fp8 (no MX / CS split), so
# its spec is x26c's L405_B200, the same plan.
@pytest.mark.django_db
def test_gb200_405b_mxfp8_at_the_b200s_128_gpu_plan(bundled_catalog):
    # published 578; ours 650.8 (+12.6%): inside, on the fast side
    assert tokens_per_gpu(candidate(L405_B200, "gb200")) == pytest.approx(578, rel=0.15)


@pytest.mark.django_db
def test_gb200_over_b200_on_one_multi_node_dense_plan(bundled_catalog):
    # published 578 / 622 = 0.929; ours 650.8 / 636.5 = 1.023 (+10.1%): inside, but on the other side of 1 from
    # NVIDIA's only multi-node same-plan dense pair. With it the five same-plan dense pairs' geometric mean is
    # 1.005, not 1.025; NVIDIA's same-plan MoE pairs on 8 GPUs (Qwen3-30B MXFP8: 0.962 / 0.969 / 0.988) and
    # Nemotron 3 Nano (26.04.01, 32,768 / 32,768 = 1.000) sit at or under 1 as well.
    ours = tokens_per_gpu(candidate(L405_B200, "gb200")) / tokens_per_gpu(candidate(L405_B200, "b200"))
    assert ours == pytest.approx(578 / 622, rel=0.15)


# --- 3. Llama 3.1 405B FP8-CS on 256 GB200, NVIDIA's rack-scale plan ([MBARCH] 25.11, [MBCFG2]) ---------------------
# DGX-GB200 "LLAMA3.1_405B | 256 | FP8-CS | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | 1 | 384 | 813". DP 4, GA 384; 126
# layers plus the embedding and the loss over 16 x 4 chunks (as x26c counts this recipe). The same plan reads 793 in
# 26.02 and 864 in 26.04.01 (archive at the repository's head): not separate cases.
L405_GB200 = megatron_spec("llama-3.1-405b", 256, 8192, 4, 16, vp=4, global_batch=1536, tokens=1e11)
L405_GB200["parallelism"] |= {"account_for_embedding": True, "account_for_loss": True}


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud45m): [MBARCH] 25.11 Llama 3.1 405B FP8-CS on 256 GB200 (TP 4, PP 16, VP 4, GBS 1536): "
    "published 813 tokens/s/GPU; ours 663.2 (-18.4%; 669.6 in moe45's note). The product's plan gain over the B200's "
    "128-GPU plan is 663.2 / 650.8 = 1.019 on the GB200 (bubble 2.73% -> 0.98%); NVIDIA's is 813 over about 610 "
    "(578 MX x the 8B pairs' CS / MX 1.05) = 1.33, the same size as the MoE rows' unexplained plan gain (1.45-1.53 "
    "published against 1.23-1.33 ours, moe45's NOTES): the rack-scale plan's gain, not the card ratio, is what the "
    "product misses. The product also calls this plan does_not_fit (211.0 GiB a GPU, activations 158.8, against "
    "the 185 GiB card) where [MBCFG2] runs it with no offload and no FSDP: memory not judged here.",
)
def test_gb200_405b_fp8_on_256_gpus_at_nvidias_rack_plan(bundled_catalog):
    assert tokens_per_gpu(candidate(L405_GB200, "gb200")) == pytest.approx(813, rel=0.15)


# --- 4. Llama 3 70B MXFP8 on 64 GB200, TP 2 / PP 4 / VP 5 ([MBARCH] 26.02) ---------------------------------------------
# "DGX-GB200 | 64 | MXFP8 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 3613". DP 8, GA 32, 80 layers over 20 chunks.
# Held out (no fit used a GB200 70B pipeline row). Also what a buyer sees: the sizing headline over a GB200 and a
# B200 names the B200 though the GB200 row is the faster (the rentable-alone rule, accelerators.rentable_alone).
L70_GB200_MX = megatron_spec("llama-3-70b", 64, 8192, 2, 4, vp=5, global_batch=256, tokens=1e11)


@pytest.mark.django_db
def test_gb200_llama3_70b_mxfp8_pipeline_plan_2602(bundled_catalog):
    # published 3,613; ours 3,729.7 (+3.2%); B200 at the same plan 3,644.1 (no published row)
    assert tokens_per_gpu(candidate(L70_GB200_MX, "gb200")) == pytest.approx(3613, rel=0.15)
    report = size_spec_document(copy.deepcopy(L70_GB200_MX), ["gb200", "b200"], calibrate=False)
    assert report["throughput"]["gpu"] == "b200"


# --- 5. GPT-OSS 120B BF16, EP 64 on 64 GPUs, the same plan on both systems ([MBARCH] 26.02) --------------------------
# DGX-GB200 "GPT OSS 120B | 64 | BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 64 | 15784"; DGX-B200 "... | 64 |
# BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 64 | 8047". One plan: the all-to-all inside one NVL72 domain against
# eight 8-GPU nodes over InfiniBand. Each row is held on its own (test_outside_audit_stop43m, test_moe_published);
# the pair's ratio is not. It checks that the fabric is charged beside the 1.025 card ratio, not inside it.
@pytest.mark.django_db
def test_gpt_oss_same_plan_gb200_over_b200_across_the_fabric(bundled_catalog):
    # published 15,784 / 8,047 = 1.961; ours 18,084.4 / 8,032.6 = 2.251 (+14.8%): inside, at the edge
    gb200 = moe.megatron(moe.GPT_OSS_120B, 64, 1, 1, ep=64, micro_batch=4, global_batch=1280)
    ours = moe.tokens_per_gpu(gb200, moe.GB200) / moe.tokens_per_gpu(moe.GPT_OSS_B200_EP64, moe.B200)
    assert ours == pytest.approx(15784 / 8047, rel=0.15)
