"""Sliding-window attention (model.sliding_window, model.sliding_window_layers; moebf26).

GPT-OSS 120B's config.json states "sliding_window": 128 and "layer_types": ["sliding_attention" if i % 2 == 0
else "full_attention" for i in range(36)] (as copied in a public repository's fixture, search index file id
71309954953; openai/gpt-oss-20b's config.json, quoted in tinygrad's test_gpt_oss.py, alternates the same way
over 24 layers): 18 of its 36 layers attend to at most the last 128 tokens. The window cuts the score and
value matmuls, the KV cache and (without flash attention) the kept score matrix of those layers; under flash
attention the saved activations are per token and do not change.
"""

import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.bytes_model import layer_activation_bytes_per_token
from procurement.sizing.params import attended_tokens, cached_tokens
from procurement.sizing.throughput import attention_forward_flops_per_token

# the shape without its window (fix43m states the window on test_moe_published's GPT_OSS_120B, the fit row as run)
from tests.procurement.sizing.test_moe_published import GPT_OSS_120B_FULL_ATTENTION as GPT_OSS_120B
from tests.procurement.sizing.test_moe_published import H100, candidate

WINDOWED = GPT_OSS_120B | {"sliding_window": 128, "sliding_window_layers": 18}


def model(shape: dict):
    return parse_workload_spec({"name": "m", "task": "pretrain", "model": shape}).model


def test_gpt_oss_attention_flops_by_hand():
    # d_attn 64 heads x 64 = 4,096. A full causal layer at 4,096 tokens: 4 x 4,096 x 2,048 = 33,554,432 FLOPs a
    # token; a 128-window layer: a query attends min(i, 128) keys, 128 - 128^2 / (2 x 4,096) = 126 on average:
    # 4 x 4,096 x 126 = 2,064,384. 18 of each: 641,138,688 (36 full layers: 1,207,959,552).
    windowed, full = model(WINDOWED), model(GPT_OSS_120B)
    assert attention_forward_flops_per_token(windowed, 4096) == pytest.approx(18 * (33_554_432 + 2_064_384))
    assert attention_forward_flops_per_token(full, 4096) == pytest.approx(36 * 33_554_432)
    # a window at least the sequence attends as a full layer does
    assert attended_tokens(model(GPT_OSS_120B | {"sliding_window": 4096}), 4096) == pytest.approx(36 * 2048)
    # decode (no mask): a windowed layer reads 128 keys of a 4,096-token context
    assert attended_tokens(windowed, 4096, causal=False) == pytest.approx(18 * 4096 + 18 * 128)


def test_gpt_oss_kv_cache_by_hand():
    # K and V of one layer: 2 x 8 KV heads x 64 = 1,024 elements, 2,048 B in bf16. One 4,096-token sequence
    # keeps 18 x 4,096 + 18 x 128 = 76,032 layer-tokens: 155,713,536 B = 0.14502 GiB (36 x 4,096 without it).
    spec = parse_workload_spec(
        {
            "name": "serve",
            "task": "inference",
            "model": WINDOWED,
            "precision": "bf16",
            "parallelism": {"gpus": 1},
            "inference": {"concurrency": 1, "context_len": 4096, "output_tokens": 1},
        }
    )
    assert cached_tokens(spec.model, 4096) == pytest.approx(76_032 / 36)
    memory = candidate(spec, H100)["memory"]
    assert memory["kv_cache_gib"] == pytest.approx(155_713_536 / 2**30, rel=1e-3)


def test_kept_scores_shrink_to_the_window():
    # Without flash attention a layer keeps its softmax output, 2 B x heads x keys a token: on average over
    # GPT-OSS's layers (18 x 4,096 + 18 x 128) / 36 = 2,112 keys instead of 4,096, 2 x 64 x 1,984 = 253,952 B less.
    full = layer_activation_bytes_per_token(model(GPT_OSS_120B), 4096, attention_scores=True)
    windowed = layer_activation_bytes_per_token(model(WINDOWED), 4096, attention_scores=True)
    assert full - windowed == pytest.approx(253_952)
    # flash attention keeps no scores: the window changes nothing saved
    assert layer_activation_bytes_per_token(model(WINDOWED), 4096, attention_scores=False) == pytest.approx(
        layer_activation_bytes_per_token(model(GPT_OSS_120B), 4096, attention_scores=False)
    )


def test_the_window_covers_every_layer_unless_told():
    # Mistral 7B v0.1's config.json windows every layer ("sliding_window": 4096)
    assert model(GPT_OSS_120B | {"sliding_window": 4096}).sliding_window_layers == 36
    assert model(GPT_OSS_120B).sliding_window_layers == 0


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"sliding_window": 128, "sliding_window_layers": 37}, "must be <= model.num_layers (36)"),
        ({"sliding_window_layers": 18}, "needs model.sliding_window"),
        ({"sliding_window": -1}, "must be >= 0"),
    ],
)
def test_bad_windows_name_their_field(extra, message):
    with pytest.raises(WorkloadSpecError) as error:
        model(GPT_OSS_120B | extra)
    assert message in str(error.value)
