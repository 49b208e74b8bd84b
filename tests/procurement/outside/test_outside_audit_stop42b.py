"""Outside audit (aud42b) of three merged stop-42 branches on `integ` (tests/procurement/outside/NOTES-issue26.md,
"## Disagreements at stop 42"): eff42's recompute_forward_time_share (0.35), pack42's packed-sequence credit on NeMo
24.12 and the torchao H100 peak with torchtitan's eager loss, diff29's traced UNet forward peak. Each is checked against
its source and tried on published cases no other test uses. Tolerances: LLM speed 15%, image memory 15%. Misses are
strict xfails with their numbers.

Sources (read with git show on fetched mirrors or read_file; figures quoted where used):
  [LLMF]   mosaicml/llm-foundry @c90b9b312c644dbde5c9e6eef75c6f1c117d8782 scripts/train/benchmarking/README.md, the four
           BF16 tables: "H100 80GB BF16 (Large Scale, >= 128 GPUs)" lines 75-92, "H100 80GB BF16" lines 98-140, "A100
           80GB ... (RoCE)" lines 166-201, "A100 40GB ... (RoCE)" lines 232-276 (columns used: Model, SeqLen, # GPUs,
           MicroBatchSize, GradAccum, Throughput (T/s/GPU), Activation Checkpointing). Rows at seq <= 4,096, MPT 1b-70b.
  [TT24]   pytorch/torchtitan @1ea476e9f24be439eda358aa864f45c1c37a8a88 (2024-04-24) docs/performance.md: "FSDP2 (1D
           parallelism) ... on 64 A100 (80GB)"; line 12 "| 70B | 1 | full | 331 | 51.7% |" (Llama 3), line 27 "| 13B |
           2 | no | 2162 | 61.1% |" and line 31 "| 70B | 2 | full | 353 | 50.5% |" (Llama 2). Same commit:
           train_configs/llama3_70b.toml seq_len 8192, llama2_70b.toml seq_len 4096, both compile = false;
           torchtitan/models/llama/__init__.py "70B": dim 8192, n_layers 80, n_heads 64, n_kv_heads 8,
           ffn_dim_multiplier 1.3, multiple_of 4096 (FFN 28,672); Llama 2 13B: 40 layers, 5,120, 40 heads, FFN 13,824.
  [FMS]    foundation-model-stack/fms-fsdp @5e522b4c4f8a5f080717e714fee7622414dd6b63 (2024-03-13) README.md lines 12-17:
           "| 7b | HSDP | No AC | 2 | 3700 | 7500 |", "| 34b | FSDP | Full AC | 2 | 700 | 1550 |", "| 70b | FSDP |
           Full AC | 2 | 370 | 800 |" (tokens/s/GPU on "A100 80G 128 GPUs with 400Gbps" and "H100 96 GPUs with 800
           Gbps"); lines 23-28 MFU/HFU: H100 7B 0.37/0.37, 34B 0.32/0.44, 70B 0.34/0.45. Model shapes as x26g's FMS_34B /
           FMS_70B (GQA, 8 KV heads).
  [DGX2412] NVIDIA/dgxc-benchmarking @8f5cbb3799ea8cc031ed2c2cee1cbdbc15b240ad llama3.1/README_8b.md: 8 x H100, CP 2, GBS
           128, seq 8,192: BF16 82,028 and FP8 111,054 tokens/s; "Notes": model flops a token = 12 L h^2 (1 + g/a + s/h)
           + 18 L f h + 6 V h (L 32, h 4,096, g 8, a 32, f 14,336, V 128,256). @741c886025a7665a1d690c05ff12ac29c1be7252
           ft_llama3/README_8b.md: SFT 8 x H100, seq 4,096, GBS 32: BF16 1.32 s / 99,296 tokens/s, FP8 0.95 s / 137,970;
           "Model flops for llama 8B finetuning 1.84E+14" (a 4,096-token sequence).
  [TT1033] pytorch/torchtitan bbb1b616e (2025-04-02, #1033) torchtitan/components/loss.py: removes "# TODO: compiling
           loss function causes CUDA errors, turning off for now" and adds build_cross_entropy_loss, which compiles the
           loss only from then on.
  [DIFF]   huggingface/diffusers v0.11.0 (bcb0419ef964a745b9acdadee61f5cddf79f6b51) src/diffusers/models/attention.py
           lines 479-507 BasicTransformerBlock.forward (norm_hidden_states = norm2 output stays bound through the
           feed-forward; hidden_states = self.ff(self.norm3(hidden_states)) + hidden_states), GEGLU (proj to 8C, chunk,
           hidden_states * gelu(gate)); unet_2d_condition.py forward's up loop (sample = upsample_block(hidden_states=
           sample, res_hidden_states_tuple=res_samples, ...)).
  [LAMBDA] LambdaLabsML/lambda-diffusers @8571d8d492c6a999b8417cfb7752694a18d209a6 benchmarks/benchmark.csv (diffusers
           0.11.0, xformers, VAE slicing above 16 images; memory = torch.cuda.memory_reserved() / 1e9): "NVIDIA A100 80GB
           PCIe,single,...,128,161.52,48.01", "NVIDIA A100-SXM4-40GB,half,...,128,69.31,22.68", "NVIDIA A100-SXM4-40GB,
           single,...,64,77.05,26.34", "NVIDIA A100-SXM4-40GB,half,...,64,34.92,13.79".
"""

