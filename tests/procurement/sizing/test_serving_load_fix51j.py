"""fix51j: the closed-loop step mix under a token budget (serving_load.step_mix), the card's default budget, and the
refusals aud51j's FIX LIST asks for. Every figure by hand.

Sources: vLLM V1's scheduler takes running requests first, then waiting ones, up to max_num_scheduled_tokens,
chunking a prompt that does not fit (vllm-project/vllm@00024d31 vllm/v1/core/sched/scheduler.py ``schedule``). The
default budget: vllm-project/vllm@99d7eb5d vllm/engine/arg_utils.py ``_set_default_args`` (``device_memory >= 70 *
GiB_bytes and "a100" not in device_name``: OPENAI_API_SERVER 8,192, else 2,048). vLLM V0 turns chunked prefill on by
default only for max_model_len > 32,768 (``_set_default_args_v0``, ``use_long_context``). SGLang:
sgl-project/sglang@469c63e5 python/sglang/srt/server_args.py ``enable_mixed_chunk: bool = False``.
"""

from __future__ import annotations

import math

import pytest

from gpuledger.errors import InputError
from procurement.api import spec_schemas
from procurement.sizing.serving_load import default_max_batched_tokens, step_mix
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.throughput import inference_throughput

H100 = {"bandwidth_gbps": 3350.0, "peak_tflops": 1979.0, "tensor_parallel_gbps": 450.0, "generation": 90}


def nim(concurrency=25, **extra):
    inference = {
        "concurrency": concurrency,
        "context_len": 5500,
        "output_tokens": 500,
        "traffic": "closed_loop",
    }
    inference.update(extra)
    return {
        "task": "inference",
        "model": {"preset": "llama-3.3-70b"},
        "precision": "fp8",
        "parallelism": {"gpus": 2, "tensor_parallel": 2},
        "inference": inference,
    }


def test_an_unfilled_budget_takes_a_prompt_whole():
    # 25 streams, 5,000 / 500, 8,192: chunk 8,192 - 25 = 8,167 >= 5,000, one step a prompt; 24 other prompts a reply,
    # 24 of the reply's 499 inter-token steps carry 5,000 tokens, 475 are decode-only
    mix = step_mix(25, 5000, 500, 8192)
    assert (mix["chunk_tokens"], mix["chunks_per_prompt"], mix["last_chunk_tokens"]) == (8167, 1, 5000)
    assert [(n, t) for n, t in mix["by_tokens"] if n] == [(24, 5000), (475, 0.0)]
    assert mix["queued_tokens"] == 0


def test_a_smaller_budget_chunks_the_prompt():
    # 2,048 (vLLM's figure on an A100 or a < 70 GiB card): chunk 2,023, ceil(5,000 / 2,023) = 3 steps, 2,023 + 2,023 +
    # 954; 24 prompts x 3 = 72 steps of 499, the other 427 decode-only
    mix = step_mix(25, 5000, 500, 2048)
    assert mix["chunks_per_prompt"] == math.ceil(5000 / 2023) == 3
    assert mix["last_chunk_tokens"] == 5000 - 2 * 2023 == 954
    assert mix["by_tokens"] == [(48, 2023), (24, 954), (427, 0.0)]
    # every prompt token is carried once: 48 x 2,023 + 24 x 954 = 24 x 5,000
    assert sum(n * t for n, t in mix["by_tokens"]) == 24 * 5000


def test_a_binding_budget_spreads_and_queues():
    # 50 streams, 5,000 in / 40 out: 49 prompts over 39 steps would need 49 steps at one a prompt. At 8,192 (chunk
    # 8,142) every step carries 49 x 5,000 / 39 = 6,282 tokens, nothing queued; at 4,096 (chunk 4,046) every step
    # carries 4,046 and (6,282.05 - 4,046) x 39 = 87,206 tokens queue
    wide = step_mix(50, 5000, 40, 8192)
    assert wide["by_tokens"] == [(39, pytest.approx(49 * 5000 / 39))] and wide["queued_tokens"] == 0
    tight = step_mix(50, 5000, 40, 4096)
    assert tight["by_tokens"] == [(39, 4046)]
    assert tight["queued_tokens"] == pytest.approx(49 * 5000 - 39 * 4046)


def test_one_stream_has_no_other_prompts():
    assert step_mix(1, 5000, 500, 8192)["by_tokens"] == [(499, 0.0)]


def test_the_default_budget_is_the_cards():
    assert default_max_batched_tokens(79.6, 90) == 8192  # H100 SXM (81,559 MiB)
    assert default_max_batched_tokens(80.0, 80) == 2048  # A100 80GB: vLLM's "a100" exception
    assert default_max_batched_tokens(44.5, 89) == 2048  # L40S
    assert default_max_batched_tokens(None) == 8192  # unknown: the large-card figure (TensorRT-LLM's)


