"""inference.expert_precision (moe47): an MoE's routed experts at a precision apart from the model's.

TensorRT-LLM v0.9.0 (NVIDIA/TensorRT-LLM @250d9c293d5edbc2a45c20775b3150b1eb68b364, the commit of the v0.9.0
performance.md): tensorrt_llm/layers/moe.py MixtureOfExperts sets `self.weight_dtype = dtype` (trt.int8 only for
weight-only quantization) and builds the expert Parameters at it, and cpp/tensorrt_llm/plugins/mixtureOfExperts/
mixtureOfExpertsPlugin.cpp init() has runners for (half, half), (float, float), (bf16, bf16) and the int8 / int4
weight-only pairs only, no FP8: an FP8 Mixtral build keeps its experts 16-bit while attention and the dense
linears run FP8. Stated, the experts' weights count 2 bytes a parameter (memory and decode reads) and their
GEMMs run at the card's 16-bit peak and the engine's 16-bit efficiency; the rest stays at spec.precision.

Mixtral 8x7B by hand: 46,702,792,704 parameters, of them routed experts 32 layers x 8 x 3 x 4,096 x 14,336 =
45,097,156,608 (top-2: 11,274,289,152 a token), the rest 1,605,636,096 (the 32,000 x 4,096 input table among them).
"""

from __future__ import annotations

import numpy as np
import pytest

from procurement.api.spec_schemas import WorkloadInferenceSerializer
from procurement.sizing import WorkloadSpecError, load_bundled_gpus, parse_workload_spec
from procurement.sizing.assumptions import FP8_PREFILL_SPEEDUP, PREFILL_EFFICIENCY_FP8
from procurement.sizing.bytes_model import routed_expert_params, state_bytes
from procurement.sizing.compute_peak import expert_rate_inputs
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.memory import memory_breakdown_gib
from procurement.sizing.spec import EXPERT_PRECISIONS
from procurement.sizing.throughput import decode_read_bytes, expert_split, inference_throughput

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
H100 = GPUS["h100-sxm5-80gb"]
PARAMS = 46_702_792_704
EXPERTS = 45_097_156_608
TOP2 = 11_274_289_152
INPUT_TABLE = 32_000 * 4096


def _spec(experts="fp16", preset="mixtral-8x7b", precision="fp8", task="inference", **extra):
    inference = {"concurrency": 1, "context_len": 2048 + 128, "output_tokens": 128, "kv_cache_dtype": "fp8"}
    if experts is not None:
        inference["expert_precision"] = experts
    raw = {
        "name": "s",
        "task": task,
        "model": {"preset": preset},
        "precision": precision,
        "parallelism": {"gpus": 1, "tensor_parallel": 1},
        "inference": inference,
        **extra,
    }
    return parse_workload_spec(raw)


def test_it_parses_and_defaults_to_the_models_precision():
    assert EXPERT_PRECISIONS == ("model", "bf16", "fp16")
    assert _spec(experts=None).inference.expert_precision == "model"
    assert _spec("bf16").inference.expert_precision == "bf16"
    assert _spec("fp16").inference.expert_precision == "fp16"
    with pytest.raises(WorkloadSpecError, match="inference.expert_precision"):
        _spec("fp8")


def test_a_dense_model_is_refused_naming_the_field():
    with pytest.raises(WorkloadSpecError, match="inference.expert_precision") as refused:
        _spec("bf16", preset="llama-2-7b")
    assert "MoE" in str(refused.value) and "dense" in str(refused.value)
    assert _spec("model", preset="llama-2-7b").inference.expert_precision == "model"  # the default is fine


def test_another_task_or_quantized_weights_are_refused():
    with pytest.raises(WorkloadSpecError, match="inference.expert_precision"):
        _spec("bf16", task="full_finetune", precision="bf16")
    with pytest.raises(WorkloadSpecError, match="inference.expert_precision"):
        _spec("bf16", precision="bf16", weight_quantization="int4")


def test_memory_holds_the_experts_at_two_bytes():
    spec = _spec()
    assert routed_expert_params(spec.model) == EXPERTS and spec.model.params == PARAMS
    # FP8 model, 16-bit experts: 45,097,156,608 x 2 + 1,605,636,096 x 1 = 91,799,949,312 bytes
    assert state_bytes(spec).weight_bytes == pytest.approx(EXPERTS * 2 + (PARAMS - EXPERTS) * 1)
    assert state_bytes(_spec(None)).weight_bytes == pytest.approx(PARAMS * 1)
    weights = float(memory_breakdown_gib(spec, 2, tensor_parallel=2)["weights_gib"])
    assert weights == pytest.approx(91_799_949_312 / 2 / 2**30)  # 42.75 GiB a GPU at TP 2
    # a 16-bit model stating 16-bit experts holds what it held
    assert state_bytes(_spec("bf16", precision="bf16")).weight_bytes == pytest.approx(PARAMS * 2)


