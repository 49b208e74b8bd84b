"""A recompute ranks many stored workloads on one prepared offer table, whose shape grid memoizes each
distinct spec shape's sizing (procurement/ranking/sizing_memo.py) and whose offer rows are read once.
Rankings with the memos warm must be those of a fresh table per workload, byte for byte: the memo key
leaves out only the name and the token count, and hours are derived from each workload's own tokens."""

import json

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.offers import prepare
from procurement.ranking.serving import serving_options
from procurement.sizing import load_bundled_gpus, parse_workload_spec
from procurement.sizing.mfu import CalibrationFactor
from tests.procurement.test_ranking import NOW, OFFERS

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
# one shape at three token counts (hours differ, memory and tokens/s do not), a stated plan on the same
# model, another task and precision, and serving (which never reaches the training memo)
DOCUMENTS = [
    {"name": f"q{tokens:g}", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": tokens}
    for tokens in (1e8, 7e8, 3.3e9)
] + [
    {
        "name": "z1",
        "task": "full_finetune",
        "model": {"preset": "llama-3.1-8b"},
        "training_tokens": 4e8,
        "parallelism": {"gpus": 8, "zero_stage": 1},
    },
    {"name": "f", "task": "full_finetune", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 4e8},
    {
        "name": "l",
        "task": "lora",
        "model": {"preset": "mistral-7b"},
        "training_tokens": 9e8,
        "precision": "fp16",
    },
    {"name": "s", "task": "inference", "model": {"preset": "llama-3.1-8b"}},
]
OPTION_SETS = [
    RankingOptions(top=None),
    RankingOptions(top=15, deadline_hours=30.0),
    # a calibration factor is part of the memo key: the same shape under another factor is sized anew
    RankingOptions(top=15, calibration={("h100-sxm5-80gb", "qlora"): CalibrationFactor(3, 1.25, 1.1)}),
    # the priced configurations are memoized on the table too (configurations._priced_cells): with
    # infeasible rows every valid one is priced, without them only those that fit
    RankingOptions(top=10, include_infeasible=True),
]


def _ranked(spec, options, prepared):
    results = rank_workload(spec, OFFERS, GPUS, options, now=NOW, prepared=prepared).results
    return json.dumps(results, sort_keys=True, default=str)


def test_rankings_on_a_warm_shared_table_equal_those_on_a_fresh_table_each():
    specs = [parse_workload_spec(document) for document in DOCUMENTS]
    shared: dict = {}
    for options in OPTION_SETS:
        for spec in specs + specs[::-1]:  # each shape met again after the others filled the memo
            prepared_for = serving_options(spec, options)
            # one table for every option set, as RankingContext.prepared shares it: the option sets differ
            # only in what prepare does not read (top, deadline, calibration)
            key = spec.is_training
            if key not in shared:
                shared[key] = prepare(OFFERS, GPUS, prepared_for)
            fresh = prepare(OFFERS, GPUS, prepared_for)
            assert _ranked(spec, options, shared[key]) == _ranked(spec, options, fresh), (spec.name, options)


def test_a_writable_array_is_keyed_by_its_contents_each_time_a_frozen_one_once():
    import numpy as np

    from procurement.ranking.sizing_memo import arrays_key, freeze

    writable = np.array([1.0, 2.0])
    before = arrays_key(writable)
    writable[0] = 5.0  # changed in place: the key follows the contents
    assert arrays_key(writable) != before
    frozen = np.array([1.0, 2.0])
    freeze(frozen)
    assert arrays_key(frozen) is arrays_key(frozen)  # built once, for the same array object
    assert arrays_key(frozen).value == before  # the same contents as the writable one had
