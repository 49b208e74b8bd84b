"""aud50q (stop 50): outside audit of qwenmem's `cross_entropy: shifted_autocast` (12 B x V a token) on published
memory that no test of the project had and qwenmem did not use. Bar: LLM memory 10%.

Sources (each grepped in tests/ first: none of these memory figures was tested):
[QWEN-VL] QwenLM/Qwen-VL @0f31930 (2023-10-07, "fix single-gpu qlora, and add profiling") README.md "Profiling of
  Memory and Speed": one A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, batch 1, accumulation 8, each sample one image,
  row "LoRA" (later "LoRA (Chat)"): 23.3G / 23.6G / 25.1G / 27.3G at 384 / 512 / 1,024 / 2,048 tokens. The run is
  finetune/finetune_lora_single_gpu.sh at that commit: `--bf16 True --fix_vit True --gradient_checkpointing
  --use_lora`, no --deepspeed, so HF Trainer's torch autocast, the same as the Qwen README's single-GPU LoRA.
  finetune.py there: lora_r 64, targets c_attn / attn.c_proj / w1 / w2 (qwen_lora_spec's). The LLM is Qwen-7B
  (V 151,936) with Qwen-1's QWenLMHeadModel loss (bf16 lm_logits, `lm_logits[..., :-1, :].contiguous()`,
  CrossEntropyLoss, no upcast); the frozen ViT-bigG and its 256 image tokens are the same at every length, so
  only the growth with length is compared (the weights, the ViT and the fixed terms cancel).
[SWIFT] modelscope/ms-swift @6cfbc2ec docs/source_en/LLM/Benchmark.md "Model Type & Max Length", LoRA, "GPU Memory
  (GiB)": qwen-1_8b-chat 6.99 / 10.71 / 16.35 / 23.80 / 37.03, qwen-7b-chat 18.01 / 21.73 / 27.74 / 35.31 /
  48.41, qwen-14b-chat 30.14 / 34.43 / 40.14 / 47.95 / 60.74, yi-6b-chat 13.72 / 15.44 / 16.95 / 28.25 / 43.81
  at max_length 512 / 1,024 / 2,048 / 4,096 / 8,192 (A100, torch 2.1.1, flash_attn 2.3.4, batch 1, rank 8 on
  c_attn, gradient checkpointing). Measured at @97e4d198 (the table's commit): swift/trainers/trainers.py line 47
  `torch.cuda.max_memory_reserved(i)`; swift/llm/utils/argument.py dtype 'AUTO' (bf16) and truncation_strategy
  'delete' (the samples are 91 to max_length tokens, 3,234 +- 2,548); compute_loss calls the HF Trainer's (the
  model's own loss under accelerate's autocast) and argmaxes outputs.logits for its accuracy.
[QWEN-Q] QwenLM/Qwen @e8e15962 README.md "Profiling of Memory and Speed", rows "1.8B | Q-LoRA" 5.8G / 6.0G / 6.6G /
  7.8G / 10.2G / 15.8G and "7B | Q-LoRA" 11.5G / 11.5G / 12.3G / 13.9G / 16.9G / 23.5G at 256 ... 8,192 tokens;
  finetune/finetune_qlora_single_gpu.sh there: `--fp16 True`, `--deepspeed finetune/ds_config_zero2.json`
  (DeepSpeed's fp16 engine, no autocast: accelerate does not wrap the forward under DeepSpeed).
[TORCH] PyTorch 2.0 docs amp.rst "CUDA Ops that can autocast to float32": cross_entropy, log_softmax, nll_loss;
  derivatives.yaml `_log_softmax`: its backward reads `result` only; torch.utils.checkpoint (reentrant, Qwen-1's
  `torch.utils.checkpoint.checkpoint(create_custom_forward(block), ...)`) recomputes a block inside its backward
  node, which the engine reaches only after the loss's nodes ran and released their saved tensors.
"""

from __future__ import annotations

import pytest

from procurement.sizing import memory as memory_module
from procurement.sizing.bytes_model import state_bytes
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43h import SWIFT_MODELS, swift_lora_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

GIB = 2.0**30
LLM_MEMORY = 0.10


def _total(spec: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)["total_per_gpu_gib"]