def test_decode_reads_the_touched_experts_at_two_bytes():
    # one stream touches 2 of 8 experts a layer: the non-expert weights less the input table (a lookup) at FP8, the
    # two experts at 2 bytes: 1,474,564,096 + 11,274,289,152 x 2 = 24,023,142,400
    reads, _ = decode_read_bytes(_spec(), 1.0)
    assert reads == pytest.approx(PARAMS - EXPERTS - INPUT_TABLE + TOP2 * 2)
    before, _ = decode_read_bytes(_spec(None), 1.0)
    assert before == pytest.approx(PARAMS - EXPERTS - INPUT_TABLE + TOP2)
    prompt_reads, _ = decode_read_bytes(_spec(), 2048.0)  # a prompt touches all 8
    assert prompt_reads == pytest.approx(PARAMS - EXPERTS - INPUT_TABLE + EXPERTS * 2, rel=1e-6)


def test_the_experts_gemms_run_at_the_16_bit_peak_and_efficiency():
    spec = _spec()
    assert expert_split(spec) == (TOP2, "fp16")
    assert expert_split(_spec(None)) == (0.0, None)
    peak16, measured = expert_rate_inputs(spec, H100)
    assert peak16 == H100.dense_tflops("fp16") and np.isnan(measured)
    # the first token of 2,048 tokens, compute-bound: non-expert matmuls and attention at 0.46 of the FP8 peak, the
    # experts at the engine's 16-bit Hopper efficiency 0.46 x 2 / 1.68 of the 16-bit peak
    rows = {
        name: inference_throughput(
            s,
            bandwidth_gbps=H100.memory_bandwidth_gbps,
            peak_tflops=H100.dense_tflops("fp8"),
            generation=90,
            expert_peak_tflops=peak16,
            expert_compute_efficiency=measured,
        )
        for name, s in (("stated", spec), ("model", _spec(None)))
    }
    rate8 = H100.dense_tflops("fp8") * 1e12 * PREFILL_EFFICIENCY_FP8.value
    rate16 = peak16 * 1e12 * PREFILL_EFFICIENCY_FP8.value * 2 / FP8_PREFILL_SPEEDUP.value
    # the experts' FLOPs moved from the FP8 to the 16-bit rate
    extra = 2048 * 2 * TOP2 * (1 / rate16 - 1 / rate8)
    stated = float(rows["stated"]["time_to_first_token_seconds"])
    model = float(rows["model"]["time_to_first_token_seconds"])
    assert stated - model == pytest.approx(extra, rel=1e-6)
    assert extra == pytest.approx(0.0343, abs=0.0005)  # 34 ms more on one H100
    # a stated precision without the rate inputs is an error, not a silent FP8 rate
    with pytest.raises(ValueError, match="expert_peak_tflops"):
        inference_throughput(spec, bandwidth_gbps=3350, peak_tflops=1979)


def test_the_api_and_the_form_carry_the_field():
    field = WorkloadInferenceSerializer().fields["expert_precision"]
    assert set(field.choices) == set(EXPERT_PRECISIONS)
    form = {"task": "inference", "preset": "mixtral-8x7b", "concurrency": "1", "expert_precision": "model"}
    assert "expert_precision" not in spec_from_knobs(form)["inference"]
    assert spec_from_knobs(form | {"expert_precision": "bf16"})["inference"]["expert_precision"] == "bf16"


@pytest.mark.django_db
def test_the_ranking_prices_the_stated_experts(bundled_catalog):
    # the ranking's own serving path (ranking/shapes.py) hands the 16-bit rate to the engine: with 16-bit experts an
    # FP8 Mixtral decodes slower on every shape that serves it, and no shape raises
    from dataclasses import replace

    from procurement.ranking.contract import instance_counts_for
    from procurement.ranking.serving import serving_options
    from procurement.ranking.shapes import build_shapes
    from procurement.services.recommendations import RankingContext, ranking_options_parse

    def generated(experts):
        document = {
            "name": "m",
            "task": "inference",
            "model": {"preset": "mixtral-8x7b"},
            "precision": "fp8",
            "inference": {
                "concurrency": 64,
                "context_len": 4096,
                "output_tokens": 512,
                "kv_cache_dtype": "fp8",
            },
        }
        if experts:
            document["inference"]["expert_precision"] = experts
        spec = parse_workload_spec(document)
        context = RankingContext.current()
        options = serving_options(spec, ranking_options_parse({}))
        prepared = context.prepared(options)
        sizes = prepared.kinds["gpus_per_instance"]
        options = replace(options, instance_counts=instance_counts_for(spec, options, sizes))
        grid = prepared.grid(context.gpus, options.instance_counts)
        return np.asarray(build_shapes(spec, grid, options).generated_tokens_per_second, dtype=float)

    stated, model = generated("bf16"), generated(None)
    both = np.isfinite(stated) & np.isfinite(model) & (model > 0)  # 0: a shape that does not serve it
    assert both.any() and (stated[both] < model[both]).all()