from __future__ import annotations

import math
import statistics

import pytest

import procurement.sizing.report as report
from procurement.sizing.image_shapes import resnet_working, unet_forward_peak
from tests.procurement.outside.test_outside_image_workloads_6 import _lambda, _reserved_gb, _size
from tests.procurement.outside.test_outside_recommendations_x26b import candidate, tokens_per_gpu
from tests.procurement.outside.test_outside_recommendations_x26g import FMS_34B, FMS_70B, fsdp
from tests.procurement.sizing.test_recompute_share import (
    A100_40GB_CHECKPOINTED,
    A100_40GB_WITHOUT,
    A100_80GB_CHECKPOINTED,
    A100_80GB_WITHOUT,
    H100_128_CHECKPOINTED,
    H100_128_WITHOUT,
    H100_CHECKPOINTED,
    H100_WITHOUT,
    _rate,
)

RELABEL48_FMS_FULL_AC = (
    "UNEXPLAINED (relabelA48: rechecked, figures as below. (b) fails: the fabric (100 Gb/s a GPU) and "
    "HSDP were sized (nemo43) and leave the table +20..+27%; the rest is the cluster running at IBM's own"
    " MFU column (0.32-0.37 of peak), which no source opened attributes to a setting. Best lead: the "
    "cluster itself, not described by the publisher). "
)

RELABEL48_FMS_NO_AC = (
    "UNEXPLAINED (relabelA48: rechecked at 10,252.4, +36.7%; as the two full-AC rows: fabric and HSDP "
    "sized and not enough, no source for the cluster's 0.37 MFU). "
)


A100 = "a100-sxm4-80gb"
H100 = "h100-sxm5-80gb"
SPEED, IMAGE_MEMORY = 0.15, 0.15

# [LLMF] "H100 80GB BF16" lines 98-140 and "A100 40GB" lines 232-276, seq <= 4,096: (model, seq, GPUs, micro-batch,
# accumulation, tokens/s/GPU). This audit transcribed them from the README on its own; int42 then added the same two
# tables to test_recompute_share.py, row for row identical, so they are read from there (one copy of the data).
TABLES = [
    (H100_128_WITHOUT, H100_128_CHECKPOINTED, H100),
    (H100_WITHOUT, H100_CHECKPOINTED, H100),
    (A100_80GB_WITHOUT, A100_80GB_CHECKPOINTED, A100),
    (A100_40GB_WITHOUT, A100_40GB_CHECKPOINTED, "a100-sxm4-40gb"),
]


