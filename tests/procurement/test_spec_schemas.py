"""The OpenAPI schema documents every field the workload-spec and TCO-study parsers accept, and no
field they would reject: the serializers in procurement/api/spec_schemas.py are documentation only, so
this test is what keeps them from drifting away from the parsers."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from procurement.api import spec_schemas as docs
from procurement.costing import tco_spec
from procurement.sizing import spec

CASES = [
    (docs.WorkloadSpecSerializer, spec._TOP_KEYS),
    (docs.WorkloadModelSerializer, spec._MODEL_KEYS),
    (docs.WorkloadLoraSerializer, spec.LORA_KEYS),
    (docs.WorkloadParallelismSerializer, spec.PARALLELISM_KEYS),
    (
        docs.WorkloadInferenceSerializer,
        spec.INFERENCE_KEYS,
    ),  # acc44: the parser's own set (quant_kernel added)
    (docs.WorkloadHostSerializer, spec._HOST_KEYS),
    (docs.WorkloadQuantizationSerializer, spec.QUANTIZATION_KEYS),  # bnb49
    (docs.WorkloadImageSerializer, spec._IMAGE_KEYS),
    (docs.TcoStudySpecSerializer, tco_spec._STUDY_FIELDS),
    (docs.TcoBuySerializer, tco_spec._BUY_FIELDS),
    (docs.TcoRentSerializer, tco_spec._RENT_FIELDS),
    (docs.TcoFinancingSerializer, tco_spec._FINANCING_FIELDS),
    (docs.TcoReservedAlternativeSerializer, tco_spec._RESERVED_FIELDS),
    (docs.TcoOfferRefSerializer, tco_spec._OFFER_FIELDS),
]


@pytest.mark.parametrize(("serializer", "accepted"), CASES, ids=lambda case: getattr(case, "__name__", ""))
def test_it_documents_exactly_the_fields_the_parser_accepts(serializer, accepted):
    assert set(serializer().fields) == set(accepted)


def test_it_documents_the_enumerations_from_the_parser():
    fields = docs.WorkloadSpecSerializer().fields
    assert set(fields["task"].choices) == set(spec.TASKS)
    assert set(fields["precision"].choices) == set(spec.PRECISIONS)
    assert set(docs.TcoRentSerializer().fields["pricing_model"].choices) == set(tco_spec.RENT_PRICING_MODELS)


def test_the_size_and_tco_operations_take_the_full_documents():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    size_body = schema["paths"]["/api/size/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    tco_body = schema["paths"]["/api/tco/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert size_body == {"$ref": "#/components/schemas/WorkloadSpec"}
    assert tco_body == {"$ref": "#/components/schemas/TcoStudySpec"}
    # Last time only task and model (workload) and currency (study) were documented.
    assert (
        len(components["WorkloadSpec"]["properties"])
        == len(spec._TOP_KEYS)
        == 41  # distill: distillation (40 -> 41); ppm: global_batch_size, global_batch_tokens (38 -> 40); fix51t: fp8_pad_inner_dim (37 -> 38); maxlen; zgrad: zero_grad; optstep: optimizer_impl, torch_version; fix50e: mixed_precision
    )  # stack26: training_stack; tt26: fp32_norm_inputs; bnb49: quantization
    assert components["TcoStudySpec"]["required"] == ["buy", "rent"]
    assert components["WorkloadSpec"]["required"] == ["model", "task"]


def test_the_weight_quantization_description_names_gptq_for_qlora_int4():
    # aud44l / fixl44: for qlora, int4 is GPTQ through AutoGPTQ's eager unpacking (qlora_dequant.py), not a second
    # bitsandbytes format; the help text read "Weight-only quantization (qlora: nf4 by default)" only.
    schema = SchemaGenerator().get_schema(request=None, public=True)
    text = schema["components"]["schemas"]["WorkloadSpec"]["properties"]["weight_quantization"]["description"]
    assert "int4 GPTQ through AutoGPTQ's eager unpacking" in text and "nf4 by default" in text
    assert not any(token in text for token in ("True", "False", "None", "[", "{"))


def test_the_generate_harness_is_documented_with_the_parsers_choices():
    # host47b: inference.generate_harness (transformers | auto_gptq)
    field = docs.WorkloadInferenceSerializer().fields["generate_harness"]
    assert set(field.choices) == set(spec.GENERATE_HARNESSES) == {"transformers", "auto_gptq"}
    # fix47h: a stated host rate ("cause not shown"), not AutoGPTQ's inference_mode + autocast wrapper
    assert "AutoGPTQ" in field.help_text and "cause not shown" in field.help_text
    assert "autocast" not in field.help_text


def test_the_qwen1_eager_layers_are_documented_with_the_parsers_choices():
    # fix47h: model.eager_layer qwen1_unfused_norm (37) and qwen1_no_flash (45)
    field = docs.WorkloadModelSerializer().fields["eager_layer"]
    assert set(field.choices) == set(spec.EAGER_LAYERS)
    assert {"qwen1_unfused_norm", "qwen1_no_flash"} <= set(field.choices)
    assert "qwen1_unfused_norm" in field.help_text and "37" in field.help_text
    assert "qwen1_no_flash" in field.help_text and "45" in field.help_text


def test_the_offload_cores_field_is_documented_bounded_as_the_parser():
    # fix51e: parallelism.offload_cpu_cores_per_rank, 1 to 512 (spec.OFFLOAD_CPU_CORES_LIMIT), default stated
    field = docs.WorkloadParallelismSerializer().fields["offload_cpu_cores_per_rank"]
    assert (field.min_value, field.max_value) == (1, spec.OFFLOAD_CPU_CORES_LIMIT) == (1, 512)
    assert "assumed" in field.help_text and "bind_cores_to_rank" in field.help_text
    pin = docs.WorkloadParallelismSerializer().fields["offload_pin_memory"].help_text
    assert "pageable" in pin and "offload_step_overhead" not in pin
