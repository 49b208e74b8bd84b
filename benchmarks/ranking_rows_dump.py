"""Every ranked row of a varied set of workloads and options, as JSON, to compare two checkouts exactly.

    .venv/bin/python benchmarks/ranking_rows_dump.py /tmp/new.json           # in this checkout
    (cd ../other && .venv/bin/python benchmarks/ranking_rows_dump.py /tmp/old.json)
    cmp /tmp/old.json /tmp/new.json                                           # no output: identical

A speed change to the ranking (issue 26, "Speed") must leave every returned number and text as it was.
The set: the recompute benchmark's workload mix (QLoRA, LoRA and full fine-tunes of 7-14B presets), the
examples (8-GPU full fine-tune, 70B serving, LoRA), a 7B pretraining run, QLoRA of a 70B model, a 13B
full fine-tune with ``gpus: auto``, a 7B serving spec and LoRA at 32k context; each under options that
reach the spot Monte Carlo, the deadline plans, another currency, infeasible rows, spot only, a budget
with storage, and given checkpoint timings. Runs on a throwaway SQLite database with the bundled catalog
(as benchmarks/ranking_bench.py); keys keep their order, so the JSON text compares byte for byte.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPTION_SETS = [
    {"top": 20},
    {"top": 20, "deadline_hours": 40},
    {"top": 20, "deadline_hours": 400, "deadline_probability": 0.95},
    {"top": 10, "currency": "CNY", "include_infeasible": True},
    {"top": 20, "pricing_models": ["spot"]},
    {"top": 5, "budget": 500, "storage_retention_days": 30},
    {"top": 15, "checkpoint_write_hours": 0.05, "restart_hours": 0.3},
]
EXTRA_SPECS = [
    {"name": "pretrain-7b", "task": "pretrain", "model": {"preset": "llama-2-7b"}, "training_tokens": 2e10},
    {"name": "qlora-70b", "task": "qlora", "model": {"preset": "llama-3.1-70b"}, "training_tokens": 3e8},
    {
        "name": "full-13b-auto",
        "task": "full_finetune",
        "model": {"preset": "llama-2-13b"},
        "training_tokens": 5e9,
        "parallelism": {"gpus": "auto"},
    },
    {"name": "serve-7b", "task": "inference", "model": {"preset": "mistral-7b"}},
    {
        "name": "lora-32k",
        "task": "lora",
        "model": {"preset": "llama-3.1-8b"},
        "seq_len": 32768,
        "training_tokens": 1e9,
    },
]


def _documents() -> list[dict]:
    import yaml

    from benchmarks.ranking_bench import _workload_specs

    documents, _ = _workload_specs(24, seed=3)
    for name in ("full-finetune-8gpu", "serve-70b", "lora-finetune"):
        documents.append(yaml.safe_load((ROOT / "examples" / f"{name}.yaml").read_text()))
    return documents + EXTRA_SPECS


def main() -> None:
    from benchmarks.ranking_bench import _setup_django

    with tempfile.TemporaryDirectory() as folder:
        _setup_django(folder)
        from procurement.services.benchmarks import NO_MEASUREMENTS
        from procurement.services.recommendations import (
            RankingContext,
            ranking_options_parse,
            recommendation_compute,
            workload_spec_parse,
        )

        context, rankings, cpu_s = RankingContext.current(), {}, 0.0
        for document in _documents():
            spec = workload_spec_parse(document)
            for parameters in OPTION_SETS:
                key = f"{document['name']}|{json.dumps(parameters, sort_keys=True)}"
                options = ranking_options_parse(parameters)
                start = time.process_time()
                ranking = recommendation_compute(
                    spec=spec, options=options, context=context, measurements=NO_MEASUREMENTS
                )
                cpu_s += time.process_time() - start
                rankings[key] = ranking.as_report()
    Path(sys.argv[1]).write_text(json.dumps(rankings, default=repr))
    rows = sum(len(ranking["results"]) for ranking in rankings.values())
    print(f"{len(rankings)} rankings, {rows} rows, {cpu_s:.2f} s CPU ranking them")


if __name__ == "__main__":
    main()