@pytest.mark.django_db
def test_eff42_fit_recomputed_on_all_four_tables_and_not_a_micro_batch_proxy(bundled_catalog):
    """[LLMF] eff42's fit redone on its 50 rows (its own test re-runs two tables): each checkpointed row's log error
    less the geometric-mean log error of its table's rows without checkpointing. RMS 8.2% at 0.35 and 19.5% at 1 (the
    whole charge), as claimed; the optimum is flat from 0.30 to 0.40 (8.3 / 8.2 / 8.3%). Micro-batch: the checkpointed
    rows' median micro-batch is 18,432 tokens, the uncheckpointed 16,384; the engine's error falls by about 0.06 in
    log per e-fold of micro-batch tokens in both groups (it has no dense micro-batch term), which over that 12%
    difference in median is under 1%: the share is not the micro-batch effect."""
    bases = [sum(math.log(_rate(r, gpu, "none") / r[-1]) for r in w) / len(w) for w, _, gpu in TABLES]

    def errors(share):
        return [
            math.log(_rate(r, gpu, "full", share) / r[-1]) - base
            for (_, c, gpu), base in zip(TABLES, bases, strict=True)
            for r in c
        ]

    def rms(share):
        e = errors(share)
        return math.sqrt(sum(x * x for x in e) / len(e))

    assert len(errors(0.35)) == 50
    assert rms(0.35) == pytest.approx(0.082, abs=0.002)
    # 0.195 at 1 before moe42 stopped charging the input embedding and recomputing the output layer (int42: 0.191)
    assert rms(1.0) == pytest.approx(0.191, abs=0.002)
    grid = {s: rms(s) for s in (0.25, 0.30, 0.35, 0.40, 0.45)}
    assert min(grid, key=grid.get) in (0.30, 0.35, 0.40)
    assert max(grid[0.30], grid[0.40]) - grid[0.35] < 0.002
    micro = {
        flag: statistics.median(r[1] * r[3] for w, c, _ in TABLES for r in (c if flag else w))
        for flag in (1, 0)
    }
    assert micro == {1: 18432, 0: 16384}


# [TT24] torchtitan's FSDP2-only runs on 64 A100 80GB, eager, local batch 2 (Llama 2) / 1 (Llama 3)
TT_L2_70B = {
    "name": "torchtitan-llama2-70b",
    "num_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 32000,
}
TT_L3_70B = TT_L2_70B | {"name": "torchtitan-llama3-70b", "vocab_size": 128256}
TT_L2_13B = {
    "name": "torchtitan-llama2-13b",
    "num_layers": 40,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 40,
    "intermediate_size": 13824,
    "vocab_size": 32000,
}


def _fsdp(model: dict, gpus: int, mbs: int, seq: int, checkpointing: str) -> dict:
    return fsdp(model, gpus, mbs, checkpointing) | {"seq_len": seq}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "published", "now", "whole"),
    [
        # Figures under the FLOP count of moe42 / int42 (no FLOPs for the input embedding lookup, the output layer
        # never recomputed); the audit's figures under the old count in brackets.
        # [TT24] line 31, Llama 2 70B, batch 2, seq 4,096, full AC: 353; 332.8 (-5.7%), whole charge 278.8 (-21.0%)
        # [331.4 (-6.1%), 277.6 (-21.4%)]
        pytest.param(
            _fsdp(TT_L2_70B, 64, 2, 4096, "full"), 353, 332.8, 278.8, id="torchtitan-llama2-70b-full-ac"
        ),
        # [TT24] line 12, Llama 3 70B, batch 1, seq 8,192, full AC: 331; 317.7 (-4.0%), whole 266.6 (-19.5%)
        # [312.8 (-5.5%), 262.0 (-20.9%)]
        pytest.param(
            _fsdp(TT_L3_70B, 64, 1, 8192, "full"), 331, 317.7, 266.6, id="torchtitan-llama3-70b-full-ac"
        ),
        # [FMS] line 16-17, eager, batch 2, 128 A100, full AC: 700 / 370; 677.3 (-3.2%) / 332.8 (-10.1%), whole
        # 567.8 (-18.9%) / 278.8 (-24.6%) [671.7 / 331.4, whole 562.6 / 277.6] (x26g tests the later batch-8/6
        # rows, 772 / 380)
        pytest.param(fsdp(FMS_34B, 128, 2, "full"), 700, 677.3, 567.8, id="fms-34b-eager-batch2"),
        pytest.param(fsdp(FMS_70B, 128, 2, "full"), 370, 332.8, 278.8, id="fms-70b-eager-batch2"),
    ],
)
def test_eff42_share_on_held_out_full_checkpointing_fsdp_runs_on_a100(
    bundled_catalog, monkeypatch, spec, published, now, whole
):
    """Held out of eff42's fit and of every other test: these pass only with the share; charged whole they miss by
    20-25%, as the fit's own rows did."""
    row = candidate(spec, A100)
    assert row["verdict"] in {"fits", "tight", "oversized"}
    assert tokens_per_gpu(row) == pytest.approx(now, abs=0.1)
    assert tokens_per_gpu(row) == pytest.approx(published, rel=SPEED)
    monkeypatch.setattr(report, "recompute_time_share", lambda spec, gpu: 1.0)
    assert tokens_per_gpu(candidate(spec, A100)) == pytest.approx(whole, abs=0.1)


