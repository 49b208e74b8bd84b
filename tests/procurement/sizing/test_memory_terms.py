"""Each memory term that a mutation of memory.py left unpinned, against a hand computation.

The sums are written out so a changed operator (a * for a /, a dropped term) changes the number.
Model shapes from the bundled architectures (Meta's Llama-2-7B and Llama-3-8B config.json; DeepSeek-V3's
config_671B.json).
"""

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

GIB = 2**30


def _finetune(**fields):
    base = {"name": "x", "task": "full_finetune", "model": {"preset": "llama-2-7b"}, "training_tokens": 1e8}
    return parse_workload_spec(base | fields)


def test_zero3_gathers_the_largest_layer_on_top_of_the_shard():
    # Llama-2-7B (h 4096, I 11008, MHA): one block = 4h^2 + 3hI + 2h = 67,108,864 + 135,266,304 + 8,192
    # = 202,383,360 params, bigger than the embedding (32,000 x 4096 = 131,072,000). bf16: 404,766,720 bytes.
    spec = _finetune()
    weights_bytes = 6_738_415_616 * 2
    zero3 = memory_breakdown_scalar(spec, 8, zero_stage=3)["weights_gib"] * GIB
    assert zero3 == pytest.approx(weights_bytes / 8 + 404_766_720)
    # With TP=2 over the same 8 GPUs (DP=4) the gathered block is split by TP as well: W/8 + block/2.
    zero3_tp = memory_breakdown_scalar(spec, 8, zero_stage=3, tensor_parallel=2)["weights_gib"] * GIB
    assert zero3_tp == pytest.approx(weights_bytes / 8 + 404_766_720 / 2)
    # ZeRO-2 gathers nothing and keeps every weight.
    assert memory_breakdown_scalar(spec, 8, zero_stage=2)["weights_gib"] * GIB == pytest.approx(weights_bytes)


def test_the_busiest_pipeline_stage_holds_the_in_flight_micro_batches():
    # Full recomputation keeps 2h = 8,192 bytes per layer per token; the recomputed layer (flash, no scores)
    # is 10h (attention, MHA) + 2h + 8I (SwiGLU) + 4h (norms) = 16h + 8I = 65,536 + 88,064 = 153,600.
    # PP=4: 8 layers a stage. First stage, min(PP, GA=8) = 4 micro-batches in flight: 8 x 4 x 8,192 + 153,600
    # = 415,744; last stage: 8 x 8,192 + 153,600 + fp32 logits 4 x 32,000 = 347,136. The peak is the first:
    # 415,744 bytes/token x 4,096 tokens = 1,702,887,424 bytes.
    spec = _finetune(seq_len=4096, gradient_checkpointing="full", gradient_accumulation_steps=8)
    activations = memory_breakdown_scalar(spec, 4, pipeline_parallel=4)["activations_gib"] * GIB
    assert activations == pytest.approx(1_702_887_424)
    # With GA=2 only two micro-batches are in flight: 8 x 2 x 8,192 + 153,600 = 284,672 < last stage 347,136.
    fewer = _finetune(seq_len=4096, gradient_checkpointing="full", gradient_accumulation_steps=2)
    assert memory_breakdown_scalar(fewer, 4, pipeline_parallel=4)["activations_gib"] * GIB == pytest.approx(
        347_136 * 4096
    )


def _serve(concurrency, context, output=256, preset="llama-3.1-8b"):
    return parse_workload_spec(
        {
            "name": "s",
            "task": "inference",
            "model": {"preset": preset},
            "inference": {"concurrency": concurrency, "context_len": context, "output_tokens": output},
        }
    )


def test_prefill_activations_are_one_chunk_plus_decode_logits():
    # Llama-3-8B (h 4096, I 14336, vocab 128,256): 8h + 6I = 118,784 bytes per prefill token.
    # 16 streams x 3,840 prompt tokens exceed the 8,192-token chunk: 8,192 x 118,784 = 973,078,528,
    # plus fp32 logits for 16 decode tokens: 4 x 128,256 x 16 = 8,208,384 -> 981,286,912 bytes.
    assert memory_breakdown_scalar(_serve(16, 4096), 1)["activations_gib"] * GIB == pytest.approx(981_286_912)
    # One stream of 1,792 prompt tokens is under the chunk: 1,792 x 118,784 + 4 x 128,256 = 212,860,928 + 513,024 = 213,373,952.
    assert memory_breakdown_scalar(_serve(1, 2048), 1)["activations_gib"] * GIB == pytest.approx(213_373_952)
    # TP=2 halves the chunk's buffers, not the logits: 973,078,528 / 2 + 8,208,384.
    tp2 = memory_breakdown_scalar(_serve(16, 4096), 2, tensor_parallel=2)["activations_gib"] * GIB
    assert tp2 == pytest.approx(973_078_528 / 2 + 8_208_384)


def test_an_mla_cache_is_replicated_over_tensor_parallel_ranks():
    # DeepSeek-V3 caches one latent of kv_lora_rank + rope dim = 576 elements per layer per token (61 layers):
    # bf16 576 x 2 x 61 = 70,272 bytes per token, on every TP rank. 4 streams x 4,096 tokens = 1,151,336,448.
    spec = _serve(4, 4096, preset="deepseek-v3")
    for tp in (1, 8):
        kv = memory_breakdown_scalar(spec, 8, tensor_parallel=tp)["kv_cache_gib"] * GIB
        assert kv == pytest.approx(70_272 * 4 * 4096)


