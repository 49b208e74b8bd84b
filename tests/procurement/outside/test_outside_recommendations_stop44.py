"""Issue 26, judged from outside at stop 44 (rank44): six workloads restated from published runs no earlier test
used, each ranked end to end (the service `manage.py recommend` runs, through x26b's `ranked`), the top five rows
read one by one and the first row's cost checked by hand (price x instances x hours, to the cent). Where an
expert would not sign the first row, the case is a strict xfail whose reason says what is wrong and why.

Sources (grep of tests/ found none of them before this module):
  [VICUNA]  lm-sys/lm-sys.github.io @1bdc8e78671107fc33dff3fe3df2163805d6c81b blog/2023-03-30-vicuna.md: "The training
            was done with PyTorch FSDP on 8 A100 GPUs in one day"; "approximately 70K user-shared conversations";
            "expand the max context length ... to 2048 ... gradient checkpointing and flash attention"; "SkyPilot
            managed spot ... the 13B model from around $1K to $300".
  [FCHAT]   lm-sys/FastChat @51463c39364deaf1a2208ceae131779d48937aee scripts/train_vicuna_13b.sh: torchrun
            --nproc_per_node=8, --bf16 True, --num_train_epochs 3, --per_device_train_batch_size 1,
            --gradient_accumulation_steps 4, --fsdp "full_shard auto_wrap", --model_max_length 2048,
            --gradient_checkpointing True.
  [FCHATRUN] lm-sys/FastChat @ded696007eed9cda5b1e7aade1e5501485ef4591 (2023-03-30, the blog's day)
            scripts/train-vicuna.yaml, the SkyPilot job the blog's "SkyPilot managed spot" run launched: A100-80GB:8,
            use_spot true, torch 1.13.1+cu116, transformers @cae78c46, pip install flash-attn, envs SEQ_LEN 2048,
            GC_SCALE 4, USE_FLASH_ATTN 1 (train_flash_attn.py: flash_attn_unpadded_qkvpacked_func),
            per_device_train_batch_size 2048 x 4 / 2048 = 4, gradient_accumulation_steps 128 x 512 / 2048 / 4 / 8 = 1,
            num_train_epochs 3, save_steps 1200, output_dir on the gcsfuse-mounted bucket (/artifacts, mode MOUNT),
            data /data/sharegpt/combined-code-math-sharegpt-20230322.json; chatserver/train/train.py tokenizes each
            sample with padding="longest" and DataCollatorForSupervisedDataset pads a batch to its longest sample.
            [FCHAT] is the later v1.1 script (2023-04-23: train.py padding="max_length", data 20230422).
  [FCHAT108] lm-sys/FastChat @73f49a9899b569a5792203ae1ff3920ade6d7b14 (#108, 2023-03-31, "Make the checkpointing
            more efficient"): scripts/train-vicuna.yaml moves output_dir to local disk and syncs it in the background
            "to avoid the degradation of the training for saving checkpoints".
  [ORLHF]   OpenRLHF examples/scripts/train_sft_llama.sh (as indexed by the code search): openrlhf.cli.train_sft
            --max_len 2048 --dataset Open-Orca/OpenOrca --train_batch_size 256 --micro_train_batch_size 2
            --max_samples 500000 --pretrain meta-llama/Meta-Llama-3-8B --zero_stage 2 --max_epochs 1 --bf16
            --gradient_checkpointing (flash attention). 8 GPUs stated by me (one 8-GPU node, the script's deepspeed
            launcher on all local GPUs).
  [AWQ70]   huggingface.co/hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4 README (refs/pr/2): "AutoAWQ ... INT4
            ... group size of 128"; "around 35 GiB of VRAM are needed only for loading the model checkpoint, without
            including the KV cache or the CUDA graphs".
  [DIFFX]   huggingface/diffusers examples/text_to_image/README_sdxl.md, LoRA section: train_text_to_image_lora_sdxl.py
            on lambdalabs/naruto-blip-captions (1,221 images), --resolution=1024 --train_batch_size=1
            --num_train_epochs=2 --mixed_precision="fp16", rank 4 (the script's default), no cached latents,
            --dataloader_num_workers unset (0: stated as 1 worker, the field's documented reading).
  [ULTVOC]  Ultralytics docs datasets/detect/voc.md: "yolo detect train data=VOC.yaml model=yolo11n.pt epochs=100
            imgsz=640"; VOC.yaml train = VOC2007 trainval + VOC2012 trainval, 16,551 images (Ultralytics' batch 16
            default; VOC's JPEGs are about 500 x 375 = 0.19 MP).
  [MIXTRAL] mistralai/Mixtral-8x7B-Instruct-v0.1 discussion #86 quoting Mistral's site: "Mixtral requires 64GB of RAM
            and 2 GPUs"; the release post (mistral.ai/news/mixtral-of-experts): "46.7B total parameters".

Verdicts (first row; defect class where not signed):
  1. Vicuna-13B full FT, 8 GPUs FSDP, spot, 24 h deadline: first row signed (8 x B200 spot, FSDP honoured, NVLink,
     P90 wall-clock inside the deadline). Its hours are not: the product's A100 time for the published run is 10.6 h
     against "one day" (strict xfail; class 7, speed of the stated stack).
  2. Llama 3 8B SFT, 8 GPUs ZeRO-2: signed (ZeRO-2 and 8 GPUs on all five rows, like-for-like links).
  3. Llama 3.1 70B AWQ serving at TTFT 2 s / TPOT 50 ms: signed with a note (12 L40 over PCIe in three TP-4 boxes of
     a marketplace whose price date is unknown; the targets are met and the price is the lowest; weights +7.9%).
  4. SDXL LoRA (diffusers): NOT signed: the first row is a 16 GiB-RAM host the product itself says needs 22.4 GiB,
     ranked above the 32 GiB host of the same card 5 cents dearer (class 6, a doubtful fit ranked first).
     (fixr44: now signed; the 32 GiB g6.2xlarge ranks first and the flagged rows right below it.)
  5. YOLO11n on VOC, 100 epochs: signed with a note (loader-bound L4 spot, 1.24 USD a run; Ultralytics' per-epoch
     validation, val=True by default, is not counted and no spec field can state it).
  6. Mixtral 8x7B bf16, TP 2 as stated: signed (2 x H100 SXM over NVLink; cheaper rows on links the catalog does
     not state shown right below it).
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from tests.procurement.outside.test_outside_recommendations_x26b import candidate, describe, ranked

H100 = "h100-sxm5-80gb"
A100 = "a100-sxm4-80gb"
HOURS_PER_MONTH = Decimal("730")
# GeForce parts: production serving split over them is what issue 26 class 4 forbids without a flag
CONSUMER = ("rtx", "geforce")


def compute_by_hand(row: dict) -> Decimal:
    """price x instances x hours, and the total rebuilt from it (docs/cost-model.md 'Job cost': setup = one hour at
    the price, reruns = 20% of compute, storage as the row states it). The row's hours are rounded to 3 decimals, so
    the hand figure is good to half a thousandth of an hour's price. The row's compute line also carries the whole
    rounding remainder of the four parts (procurement/ranking/breakdown.py, documented): it may sit a cent or two off
    price x hours while the total is right to the cent (YOLO below: compute line 0.24, by hand 0.2515)."""
    price = Decimal(row["effective_price_per_hour"]) * row["instances"]
    by_hand = price * Decimal(str(row["hours"]))
    slack = Decimal("0.005") + price * Decimal("0.0005")
    parts = row["cost_breakdown"]
    assert abs(Decimal(parts["compute"]) - by_hand) <= slack + Decimal("0.02"), (parts, by_hand)
    total = by_hand * Decimal("1.2") + price + Decimal(parts["storage"])
    assert abs(Decimal(row["total_cost"]) - total) <= Decimal("1.2") * slack + Decimal("0.01"), (parts, total)
    assert sum(Decimal(v) for k, v in parts.items() if k != "total") == Decimal(row["total_cost"])
    assert Decimal(parts["total"]) == Decimal(row["total_cost"])
    return by_hand


# --- 1. Vicuna-13B, 8 GPUs FSDP, spot, deadline ([VICUNA], [FCHAT]) ------------------------------------------------------
# 70K conversations x 2,048 tokens (FastChat pads to model_max_length; long conversations are cut into segments that
# fit, so at least this many) x 3 epochs = 430,080,000 tokens.
# cls45b: true of [FCHAT] (train.py @51463c39 padding="max_length"), not of the run the blog timed ([FCHATRUN]: each
# batch padded to its longest segment), whose token count is not published (see the xfail below).
VICUNA_TOKENS = 70_000 * 2048 * 3
VICUNA_13B = {
    "name": "vicuna-13b-fastchat",
    "task": "full_finetune",
    "model": {"preset": "llama-2-13b"},  # LLaMA-1 13B has Llama 2 13B's shape (40 x 5,120, 32k vocabulary)
    "precision": "bf16",
    "micro_batch_size": 1,
    "seq_len": 2048,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 8, "zero_stage": "fsdp"},
    "gradient_accumulation_steps": 4,
    "training_tokens": VICUNA_TOKENS,
}
# cls45b: the job the blog timed ([FCHATRUN]): 4 sequences a GPU, no accumulation (2048 x GC_SCALE 4 / SEQ_LEN;
# 128 x 512 / SEQ_LEN / 4 / 8 GPUs), flash attention patched in (the product's default kernel for this spec).
VICUNA_13B_AS_RUN = VICUNA_13B | {"micro_batch_size": 4, "gradient_accumulation_steps": 1}


@pytest.mark.django_db
def test_vicuna_13b_spot_ranking_keeps_8_gpus_fsdp_and_meets_24h_at_p90(bundled_catalog):
    """Top five at a 24 h deadline, read by hand: 1. Verda FIN-03 8B200.240V spot, 13.725762 USD/h x 1 x 1.282 h =
    17.60 (row 17.59 at the unrounded hours), + setup 13.73 + storage 12.74 + reruns 3.52 = 47.58, P90 1.285 h; 2.-5.
    AWS p5en (H200) / Nebius H100 / AWS p5en / AWS p5 spot, 2.915 h, 57.37-61.04. Every row 8 GPUs, ZeRO-3 as stated,
    NVLink inside one node, wall-clock P90 (assumed >20% band) inside 24 h. The B200 at 2.27x the H100 is the BF16
    peak ratio; NVIDIA's MLPerf LoRA B200/H100 rows sit near it, so I accept the card choice."""
    rows = ranked(VICUNA_13B, top=5, deadline_hours=24)
    assert len(rows) == 5, describe(rows)
    for r in rows:
        assert r["gpus"] == 8 and r["plan"]["zero_stage"] == 3 and not r["differs_from_spec"], describe(rows)
        assert r["instances"] == 1 and r["interconnect"]["node_link_type"] == "nvlink", describe(rows)
        assert r["wall_clock"]["hours_at_probability"] <= 24 and r["wall_clock"]["probability"] == 0.9
    first = rows[0]
    assert first["pricing_model"] == "spot" and first["wall_clock"]["meets_deadline_alone"]
    assert compute_by_hand(first) == pytest.approx(Decimal("17.60"), abs=Decimal("0.01"))
    # rank48: 47.59, the sum of the parts as read by hand above (17.60 + 13.73 + 12.74 + 3.52); was 47.58, the
    # unrounded total rounded once with the remainder put into compute (aud48r: not rebuildable from the row)
    assert Decimal(first["total_cost"]) == Decimal("47.59")
    assert Decimal(first["total_cost"]) == min(Decimal(r["total_cost"]) for r in rows)


