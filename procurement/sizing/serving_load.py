"""Serving under closed-loop load (``inference.traffic: closed_loop``): the steady-state mixed step.

A closed-loop client (genai-perf ``--concurrency``, vLLM ``bench serve --max-concurrency`` at an unbounded
request rate) keeps ``concurrency`` requests open and replaces a finished one at once. A continuous-batching
engine (vLLM, SGLang, TensorRT-LLM in-flight batching, NIM) runs each new prompt inside the same steps that
decode the other streams: vLLM V1's scheduler has no prefill or decode phase ("There's no 'decoding phase' nor
'prefill phase' in the scheduler", NOTE(woosuk) in ``Scheduler.schedule``), it fills one step's
``token_budget = self.max_num_scheduled_tokens`` with the RUNNING requests' new tokens first (a decode's 1, a
prompt's remaining chunk, capped by ``long_prefill_token_threshold``) and the waiting requests after them, one
forward over all of them (vllm-project/vllm@00024d31 vllm/v1/core/sched/scheduler.py, ``schedule``). In steady state every stream starts a new prompt once every
``output_tokens`` steps, so the steps of one stream's reply carry on average the other streams' prompts,

    prompt tokens a step = (concurrency - 1) x prompt_tokens / output_tokens

(NIM's Llama 3.3 70B row at 25 streams, 5,000 in / 500 out: 240 a step; the stream's own prompt is its first
token's, not its inter-token time's). How those tokens fall on the steps
is the scheduler's token budget (``inference.max_batched_tokens``: vLLM's ``max_num_batched_tokens``, TensorRT-LLM's
``max_num_tokens``): a step takes the running decodes first (``concurrency`` tokens), then prompt tokens up to the
budget, chunking a prompt that does not fit, so a prompt of P tokens rides ceil(P / (budget - concurrency))
prompt-carrying steps (the last one its remainder) and the other steps of a reply are decode-only (step_mix).
The mean step over a stream's reply, genai-perf's inter-token latency, is that mix: a prompt-carrying step's
linear layers at M = decodes + its chunk, a decode-only step at the weight read. (fix51j: the even spread of
(concurrency - 1) x prompt / output tokens over every step, prefmix's first reading, is what a budget binding at
~that mean would give, not an unfilled one; it hides the weight read under prompt FLOPs every step, the least a
step can cost, max(read, compute) being convex: a lower bound.) Where the prompt-carrying steps would overrun a
reply (the budget binds), every step carries chunks, the other streams' prompt tokens spread over the reply's steps
up to the budget, and the prompt tokens beyond what the steps can hold wait in the queue (full-budget steps added
to the first token). A prompt-carrying step runs the linear layers once at M = decode tokens + prompt tokens (the weights read once, or M x 2N FLOPs
at the prefill efficiency, whichever is longer), the decode streams' attention as before plus the prompt
tokens' causal attention FLOPs, and the all-reduces at M tokens. A new request's first token waits for the
step running when it arrives (a closed-loop arrival follows a stream's last token, at a step's end, and the
next step is already scheduled; at one stream the engine is idle) and then its own prefill; a stream's cycle is
its first token and output_tokens - 1 mixed steps, so the total is concurrency x output_tokens over that. The first token (more than one stream): the step running when
the request arrives (the mean step), then its own chunks, each a prompt-carrying step beside the other streams'
decodes. Not modelled: arrivals bunched by a run that starts every client at once with a fixed reply length
(genai-perf's default: the prompts then prefill together and the first token waits for the bunch), two prompts'
chunks sharing a step where a prompt's last chunk leaves budget over (each prompt's chunks are priced apart),
preemption, an open-loop request rate (refused: closed_loop with requests_per_second).

Engines that do not mix (refused or stated, spec.py): vLLM V0 (``inference.engine vllm_v0``) turns chunked prefill
on by default only for max_model_len > 32K (vllm/engine/arg_utils.py ``_set_default_args_v0``, ``use_long_context =
max_model_len > 32768``); below it V0's scheduler runs waiting prompts in steps of their own ahead of the decodes,
so closed_loop is refused with vllm_v0. SGLang does not put prompts into decode batches by default
(sgl-project/sglang@469c63e5 python/sglang/srt/server_args.py ``enable_mixed_chunk: bool = False``): a prefill batch
runs on its own between decode batches, so closed_loop prices an SGLang server only with --enable-mixed-chunk.
"""

from __future__ import annotations

import math