# --- 1. Qwen-VL-Chat LoRA on one A100: the memory the run adds with length [QWEN-VL] -------------------------------
QWEN_VL_LORA = {384: 23.3, 512: 23.6, 1024: 25.1, 2048: 27.3}
# Ours, growth to 2,048 tokens (GiB), shifted_autocast / the default fp32_softmax against published:
#   from 384: 3.64 / 1.67 vs 4.0 (-8.9% / -58.4%); from 512: 3.36 / 1.54 vs 3.7 (-9.1% / -58.5%);
#   from 1,024: 2.24 / 1.03 vs 2.2 (+1.9% / -53.4%).
QWEN_VL_GROWTH = {384: 3.64, 512: 3.36, 1024: 2.24}


@pytest.mark.parametrize("start", sorted(QWEN_VL_GROWTH))
def test_qwen_vl_lora_growth_with_length_lands_with_the_12_byte_loss(start):
    def ours(seq, **fields):
        return _total(qwen_lora_spec(MODELS["7b"], seq, 1) | fields)

    published = QWEN_VL_LORA[2048] - QWEN_VL_LORA[start]
    growth = ours(2048) - ours(start)
    assert growth == pytest.approx(QWEN_VL_GROWTH[start], abs=0.01)
    assert growth == pytest.approx(published, rel=LLM_MEMORY)
    # the default (4 B x V) cannot: it discriminates the loss count
    default = ours(2048, cross_entropy="fp32_softmax") - ours(start, cross_entropy="fp32_softmax")
    assert default < 0.5 * published


# --- 2. ms-swift's Qwen-1 chat LoRA table [SWIFT] -----------------------------------------------------------------
SWIFT_LENGTHS = (512, 1024, 2048, 4096, 8192)
SWIFT_MEMORY = {
    "1.8b": (6.99, 10.71, 16.35, 23.80, 37.03),
    "7b": (18.01, 21.73, 27.74, 35.31, 48.41),
    "14b": (30.14, 34.43, 40.14, 47.95, 60.74),
}
YI_6B_CHAT = (13.72, 15.44, 16.95, 28.25, 43.81)  # V 64,000 (Yi-6B config.json), 'huggingface' loss (Llama)
# Ours (shifted_autocast stated, GiB): filled by the run below
SWIFT_OURS = {
    "1.8b": (5.21, 6.20, 8.19, 12.16, 20.10),
    "7b": (16.87, 17.98, 20.19, 24.61, 33.46),
    "14b": (29.61, 30.80, 33.19, 37.98, 47.54),
}
SWIFT_MISS = (
    "UNEXPLAINED (aud50q): [SWIFT] {size} chat LoRA at max_length {seq}: {pub} GiB (max_memory_reserved), ours "
    "{ours:.2f} GiB ({gap:+.1%}) with cross_entropy shifted_autocast stated (ms-swift runs Qwen-1's own loss under "
    "accelerate's autocast, as the Qwen README's single-GPU run). The table grows 30.0 / 30.4 / 30.6 GiB from 512 "
    "to 8,192 tokens for the 1.8B / 7B / 14B and 30.1 for yi-6b-chat (V 64,000, 2.4x smaller): a term of ~4 MB a "
    "token that does not scale with the vocabulary nor the model, so not the loss chain (ours grows 14.9 / 16.6 / "
    "17.9). Lead: max_memory_reserved over 'delete'-truncated samples of every length up to max_length (the caching "
    "allocator keeps blocks of each size seen), unsized; a per-step allocated peak from the run would settle it. "
    "swiftmem (test_outside_swift_reserved_swiftmem.py), settings read at ms-swift @97e4d198b: the spec states the run "
    "(flash attention on, checkpointing on, c_attn, bf16, batch 1, --max_length does not pad); past the weights the "
    "rows hold 49-55 B x V a token at 512 / 1,024 against the chain's 12-16, within 1.2 GiB across the three models "
    "(0.73 at 8,192 where the kept layer inputs differ by 2.38). A model of torch's caching allocator on the located "
    "vocabulary chain over 'delete'-kept samples in random order leaves 0.6-3.3 GiB cached past the allocated peak "
    "at 512 and 10.7-24.6 at 2,048 over five orders: the right size and shape, but it turns on the unpublished "
    "sample lengths and order and overshoots the 2,048-8,192 rows, so not sized to a row."
)


def _swift_spec(size: str, seq: int) -> dict:
    spec = swift_lora_spec(SWIFT_MODELS[size], seq) | {
        "cross_entropy": "shifted_autocast",
        "torch_version": "2.1.1",
    }
    return spec | {"model": spec["model"] | {"eager_layer": "qwen1"}}