@pytest.mark.django_db
def test_vicuna_13b_tight_deadline_at_95_percent_keeps_only_rows_that_finish(bundled_catalog):
    """At 2.5 h and probability 0.95 the H100/H200 rows (2.92 h) must go: every row left finishes by 2.5 h at the
    stated quantile (all 8 x B200, 1.285 h)."""
    rows = ranked(VICUNA_13B, top=5, deadline_hours=2.5, deadline_probability=0.95)
    assert rows, "no row"
    for r in rows:
        assert r["wall_clock"]["probability"] == 0.95
        assert r["wall_clock"]["hours_at_probability"] <= 2.5, describe(rows)
        assert r["gpus"] == 8 and r["plan"]["zero_stage"] == 3


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud-rank44): [VICUNA] trained this run 'with PyTorch FSDP on 8 A100 GPUs in one day' (about "
        "24 h; the $300 spot bill is 8 x 24 h at 1.56 USD a GPU-hour, consistent with it); the product's 8 x A100-80GB "
        "time for the [FCHAT] script is 10.6 h (11,243 tokens/s, -56%; -34% even if the cut segments were 1.5x the 70K "
        "conversations). It runs HF Trainer FSDP (2023) at the llm-foundry width ceiling (training_stack 'other', "
        "47% of the A100 peak counting recomputation) and no spec value names an HF Trainer stack, so a user "
        "cannot correct it: hours, P90 and every deadline decision for such a run are about 2x optimistic. "
        "fixr44 searched for two published HF Trainer + FSDP/DeepSpeed A100 rows (7-13B, tokens known) to fit a "
        "training_stack hf_trainer efficiency and found none usable: huggingface/blog issue 1649 (Llama-7B "
        "single-node FSDP tokens/s per GPU, seq 4096) has its table cut from the stored excerpt; Stanford Alpaca's "
        "'7B in 3 hours on 8 80GB A100s' pads each batch to its longest example, so its tokens need the "
        "52K-example length distribution (not on file); stanford_alpaca issue 170 (40 minutes) and "
        "huggingface/accelerate issue 2675 (Llama 7B full FT 11m40s on 4 A100) state no data size; "
        "foundation-model-stack/fms-fsdp's 3,700 / 1,800 tokens/s (7B / 13B) are native FSDP, not HF Trainer. "
        "One row at most, so no stack value is fitted; still a strict xfail. "
        "cls45b: UNEXPLAINED, sharpened: the run the blog times is [FCHATRUN], not [FCHAT]. Restated as it ran "
        "(micro-batch 4, accumulation 1, flash attention, full recomputation, bf16, FSDP full shard) the product "
        "gives the same 11,242.7 tokens/s, 10.6 h for 430.1e6 tokens (test_vicuna_13b_as_run_sizes_like_the_later_"
        "script). What the -56% rests on is not the run's: (1) the tokens. train.py@ded69600 pads each batch of 4 "
        "to its longest segment, not to 2,048, and the 70K conversations were first cut into segments of at most "
        "2,048 (split_long_conversation.py), so the run's padded tokens are the 3 epochs of an unpublished "
        "segment-length distribution of an unpublished file (combined-code-math-sharegpt-20230322.json), neither "
        "bounded above nor below by 70K x 2,048 x 3; one day at the product's rate is 971.4e6 tokens, 2.26x that "
        "figure. (2) The clock. 'One day' is a managed-spot run (use_spot true; the blog: 'auto-recovery for "
        "preemptions') that wrote every 1,200-step checkpoint straight to a gcsfuse-mounted bucket, which "
        "[FCHAT108] moved off the next day 'to avoid the degradation of the training for saving checkpoints'; "
        "neither the preemptions nor the save time is published. (3) Checked and not 2x: HF Trainer FSDP on torch "
        "1.13.1 exposing its all-gathers (3 bf16 passes and a reduce-scatter, about 91 GB a GPU a step, ~0.4 s of "
        "a 5.8 s step on NVLink) or gathering fp32 weights (~0.8 s). Spec: training_tokens would carry (1) if "
        "published; (2) is wall-clock the spot model already adds to hours, not a rate. Not a sized term; stays."
    ),
)
def test_vicuna_13b_a100_hours_match_one_day(bundled_catalog):
    row = candidate(VICUNA_13B_AS_RUN, A100)
    hours = VICUNA_TOKENS / row["throughput"]["training_tokens_per_second"] / 3600
    assert hours == pytest.approx(24, rel=0.15)


