"""Issue 26, outside audit at stop 43 (aud43h): host43's eager-PEFT host floor (procurement/sizing/lora_host.py).

Cases of my own choosing that no test of the project had, sized the way `manage.py size` sizes them
(`size_spec_document`, calibration off). Tolerance: the issue's 15% on speed. Misses are strict xfails with the
published figure, ours, and the diagnosis.

Source:
  [SWIFT] modelscope/ms-swift @6cfbc2ec39bd98eb920f9ef1b4041e16a298d6bc docs/source_en/LLM/Benchmark.md, "Model Type &
          Max Length", LoRA: A100 (80 GB: the 72B rows use 78.76 GiB; SXM or PCIe not stated, sized here as the SXM),
          torch 2.1.1, flash_attn 2.3.4, batch 1, gradient accumulation 16, gradient checkpointing on, FlashAttention
          on, LoRA rank 8 on the DEFAULT target (Qwen-1's fused c_attn only). Training speed at max_length 512:
          qwen-1_8b-chat 9.88, qwen-7b-chat 7.43, qwen-14b-chat 5.63 samples/s. The dataset (cls-fudan-news-zh) has
          3,234 +- 2,548 tokens a sample, min 91: at 512 nearly every sample is truncated to 512, so tokens/s =
          samples/s x 512 (an upper bound; a few shorter samples would lower it by a few percent).
          Per micro-batch and layer: 1.8B 1/9.88 s / 24 = 4.22 ms, 7B 1/7.43 / 32 = 4.21 ms, 14B 1/5.63 / 40 =
          4.44 ms, embedding, loss and optimizer included: a ~4.2 ms floor a layer with ONE adapted linear a layer,
          where lora_host counts 2.82 ms for one adapter (40 forward x 2 x 31 us + 48 backward x 7 us) and 4.69 ms
          for seven.
          cls45f (after lw44's aside, test_outside_lora_width_audit_stop44.py): the run deleted every sample longer
          than max_length. ms-swift @6cfbc2ec swift/llm/utils/argument.py
          SftArguments `truncation_strategy: Literal['delete', 'truncation_left'] = 'delete'` (the benchmark's
          scripts/benchmark/test_memory_time/run_single.py does not override it); swift/llm/utils/template.py
          Template.encode `if truncation_strategy == 'delete' and len(input_ids) > self.max_length: return {}, {}`;
          swift/llm/utils/utils.py _single_map returns None for it and dataset_map drops it; sft.py reports
          get_time_info(log_history, len(train_dataset)): kept samples / train_runtime. So at 512 the rows trained only
          the 91-512-token samples of the 4,959 (mean 3,234 +- 2,548; docs Supported-models-datasets.md), and
          samples/s x 512 overstates the tokens by a factor the docs do not publish (the kept samples' mean length).
          The table then reads as one floor: 101.2 / 134.6 / 177.6 ms a sample over 24 / 32 / 40 layers = 4.22 /
          4.21 / 4.44 ms a layer, and the 1.8B's 512 and 1,024 rows are the same (9.88 / 9.90 samples/s).
          fixg45 (after aud45g), the measuring commit: the table's figures (7.43 / 5.63 ...) entered at ms-swift
          @97e4d198bbb9f2bda7188f48362f388c9ef15fa9 (2024-01-02, "Update benchmark 0101 (#271)"; the earlier
          cfcb6726 "Add benchmark" has none of them), read there: docs/source/LLM/Benchmark.md (the token
          statistics "3234.4±2547.5, min=91, max=19548"); swift/llm/utils/argument.py `truncation_strategy` default
          'delete'; swift/llm/utils/template.py `if truncation_strategy == 'delete' and len(input_ids) >
          template.max_length: return None`; swift/llm/utils/utils.py dataset_map `data = [d for d in data if d is
          not None]`; swift/llm/sft.py get_time_info(trainer.state.log_history, len(train_dataset));
          scripts/benchmark/test_memory_time/run_single.py train_dataset_sample = -1 (every row) when max_length
          <= 2048, dataset cls_fudan_news_zh, and result.jsonl (with dataset_info) appended, never committed.
"""

from __future__ import annotations

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import lora_host
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import MODELS, QWEN_1_8B, QWEN_7B, tokens_per_second
from tests.procurement.outside.test_outside_recommendations import candidate, qwen_lora_spec

