"""max_seq_len (maxlen, issue 26): training data of unequal lengths. A loop that pads each micro-batch to its
longest sample peaks on its longest batch while its hours follow the mean length, so memory's activation, loss
and logits terms are sized at max_seq_len and every speed and hours figure at seq_len.

The workload is the PEFT method_comparison harness's (huggingface/peft @5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40
method_comparison/MetaMathQA: data.py keeps samples up to CHAR_LIMIT 1300, "with a token limit of 768 for query +
response"; the results file's "train total tokens" 4,198,051 over 20,000 samples, 209.9 a sample): Llama-3.2-3B,
batch 4, seq_len 210, max_seq_len 768, on one L40S.

Hand computation: under flash attention no seq x seq score is kept, so a token's saved activations, its loss and
its logits do not depend on the sequence length (bytes_model.layer_activation_bytes_per_token with scores off;
logits_bytes_per_token): the activation term is bytes-a-token x micro-batch x length, and going from 210 to 768
tokens multiplies it by 768 / 210 exactly, while weights, gradients and optimizer states (parameter-sized) do not
move. Speed is the mean-length step's: the same tokens/s and hours as the spec without max_seq_len.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api import spec_schemas
from procurement.services.sizing import size_spec_document
from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB, FRAGMENTATION_FRACTION
from procurement.sizing.bytes_model import memory_assumptions, sliding_window_notes
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.memory import memory_breakdown_scalar
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

MEAN, LONGEST = 210, 768  # MetaMathQA's mean sample (4,198,051 / 20,000) and data.py's token limit
PEFT_FT = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.2-3b"},
    "micro_batch_size": 4,
    "seq_len": MEAN,
    "cross_entropy": "huggingface",
    "master_weights_fp32": False,
    "parallelism": {"gpus": 1},
    "training_tokens": 4198051,
}
STATES = ("weights_gib", "gradients_gib", "optimizer_states_gib")


def _size(spec: dict, gpu: str = "l40s") -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == 1) | {
        "workload": report["workload"]
    }


def test_unstated_it_is_seq_len_and_nothing_moves():
    spec = parse_workload_spec(PEFT_FT)
    assert spec.max_seq_len is None and spec.memory_seq_len == MEAN
    stated = parse_workload_spec(PEFT_FT | {"max_seq_len": MEAN})
    assert memory_breakdown_scalar(stated) == memory_breakdown_scalar(spec)


def test_memory_at_the_longest_batch_by_hand():
    mean = memory_breakdown_scalar(parse_workload_spec(PEFT_FT))
    longest = memory_breakdown_scalar(parse_workload_spec(PEFT_FT | {"max_seq_len": LONGEST}))
    for key in STATES:  # parameter-sized: the batch's length does not enter
        assert longest[key] == pytest.approx(mean[key], rel=1e-12)
    # bytes a token x 4 x length: 768 / 210 = 3.657 times the mean batch's activations, loss and logits
    assert longest["activations_gib"] == pytest.approx(mean["activations_gib"] * LONGEST / MEAN, rel=1e-9)
    tensors = sum(longest[key] for key in STATES) + longest["activations_gib"]
    assert longest["total_per_gpu_gib"] == pytest.approx(
        tensors * (1 + FRAGMENTATION_FRACTION) + CUDA_CONTEXT_GIB
    )
    # identical to the breakdown of a run whose every batch is 768 tokens long
    assert longest == memory_breakdown_scalar(parse_workload_spec(PEFT_FT | {"seq_len": LONGEST}))


@pytest.mark.django_db
def test_speed_and_hours_stay_at_seq_len(bundled_catalog):
    mean, longest = _size(PEFT_FT), _size(PEFT_FT | {"max_seq_len": LONGEST})
    every_batch_long = _size(PEFT_FT | {"seq_len": LONGEST})
    assert longest["throughput"] == mean["throughput"]
    assert longest["throughput"]["training_tokens_per_second"] != pytest.approx(
        every_batch_long["throughput"]["training_tokens_per_second"], rel=0.05
    )
    assert longest["total_per_gpu_gib"] == pytest.approx(every_batch_long["total_per_gpu_gib"], rel=1e-9)
    assert longest["workload"]["seq_len"] == MEAN and longest["workload"]["max_seq_len"] == LONGEST
    note = longest["workload"]["memory_assumptions"][0]
    assert "max_seq_len 768 tokens" in note and "seq_len 210" in note


@pytest.mark.django_db
def test_the_fit_check_uses_the_longest_batch(bundled_catalog):
    """By hand: the mean batch's peak is 29.66 GiB (35.59 with the 20% headroom), the longest's 40.09 (48.10). An
    L40S (48 GB, 44.99 GiB) fits the first with its headroom and the second only inside it (tight); an RTX 5090
    (32 GB, 31.84 GiB) holds the first (tight) and not the second, and the ranking drops it."""
    mean, longest = _size(PEFT_FT), _size(PEFT_FT | {"max_seq_len": LONGEST})
    assert mean["total_per_gpu_gib"] == pytest.approx(29.66, abs=0.01)
    assert longest["total_per_gpu_gib"] == pytest.approx(40.09, abs=0.01)
    assert (mean["verdict"], longest["verdict"]) == ("fits", "tight")
    mean, longest = _size(PEFT_FT, "rtx-5090"), _size(PEFT_FT | {"max_seq_len": LONGEST}, "rtx-5090")
    assert (mean["verdict"], longest["verdict"]) == ("tight", "does_not_fit")
    assert any(row["gpu"] == "rtx-5090" for row in ranked(PEFT_FT, 5, gpus=["rtx-5090"]))
    assert not ranked(PEFT_FT | {"max_seq_len": LONGEST}, 5, gpus=["rtx-5090"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"max_seq_len": 100}, "must be >= seq_len (210), got 100"),
        ({"max_seq_len": 0}, "max_seq_len"),
        ({"max_seq_len": 300.5}, "must be a whole number"),
        ({"max_seq_len": 1e16}, "max_seq_len"),
        ({"task": "inference", "max_seq_len": 768}, "needs a training task, got inference"),
        # packing fills every row to seq_len: no batch is longer (aud49m fix 2)
        (
            {"packed_sample_tokens": 105, "max_seq_len": 768},
            "packed rows (packed_sample_tokens) are seq_len (210)",
        ),
    ],
)
def test_refused_by_name(extra, message):
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(PEFT_FT | extra)
    assert any(e.path == "max_seq_len" and message in f"{e.path}: {e.message}" for e in error.value.errors)


def test_refused_for_an_image_model():
    with pytest.raises(WorkloadSpecError, match="not for an image model"):
        parse_workload_spec({"task": "full_finetune", "model": {"preset": "yolov8n"}, "max_seq_len": 768})


def test_the_schema_and_the_form_carry_it():
    field = spec_schemas.WorkloadSpecSerializer().fields["max_seq_len"]
    assert field.min_value == 1 and "seq_len" in field.help_text
    form = {"task": "full_finetune", "preset": "llama-3.2-3b", "seq_len": "210", "max_seq_len": ""}
    assert "max_seq_len" not in spec_from_knobs(form)
    assert spec_from_knobs(form | {"max_seq_len": "768"})["max_seq_len"] == 768
    assert "max_seq_len" not in spec_from_knobs(form | {"task": "inference", "max_seq_len": "768"})


def test_packed_rows_at_seq_len_are_accepted():
    packed = PEFT_FT | {"packed_sample_tokens": 105}
    assert parse_workload_spec(packed | {"max_seq_len": MEAN}).memory_seq_len == MEAN


# aud49m fix 3: the notes and checks that read a length memory is sized at read max_seq_len
CP_PRETRAIN = {
    "task": "pretrain",
    "model": {"preset": "llama-3.1-8b"},
    "seq_len": 4096,
    "max_seq_len": 8192,
    "parallelism": {"gpus": 2, "context_parallel": 2},
}


def test_context_parallel_note_counts_the_longest_batch():
    # memory keeps max_seq_len / cp tokens a GPU (memory.at_longest_sequence before the cp split): 8,192 / 2
    notes = memory_assumptions(parse_workload_spec(CP_PRETRAIN))
    assert "context parallel 2: each GPU keeps 4,096 of the 8,192 tokens" in notes
    notes = memory_assumptions(parse_workload_spec(CP_PRETRAIN | {"max_seq_len": None}))
    assert "context parallel 2: each GPU keeps 2,048 of the 4,096 tokens" in notes


def test_context_parallel_must_split_the_longest_batch():
    # Megatron / Transformer Engine cut every sequence into 2 x cp chunks, the longest batch's too
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(CP_PRETRAIN | {"max_seq_len": 8190})
    assert [(e.path, e.message) for e in error.value.errors] == [
        ("parallelism.context_parallel", "2 x context_parallel (4) must divide max_seq_len (8190)")
    ]


def test_sliding_window_note_reads_the_longest_batch():
    # Mistral 7B v0.1 windows every layer at 4,096 tokens (its config.json, model_architectures.json): a mean
    # under the window with batches past it is windowed where memory is sized
    lora = {"task": "lora", "model": {"preset": "mistral-7b"}, "seq_len": 2048, "parallelism": {"gpus": 1}}
    assert sliding_window_notes(parse_workload_spec(lora)) == []
    notes = sliding_window_notes(parse_workload_spec(lora | {"max_seq_len": 8192}))
    assert len(notes) == 1 and notes[0].startswith("attention windowed to the last 4,096 tokens")