@pytest.mark.django_db
def test_vicuna_13b_as_run_sizes_like_the_later_script(bundled_catalog):
    """cls45b: restating the case as the blog's job ran it ([FCHATRUN]: micro-batch 4, accumulation 1) does not move
    the product (same tokens a GPU a step, same rate), so the xfail's gap is not the restatement; one day at this rate
    needs 2.26x the 70K x 2,048 x 3 tokens the case assumes."""
    as_run = candidate(VICUNA_13B_AS_RUN, A100)["throughput"]["training_tokens_per_second"]
    later = candidate(VICUNA_13B, A100)["throughput"]["training_tokens_per_second"]
    assert as_run == pytest.approx(later, rel=1e-6)
    assert as_run == pytest.approx(11242.7, abs=0.1)
    assert as_run * 24 * 3600 / VICUNA_TOKENS == pytest.approx(2.26, abs=0.005)


# --- 2. Llama 3 8B SFT, 8 GPUs ZeRO-2 ([ORLHF]) --------------------------------------------------------------------------
# 500,000 samples x 2,048 tokens x 1 epoch = 1.024e9 (an upper bound: OpenOrca samples are shorter than max_len; the
# order of rows does not depend on it). Global batch 256 = 2 x 8 x 16.
ORCA_8B = {
    "name": "openrlhf-llama3-8b-sft",
    "task": "full_finetune",
    "model": {"preset": "llama-3-8b"},
    "precision": "bf16",
    "micro_batch_size": 2,
    "seq_len": 2048,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 8, "zero_stage": 2},
    "gradient_accumulation_steps": 16,
    "training_tokens": 500_000 * 2048,
}