@pytest.mark.django_db
def test_eff42_torchtitan_table_level_without_checkpointing(bundled_catalog):
    """[TT24] line 27, the same table's uncheckpointed row: Llama 2 13B, batch 2, no AC, 2,162; product 1,937.1
    (-10.4%; 1,914.1, -11.5%, under the FLOP count before moe42). Against this table level the full-AC 70B rows sit
    +5.2% / +7.1% with the share (-11.8% / -10.1% whole): this table alone would take a somewhat larger share than
    0.35, as eff42's H100 table (0.50) does."""
    row = candidate(_fsdp(TT_L2_13B, 64, 2, 4096, "none"), A100)
    assert tokens_per_gpu(row) == pytest.approx(1937.1, abs=0.1)
    assert tokens_per_gpu(row) == pytest.approx(2162, rel=SPEED)


FMS_H100_REASON = (
    RELABEL48_FMS_FULL_AC
    + "[FMS] 96 H100, FSDP, eager, batch 2, full AC: published {pub}; product {now} ({err}) with the share, {whole} "
    "({werr}) charged whole. Not the share: the same table's uncheckpointed 7B row (HSDP, no AC, 7,500) is +36.7% "
    "(test_fms_h100_table_level_without_checkpointing), IBM's own MFU column puts this cluster at 0.32-0.37 of the "
    "H100's peak where the engine's width ceiling gives 0.444-0.485; against that table level the full-AC rows sit "
    "{rel} with the share and -19..-23% whole, so the whole charge only passed by cancelling the cluster's shortfall. "
    "nemo43 checked the run against the README (@5e522b4, 'exact same scripts and configurations' as the A100 "
    "column): batch 2, full AC, FSDP, eager are what the spec states; the H100 / A100 ratio IBM measured is 2.03 / "
    "2.11 / 2.21 / 2.16 (7B / 13B / 34B / 70B), compiled (@ed74fd5) 2.11 / 2.26 / 2.23 / 2.17, so compile is not it; "
    "the product's is 2.76 / 3.02 / 3.02 (7B / 34B / 70B), while it is within 14% of IBM's A100 rows and +1..+10% on "
    "llm-foundry's H100 FSDP rows on 128-512 GPUs (test_recompute_share H100_128 tables). The fabric: '800 Gbps' read "
    "as a node's (not stated; IBM Cloud's later H100 cluster network profile is RoCEv2 at 8 x 400 Gb/s, cloud.ibm.com "
    "docs vpc-cluster-network-h100-profile), where the size report assumes 400 Gb/s a GPU "
    "(internode_bandwidth_gbps_per_gpu_hopper); at 100 Gb/s a GPU the product gives 9,486.1 / 1,954.2 / 959.7 "
    "(+26.5% / +26.1% / +20.0%): FSDP traffic hides under the compute in the product's overlap model, so the fabric "
    "sizes 5-10 of the 25-37 points; at the A100 column's '400Gbps' (50 Gb/s a GPU) IBM's A100 7B / 34B / 70B rows "
    "keep their rates but the 13B, which IBM ran as HSDP, falls to 1,423.8 (-16.2%) under the full-shard FSDP the "
    "spec can state (test_outside_nemo43.py). The spec can state neither a fabric nor HSDP; HSDP would "
    "move fewer bytes across nodes, raising the 7B estimate. "
    "UNEXPLAINED (cluster not described further). t44: rechecked (the figures above are pinned by the test). "
    "Spec: in part; a fabric and HSDP would be spec fields the product lacks, but both were sized (nemo43) and "
    "leave the rows +20..+27%; the rest is the cluster against IBM's own MFU column, no setting of the run."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "published", "now", "whole"),
    [
        pytest.param(
            fsdp(FMS_34B, 96, 2, "full"),
            1550,
            2044.2,
            1713.9,
            id="fms-34b-96-h100",
            marks=pytest.mark.xfail(
                strict=True,
                reason=FMS_H100_REASON.format(
                    pub="1,550", now="2,044.2", err="+31.9%", whole="1,713.9", werr="+10.6%", rel="-3.5%"
                ),
            ),
        ),
        pytest.param(
            fsdp(FMS_70B, 96, 2, "full"),
            800,
            1004.3,
            841.6,
            id="fms-70b-96-h100",
            marks=pytest.mark.xfail(
                strict=True,
                reason=FMS_H100_REASON.format(
                    pub="800", now="1,004.3", err="+25.5%", whole="841.6", werr="+5.2%", rel="-8.2%"
                ),
            ),
        ),
    ],
)
def test_eff42_share_on_fms_full_checkpointing_runs_on_96_h100(
    bundled_catalog, monkeypatch, spec, published, now, whole
):
    row = candidate(spec, H100)
    rate = tokens_per_gpu(row)
    monkeypatch.setattr(report, "recompute_time_share", lambda spec, gpu: 1.0)
    assert tokens_per_gpu(candidate(spec, H100)) == pytest.approx(whole, abs=0.1)
    assert rate == pytest.approx(now, abs=0.1)
    assert rate == pytest.approx(published, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        RELABEL48_FMS_NO_AC
        + "[FMS] line 14, Llama 2 7B, 96 H100, HSDP, no AC, batch 2: published 7,500; product 10,252.4 (+36.7%; "
        "10,067.7, +34.2%, before lora43 / accel43), mfu 0.444 where IBM's MFU column gives 0.37. The table level the "
        "two full-AC H100 rows above are judged against; no recomputation here, so eff42 does not move it. nemo43: at "
        "100 Gb/s a GPU ('800 Gbps' a node) 9,486.1 (+26.5%); HSDP (all-gathers inside the node, only each GPU's "
        "1/8 gradient shard all-reduced across the 12 nodes) moves fewer fabric bytes than the full-shard FSDP the "
        "product prices; compiled, IBM's H100 / A100 ratio is the same (9,600 / 4,550 = 2.11 against 2.03). "
        "UNEXPLAINED (cluster not described further). t44: rechecked at 10,252.4, unchanged; spec as the two "
        "full-AC rows (fabric and HSDP not statable, sized and not enough)."
    ),
)
def test_fms_h100_table_level_without_checkpointing(bundled_catalog):
    row = candidate(fsdp("llama-2-7b", 96, 2, "none"), H100)
    assert tokens_per_gpu(row) == pytest.approx(10252.4, abs=0.1)
    assert tokens_per_gpu(row) == pytest.approx(7500, rel=SPEED)