def test_gqa_kv_heads_split_until_there_are_more_ranks_than_heads():
    # Llama-3-8B: 8 KV heads, 128 KiB per token in bf16. TP=8 holds one head per rank (1/8);
    # TP=16 cannot split further: ceil(8/16) = 1 head per rank, still 1/8.
    spec = _serve(1, 4096, output=1)
    full = 131_072 * 4096
    assert memory_breakdown_scalar(spec, 8, tensor_parallel=8)["kv_cache_gib"] * GIB == pytest.approx(
        full / 8
    )
    assert memory_breakdown_scalar(spec, 16, tensor_parallel=16)["kv_cache_gib"] * GIB == pytest.approx(
        full / 8
    )


def test_quantized_decode_reads_bandwidth_equivalent_bytes():
    # gpt-fast README (A100, batch 1): Llama-2-7B int8 achieves 1069.20 of bf16's 1397.31 GB/s (0.765), int4
    # g=32 862.69 (0.617). The engine divides the stored quantized bytes by that efficiency.
    from procurement.sizing.bytes_model import state_bytes
    from procurement.sizing.throughput import decode_read_bytes

    for quantization, efficiency in (("int8", 0.765), ("int4", 0.617), ("nf4", 0.617)):
        spec = parse_workload_spec(
            {
                "name": "q",
                "task": "inference",
                "model": {"preset": "llama-2-7b"},
                "weight_quantization": quantization,
            }
        )
        stored = state_bytes(spec).weight_bytes - 32_000 * 4096 * 2  # the embedding is a row lookup, not read
        assert decode_read_bytes(spec, 1)[0] == pytest.approx(stored / efficiency)
    bf16 = parse_workload_spec({"name": "b", "task": "inference", "model": {"preset": "llama-2-7b"}})
    assert decode_read_bytes(bf16, 1)[0] == pytest.approx(6_738_415_616 * 2 - 32_000 * 4096 * 2)


def test_fp32_training_keeps_four_byte_activations():
    # bert-large (h 1024, I 4096, 16 heads, dropout, GeLU MLP), fp32, eager attention, batch 4 x 512 tokens.
    # Per layer per token, 16-bit terms doubled, 1-byte dropout masks not: attention 2 x 10h + h = 21h;
    # MLP 2 x (2h + 4I) + h = 5h + 8I; norms 2 x 4h = 8h -> 34h + 8I = 67,584; scores (2 x 4 + 1) x a x s
    # = 9 x 16 x 512 = 73,728 -> 141,312. x 24 layers + fp32 logits 4 x 30,522 = 3,513,576 bytes per token,
    # x 2,048 tokens = 7,195,803,648 bytes.
    bert = {
        "params": 335141888,
        "num_layers": 24,
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
        "vocab_size": 30522,
        "gated_mlp": False,
        "dropout": True,
    }
    spec = parse_workload_spec(
        {
            "name": "b",
            "task": "full_finetune",
            "model": bert,
            "precision": "fp32",
            "micro_batch_size": 4,
            "seq_len": 512,
            "flash_attention": False,
            "training_tokens": 1e6,
        }
    )
    assert memory_breakdown_scalar(spec, 1)["activations_gib"] * GIB == pytest.approx(7_195_803_648)
    bf16 = parse_workload_spec(
        {
            "name": "b",
            "task": "full_finetune",
            "model": bert,
            "precision": "bf16",
            "micro_batch_size": 4,
            "seq_len": 512,
            "flash_attention": False,
            "training_tokens": 1e6,
        }
    )
    # In 16 bits the same layer is Korthikanti's sbh(34 + 5as/h) with I = 4h: attention 10h + h, MLP 2h + 4I + h,
    # norms 4h = 18h + 4I = 34,816 (= 34h); scores 5 x 16 x 512 = 40,960.
    per_token = (34_816 + 40_960) * 24 + 4 * 30_522
    assert memory_breakdown_scalar(bf16, 1)["activations_gib"] * GIB == pytest.approx(per_token * 2048)


def test_fp4_weights_are_nvfp4_block_linears_and_bf16_embeddings():
    # Llama-2-7B: 6,738,415,616 params; embedding + LM head 2 x 32,000 x 4,096 = 262,144,000; norms (2 x 32 + 1) x
    # 4,096 = 266,240. NVFP4 (4 bits + one FP8 scale per 16 = 4.5 bits) on the other 6,476,005,376 linear weights:
    # 3,642,753,024 bytes; the embedding, head and norms BF16: 524,820,480; 4,167,573,504 in all (a flat 4 bits:
    # 3,369,207,808).
    spec = parse_workload_spec(
        {
            "name": "x",
            "task": "inference",
            "model": {"preset": "llama-2-7b"},
            "precision": "fp4",
            "inference": {"concurrency": 1, "context_len": 2048, "output_tokens": 128},
        }
    )
    weights = memory_breakdown_scalar(spec, 1)["weights_gib"] * GIB
    assert weights == pytest.approx(6_476_005_376 * 4.5 / 8 + 262_410_240 * 2)