@pytest.mark.django_db
def test_llama3_8b_zero2_ranking_honours_8_gpus_and_zero2(bundled_catalog):
    """Top five at 48 h: 1. Verda 8B200.240V spot 13.7123 x 1.840 h = 25.23 compute, total 52.44; 2.-4. Nebius
    8 x H100 / AWS p5en spot, 4.184 h, 68.87-70.79; 5. RunPod 8 x L40S on demand, 3.44 x 14.510 h = 49.91, total
    72.41 (PCIe 4.0, its ZeRO-2 traffic 4% of the step, hidden). All rows 8 GPUs, ZeRO-2 as stated, nothing differs
    from the spec. (Note: the carried collective is labelled 'gradient all-reduce'; ZeRO-2 moves the same bytes as a
    reduce-scatter plus a parameter all-gather, so only the label is off. fixr44: label fixed, asserted below.)"""
    rows = ranked(ORCA_8B, top=5, deadline_hours=48)
    assert len(rows) == 5, describe(rows)
    for r in rows:
        assert r["gpus"] == 8 and r["plan"]["zero_stage"] == 2 and not r["differs_from_spec"], describe(rows)
        assert r["wall_clock"]["hours_at_probability"] <= 48
        assert not any(part in r["gpu"] for part in CONSUMER)
    first = rows[0]
    assert first["interconnect"]["node_link_type"] == "nvlink" and first["instances"] == 1
    # fixr44: the label names what ZeRO-2 runs (DeepSpeed stage 2: gradients reduce-scattered to their owner
    # partitions, updated parameters all-gathered after the step; ZeRO paper arXiv:1910.02054 section 7.2.1, the
    # same 2 x gradient bytes the engine counts), no longer 'gradient all-reduce'
    names = [item["collective"] for item in first["interconnect"]["carried"]]
    assert names == ["ZeRO-2 gradient reduce-scatter and parameter all-gather"], names
    assert "all-reduce" not in first["interconnect"]["summary"]
    assert compute_by_hand(first) == pytest.approx(Decimal("25.23"), abs=Decimal("0.01"))
    assert Decimal(first["total_cost"]) == Decimal("52.44")


