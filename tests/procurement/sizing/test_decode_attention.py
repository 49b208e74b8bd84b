"""inference.decode_attention (mmha): the field's contract and its engine term, by hand."""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.accelerators import speed_ratio
from procurement.sizing.decode_attention import sm_clock_hz, visit_seconds
from procurement.sizing.decode_attention import text as decode_attention_text
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import WorkloadSpecError
from procurement.sizing.validation import trtllm_spec


def _spec(**inference):
    raw = trtllm_spec("llama-2-70b", "fp16", 4, 64, 2048, 2048)
    raw["inference"].update(inference)
    return parse_workload_spec({"name": "s", **raw})


def test_it_defaults_to_shared_kv_and_prices_no_visits():
    spec = _spec()
    assert spec.inference.decode_attention == "shared_kv"
    assert float(visit_seconds(spec, 64.0, 1e6, 4.0, 1e12)) == 0.0


def test_it_refuses_an_unknown_value_naming_the_field():
    with pytest.raises(WorkloadSpecError, match="inference.decode_attention"):
        _spec(decode_attention="xqa")


def test_it_refuses_per_query_head_for_training_and_eager_loops():
    raw = trtllm_spec("llama-2-70b", "fp16", 4, 64, 2048, 2048)
    raw.update(task="pretrain")
    raw["inference"]["decode_attention"] = "per_query_head"
    with pytest.raises(WorkloadSpecError, match="inference.decode_attention"):
        parse_workload_spec({"name": "s", **raw})
    with pytest.raises(WorkloadSpecError, match="inference.decode_attention"):
        _spec(decode_attention="per_query_head", engine="hf_eager")


def test_the_visits_by_hand():
    # Llama 2 70B: 64 query heads over 8 KV heads (group 8); an FP16 cache of 2 bytes an element. 64 streams with
    # 1 MB of cache each over TP 4: 8 x 64 x 1e6 / 2 / 4 = 6.4e7 elements a GPU, at 9.23 an SM a clock on the
    # A100 SXM4 (108 SMs x 1,410 MHz, gpu_clocks.csv: 1.523e11 SM clocks a second) = 45.5 us.
    spec = _spec(decode_attention="per_query_head")
    a100 = sm_clock_hz(gpu_by_slug("a100-sxm4-80gb"))
    assert a100 == pytest.approx(108 * 1410e6)
    assert float(visit_seconds(spec, 64.0, 1e6, 4.0, a100)) == pytest.approx(
        8 * 64 * 1e6 / 2 / 4 / (9.23 * 108 * 1410e6)
    )
    assert float(visit_seconds(spec, 64.0, 1e6, 4.0, a100)) == pytest.approx(45.5e-6, abs=0.1e-6)


def test_an_fp8_cache_costs_the_same_an_element():
    # [MMHA050]: the threads a key come from the 16-bit compute type: half the bytes, the same elements, the same
    # seconds (the cache's bytes halve and its bytes an element halve)
    fp16 = _spec(decode_attention="per_query_head")
    raw = trtllm_spec("llama-2-70b", "fp8", 4, 64, 2048, 2048)
    raw["inference"]["decode_attention"] = "per_query_head"
    fp8 = parse_workload_spec({"name": "s", **raw})
    assert float(visit_seconds(fp8, 64.0, 0.5e6, 4.0, 1e11)) == pytest.approx(
        float(visit_seconds(fp16, 64.0, 1e6, 4.0, 1e11))
    )


def _mha_spec(precision="fp8"):
    # Llama 2 7B: 32 query heads over 32 KV heads (MHA, group 1)
    raw = trtllm_spec("llama-2-7b", precision, 1, 56, 2048, 2048)
    raw["inference"]["decode_attention"] = "per_query_head"
    return parse_workload_spec({"name": "s", **raw})


def test_an_mha_model_prices_no_visits():
    # fix51m (aud51m case 9): docs/workload-spec.md promises that an MHA model stated per_query_head changes nothing:
    # one query head a KV head walks the cache once, the one read already priced. At aud51m the same call gave
    # 32 x 1e6 / 1 / (9.23 x 1e11) = 34.7 us on an FP8 cache (1 byte an element), not 0.
    spec = _mha_spec()
    assert spec.model.num_attention_heads == spec.model.num_key_value_heads == 32
    assert float(visit_seconds(spec, 32.0, 1e6, 1.0, 1e11)) == 0.0
    assert "nothing changes" in decode_attention_text(spec, gpu_by_slug("h200-sxm-141gb"))


def test_the_speed_note_says_the_rate_is_v050s_and_a_lower_bound_for_later_releases():
    # fix51m (aud51m fix list item 1): 9.23 is set on a v0.5.0 A100 FP16 row; the v0.8.0 A100 FP16 Mistral rows imply
    # 11.3-14.1 and the Hopper FP8 ones 16.3-16.9 (aud51m's bisections), so the note names the release and the bound
    a100 = gpu_by_slug("a100-sxm4-80gb")
    fp16 = speed_ratio(_spec(decode_attention="per_query_head"), a100)[1]
    assert "v0.5.0's FP16 rate" in fp16
    assert "11.3-14.1" in fp16
    assert "lower bound" in fp16
    assert "v0.6.1+" not in fp16
    raw = trtllm_spec("llama-2-70b", "fp8", 4, 64, 2048, 2048)
    raw["inference"]["decode_attention"] = "per_query_head"
    fp8 = decode_attention_text(parse_workload_spec({"name": "s", **raw}), gpu_by_slug("h100-sxm5-80gb"))
    assert "v0.6.1+" in fp8 and "16.3-16.9" in fp8
    assert "v0.5.0" not in speed_ratio(_spec(), a100)[1]
