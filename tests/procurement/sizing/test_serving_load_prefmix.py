"""prefmix: ``inference.traffic: closed_loop``, the steady-state mixed step of continuous batching
(procurement/sizing/serving_load.py), checked by hand on NIM's Llama 3.3 70B fp8 TP 2 H100 row and, as a sibling,
on NVIDIA's DLI NIM sweep.

[NIM33] docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance (read by aud51x 2026-12-07), Llama-3.3-70b-instruct,
NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5,000 in / 500 out: concurrency 25 ITL 38.75 ms, TTFT 688.69 ms.
[DLI] NVIDIA DLI's NIM benchmark set, genai-perf against NIM_TRT-LLM, as copied in
wbing520/ai-performance-engineering@0e25b2e2 code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv
(inter_token_latency-avg, ns): meta-llama3-70b-instruct, H100_80GB_HBM3, 8 GPUs, fp8, 2,000 in / 200 out: ITL
13.72 ms at concurrency 1, 27.99 at 50, 46.43 at 100.
"""

from __future__ import annotations

import pytest

from gpuledger.errors import InputError
from procurement.api import spec_schemas
from procurement.sizing.serving_load import TRAFFICS, prompt_tokens_per_step
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.throughput import inference_throughput

# H100 SXM: 3,350 GB/s, 1,979 dense FP8 TFLOPS, 450 GB/s NVLink a GPU, Hopper (90); the engine's 0.70 read share
# and prefill_efficiency_fp8 0.46 (assumptions.py)
H100 = {"bandwidth_gbps": 3350.0, "peak_tflops": 1979.0, "tensor_parallel_gbps": 450.0, "generation": 90}


def serving(preset, tp, concurrency, prompt, output, traffic):
    spec = parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": preset},
            "precision": "fp8",
            "parallelism": {"gpus": tp, "tensor_parallel": tp},
            "inference": {
                "concurrency": concurrency,
                "context_len": prompt + output,
                "output_tokens": output,
                "traffic": traffic,
            },
        }
    )
    rows = inference_throughput(spec, **H100)
    return {key: (str(value) if key == "decode_bound" else float(value)) for key, value in rows.items()}


def test_prompt_tokens_a_step_are_the_other_streams_prompts():
    assert prompt_tokens_per_step(25, 5000, 500) == pytest.approx(24 * 5000 / 500) == 240
    assert prompt_tokens_per_step(1, 5000, 500) == 0.0


def test_nim33_mixed_step_by_hand():
    """Llama 3.3 70B: block and output-layer matmul weights 69.503e9 (80 x (2 x 8,192^2 + 2 x 8,192 x 1,024 + 3 x
    8,192 x 28,672) + 8,192 x 128,256), 2N = 139.0 GFLOPs a token; TP 2 at 2 x 1,979e12 x 0.46 = 1.8207e15 FLOP/s:
    76.35 us a token. The weights (69.50 GB at 1 byte, the input table a lookup) at 2 x 3,350e9 x 0.70 = 4.69e12 B/s:
    14.82 ms, longer than 25 x 76.35 us = 1.91 ms, so the streams' step is read-bound.

    fix51j (the step mix, serving_load.step_mix): prefmix spread the other streams' 240 prompt tokens a step evenly
    (+7.67 ms a step, 35.0 ms), which needs a budget binding at ~265 tokens; the default 8,192 on an H100 (vLLM V1's
    API server on a >= 70 GiB card; TensorRT-LLM's max_num_tokens) takes a 5,000-token prompt whole beside the 25
    decodes. So 24 of a reply's 499 steps carry a prompt and 475 are decode-only. A prompt step: M = 5,025, 5,025 x
    76.35 us = 383.7 ms of GEMMs (+368.9 over the read), the prompt's causal attention 5,000 x 4 x 2,500 x 80 x 8,192
    = 5,000 x 6.5536e9 FLOPs = 18.0 ms, 160 all-reduces of 5,000 more tokens x 8,192 x 2 bytes = 81.92 MB, 2(t-1)/t
    of it over 450 GB/s = 182 us each, 29.1 ms: +416.0 ms. The mean step 27.34 + 24 x 416.0 / 499 = 47.35 ms."""
    streams = serving("llama-3.3-70b", 2, 25, 5000, 500, "streams")
    closed = serving("llama-3.3-70b", 2, 25, 5000, 500, "closed_loop")
    flop_rate = 2 * 1979e12 * 0.46
    matmul_s = 2 * 69.503e9 / flop_rate
    read_s = 69.50e9 / (2 * 3350e9 * 0.70)
    prompt_step_extra_s = (5025 * matmul_s - read_s) + 5000 * 6.5536e9 / flop_rate + 160 * 81.92e6 / 450e9
    assert prompt_step_extra_s == pytest.approx(0.4160, rel=0.005)
    assert streams["decode_step_seconds"] == pytest.approx(0.02734, rel=0.01)
    assert (streams["decode_bound"], closed["decode_bound"]) == ("memory", "compute")
    mean_s = streams["decode_step_seconds"] + 24 * prompt_step_extra_s / 499
    assert closed["decode_step_seconds"] == pytest.approx(mean_s, rel=0.03)
    # ITL 38.75 ms published (bf16 cache, the spec's default): 27.34 ms streams, 35.0 prefmix, 47.3 now (-18.1%
    # per-stream speed; at the fp8 cache that fits the page's 50-stream row, 42.8 ms, -9.4%: aud51j's module)
    assert 38.75e-3 / closed["decode_step_seconds"] - 1 == pytest.approx(-0.181, abs=0.01)
    # a first token waits for the running (mean) step, then its own prompt step beside the decodes
    assert closed["time_to_first_token_seconds"] == pytest.approx(
        closed["decode_step_seconds"] + streams["decode_step_seconds"] + prompt_step_extra_s, rel=0.03
    )
    # a stream's cycle: its first token and 499 steps; 25 x 500 over it
    cycle_s = closed["time_to_first_token_seconds"] + 499 * closed["decode_step_seconds"]
    assert closed["decode_tokens_per_second_total"] == pytest.approx(25 * 500 / cycle_s, rel=1e-9)


