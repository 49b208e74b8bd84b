"""distill (aud51x FIX LIST item 3): the spec's `distillation` section, priced through the existing engines
(procurement/sizing/distillation.py). Every figure by hand below.

The online mode follows Hugging Face's Distil* trainer (huggingface/transformers
examples/research_projects/distillation/distiller.py, stored commit 1607444705841ea5084ea2c37b22950175c7c84a,
Distiller.step): the student's forward, then `with torch.no_grad(): t_logits, t_hidden_states = self.teacher(...)`
on the same batch, and the loss's `nn.functional.softmax(t_logits_slct / self.temperature, dim=-1)` over the
vocabulary; only the student takes a backward (`loss.backward()` in optimize). So the teacher costs one forward a
token, its weights and logits in memory, nothing kept for backward; the temperature only divides the logits.
"""

from __future__ import annotations

import pytest

from procurement.sizing.distillation import stored_logit_bytes, teacher_activation_bytes
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import teacher_forward_flops_per_token, training_flops_per_token

GIB = 2.0**30
# Llama 3.2 1B shape (HF config.json, as test_outside_ranking_audit_aud51x.LLAMA32_1B)
STUDENT = {
    "name": "Llama-3.2-1B",
    "num_layers": 16,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": True,
}
BASE = {
    "task": "pretrain",
    "model": STUDENT,
    "precision": "bf16",
    "seq_len": 8192,
    "micro_batch_size": 4,
    "training_tokens": 9e12,
    "parallelism": {"gpus": 8},
}


def spec(**distillation):
    return parse_workload_spec(BASE | ({"distillation": distillation} if distillation else {}))


def errors(data: dict) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(data)
    return {e.path: e.message for e in caught.value.errors}


def test_the_8b_teacher_forward_by_hand():
    """Llama 3.1 8B (config.json: 32 layers, hidden 4,096, 32 / 8 heads of 128, MLP 14,336, vocabulary 128,256,
    untied): block matmul weights 8,030,261,248 - 2 x 128,256 x 4,096 = 6,979,588,096; head 525,336,576;
    causal attention at 8,192: 4 x 4,096 (mean attended, half the sequence) x 4,096 (32 x 128) x 32 layers = 2,147,483,648.
    Forward 2 x (6,979,588,096 + 525,336,576) + 2,147,483,648 = 17,157,332,992 FLOPs a token."""
    teacher = spec(teacher="llama-3.1-8b").distillation.teacher
    assert teacher_forward_flops_per_token(teacher, 8192) == pytest.approx(17_157_332_992, rel=1e-6)


def test_online_adds_the_teacher_forward_to_a_trained_token():
    plain = training_flops_per_token(spec())
    online = training_flops_per_token(spec(teacher="llama-3.1-8b"))
    assert online - plain == pytest.approx(17_157_332_992, rel=1e-6)
    # the student alone: 6 x 0.973e9 block weights + 6 x 0.263e9 head + 3 x attention = 9.03e9; the 8B teacher
    # makes the token 2.90x as dear (26.18e9)
    assert online / plain == pytest.approx(2.901, abs=0.002)


def test_precomputed_adds_no_flops_unless_generation_is_priced():
    plain = training_flops_per_token(spec())
    assert training_flops_per_token(spec(teacher="llama-3.1-8b", mode="precomputed", top_k=100)) == plain
    generated = spec(teacher="llama-3.1-8b", mode="precomputed", top_k=100, include_logit_generation=True)
    assert training_flops_per_token(generated) - plain == pytest.approx(17_157_332_992, rel=1e-6)


def test_temperature_costs_nothing():
    cool, hot = spec(teacher="llama-3.1-8b"), spec(teacher="llama-3.1-8b", temperature=8)
    assert training_flops_per_token(cool) == training_flops_per_token(hot)
    assert memory_breakdown_scalar(cool) == memory_breakdown_scalar(hot)


def test_the_teacher_weights_line_by_hand():
    """8,030,261,248 parameters x 2 bytes (bf16) = 14.96 GiB on one GPU; tensor parallel 2 halves it; fp8 halves
    it again; precomputed holds none."""
    assert memory_breakdown_scalar(spec(teacher="llama-3.1-8b"))["teacher_weights_gib"] == pytest.approx(
        8_030_261_248 * 2 / GIB
    )
    tp2 = memory_breakdown_scalar(spec(teacher="llama-3.1-8b"), tensor_parallel=2)
    assert tp2["teacher_weights_gib"] == pytest.approx(8_030_261_248 / GIB)
    fp8 = memory_breakdown_scalar(spec(teacher="llama-3.1-8b", teacher_precision="fp8"))
    assert fp8["teacher_weights_gib"] == pytest.approx(8_030_261_248 / GIB)
    assert (
        memory_breakdown_scalar(spec(teacher="llama-3.1-8b", mode="precomputed"))["teacher_weights_gib"] == 0
    )
    assert memory_breakdown_scalar(spec())["teacher_weights_gib"] == 0