TRAFFICS = ("streams", "closed_loop")
# inference.max_batched_tokens bounds: a step must hold the decodes and at least one prompt token; 1M tokens is far
# past any engine's default (vLLM's LLM class 16,384 on >= 70 GiB cards)
MAX_BATCHED_TOKENS_LIMITS = (16, 1_048_576)
# The framework's default budget (an OpenAI-compatible server): vLLM V1 8,192 on a card of >= 70 GiB that is not an
# A100, else 2,048 (vllm-project/vllm@99d7eb5d vllm/engine/arg_utils.py EngineArgs._set_default_args:
# ``if device_memory >= 70 * GiB_bytes and "a100" not in device_name``, OPENAI_API_SERVER 8192 / 2048, "Setting
# large max_num_batched_tokens for A100 reduces throughput, see PR #17885"); TensorRT-LLM's max_num_tokens 8,192
# (NVIDIA/TensorRT-LLM tests/integration/defs/stress_test/stress_test.py ServerConfig: ``max_num_tokens: Optional[int] =
# 8192  # 8192 is default value in BuildConfig``; find_string id 398531756).
LARGE_CARD_BUDGET_TOKENS = 8192
SMALL_CARD_BUDGET_TOKENS = 2048
LARGE_CARD_GIB = 70.0
AMPERE_GENERATION = 80  # the A100 (the only >= 70 GiB Ampere part in the catalog): vLLM's 2,048 on it


def default_max_batched_tokens(gpu_memory_gib=None, generation=None) -> float:
    """vLLM V1's default token budget for one card (LARGE_CARD_BUDGET_TOKENS on >= 70 GiB non-A100 cards, else
    SMALL_CARD_BUDGET_TOKENS). ``gpu_memory_gib`` None or NaN: the large-card figure (TensorRT-LLM's own default,
    and vLLM's on the H100 / H200 / B200 class the closed-loop rows ran on). ``generation`` 80 marks the A100."""
    if gpu_memory_gib is None or math.isnan(float(gpu_memory_gib)):
        return float(LARGE_CARD_BUDGET_TOKENS)
    large = float(gpu_memory_gib) >= LARGE_CARD_GIB and generation != AMPERE_GENERATION
    return float(LARGE_CARD_BUDGET_TOKENS if large else SMALL_CARD_BUDGET_TOKENS)


def step_mix(concurrency: float, prompt_tokens: float, output_tokens: float, budget_tokens: float) -> dict:
    """How one stream's reply steps carry the other streams' prompts under a token budget (a scheduler that takes
    running decodes first, then prompt chunks up to the budget: vLLM V1's ``schedule``).

    Returns ``steps`` (the reply's output_tokens - 1 inter-token steps), ``chunk_tokens`` (prompt tokens a step
    after the decodes: budget - concurrency, at least 1), ``chunks_per_prompt`` (ceil(P / chunk_tokens)),
    ``last_chunk_tokens`` (the remainder), and the reply's steps by what they carry, a list of (steps, prompt
    tokens each): the other concurrency - 1 prompts' full chunks, their last chunks, the decode-only rest. Where
    those chunks would overrun the reply, every step carries min(their tokens / steps, chunk_tokens) and
    ``queued_tokens`` (what no step holds) wait for full-budget steps in the first token.
    NIM's 25 x 5,000 / 500 at 8,192: chunk 8,167, 1 chunk a prompt, 24 steps of 5,000 and 475 decode-only."""
    others = max(float(concurrency) - 1.0, 0.0)
    prompt = float(prompt_tokens)
    steps = max(float(output_tokens) - 1.0, 0.0)
    chunk = max(float(budget_tokens) - float(concurrency), 1.0)
    chunks = math.ceil(prompt / chunk) if prompt > 0 else 0
    last = prompt - (chunks - 1) * chunk if chunks else 0.0
    mix: dict[str, object] = {
        "steps": steps,
        "chunk_tokens": chunk,
        "chunks_per_prompt": chunks,
        "last_chunk_tokens": last,
        "queued_tokens": 0.0,
    }
    if steps == 0 or others == 0 or prompt == 0:
        mix["by_tokens"] = [(steps, 0.0)]
        return mix
    carrying = others * chunks
    if carrying <= steps:
        mix["by_tokens"] = [
            (others * (chunks - 1), chunk),
            (others, last),
            (steps - carrying, 0.0),
        ]
        return mix
    spread = others * prompt / steps
    held = min(spread, chunk)
    mix["by_tokens"] = [(steps, held)]
    mix["queued_tokens"] = (spread - held) * steps
    return mix


def prompt_tokens_per_step(concurrency: float, prompt_tokens: float, output_tokens: float) -> float:
    """Prompt tokens one decode step of a stream's reply carries in steady state under a closed loop: each of
    the other ``concurrency`` - 1 streams brings ``prompt_tokens`` once every ``output_tokens`` steps.
    24 x 5,000 / 500 = 240."""
    return max(float(concurrency) - 1.0, 0.0) * float(prompt_tokens) / max(float(output_tokens), 1.0)