def _swift_params():
    out = []
    for size, published in SWIFT_MEMORY.items():
        for i, seq in enumerate(SWIFT_LENGTHS):
            ours, pub = SWIFT_OURS[size][i], published[i]
            marks = ()
            if abs(ours / pub - 1) >= LLM_MEMORY:
                reason = SWIFT_MISS.format(size=size, seq=seq, pub=pub, ours=ours, gap=ours / pub - 1)
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            out.append(pytest.param(size, seq, pub, ours, marks=marks, id=f"{size}-{seq}"))
    return out


@pytest.mark.parametrize(("size", "seq", "published", "ours"), _swift_params())
def test_ms_swift_qwen_chat_lora_memory(size, seq, published, ours):
    total = _total(_swift_spec(size, seq))
    assert total == pytest.approx(ours, abs=0.01)
    assert total == pytest.approx(published, rel=LLM_MEMORY)


def test_ms_swift_growth_does_not_scale_with_the_vocabulary():
    """[SWIFT] why the table cannot test a per-token loss count: from 512 to 8,192 tokens every model grows by
    the same ~30 GiB, Yi-6B (V 64,000) as much as Qwen (V 151,936); a loss chain of k B x V would grow 2.4x less
    on Yi. Ours (shifted_autocast) grows 14.9 / 16.6 / 17.9 GiB for the Qwen rows."""
    growth = {size: rows[-1] - rows[0] for size, rows in SWIFT_MEMORY.items()} | {
        "yi": YI_6B_CHAT[-1] - YI_6B_CHAT[0]
    }
    assert max(growth.values()) / min(growth.values()) < 1.02
    for size in SWIFT_MEMORY:
        ours = _total(_swift_spec(size, 8192)) - _total(_swift_spec(size, 512))
        assert ours < 0.6 * growth[size]


# --- 3. The Qwen README's Q-LoRA memory rows [QWEN-Q] (DeepSpeed fp16, no autocast: shifted_16bit, fix50q) -------
QWEN_QLORA_MEMORY = {
    "1.8b": (5.8, 6.0, 6.6, 7.8, 10.2, 15.8),
    "7b": (11.5, 11.5, 12.3, 13.9, 16.9, 23.5),
}
QWEN_LENGTHS = (256, 512, 1024, 2048, 4096, 8192)
# fix50q: qwen_lora_spec states cross_entropy shifted_16bit (6 B x V) on Q-LoRA (it was the default fp32_softmax,
# 4 B x V); fix50q2 keeps the loss and the recomputed block summed: 1.8b 3.58 / 3.78 / 4.17 / 4.95 / 6.52 / 9.66
# -> below (-36.9 / -34.5 / -32.2 / -28.7 / -24.1 / -23.5%); 7b 9.29 / 9.55 / 10.06 / 11.08 / 13.13 / 17.23 ->
# below (-18.6 / -15.7 / -15.7 / -15.9 / -15.1 / -16.3%). Growth 512 -> 8,192: 1.8b 5.88 -> 8.16 vs 9.8 G; 7b
# 7.69 -> 9.97 vs 12.0 G.
# qwenq (stop 51): the run is DeepSpeed ZeRO-2 on one GPU (finetune_qlora_single_gpu.sh --deepspeed
# finetune/ds_config_zero2.json: reduce_bucket_size 2e8, overlap_comm true), stated so in qwen_lora_spec; DeepSpeed's
# two fp16 gradient buckets (stage_1_and_2.py@v0.12.3 lines 1934-1947) are 2 x 2e8 x 2 B = 0.745 GiB, 0.78 with the
# flat fragmentation fraction, at every length: 1.8b 3.66 / 3.93 / 4.48 / 5.56 / 7.74 / 12.09 -> below (-36.9 /
# -34.5 / -32.1 / -28.7 / -24.1 / -23.5% -> -23.4 / -21.4 / -20.3 / -18.6 / -16.5 / -18.5%); 7b 9.37 / 9.70 / 10.36 /
# 11.69 / 14.35 / 19.67 -> below (-18.5 / -15.7 / -15.8 / -15.9 / -15.1 / -16.3% -> -11.7 / -8.9 / -9.4 / -10.3 /
# -10.5 / -13.0%): 7b 512 and 1k pass (markers removed). Growth unchanged (a fixed term).
QWEN_QLORA_OURS = {
    "1.8b": (4.44, 4.71, 5.26, 6.35, 8.52, 12.87),
    "7b": (10.15, 10.48, 11.15, 12.47, 15.13, 20.45),
}
QLORA_MISS = (
    "UNEXPLAINED (aud50q; fix50q; fix50q2; qwenq): [QWEN-Q] {size} Q-LoRA at {seq} tokens: {pub} G, ours {ours:.2f} "
    "GiB ({gap:+.1%}). Stated as run: the loss (cross_entropy shifted_16bit: DeepSpeed's fp16 engine, no autocast, "
    "6 B x V) and, from qwenq, DeepSpeed ZeRO-2's two fp16 gradient buckets (parallelism.reduce_bucket_size 2e8, "
    "overlap_comm true, ds_config_zero2.json; stage_1_and_2.py@v0.12.3 backward: 0.745 GiB at every length), which "
    "closed 0.78 of the 2.1 GiB both sizes lacked at 256 tokens. Left: 1.36 / 1.35 GiB at 256 tokens for the 1.8B "
    "/ 7B, the same for both sizes (a model-independent fixed term: the CUDA context and NCCL buffers if the README "
    "read nvidia-smi, unsized: the README names no tool), and 1.6-2.0 GiB of the 512-to-8,192 growth (ours 8.16 / "
    "9.97 against 9.8 / 12.0 G), a per-token term beyond the loss chain, as the LoRA rows show. qlfix: the lead of "
    "one more 16-bit copy of the embedding and LM head (1.16 / 2.32 GiB for the 1.8B / 7B: peft's "
    "prepare_model_for_kbit_training casting them to fp32) is refuted from code: peft v0.5.0 skips that cast when "
    "model.quantization_method is 'gptq' (src/peft/utils/other.py lines 92-101), the attribute without which its "
    "LoRA could not have wrapped the GPTQ QuantLinear layers at all (get_quantization_config, other.py 331-341; "
    "tuners/lora.py 341 and 446), and DeepSpeed's fp16 engine casts the module to fp16 anyway (engine.py "
    "_configure_distributed_model, self.module.half()); finetune.py sets modules_to_save None under q_lora from "
    "75cc160 (2023-10-07), before these rows. Charged anyway it would pass 1.8B 256-4k but leave its 8k -10.8% and "
    "push the passing 7B 512 / 1k out (+12.3 / +10.4%). 0% of the fixed term is sized by a mechanism."
)