# --- 3. Llama 3.1 70B AWQ int4 serving at a latency target ([AWQ70]) ------------------------------------------------------
AWQ_70B = {
    "name": "llama-3.1-70b-awq-int4",
    "task": "inference",
    "model": {"preset": "llama-3.1-70b"},
    "precision": "fp16",
    "weight_quantization": "int4",
    "inference": {
        "concurrency": 8,
        "context_len": 4096,
        "output_tokens": 256,
        "requests_per_second": 1,
        "ttft_ms": 2000,
        "tpot_ms": 50,
    },
}


@pytest.mark.django_db
def test_awq_70b_weights_within_10_percent_of_the_model_card(bundled_catalog):
    """[AWQ70] 'around 35 GiB ... only for loading the model checkpoint'; product weights 37.78 GiB (+7.9%): block
    linears at 4 bits plus group-128 scales, embedding and LM head 16-bit (2 x 128,256 x 8,192 x 2 B = 3.9 GiB)."""
    one = copy.deepcopy(AWQ_70B) | {"parallelism": {"gpus": 1}}
    assert candidate(one, H100)["memory"]["weights_gib"] == pytest.approx(35, rel=0.10)


@pytest.mark.django_db
def test_awq_70b_serving_first_row_meets_targets_and_costs_what_it_says(bundled_catalog):
    """fix50m (the 16-bit lm_head read at the 16-bit rate: 2 x 128,256 x 8,192 B of the 70B's read no longer at
    0.617): row 1 is now vast 2x-H100_SXM-32-65536, 1 instance of 2 x H100 SXM, 3.73 USD/h x 730 h = 2,722.90 +
    storage 46.25 = 2,769.15 a month, 256.6 tokens/s for 256 demanded, TPOT 30.5 ms, TTFT 1,021 ms (rows 2-5: cudo
    2 x 1 H100 2,705.49, cudo 2 x 1 H100 2,751.34, cudo 1 x 2 H100 2,751.34, vast 2 x 1 H100 2,776.45). Before
    fix50m: 1. Lium US L40_4x on demand, 3 instances x 4 L40 TP 4, 1.32 USD/h x 3 x 730 h = 2,890.80 + storage
    46.25 = 2,937.05 a month; 88 tokens/s an instance, 265 for 256 demanded; TPOT 37.0 ms, TTFT 1,720 ms; 2. Vast 3 x
    2 A100-40GB NVLink 3,309.35; 3. Lium 3 x 4 L40S 3,375.05; 4. Lambda 2 x GH200 3,435.91; 5. Verda 1 x B200
    3,615.95 (one card, TTFT 449 ms). Signed with a note: the first row meets both targets and is the cheapest, TP 4
    over PCIe is costed (19% of the decode step) on a datacenter card with peer-to-peer, no GeForce part; I would
    still ask for the price's date ('data date unknown') before buying 12 marketplace GPUs."""
    rows = ranked(AWQ_70B, top=5)
    assert len(rows) == 5, describe(rows)
    for r in rows:
        serving = r["serving"]
        assert serving["time_per_output_token_ms"] <= 50 and serving["time_to_first_token_ms"] <= 2000
        assert serving["tokens_per_second"] >= serving["demand_tokens_per_second"] == 256
        assert not any(part in r["gpu"] for part in CONSUMER), describe(rows)
    # hostdoubt / fix51hd (stop 52): the vast row's host is unknown, one host doubt in production serving, so row 1
    # is the cheapest row whose host is known and meets the rule: cudo sapphire-rapids-h100_2x16v32gb, 1 instance of
    # 2 x H100 (two TP 1 replicas: its unstated PCIe link carries no collective), 3.8312 USD/h x 730 h = 2,796.776
    # -> 2,796.78 + storage 46.25 = 2,843.03 a month (+2.7% over the vast row, shown below it with its reason).
    first = rows[0]
    assert first["provider"] == "cudo" and first["gpu"] == H100 and first["instances"] == 1
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * HOURS_PER_MONTH
    assert (
        compute.quantize(Decimal("0.01")) == Decimal(first["cost_breakdown"]["compute"]) == Decimal("2796.78")
    )
    assert (
        Decimal(first["total_cost"])
        == Decimal(first["cost_breakdown"]["compute"]) + Decimal(first["cost_breakdown"]["storage"])
        == Decimal("2843.03")
    )
    vast = [r for r in rows if r["provider"] == "vast" and r["instances"] == 1]
    assert vast and Decimal(vast[0]["total_cost"]) == Decimal("2769.15"), describe(rows)
    # fix50m: two TP 1 replicas of one H100 each on the 2-GPU instance (no TP collective to cost; the L40 row's
    # PCIe TP 4, costed, is no longer row 1)
    assert (first["plan"]["tensor_parallel"], first["gpus_per_instance"]) == (1, 2)