def test_the_mean_step_is_the_mix_and_the_budget_moves_it():
    """The engine's mean step is the decode-only step plus the prompt steps' extra spread over the reply: at 8,192,
    24 x (one 5,000-token step's extra) / 499; at 2,048, 48 chunks of 2,023 and 24 of 954. Every chunk step is
    compute-bound (2,048 x 76.35 us = 156.4 ms of GEMMs against the 14.82 ms weight read), so the prompt FLOPs are the
    same either way, and each of the 48 extra prompt-carrying steps takes the place of a decode-only step whose
    read (14.82 ms) outlasts its 25 decodes' FLOPs (25 x 76.35 us = 1.91 ms): the 2,048 mean is lower by about
    48 x (14.82 - 1.91) / 499 = 1.24 ms (47.34 -> 46.10 ms), and its first token waits 3 chunks instead of 1."""
    wide = inference_throughput(parse_workload_spec(nim(max_batched_tokens=8192)), **H100)
    default = inference_throughput(parse_workload_spec(nim()), **H100)
    narrow = inference_throughput(parse_workload_spec(nim(max_batched_tokens=2048)), **H100)
    streams = inference_throughput(parse_workload_spec(nim(traffic="streams")), **H100)
    assert float(default["decode_step_seconds"]) == pytest.approx(
        float(wide["decode_step_seconds"]), rel=1e-12
    )
    matmul_s, read_s = 2 * 69.503e9 / (2 * 1979e12 * 0.46), 69.50e9 / (2 * 3350e9 * 0.70)
    hidden_reads_s = 48 * (read_s - 25 * matmul_s) / 499
    assert float(wide["decode_step_seconds"]) - float(narrow["decode_step_seconds"]) == pytest.approx(
        hidden_reads_s, rel=0.1
    )
    assert float(wide["decode_step_seconds"]) > float(streams["decode_step_seconds"])
    # the first token: the running mean step plus the request's own chunks (1 at 8,192, 3 at 2,048)
    own_wide = float(wide["time_to_first_token_seconds"]) - float(wide["decode_step_seconds"])
    own_narrow = float(narrow["time_to_first_token_seconds"]) - float(narrow["decode_step_seconds"])
    assert own_narrow > own_wide
    # the card's default follows its memory: an A100-class row (80 GiB, generation 80) gets 2,048
    a100_default = inference_throughput(
        parse_workload_spec(nim()), **{**H100, "generation": 80}, gpu_memory_gib=80.0
    )
    a100_stated = inference_throughput(
        parse_workload_spec(nim(max_batched_tokens=2048)), **{**H100, "generation": 80}, gpu_memory_gib=80.0
    )
    assert float(a100_default["time_to_first_token_seconds"]) == pytest.approx(
        float(a100_stated["time_to_first_token_seconds"]), rel=1e-12
    )


@pytest.mark.parametrize(
    "inference, field",
    [
        ({"engine": "vllm_v0"}, "inference.traffic"),
        ({"requests_per_second": 2.0}, "inference.requests_per_second"),
        ({"max_batched_tokens": 25}, "inference.max_batched_tokens"),  # not above the 25 running decodes
        ({"max_batched_tokens": 8}, "inference.max_batched_tokens"),  # under the bound
        ({"max_batched_tokens": 2_000_000}, "inference.max_batched_tokens"),  # over the bound
        ({"max_batched_tokens": 4096, "traffic": "streams"}, "inference.max_batched_tokens"),
    ],
)
def test_refusals_name_the_field(inference, field):
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        parse_workload_spec(nim(**inference))


def test_closed_loop_with_a_rate_names_both_fields():
    with pytest.raises(InputError) as caught:
        parse_workload_spec(nim(requests_per_second=2.0))
    assert "inference.traffic" in str(caught.value) and "requests_per_second" in str(caught.value)


def test_the_fields_are_documented():
    fields = spec_schemas.WorkloadInferenceSerializer().fields
    traffic, budget = fields["traffic"].help_text, fields["max_batched_tokens"].help_text
    assert "SGLang" in traffic and "enable_mixed_chunk false" in traffic and "vllm_v0" in traffic
    assert "8,192" in budget and "2,048" in budget and "A100" in budget
    assert (fields["max_batched_tokens"].min_value, fields["max_batched_tokens"].max_value) == (16, 1_048_576)
    for text in (traffic, budget):
        assert not any(token in text for token in ("True", "False", "None", "[", "{"))