RELABEL48_SWIFT_1_8B = (
    "UNEXPLAINED (relabelA48: rechecked at 7,575.8, +49.8%. (a) fails: no source counts the kernels of "
    "ms-swift's eager Qwen-1 + PEFT step (torch 2.1.1); the ~4.2 ms a layer floor is the rows' own. Best "
    "lead: one per-layer host floor of ~4.3 ms for this stack, which would need a held-out row to set). "
)


SWIFT_MODELS = {"1.8b": QWEN_1_8B, "7b": QWEN_7B, "14b": MODELS["14b"]}
SWIFT_SAMPLES_PER_SECOND_AT_512 = {"1.8b": 9.88, "7b": 7.43, "14b": 5.63}


def swift_lora_spec(model: dict, seq: int) -> dict:
    """ms-swift's benchmark run: bf16, batch 1, 16 accumulation steps, rank 8 on c_attn, full checkpointing."""
    return {
        "task": "lora",
        "model": model,
        "precision": "bf16",
        "seq_len": seq,
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "lora": {"rank": 8, "targets": ["c_attn"]},
        "parallelism": {"gpus": 1, "zero_stage": 0},
        "gradient_accumulation_steps": 16,
        "training_tokens": 1e7,
    }


SWIFT_MISSES = {
    "1.8b": (
        RELABEL48_SWIFT_1_8B
        + "ours 7,575.8 tokens/s against 5,058.6 (+49.8%; 67.6 ms a micro-batch against 101.2): the floor binds "
        "(fused: 16,775) but lora_host counts 40 forward + 48 backward kernels a layer for one adapted linear = "
        "2.82 ms, where the run shows 4.22 ms a layer, the same as ms-swift's 7B (4.21) and 14B (4.44) and as the "
        "Qwen README's all-linear rank-64 rows (4.7-5.2): the measured floor does not scale with the adapter count "
        "the way the count says (1 adapter 2.82 ms, 7 adapters 4.69 ms). Checked: Qwen-1's QWenBlock (modeling_qwen.py) "
        "is not a Llama layer: c_attn is one fused qkv linear with a bias, 5 linears a layer not 7, RMSNorm and "
        "rotary fall back to eager ops (8 and ~9 each) only when flash-attn's csrc layer_norm / rotary kernels are "
        "absent, and ms-swift's run adds its own tuner wrapper; none of these is sized, so UNEXPLAINED. cls45f, "
        "sharpened: ms-swift deleted the samples longer than 512 (truncation_strategy 'delete', module docstring), "
        "so the three rows ran short samples and read as one host floor, 4.22 / 4.21 / 4.44 ms a layer for the "
        "1.8B / 7B / 14B (the 1.8B's 512 and 1,024 rows: 9.88 / 9.90 samples/s), against lora_host's 2.82 ms for "
        "one fused-qkv adapter (0.67 of it); shorter samples do not move this row (the floor binds at any length: "
        "67.6 ms at 128 to 512 tokens). The 7B passes (-8.0%) only because the engine prices 512 tokens of compute "
        "(146.3 ms) where the run's shorter samples leave the floor: at cls45f's ~334-token mean (the 14B's own "
        "inversion, see 14b) it gives 105.0 ms (+28.2% speed). One per-layer floor of ~4.3 ms for ms-swift's eager Qwen-1 + PEFT step (torch 2.1.1) would land "
        "the three; no source counts its kernels, so UNEXPLAINED (the floor's count for this stack)"
    ),
    "14b": (
        "UNEXPLAINED (fixg45, after aud45g; cls45f had it EXPLAINED, 'bounded'): [SWIFT] qwen-14b-chat LoRA at "
        "max_length 512 on one A100: published 5.63 samples/s (177.6 ms a sample; 2,882.6 tokens/s at 512 a sample); "
        "ours 1,890.8 tokens/s (-34.4%; 270.8 ms a sample), GPU-bound in the engine. Established: the run trained "
        "shorter samples than the spec's 512. ms-swift @97e4d198b (2024-01-02, 'Update benchmark 0101 (#271)', the "
        "commit that added the table's figures) deletes every sample longer than max_length (argument.py "
        "truncation_strategy default 'delete'; template.py returns None when len(input_ids) > max_length; utils.py "
        "dataset_map drops it; sft.py reports kept samples / train_runtime; run_single.py trains every row of "
        "cls-fudan-news-zh, mean 3,234.4 +- 2,547.5 tokens, min 91), and the same table's 1,024 / 2,048 rows prove "
        "it: at full length they would need 1.15-1.37x the A100's 312 dense TFLOPS (14B 1.15 / 1.37, 7B at 2,048 "
        "1.21; 6 FLOPs a frozen matmul weight a token; the 512 row alone needs 0.74, implausible for eager PEFT, not "
        "impossible). Not sized: the kept samples' length is published nowhere (result.jsonl never committed), and "
        "the 7B row trained the same kept samples: one shared mean lands both only near 395 tokens (14B -14.8%, 7B "
        "+15.0%, both at the edge); a lognormal with the published moments keeps ~52 of the 4,959 rows at a mean of "
        "413 tokens, where the 14B reads -18.5%. At shared means of 256-512 tokens the engine's 7B / 14B "
        "sample-time ratio is 1.57-1.85 against the published 1.32 (1.25 only at 128, where both sit on lora_host's "
        "floor and read +49% / +58%), so sample length alone does not give the two rows. A competing reading fits "
        "that ratio: the 1.8B row's host floor, 101.2 / 134.6 / 177.6 ms a sample = 4.22 / 4.21 / 4.44 ms a layer "
        "(1.8B / 7B / 14B; the 1.8B's 512 and 1,024 rows equal, 9.88 / 9.90), i.e. short kept samples leave each "
        "row on a per-layer floor of 4.2-4.4 ms (a constant a layer gives the layer ratio, 40 / 32 = 1.25, within 5% "
        "of the rows' 1.32), against lora_host's 2.82 ms "
        "for one fused-qkv adapter (UNEXPLAINED, see 1.8b). Neither reading is sized from a source. A spec would "
        "need seq_len as the kept samples' mean (a field that exists; no published value) and, under the floor "
        "reading, the floor's kernel count for ms-swift's eager Qwen-1 + PEFT stack (no field). History: cls45f "
        "sized it as 'the published 177.6 ms is the engine's time at a kept mean of ~334 tokens', the 14B's own "
        "inversion (at 334 the 7B reads +28.2%); lw44: 1,890.8 (-34.4%) with the A100 LoRA row x 1.027 for d 5,120 "
        "(efficiency.measured_width_factor); aud43h: 1,841.1 (-36.1%), GPU-bound in the engine (the floor 40 x "
        "2.82 ms = 0.113 s is under the compute), c_attn-only rank 8 priced the same as all-linear rank 64 (1,837.7)"
    ),
}