def _nvidia_flops(seq: int, attention_tokens: float) -> float:
    """[DGX2412] "Notes": model flops a token, the s/h term at the attended length."""
    layers, h, groups, heads, ffn, vocab = 32, 4096, 8, 32, 14336, 128256
    attention = 12 * layers * h**2 * (1 + groups / heads + attention_tokens / h)
    return attention + 18 * layers * ffn * h + 6 * vocab * h


def test_pack42_nvidia_flop_count_brackets_the_nemo_2412_ratio():
    """[DGX2412] At one hardware rate the uncredited SFT (attention over 4,096) could run at most 1.1252x the
    pretraining rate (8,192-token attention), the fully packed one (256-token samples) 1.2747x. NVIDIA's ratios 1.2105
    (BF16) and 1.2423 (FP8) exceed the uncredited bound by 7.6% / 10.4%: either the packing saves attention FLOPs or
    the pretraining row loses that much to CP 2 (which the engine prices, -5.7% / -8.6% on the pretraining rows).
    NVIDIA's own SFT FLOP count (1.84E+14 a sequence) is the formula with the s/h term dropped: it counts packed
    attention as nothing. So the 24.12 pair supports the credit's existence; its size rests on the engine's CP cost."""
    pretraining = _nvidia_flops(8192, 8192)
    assert pretraining * 8192 == pytest.approx(4.74e14, rel=0.001)
    assert _nvidia_flops(4096, 0) * 4096 == pytest.approx(1.84e14, rel=0.003)
    assert pretraining / _nvidia_flops(4096, 4096) == pytest.approx(1.1252, abs=0.0005)
    assert pretraining / _nvidia_flops(4096, 256) == pytest.approx(1.2747, abs=0.0005)
    bf16 = (4096 * 32 / 1.32) / 82028
    fp8 = (4096 * 32 / 0.95) / 111054
    assert (bf16, fp8) == (pytest.approx(1.2105, abs=0.0005), pytest.approx(1.2423, abs=0.0005))
    assert bf16 / 1.1252 - 1 == pytest.approx(0.076, abs=0.001)
    assert fp8 / 1.1252 - 1 == pytest.approx(0.104, abs=0.001)