def _qlora_params():
    out = []
    for size, published in QWEN_QLORA_MEMORY.items():
        for i, seq in enumerate(QWEN_LENGTHS):
            ours, pub = QWEN_QLORA_OURS[size][i], published[i]
            marks = ()
            if abs(ours / pub - 1) >= LLM_MEMORY:
                reason = QLORA_MISS.format(size=size, seq=seq, pub=pub, ours=ours, gap=ours / pub - 1)
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            out.append(pytest.param(size, seq, pub, ours, marks=marks, id=f"{size}-{seq}"))
    return out


@pytest.mark.parametrize(("size", "seq", "published", "ours"), _qlora_params())
def test_qwen_readme_qlora_memory(size, seq, published, ours):
    spec = qwen_lora_spec(MODELS[size], seq, 1, qlora=True) | {"task": "qlora", "weight_quantization": "int4"}
    total = _total(spec)
    assert total == pytest.approx(ours, abs=0.01)
    assert total == pytest.approx(published, rel=LLM_MEMORY)


def test_it_keeps_a_gptq_qlora_runs_embedding_and_head_16_bit():
    """qlfix: the README's Q-LoRA keeps Qwen-7B's wte, lm_head and norms in fp16, not fp32. peft v0.5.0's
    prepare_model_for_kbit_training (src/peft/utils/other.py lines 92-101) casts them to fp32 only `if not
    is_gptq_quantized` (model.quantization_method == "gptq", the attribute peft's LoRA also needs to wrap a GPTQ
    QuantLinear: get_quantization_config, other.py 331-341), and DeepSpeed's fp16 engine casts the module to fp16
    (engine.py _configure_distributed_model, `self.module.half()`). By hand, the 7B's resident weights (GiB):
    block linears 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008) = 6,476,005,376 x 4.25 bits / 8 = 3,440,377,856 B;
    embedding + head + 65 norms 2 x 151,936 x 4,096 + 65 x 4,096 = 1,244,925,952 x 2 B = 2,489,851,904 B; adapters
    32 x 64 x (9 x 4,096 + 3 x 11,008) = 143,130,624 x 4 B (the fp32 master the engine charges as the weight) =
    572,522,496 B; sum 6,502,752,256 B = 6.0562 GiB. fp32 embedding and head would add 2,489,851,904 B (2.32 GiB)."""
    spec = qwen_lora_spec(MODELS["7b"], 256, 1, qlora=True) | {"task": "qlora", "weight_quantization": "int4"}
    weights = memory_breakdown_scalar(parse_workload_spec(spec), 1)["weights_gib"]
    assert weights == pytest.approx(6_502_752_256 / GIB, rel=1e-6)