# --- 4. SDXL LoRA, diffusers' README run ([DIFFX]) -----------------------------------------------------------------------
SDXL_LORA = {
    "name": "sdxl-lora-naruto",
    "task": "lora",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "micro_batch_size": 1,
    "lora": {"rank": 4},
    "image": {"resolution_px": 1024, "epochs": 2, "dataset_images": 1221, "loader_workers": 1},
}


@pytest.mark.django_db
def test_sdxl_lora_first_row_is_one_l4_at_its_cost_by_hand(bundled_catalog):
    """Top five: all 1 x L4 spot at AWS eu-south-2, 0.559 h for 2,442 images (1.21 images/s, 14.0 GiB peak). The
    card class is right (16.8 GiB with headroom on a 22.4 GiB card, one GPU). First row changed at fixr44 (the host
    check joined ranked_order's doubts, item 1 below): before, 1. g6.xlarge 0.091406 x 0.559 = 0.05 compute, total
    1.17, on a 16 GiB host the row itself says needs 22.4 GiB. Now, checked by hand: 1. g6.2xlarge (32 GiB, 8 vCPUs)
    0.115834 x 0.559 = 0.0648 compute (row 0.07), + setup 0.1158 + storage 1.02 + reruns 0.0130 = 1.22; 2.-3. the
    two g6.xlarge (1.17, 1.18) right below it, flagged, with the reason they rank there; 4.-5. g6.2xlarge 1.22-1.23.
    That is the order an expert signs: the same L4 and hours on the host the guides' rule asks for, 5 cents dearer,
    and the cheaper 16 GiB rows still shown for whoever accepts the edge."""
    rows = ranked(SDXL_LORA, top=5)
    assert len(rows) == 5, describe(rows)
    assert all(r["gpus"] == 1 and r["fits"] and r["gpu"] == "l4" for r in rows), describe(rows)
    first = rows[0]
    assert first["instance_type"] == "g6.2xlarge"
    assert compute_by_hand(first) == pytest.approx(Decimal("0.06"), abs=Decimal("0.01"))
    # rank48: 1.21, the sum of the parts each rounded once (0.06 + 0.12 + 1.02 + 0.01); was 1.22 (the unrounded
    # total rounded once, the remainder put into compute: aud48r, not rebuildable from the row)
    assert Decimal(first["total_cost"]) == Decimal("1.21")
    flagged = [r for r in rows if any("host RAM too small" in w for w in r["warnings"])]
    assert [r["instance_type"] for r in flagged] == ["g6.xlarge", "g6.xlarge"] and flagged == rows[1:3]
    assert [str(r["total_cost"]) for r in flagged] == ["1.17", "1.18"], describe(rows)
    assert all(
        any("ranked below the first row whose host meets it" in x for x in r["reasons"]) for r in flagged
    )