def test_bf16_experts_on_volta_and_turing_are_blocked_by_precision():
    # fix47x (aud47x's item 4): stated bf16 experts run their GEMMs at the card's bf16 peak (throughput.expert_split),
    # which Volta and Turing lack ("bf16 needs NVIDIA Ampere or later"): the card is refused as a bf16 model is, and
    # the remedy names the experts' field; fp16 experts or an Ampere card pass the gate.
    from procurement.sizing.compatibility import check_gpu, precision_fix

    spec = _spec(experts="bf16", precision="fp16")
    for slug in ("v100-sxm2-32gb", "t4"):
        compat = check_gpu(spec, GPUS[slug])
        assert compat.blocked_by == "precision"
        assert any("inference.expert_precision bf16" in error for error in compat.errors)
        fallback, text = precision_fix(spec, GPUS[slug])
        assert fallback == "fp16" and text.startswith("use inference.expert_precision fp16")
        assert check_gpu(_spec(experts="fp16", precision="fp16"), GPUS[slug]).blocked_by is None
    assert check_gpu(spec, GPUS["a100-sxm4-80gb"]).blocked_by is None
    assert precision_fix(spec, GPUS["a100-sxm4-80gb"]) is None


@pytest.mark.django_db
def test_the_sizing_page_remedy_restates_the_experts(bundled_catalog):
    from tests.procurement.outside.test_outside_recommendations_x26b import candidate

    document = {
        "task": "inference",
        "model": {"preset": "mixtral-8x7b"},
        "precision": "fp16",
        "parallelism": {"gpus": 8, "tensor_parallel": 8},
        "inference": {
            "concurrency": 8,
            "context_len": 2048,
            "output_tokens": 128,
            "expert_precision": "bf16",
        },
    }
    row = candidate(document, "v100-sxm2-32gb")
    assert (row["verdict"], row["blocked_by"]) == ("does_not_fit", "precision")
    assert row["remedies"][0].startswith("use inference.expert_precision fp16")
    assert row["errors"] and "Ampere" in row["errors"][0]


@pytest.mark.django_db
def test_the_ranking_refuses_bf16_experts_on_a_card_without_bf16(bundled_catalog):
    # the ranking's gate (ranking/shapes.incompatibility) mirrors the sizing page's: fp16 Mixtral with bf16 experts is
    # incompatible on every Volta / Turing kind and on none of the Ampere-or-later kinds; fp16 experts pass everywhere
    from dataclasses import replace

    from procurement.ranking.contract import instance_counts_for
    from procurement.ranking.serving import serving_options
    from procurement.ranking.shapes import build_shapes
    from procurement.services.recommendations import RankingContext, ranking_options_parse

    def shapes(experts):
        document = {
            "name": "m",
            "task": "inference",
            "model": {"preset": "mixtral-8x7b"},
            "precision": "fp16",
            "inference": {
                "concurrency": 8,
                "context_len": 2048,
                "output_tokens": 128,
                "expert_precision": experts,
            },
        }
        spec = parse_workload_spec(document)
        context = RankingContext.current()
        options = serving_options(spec, ranking_options_parse({}))
        prepared = context.prepared(options)
        sizes = prepared.kinds["gpus_per_instance"]
        options = replace(options, instance_counts=instance_counts_for(spec, options, sizes))
        grid = prepared.grid(context.gpus, options.instance_counts)
        return grid, build_shapes(spec, grid, options)

    grid, bf16 = shapes("bf16")
    _, fp16 = shapes("fp16")
    lacking = [i for i, gpu in enumerate(grid.kind_gpus) if not gpu.supports_precision("bf16")]
    assert lacking, "the catalog has a Volta / Turing card"
    for i, gpu in enumerate(grid.kind_gpus):
        if i in lacking:
            assert "bf16 experts (inference.expert_precision)" in bf16.incompatible[i]
            assert not fp16.incompatible[i].startswith(f"{gpu.slug} ({gpu.architecture}) cannot run")
        else:
            assert "expert_precision" not in bf16.incompatible[i]
    blocked = np.isin(np.asarray(grid.kind), lacking)
    assert blocked.any()
    assert not np.asarray(bf16.fits)[blocked].any()  # no Volta / Turing shape is ranked as fitting
