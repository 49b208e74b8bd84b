"""Spec builders shared by the sizing tests."""

from __future__ import annotations

from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

LLAMA2_7B = {"preset": "llama-2-7b"}
LLAMA3_8B = {"preset": "llama-3.1-8b"}


def spec(**fields):
    data = {"task": "full_finetune", "model": dict(LLAMA2_7B)} | fields
    return parse_workload_spec(data)


def memory(workload, gpu_count=None, **plan):
    return memory_breakdown_scalar(workload, gpu_count, **plan)