@pytest.mark.parametrize(
    "size",
    [
        pytest.param(size, marks=pytest.mark.xfail(strict=True, reason=SWIFT_MISSES[size]))
        if size in SWIFT_MISSES
        else size
        for size in SWIFT_SAMPLES_PER_SECOND_AT_512
    ],
)
@pytest.mark.django_db
def test_ms_swift_qwen_lora_at_512_tokens_on_one_a100(size, bundled_catalog):
    # [SWIFT]. Passing: 7B ours 3,499.0 against 3,804.2 (-8.0%; GPU-bound, the floor 32 x 2.82 ms = 90 ms under it).
    published = SWIFT_SAMPLES_PER_SECOND_AT_512[size] * 512
    assert tokens_per_second(swift_lora_spec(SWIFT_MODELS[size], 512)) == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_no_shared_kept_length_gives_the_published_7b_over_14b_ratio(bundled_catalog):
    # fixg45 (after aud45g): the 7B and the 14B at 512 trained the same kept samples (same data set, same Qwen-1
    # tokenizer, 'delete' at @97e4d198b). [SWIFT] 7.43 / 5.63 = 1.32 samples/s. The engine's 7B / 14B sample-time
    # ratio at one shared sample length: 128 1.25 (both on lora_host's floor: 7B +49.4%, 14B +57.7%), 256 1.57,
    # 334 1.68, 395 1.78, 413 1.81, 512 1.85. A per-layer floor gives about the layer ratio (40 / 32 = 1.25): the
    # rows' own per-layer times are 4.22 / 4.21 / 4.44 ms (1.8B 24, 7B 32, 14B 40 layers), the competing reading of
    # the 14B's reason.
    def samples_per_second(size, length):
        return tokens_per_second(swift_lora_spec(SWIFT_MODELS[size], length)) / length

    published = SWIFT_SAMPLES_PER_SECOND_AT_512["7b"] / SWIFT_SAMPLES_PER_SECOND_AT_512["14b"]
    assert published == pytest.approx(1.32, abs=0.005)
    ratios = {n: samples_per_second("7b", n) / samples_per_second("14b", n) for n in (128, 256, 395, 512)}
    assert ratios[128] == pytest.approx(1.25, abs=0.01)
    assert all(ratios[n] > 1.55 for n in (256, 395, 512)) and ratios[512] == pytest.approx(1.85, abs=0.01)
    layers = {"1.8b": 24, "7b": 32, "14b": 40}
    per_layer_ms = [1e3 / SWIFT_SAMPLES_PER_SECOND_AT_512[size] / n for size, n in layers.items()]
    assert all(4.2 < ms < 4.45 for ms in per_layer_ms)