@pytest.mark.django_db
def test_sdxl_lora_first_row_has_the_host_ram_the_product_asks_for(bundled_catalog):
    # Was a strict xfail: the 16 GiB g6.xlarge, warned 'host RAM too small ... needs 22.4 GiB', ranked first above
    # the 32 GiB g6.2xlarge (same L4 and hours) at 1.17 against 1.22 USD (class 6). Now the g6.2xlarge is first
    # (1.22) because ranked_order orders a host below its rule of thumb (RAM, or vCPUs where no loader rate costs
    # them: configurations.host_shortfall) like a tight fit: below the first row without the doubt, never dropped.
    rows = ranked(SDXL_LORA, top=5)
    assert not any("host RAM too small" in w for w in rows[0]["warnings"]), rows[0]["warnings"]
    assert any("host RAM too small" in w for r in rows[1:] for w in r["warnings"]), describe(
        rows
    )  # not dropped


# --- 5. YOLO11n on Pascal VOC, 100 epochs ([ULTVOC]) ---------------------------------------------------------------------
YOLO11N_VOC = {
    "name": "yolo11n-voc-100e",
    "task": "full_finetune",
    "model": {"preset": "yolo11n"},
    "micro_batch_size": 16,
    "image": {"epochs": 100, "dataset_images": 16551, "source_megapixels": 0.19},
}


@pytest.mark.django_db
def test_yolo11n_voc_run_is_loader_bound_on_one_small_card_at_its_cost_by_hand(bundled_catalog):
    """By hand: the mosaic loader's rate a worker at 0.19 MP and 640 px, 15.4 / (0.5 + 0.5 / 4 x 0.19 / 0.29) =
    26.46 images/s, x 8 workers (g6.2xlarge: 8 vCPUs) = 211.7 images/s; 1,655,100 images / 211.7 / 3,600 = 2.172 h.
    First row AWS eu-south-2 g6.2xlarge spot (L4), 0.115834 x 2.171 h = 0.2515 compute (the row's compute line reads
    0.24: the parts' rounding remainder, -0.01, is put there), + setup 0.1158 + storage 0.81 + reruns 0.0503: total
    1.22 a run, the row's; rows 2-3 the
    same card dearer, rows 4-5 T4G (Graviton g5g), slower and no cheaper. Signed with a note: Ultralytics validates on
    VOC2007 test (4,952 images) after every epoch by default (val=True), which the run time does not count."""
    rows = ranked(YOLO11N_VOC, top=5)
    assert len(rows) == 5, describe(rows)
    assert all(r["gpus"] == 1 for r in rows)
    first = rows[0]
    rate = 15.4 / (0.5 + 0.5 / 4 * 0.19 / 0.29) * 8
    assert first["training"]["training_images_per_second"] == pytest.approx(rate, rel=0.01)
    assert first["hours"] == pytest.approx(100 * 16551 / rate / 3600, abs=0.002)
    assert compute_by_hand(first) == pytest.approx(Decimal("0.25"), abs=Decimal("0.01"))
    # rank48: 1.23, the sum of the parts each rounded once (0.25 + 0.12 + 0.81 + 0.05), the compute line now 0.25
    # as by hand; was 1.22 with compute 0.24 (the rounding remainder put there, as the docstring notes)
    assert Decimal(first["total_cost"]) == Decimal("1.23")


