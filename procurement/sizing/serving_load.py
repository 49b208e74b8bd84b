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
token's, not its inter-token time's). Model assumption: those tokens are
spread evenly over the steps, chunked prefill with a budget that does not bind (the steady-state mean: a
stream's time per output token, genai-perf's inter-token latency, is the mean step over its reply). The mixed
step runs the linear layers once at M = decode tokens + prompt tokens (the weights read once, or M x 2N FLOPs
at the prefill efficiency, whichever is longer), the decode streams' attention as before plus the prompt
tokens' causal attention FLOPs, and the all-reduces at M tokens. A new request's first token waits for the
step running when it arrives (a closed-loop arrival follows a stream's last token, at a step's end, and the
next step is already scheduled; at one stream the engine is idle) and then its own prefill; a stream's cycle is
its first token and output_tokens - 1 mixed steps, so the total is concurrency x output_tokens over that. Not modelled: arrivals bunched by a run that starts
every client at once with a fixed reply length (genai-perf's default: the prompts then prefill together and the
first token waits for the bunch), a token budget that binds (a prompt over budget spans several steps),
preemption, an open-loop request rate.
"""

from __future__ import annotations

TRAFFICS = ("streams", "closed_loop")


def prompt_tokens_per_step(concurrency: float, prompt_tokens: float, output_tokens: float) -> float:
    """Prompt tokens one decode step of a stream's reply carries in steady state under a closed loop: each of
    the other ``concurrency`` - 1 streams brings ``prompt_tokens`` once every ``output_tokens`` steps.
    24 x 5,000 / 500 = 240."""
    return max(float(concurrency) - 1.0, 0.0) * float(prompt_tokens) / max(float(output_tokens), 1.0)