@pytest.mark.django_db
def test_the_floor_counts_one_fused_qkv_adapter_as_the_claimed_layer_minus_six_adapters(bundled_catalog):
    # By hand from lora_host's constants: all-linear 30 + 1 gate + 7 frozen + 7 x 4 = 66 forward, 35 + 2 + 7 + 7 x 6
    # = 86 backward: 66 x 2 x 31 us + 86 x 7 us = 4.694 ms (the claim's 4.69). c_attn only (qkv_fused): frozen
    # 2 + 3 = 5, one adapter: 30 + 1 + 5 + 4 = 40 and 35 + 2 + 5 + 6 = 48: 40 x 2 x 31 + 48 x 7 = 2.816 ms.
    every = parse_workload_spec(
        swift_lora_spec(QWEN_7B, 512) | {"lora": {"rank": 8, "targets": "all-linear"}}
    )
    fused_qkv = parse_workload_spec(swift_lora_spec(QWEN_7B, 512))
    assert lora_host.kernels_per_layer(every) == (66.0, 86.0)
    assert lora_host.host_seconds_per_layer(every) == pytest.approx(4.694e-3, rel=1e-3)
    assert lora_host.kernels_per_layer(fused_qkv) == (40.0, 48.0)
    assert lora_host.host_seconds_per_layer(fused_qkv) == pytest.approx(2.816e-3, rel=1e-3)


def _qlora_8b_512_on_a_4090(implementation: str) -> float:
    spec = {
        "task": "qlora",
        "model": {"preset": "llama-3-8b"},
        "precision": "bf16",
        "seq_len": 512,
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "lora": {"rank": 16, "targets": "all-linear", "implementation": implementation},
        "parallelism": {"gpus": 1, "zero_stage": 0},
        "gradient_accumulation_steps": 1,
        "training_tokens": 1e7,
    }
    report = size_spec_document(spec, ["rtx-4090"], calibrate=False)
    return candidate(report, "rtx-4090", 1)["throughput"]["training_tokens_per_second"]


@pytest.mark.django_db
def test_the_default_does_not_move_an_8b_qlora_at_512_tokens_on_a_4090(bundled_catalog):
    # Claim (4), an unsloth / axolotl-shaped run (Llama-3-8B QLoRA, all-linear rank 16, 512 tokens, micro-batch 1,
    # one RTX 4090): peft_eager (the default) and fused both 993.5 tokens/s: GPU-bound (the floor 32 x ~4.9 ms =
    # 0.16 s a micro-batch against 0.52 s of compute). Not a published figure: a check that the default leaves a
    # fused-stack user's 8B answer alone (it does move narrow models: Qwen-1.8B c_attn at 512 on an A100, 7,576
    # eager against 16,775 fused).
    assert _qlora_8b_512_on_a_4090("peft_eager") == pytest.approx(_qlora_8b_512_on_a_4090("fused"), rel=1e-6)


# --- Defect pinned (a count from source, not a published case) --------------------------------------------------
# host43 checks its Llama-layer count against the Qwen README's rows, which ran Qwen-1 (QWenBlock, its own
# modeling_qwen.py; read at alibaba/MNN @7cad2ee8 transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py, the
# HF Qwen/Qwen-1_8B file) with QwenLM/Qwen finetune.py's LoraArguments (targets c_attn, c_proj, w1, w2; c_proj
# matches attn.c_proj and mlp.c_proj: 5 adapted linears; lora_dropout 0.05) and FlashAttention 2. Counted per layer:
#   forward: RMSNorm 2 x 8 = 16 (eager unless flash-attn's csrc/layer_norm is built: then 2 x 1); rotary through
#     flash_attn.layers.rotary.apply_rotary_emb_func (imported from any flash-attn 2.x): float cast, the Triton
#     kernel, type_as = 3 each, 6 (Llama's 10); flash_attn_func at batch 1: 1; residual adds 2; silu 1 and the
#     gate multiply 1: 27 (13). Frozen linears 5 (c_attn with its bias, attn.c_proj, w1, w2, mlp.c_proj; Llama's 7).
#     Adapters 5 x 5 (PEFT Linear.forward: dropout, lora_A, lora_B, x scaling, +=; dropout is a kernel at 0.05):
#     25. Total 57 (43).
#   backward: RMSNorm 20 (2); rotary 6; attention 1; silu and multiply 3; the split's cat 1, the w1/w2 fork 1, the
#     residual forks 2; frozen input gradients 5; adapters 5 x (6 + the dropout's 1) = 35. Total 74 (56).
#   host at host43's own rates: 57 x 2 x 31 us + 74 x 7 us = 4.05 ms (fused RMSNorm: 43 x 2 x 31 + 56 x 7 = 3.06 ms)
#   against the Llama count's 4.69 ms the engine charges this spec, and the README's 4.7-5.2 ms: the count that lands
#   the rows is not the model that ran them.
QWEN1_README_LAYER_HOST_S = 57 * 2 * 31e-6 + 74 * 7e-6  # 4.052 ms