def test_diff29_sd15_unet_peak_traced_by_hand():
    """[DIFF] by hand, SD 1.5 at 512 px (latent 64, block_out_channels 320/640/1280/1280, 2 layers a level, no attention
    at the lowest). The peak is in up_blocks[3] (64 x 64), during a transformer block's GEGLU: the caller holds
    `sample` (up_blocks[2]'s upsampled output, 640 C) and `res_samples` (conv_in's output and down_blocks[0]'s two
    ResNet/attention outputs, 3 x 320 C); inside, Transformer2DModel's `residual` (C), its permuted block input (C,
    the block's caller's reference), norm2's output (still bound as norm_hidden_states), the post-cross-attention sum
    (C), norm3's output (C, FeedForward's argument) and GEGLU's 8C projection, 4C gelu(gate) and 4C product: 21 C.
    (640 + 960 + 21 x 320) x 4,096 = 34,078,720 elements a UNet sample; the first ResNet over the 960-channel
    concatenation (640 + 960 + 3,520) x 4,096 = 20.97M is smaller. At 32 x 32: (1,280 + 320 + 1,280 + 21 x 640) x
    1,024 = 16.7M. The old rule (every skip, 6.6M, plus 18 C at level 0, 23.6M) gave 30.2M. SDXL (no attention at
    128 x 128): the ResNet branch, (640 + 960 + 3,520) x 16,384 = 83.9M, as claimed."""
    sd15 = unet_forward_peak([320, 640, 1280, 1280], [True, True, True, False], [4096, 1024, 256, 64], 2)
    assert sd15 == (640 + 3 * 320 + 21 * 320) * 4096 == 34_078_720
    assert resnet_working(960, 320) == 3520
    assert (640 + 960 + 3520) * 4096 < sd15
    assert (1280 + 320 + 2 * 640 + 21 * 640) * 1024 < sd15
    skips = (3 * 320 * 4096) + (320 + 2 * 640) * 1024 + (640 + 2 * 1280) * 256 + (1280 + 2 * 1280) * 64
    assert (skips + 18 * 320 * 4096) / 1e6 == pytest.approx(30.2, abs=0.05)
    sdxl = unet_forward_peak([320, 640, 1280], [False, True, True], [16384, 4096, 1024], 2)
    assert sdxl == (640 + 960 + 3520) * 16384


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "precision", "images", "published", "now"),
    [
        # [LAMBDA] A100 80GB PCIe, fp32, 128 images (256 UNet samples, VAE sliced): 48.01 GB; 41.12 (-14.4%), now
        # 43.81 (-8.8%) with the caching allocator's reserve over the UNet forward (diffmem43,
        # the sd-1.5 preset's forward_reserve_ratio 1.127); the pinned values below moved with it
        pytest.param("a100-pcie-80gb", "fp32", 128, 48.01, 43.81, id="a100-80gb-fp32-128"),
        # [LAMBDA] A100-SXM4-40GB, fp16, 128 images: 22.68 GB; 20.56 (-9.3%), now 21.90 (-3.4%)
        pytest.param("a100-sxm4-40gb", "fp16", 128, 22.68, 21.90, id="a100-40gb-fp16-128"),
        # [LAMBDA] A100-SXM4-40GB, fp32, 64 images: 26.34 GB; 22.80 (-13.4%), now 24.14 (-8.3%)
        pytest.param("a100-sxm4-40gb", "fp32", 64, 26.34, 24.14, id="a100-40gb-fp32-64"),
        # Was a strict xfail: "13.79 GB reserved; product 11.40 (-17.3%) ... what is left is the allocator's
        # segments on this card, not the traced UNet peak (which both rows share). UNEXPLAINED." Now 12.07 (-12.5%)
        # because the product counts the caching allocator's reserve over a UNet forward (1.127 reserved per
        # allocated byte at its peak: diffusers 0.11.0's recorded forward replayed through the allocator's rules,
        # tests/procurement/sizing/test_unet_allocator_reserve.py). The 1.33 GB this card reads above the A100 80GB
        # for the same run is likely the benchmark's history, not the run: scripts/benchmark.py loads each new
        # pipeline onto the GPU (best fit into the previous run's cached blocks) before its empty_cache, so every
        # segment a weight lands in stays reserved; its size depends on the previous run's segments (not computed).
        pytest.param("a100-sxm4-40gb", "fp16", 64, 13.79, 12.07, id="a100-40gb-fp16-64"),
    ],
)
def test_diff29_traced_peak_on_held_out_lambda_sliced_rows(
    bundled_catalog, tmp_path, gpu, precision, images, published, now
):
    reserved = _reserved_gb(_size(tmp_path, _lambda(images, precision), gpu))
    assert reserved == pytest.approx(now, abs=0.01)
    assert reserved == pytest.approx(published, rel=IMAGE_MEMORY)