# --- 4. The loss chain and the recomputed block are not alive together [TORCH] ----------------------------------
LOSS_RECOMPUTE_MISS = (
    "UNEXPLAINED (aud50q; fix50q2): the code order (torch 2.0 checkpoint, reentrant and non-reentrant) frees the "
    "loss's tensors before the last block is recomputed, so max(loss, block) is the code's peak; charging it "
    "(fix50q, stop 50) moved every published figure it touched short (Qwen 7B 4k -9.4 -> -11.5%, Qwen-VL growth "
    "-8.9 -> -15.2%, Unsloth per-token -5.4 -> -12.6%, torchtitan 8B CP -4.1 -> -10.5%) and the validation median "
    "memory error 9.63 -> 10.70%: something block-sized the product does not count stays alive during the loss's "
    "backward; lead: a torch memory snapshot at the loss backward / last-block recompute. qwenq (stop 51), the "
    "timeline at torch 2.0 re-read: the allocated peak is the max (nll_loss's and log_softmax's fp32 gradients, "
    "4 + 4 B x V beside the saved 4, are released before the last CheckpointFunction.backward recomputes), but "
    "a reserved reading is not: the caching allocator serves a request from one cached block or a new cudaMalloc "
    "and never joins blocks of two segments (CUDACachingAllocator.cpp header: 'Large requests will use the "
    "smallest available free block or allocate a new block'), so after the forward frees the bf16 logits (2), "
    "their shifted copy (2) and the fp32 cast (4), nll_loss's gradient reuses the cast's segment and "
    "log_softmax's gradient finds only the two 2 B x V segments: a new 4 B x V segment, 16 B x V reserved, in "
    "which the block's recompute then fits. Sized on [QWEN] (kept + 16 B x V in place of kept + block + 12, x 1.05, "
    "by hand): 14B -6.0 .. +1.6% at every length, 7B -7.4 .. +8.0%, the 1.8B 1k / 2k / 4k -9.9 / -8.2 / -6.4% but "
    "its 8k +16.0% and 256 / 512 -15.4 / -14.9% (15 of 18 rows against 13): not shipped "
    "(the README names no tool; a reserved reading would be a spec field, memory_reading, not built)"
)


@pytest.mark.xfail(strict=True, reason=LOSS_RECOMPUTE_MISS)
@pytest.mark.parametrize("size", ["1.8b", "7b", "14b"])
def test_the_loss_chain_and_the_recomputed_block_do_not_add(size):
    seq = 8192
    spec = parse_workload_spec(qwen_lora_spec(MODELS[size], seq, 1))
    state = state_bytes(spec)
    kept, recompute = memory_module._kept_per_layer(spec, state, True, 1)
    expected = seq * (spec.model.num_layers * kept + max(state.logits_bytes_per_token, recompute))
    activations = memory_breakdown_scalar(spec, 1)["activations_gib"] * GIB
    assert activations == pytest.approx(expected, rel=1e-6)


# --- 5. The field's validation ---------------------------------------------------------------------------------
def test_a_bad_cross_entropy_value_names_the_field_and_the_new_value():
    with pytest.raises(WorkloadSpecError) as err:
        parse_workload_spec(qwen_lora_spec(MODELS["7b"], 1024, 1) | {"cross_entropy": "shifted"})
    assert "cross_entropy" in str(err.value) and "shifted_autocast" in str(err.value)


def test_cross_entropy_on_an_inference_spec_is_refused_naming_the_field():
    """fix50q (aud50q item 7's note): an inference run computes no loss; the field was accepted without a word."""
    serve = {
        "task": "inference",
        "model": MODELS["7b"],
        "precision": "bf16",
        "cross_entropy": "shifted_autocast",
    }
    with pytest.raises(WorkloadSpecError) as err:
        parse_workload_spec(serve)
    assert "cross_entropy" in str(err.value) and "training task" in str(err.value)


def test_the_api_schema_lists_the_value():
    from procurement.api.spec_schemas import WorkloadSpecSerializer

    field = WorkloadSpecSerializer().fields["cross_entropy"]
    assert "shifted_autocast" in field.choices
    assert "shifted_autocast" in field.help_text