# Was a strict xfail: ours 4.694 ms a layer and micro-batch (the all-linear Llama count, 66 x 2 + 86) against 4.052
# counted for the Qwen-1 layer (+15.8%), the README rows stated as a Llama layer. Now 4.321 ms (+6.6%; 61 x 2 x 31 us
# + 77 x 7 us) because lw44 states the run as it ran (qwen_lora_spec: Qwen-1 targets c_attn, c_proj, w1, w2 and
# lora_dropout 0.05 from QwenLM/Qwen finetune.py, model.eager_layer qwen1). The README rows sized that way: 1.8B 256 /
# 512 +20.5% and 14B 256 +15.7% are strict xfails (test_outside_audit_stop43l.QWEN1_FLOOR_SHORT).
# lora48: qwen_lora_spec now states the single-GPU run's fp32 adapters under autocast (lora.adapter_dtype fp32): the
# same Qwen-1 count with those casts (PEFT's x.to(fp32) from Python, +1 forward kernel an adapter; autocast's casts of
# lora_A's input and both adapter weights, 3 a pass issued in C++ at 7 us; 4 cast gradients backward) is
# (57 + 5) x 2 x 31 us + 15 x 2 x 7 us + (74 + 20) x 7 us = 4.712 ms, against the engine's 4.980 (+5.7%). The base-dtype
# figures above are kept on the same run stated with lora.adapter_dtype base.
# fix48l (after aud48l): PEFT's x.to(fp32) is one bare op inside an already-counted forward, priced at 7 us
# (pytorch/pytorch issue #41383, optimizer_op_host_s) not at the module-carrying 31 us; the 7 us of the C++-issued
# casts is an assumption (#41383's Python-issued op, borrowed). Was 4.712 counted / 4.980 engine; now
# 57 x 2 x 31 us + (5 + 15) x 2 x 7 us + (74 + 20) x 7 us = 4.472 ms, against the engine's 4.741 (+6.0%).
QWEN1_README_FP32_LAYER_HOST_S = 57 * 2 * 31e-6 + (5 + 15) * 2 * 7e-6 + (74 + 20) * 7e-6  # 4.472 ms


@pytest.mark.django_db
def test_the_floor_for_the_readmes_qwen1_run_matches_a_qwen1_layers_count(bundled_catalog):
    document = qwen_lora_spec(QWEN_7B, 256, 1)
    base = parse_workload_spec(document | {"lora": document["lora"] | {"adapter_dtype": "base"}})
    assert lora_host.host_seconds_per_layer(base) == pytest.approx(QWEN1_README_LAYER_HOST_S, rel=0.15)
    assert lora_host.kernels_per_layer(base) == (61.0, 77.0)
    assert lora_host.host_seconds_per_layer(base) == pytest.approx(61 * 2 * 31e-6 + 77 * 7e-6, rel=1e-9)
    spec = parse_workload_spec(document)
    assert lora_host.host_seconds_per_layer(spec) == pytest.approx(QWEN1_README_FP32_LAYER_HOST_S, rel=0.15)
    assert lora_host.kernels_per_layer(spec) == (61.0, 97.0)
    assert lora_host.autocast_kernels_per_layer(spec) == 15.0
    assert lora_host.bare_op_kernels_per_layer(spec) == 20.0
    assert lora_host.host_seconds_per_layer(spec) == pytest.approx(
        61 * 2 * 31e-6 + (20 * 2 + 97) * 7e-6, rel=1e-9
    )