def test_one_stream_is_unchanged_and_streams_is_the_default():
    streams = serving("llama-3.3-70b", 2, 1, 5000, 500, "streams")
    closed = serving("llama-3.3-70b", 2, 1, 5000, 500, "closed_loop")
    for key in ("decode_step_seconds", "time_to_first_token_seconds"):
        assert closed[key] == pytest.approx(streams[key], rel=1e-12)
    spec = parse_workload_spec({"task": "inference", "model": {"preset": "llama-3-8b"}})
    assert spec.inference.traffic == "streams"


@pytest.mark.parametrize("concurrency, published_ms", [(50, 27.99), (100, 46.43)])
def test_dli_sibling_increment_moves_toward_the_published(concurrency, published_ms):
    """[DLI] 70B fp8 on 8 H100, 2,000 in / 200 out: the run's ITL grows 14.27 / 32.71 ms from 1 stream to 50 / 100.
    Its 1-stream ITL (13.72 ms) is 1.97x ours (the older NIM TensorRT-LLM stack's per-step time, a miss of both
    modes), so the check is the growth: streams 3.5 / 7.9 ms (a quarter of it), closed_loop 19.3 / 39.5 (1.21-1.36x
    it). The prompt-heavy sweep's growth is the prompts in the steps; closed_loop overshoots by the prompts that
    genai-perf's simultaneous start bunches into the first token instead (its TTFT is 19-22x the 1-stream one)."""
    published_growth = published_ms - 13.72
    growth = {}
    for traffic in TRAFFICS:
        one = serving("llama-3-70b", 8, 1, 2000, 200, traffic)["decode_step_seconds"]
        many = serving("llama-3-70b", 8, concurrency, 2000, 200, traffic)["decode_step_seconds"]
        growth[traffic] = (many - one) * 1e3
    assert growth["streams"] < 0.3 * published_growth
    assert abs(growth["closed_loop"] / published_growth - 1) < abs(growth["streams"] / published_growth - 1)
    assert 1.0 < growth["closed_loop"] / published_growth < 1.4


@pytest.mark.parametrize(
    "data",
    [
        {"task": "inference", "inference": {"engine": "hf_eager", "traffic": "closed_loop"}},
        {"task": "lora", "inference": {"traffic": "closed_loop"}},
    ],
)
def test_closed_loop_is_refused_outside_a_batching_engine(data):
    with pytest.raises(InputError, match="inference.traffic"):
        parse_workload_spec({"model": {"preset": "llama-3-8b"}, **data})


def test_the_field_is_documented_with_the_parsers_choices():
    field = spec_schemas.WorkloadInferenceSerializer().fields["traffic"]
    assert set(field.choices) == set(TRAFFICS) == {"streams", "closed_loop"}
    assert "genai-perf" in field.help_text
    assert not any(token in field.help_text for token in ("True", "False", "None", "[", "{"))
