"""Issue 26 / 29 done-criterion run afresh (aud49r, stop 49): published runs no test in tests/ used before (each source
and figure grepped in tests/), stated as the publisher ran them with only docs/workload-spec.md's fields, ranked through
the service `manage.py recommend SPEC --format json --top 5` runs (`ranked`) and sized on the publisher's own GPU
(`size_spec_document`, calibration off), judged as aud48r's stop-48 module does (its helpers reused):

  (1) row 1 sensible (stated GPU count / precision honoured, fits with its margin shown, host sized, no consumer card
      split for serving, no rack-scale part); (2) published vs ours within 15% (LLM speed) / 25% (image speed);
  (3) every row's cost rebuilt by hand to the cent (price x hours x instances; total = the sum of its parts).

The brief asked for ten; in the session's time five were found whose figures could be read in full (the others tried
and dropped are listed in NOTES-issue26.md, stop 49, aud49r). A miss is a strict xfail "UNEXPLAINED: ...".

Sources (verbatim where quoted):
  [VLLM40]  johnmusgrave.com/p/vllm-throughput-latency-sweep-on ("vLLM throughput-latency sweep on NVIDIA A100"): "GPU:
            NVIDIA A100 40GB (using Lambda)", "meta-llama/Llama-3.1-8B-Instruct, BF16vLLM 0.23.0", "Every request used a
            fixed 1024-token input and a fixed 128-token output, with --ignore-eos", "On a single NVIDIA A100 40GB, decode
            at one request per time runs at about 75 tokens/sec".
  [A40VLLM] databasemart.com/blog/vllm-gpu-benchmark-a40 ("A40 vLLM Benchmark"): "GPU: Nvidia A40", "Input length: 100
            tokens", "Output length: 600 tokens", "Scenario 1: 50 concurrent requests"; meta-llama/Llama-3.1-8B-Instruct,
            Quantization 16: "Output (tokens/s) | 1016.60", "Median TPOT(ms) | 35.96", "Total Generated Tokens | 22170"
            (443 a request: EOS stops before 600; the TPOT, not the ramp-diluted total, is judged).
  [PYTHIA1B] Khandelwal et al., "$100K or 100 Days" (arXiv:2410.23261v1, arxiv.org/html/2410.23261v1): "Pythia-1B was
            originally trained on 64 GPUs for 3 days" (citing Biderman et al. 2023); the EleutherAI/pythia README: "Each
            model saw 299,892,736,000 ~= 299.9B tokens"; aiportalx.com/eleutherai/pythia-70m: "Hardware NVIDIA A100
            SXM4 40 GB". Pythia-1B shape (GPT-NeoX config): 16 layers, d 2,048, 8 heads, MLP 8,192 (GELU), vocab 50,304,
            seq 2,048, batch 1,024 sequences (16 a GPU on 64). 299.9e9 / (3 x 86,400 x 64) = 18,076 tokens/s a GPU.
  [MIXTRAL8] baseten.co/blog/faster-mixtral-inference-with-tensorrt-llm-and-quantization: "On a single A100 GPU, an int8
            quantization of Mixtral on TensorRT-LLM demonstrated a 127ms time to first token and 81 perceived tokens per
            second in our tests ... (ours were a 512-token input sequence, 128-token output sequence, and single
            concurrent request)"; "Quantizing Mixtral 8x7B to int8 cuts inference cost in half (as only one A100 is
            needed)" (int8 weights of 46.7B: the 80GB A100).
  [Y11LGRID] find_string id 81945794 (an object-detection README, Ultralytics 8.3.62, torch 2.3.1, "CUDA:0 (GRID
            A100-20C, 20476MiB)"): YOLO11l "46 epochs completed in 0.242 hours", validation every epoch on "all 127
            ... 909" (the 7 classes fish / jellyfish / penguin / puffin / shark / starfish / stingray: Roboflow's Aquarium
            set, 448 train / 127 valid images; the 448 is that dataset's published split, not printed in the README);
            batch and imgsz not printed (Ultralytics defaults 16 and 640 taken). GRID A100-20C is the 20 GB vGPU profile
            of an A100 40GB, sized as a100-sxm4-40gb.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    IMAGE_SPEED,
    LLM_SPEED,
    candidate,
    err,
    judge,
    tokens_per_gpu,
)

PYTHIA_1B = {
    "name": "pythia-1b",
    "num_layers": 16,
    "hidden_size": 2048,
    "num_attention_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 50304,
    "gated_mlp": False,
}


def serving(preset: str, concurrency: int, prompt: int, output: int, **extra) -> dict:
    spec = {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "bf16",
        "inference": {"concurrency": concurrency, "context_len": prompt + output, "output_tokens": output},
    }
    return spec | extra


VLLM40 = serving("llama-3.1-8b", 1, 1024, 128)
A40VLLM = serving("llama-3.1-8b", 50, 100, 600)
PYTHIA1B = {
    "task": "pretrain",
    "model": PYTHIA_1B,
    "seq_len": 2048,
    "micro_batch_size": 16,
    # EleutherAI/pythia @b14d5af9 models/1B/pythia-1b.yml: "checkpoint-activations": true (fix50a; unstated before)
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 64, "zero_stage": 1},
    "training_tokens": 299892736000,
    # the GPT-NeoX library (EleutherAI/pythia README: "Config files used to train these models within the GPT-NeoX
    # library"); neox, stop 50: the stack's own A100 rate (test_outside_gpt_neox_stack_stop50.py)
    "training_stack": "gpt_neox",
}
MIXTRAL8 = serving("mixtral-8x7b", 1, 512, 128, weight_quantization="int8")
Y11LGRID = {
    "task": "full_finetune",
    "model": {"preset": "yolo11l"},
    "micro_batch_size": 16,
    "image": {
        "resolution_px": 640,
        "epochs": 46,
        "dataset_images": 448,
        "eval_every_epochs": 1,
        "eval_images": 127,
    },
}

R_MIXTRAL8 = (  # history: the reason of the strict xfail it was
    "UNEXPLAINED (ranking): speed lands (A100 80GB int8, one stream: ours {ours:.1f} tokens/s vs Baseten's 81, "
    "{e:+.1%}) and every row rebuilds to the cent, but row 1 is lium RTX3090_3x, three consumer RTX 3090s split for "
    "production serving of one Mixtral replica (46.7 GB of int8 weights) at $514.03 a month, ranked above a 2 x RTX "
    "3090 row at $273.13 and a single RTX 6000 Ada (48 GB) at $302.33 that hold the same replica: the ranking neither "
    "prefers the one-card plan nor the cheaper one. Lead: ranking/ the order key for serving rows of equal demand."
)
R_Y11LGRID = (
    "UNEXPLAINED: 46 epochs of 448 images (val 127 each epoch) take {ours:.4f} h vs 0.242 h published ({e:+.1%}; "
    "ours {ips:.1f} images/s, 0.0034 h of evaluation): 18.9 s an epoch published against ours 4.6 s. The same "
    "family as Y11X / Y11S (stop 48): a small data set, where per-epoch work outside the train bar and the host's "
    "per-step time dominate; nothing in the README splits the epoch (no bars printed). Not ruled out: the vGPU "
    "(GRID A100-20C) time-sliced with other tenants, the train split (448 is the Aquarium set's published split, not "
    "printed) and the batch (default 16 assumed). Rows (AWS g5g T4G spot, g6 L4) rebuild to the cent. Lead: the "
    "notebook's per-epoch bars (rt-detr / yolov11 notebooks of the same repository)."
)


@pytest.mark.django_db
def test_vllm023_llama31_8b_a100_40gb_one_stream(bundled_catalog):
    """[VLLM40] ~75 tokens/s decode at concurrency 1 (1024 in / 128 out): ours 71.8 (-4.2%); row 1 lium RTX4090_1x (one
    card, fits), every row rebuilds."""
    t = candidate(VLLM40, "a100-sxm4-40gb")["throughput"]
    problems = judge(
        VLLM40, [("A100 40GB tokens/s a stream", t["decode_tokens_per_second_per_stream"], 75.0, LLM_SPEED)]
    )
    assert not problems, problems


@pytest.mark.django_db
def test_vllm_llama31_8b_a40_50_streams(bundled_catalog):
    """[A40VLLM] median TPOT 35.96 ms at 50 concurrent requests (100 in / 600 out): ours 1000 / 27.63 = 36.19 ms
    (+0.6%); row 1 vast RTX 6000 Ada x1 (fits), every row rebuilds."""
    t = candidate(A40VLLM, "a40")["throughput"]
    tpot_ms = 1000.0 / t["decode_tokens_per_second_per_stream"]
    problems = judge(A40VLLM, [("A40 TPOT ms", tpot_ms, 35.96, LLM_SPEED)])
    assert not problems, problems


@pytest.mark.django_db
def test_pythia_1b_pretrain_64_a100_40gb_3_days(bundled_catalog):
    """[PYTHIA1B] FIXED (neox, stop 50): 18,076 tokens/s a GPU published; ours 27,186 (+50.4%) unstated, 24,617
    (+36.2%) once its config's checkpoint-activations was stated (fix50a), now 19,408 (+7.4%) stated on its stack,
    training_stack gpt_neox: 0.524 / (1 + 621 / 2,048) = 0.402 of the peak, the GPT-NeoX A100 rate fitted on Llemma
    7B's published hours (not on this row or the Pythia paper's table, which was not reachable: held out). Rows
    (64 GPUs, ZeRO-1) fit, rebuild to the cent and meet the 72 h."""
    c = candidate(PYTHIA1B, "a100-sxm4-40gb")
    problems = judge(
        PYTHIA1B,
        [("A100-40GB tokens/s/GPU", tokens_per_gpu(c), 299892736000 / (3 * 86400 * 64), LLM_SPEED)],
        deadline_hours=72,
    )
    assert not problems, problems


@pytest.mark.django_db
def test_trtllm_mixtral_8x7b_int8_one_a100_one_stream(bundled_catalog):
    """[MIXTRAL8] 81 tokens/s at one stream, 512 in / 128 out, int8 weights on one A100 (80 GB): ours 85.7 (+5.7%).

    Was a strict xfail (aud49r, R_MIXTRAL8, the ranking): row 1 was lium RTX3090_3x, a TP 3 group over 32 query /
    8 KV heads that vLLM refuses, then (with that gate) RTX3090_4x, flagged "prefer a data-center card" and still
    first. Fixed in the ranking: a TP group must split the heads (shapes.tensor_parallel_splits_heads) and a serving
    replica split over consumer cards ranks below the first row that is not one (configurations.ranked_order)."""
    t = candidate(MIXTRAL8, "a100-sxm4-80gb")["throughput"]
    problems = judge(
        MIXTRAL8, [("A100 80GB tokens/s a stream", t["decode_tokens_per_second_per_stream"], 81.0, LLM_SPEED)]
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True, reason=R_Y11LGRID.format(ours=0.0587 * 46 / 47, e=err(0.0587 * 46 / 47, 0.242), ips=105.8)
)
def test_yolo11l_training_grid_a100_20c(bundled_catalog):
    """[Y11LGRID] 46 epochs of YOLO11l in 0.242 h on a GRID A100-20C (vGPU of an A100 40GB)."""
    t = candidate(Y11LGRID, "a100-sxm4-40gb")["throughput"]
    problems = judge(Y11LGRID, [("A100 hours", t["training_hours"], 0.242, IMAGE_SPEED)])
    assert not problems, problems