# --- 6. Mixtral 8x7B bf16 on 2 GPUs, TP 2 as stated ([MIXTRAL]) --------------------------------------------------------
MIXTRAL_TP2 = {
    "name": "mixtral-8x7b-tp2",
    "task": "inference",
    "model": {"preset": "mixtral-8x7b"},
    "precision": "bf16",
    "parallelism": {"gpus": 2, "tensor_parallel": 2},
    "inference": {
        "concurrency": 16,
        "context_len": 4096,
        "output_tokens": 512,
        "requests_per_second": 1,
        "ttft_ms": 2000,
        "tpot_ms": 50,
    },
}


@pytest.mark.django_db
def test_mixtral_weights_per_gpu_match_the_release(bundled_catalog):
    """46.7e9 x 2 B / 2 GPUs = 43.5 GiB a GPU; product 43.50."""
    assert candidate(MIXTRAL_TP2, H100)["memory"]["weights_gib"] == pytest.approx(
        46.7e9 * 2 / 2 / 2**30, rel=0.10
    )


@pytest.mark.django_db
def test_mixtral_tp2_first_row_is_the_first_without_a_doubt_and_the_stated_plan(bundled_catalog):
    """Before stop 52: 1. Vast 2 x H100 SXM (NVLink 4), 3.73 x 1 x 730 = 2,722.90 + storage 32.23 = 2,755.13 a month,
    625 tokens/s for 512 demanded, TPOT 22.7 ms; 2.-4. Cudo A800 PCIe (2 instances) 2,504.89 / 2,641.54 and Cudo H100
    2,737.32, cheaper but on links the catalog does not state; 5. RunPod 2 x H100 NVL (PCIe) 4,105.63.
    After hostdoubt / fix51hd (stop 52: the vast row's host is unknown, one host doubt in production serving, like an
    assumed link): 1. RunPod 2 x MI300X (Infinity Fabric, stated; 0.96x H100 measured, MLPerf Inference v4.1),
    4.98 x 1 x 730 = 3,635.40 + storage 32.23 = 3,667.63, TPOT 23.7 ms; every cheaper row (cudo A800 2,641.54, vast
    H100 2,755.13, ...) carries one doubt and says which. Every row 2 GPUs a replica, TP 2 as stated."""
    rows = ranked(MIXTRAL_TP2, top=5)
    assert len(rows) == 5, describe(rows)
    for r in rows:
        assert (
            r["gpus_per_instance"] == 2 and r["plan"]["tensor_parallel"] == 2 and not r["differs_from_spec"]
        )
        assert (
            r["serving"]["time_per_output_token_ms"] <= 50 and r["serving"]["time_to_first_token_ms"] <= 2000
        )
    first = rows[0]
    assert first["gpu"] == "mi300x" and first["interconnect"]["node_link_type"] == "infinity_fabric"
    assert first["interconnect"]["stated"] and first["instances"] == 1
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * HOURS_PER_MONTH
    assert compute == Decimal(first["cost_breakdown"]["compute"]) == Decimal("3635.40")
    assert Decimal(first["total_cost"]) == Decimal("3667.63")
    cheaper = [r for r in rows[1:] if Decimal(r["total_cost"]) < Decimal(first["total_cost"])]
    doubted = [r for r in cheaper if not r["interconnect"]["stated"] or r["provider"] == "vast"]
    assert cheaper and doubted == cheaper, describe(rows)