def test_the_online_loss_holds_the_teachers_logits():
    """4 x 8,192 tokens x 128,256 x (2 bf16 + 4 fp32 softmax) = 25,216,155,648 B; one teacher layer's working set
    32,768 x (5 x 4,096 + 3 x 14,336) x 2 = 4,160,749,568 B; 27.36 GiB in all, in activations."""
    online = spec(teacher="llama-3.1-8b")
    assert teacher_activation_bytes(online, 1) == pytest.approx(25_216_155_648 + 4_160_749_568)
    delta = (
        memory_breakdown_scalar(online)["activations_gib"]
        - memory_breakdown_scalar(spec())["activations_gib"]
    )
    assert delta == pytest.approx((25_216_155_648 + 4_160_749_568) / GIB)


def test_precomputed_holds_its_top_k_and_stores_it():
    """top-k 100: 32,768 tokens x 100 x (8 stored + 4 softmax) = 39,321,600 B in memory; on disk 9e12 tokens x 100 x
    8 = 7.2e15 B (7.2 PB) for the run."""
    stored = spec(teacher="llama-3.1-8b", mode="precomputed", top_k=100)
    assert teacher_activation_bytes(stored, 1) == pytest.approx(39_321_600)
    assert stored_logit_bytes(stored) == pytest.approx(7.2e15)
    assert stored_logit_bytes(spec(teacher="llama-3.1-8b")) == 0


def test_the_ranking_memory_fit_sees_the_teacher():
    """A 70B teacher in bf16 (141.1 GB) fits no 80 GB card unsplit: the plan's total carries it."""
    total = memory_breakdown_scalar(spec(teacher="llama-3.1-70b"))["total_per_gpu_gib"]
    assert total > memory_breakdown_scalar(spec())["total_per_gpu_gib"] + 70_553_706_496 * 2 / GIB


@pytest.mark.parametrize(
    ("distillation", "path", "words"),
    [
        ({}, "distillation.teacher", "required"),
        ({"teacher": "nope"}, "distillation.teacher.preset", "unknown preset"),
        ({"teacher": {"hidden_size": 64}}, "distillation.teacher.num_layers", "required"),
        ({"teacher": 7}, "distillation.teacher", "preset name or a mapping"),
        (
            {"teacher": "llama-3.1-8b", "mode": "offline"},
            "distillation.mode",
            "expected one of online, precomputed",
        ),
        ({"teacher": "llama-3.1-8b", "top_k": 20}, "distillation.top_k", "precomputed only"),
        (
            {"teacher": "llama-3.1-8b", "mode": "precomputed", "top_k": 10**7},
            "distillation.top_k",
            "<= 1,000,000",
        ),
        (
            {"teacher": "llama-3.1-8b", "mode": "precomputed", "top_k": 200_000},
            "distillation.top_k",
            "vocabulary",
        ),
        (
            {"teacher": "llama-3.1-8b", "include_logit_generation": True},
            "distillation.include_logit_generation",
            "",
        ),
        ({"teacher": "llama-3.1-8b", "temperature": 0}, "distillation.temperature", "> 0"),
        (
            {"teacher": "llama-3.1-8b", "teacher_precision": "int3"},
            "distillation.teacher_precision",
            "expected",
        ),
        (
            {"teacher": "llama-2-7b"},
            "distillation.teacher.vocab_size",
            "must equal model.vocab_size (128,256)",
        ),
        ({"teacher": "llama-3.1-8b", "typo": 1}, "distillation.typo", "unknown field"),
    ],
)
def test_bad_sections_name_the_field(distillation, path, words):
    found = errors(BASE | {"distillation": distillation})
    assert path in found and words in found[path]


def test_inference_and_non_mappings_are_refused():
    serving = {
        "task": "inference",
        "model": {"preset": "llama-3.1-8b"},
        "distillation": {"teacher": "llama-3.1-70b"},
    }
    assert "training tasks only" in errors(serving)["distillation"]
    assert errors(BASE | {"distillation": "llama-3.1-8b"})["distillation"] == "must be a mapping"
