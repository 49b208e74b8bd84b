"""The once-a-step memory traffic of torch's foreach AdamW and gradient clipping on a pure-16-bit run.

A short step (a few hundred tokens a GPU) spends as long reading and writing the optimizer's state as on its
matmuls: the MFU the engine uses was fitted on steps of 10^5-10^6 tokens, where this once-a-step pass is a
fraction of a percent, so it is counted here, as llm.c's is (mfu.llm_c_step_bytes_per_token).

Counted from the release the audited runs used: torch 2.13.0 (pytorch/pytorch@cf30153c4c131c8164ee7798e5022d810682e2cb,
the git_version of the venv's torch/version.py; requirements-bench.txt pins it), where torch/optim/adamw.py line 20
`class AdamW(Adam)` passes decoupled_weight_decay=True and torch/optim/adam.py _multi_tensor_adam (line 553;
capturable False, weight_decay != 0, not amsgrad) is the implementation AdamW picks on CUDA when neither foreach
nor fused is given (adam.py line 938, _default_to_fused_or_foreach(..., use_fused=False)). The audited row's torch 2.7.1 run
(@0a179c1e) and the held-out torch 2.9.0 run (@a99942694) were not re-read at their releases; the count replaces
the earlier reading at @002d2f0bb40c (a torch ~2.2 adamw.py, its own _multi_tensor_adamw, the same sequence). In
element reads + writes
over every trainable tensor: _foreach_mul_(params, 1 - lr * wd) 2; _foreach_lerp_(exp_avgs, grads) 3;
_foreach_mul_(exp_avg_sqs, beta2) 2; _foreach_addcmul_(exp_avg_sqs, grads, grads) 3 (24 nominal with the
gradient passed twice, as aud48p's TorchDispatchMode trace of 2.13 shows; its second read of the same element is
counted once); _foreach_sqrt(exp_avg_sqs), a new tensor, 2; _foreach_div_ 2; _foreach_add_(eps) 2;
_foreach_addcdiv_(params, exp_avgs, denominators) 4 = 20. Clipping (HF Trainer's max_grad_norm 1.0, the PEFT
MetaMathQA harness's grad_norm_clip 1.0), torch/nn/utils/clip_grad.py of the same release: _foreach_norm(grads) 1
(line 95) and _foreach_mul_(grads, clip_coef) 2 (line 173) = 3. All at the parameters' 16-bit width under pure
16-bit training (params, gradients, exp_avg and exp_avg_sq in the model's dtype), at
assumptions.achieved_bandwidth_fraction of the card's bandwidth.

Scope: the FOREACH path only. Applies to language-model training with master_weights_fp32 false, optimizer adamw,
the unstated stack (training_stack other) and no optimizer offload (parallelism.offload none: ZeRO-Offload steps
the optimizer on the CPU, its time is pinned_offload.py's). Megatron, MaxText and torchtitan step fused or sharded
optimizers of their own, llm.c counts its adamw_kernel3 in its efficiency, and image runs' pure-bf16 optimizers
are per-tensor loops (image_model.optimizer_host_seconds). A FUSED AdamW (spec optimizer_impl fused, on
zero_stage 0; optstep) is charged its own count: transformers' Trainer defaults to adamw_torch_fused on torch >= 2.8 (huggingface/transformers@fd798335c275520af034c678b35e8167820c7c80
src/transformers/training_args.py: `if is_torch_greater_or_equal_than_2_8: default_optim = "adamw_torch_fused"`),
one torch._fused_adamw_ kernel (adam.py _fused_adam, line 877: param, grad, exp_avg, exp_avg_sq read, the three
states written, 7 accesses) + clipping 3 = 10, not 23. Unstated (optimizer_impl foreach), a pure-16-bit HF Trainer
run on torch >= 2.8 is charged about 2.3x its optimizer traffic. optimizer_impl holds at every zero_stage (fix50o;
aud50o): FSDP (torchtitan) steps torch's own AdamW over each rank's DTensor shard (pytorch/torchtitan PR #355:
fused over foreach +3.8% wps; PR #881 +2.24% FSDP eager), and HF Trainer + DeepSpeed without an optimizer block
wraps the client's torch AdamW; a DeepSpeed config's optimizer block builds DeepSpeed's FusedAdam (deepspeed_fused,
DEEPSPEED_FUSED_ADAM_ACCESSES).
Not checked, and NOT a mechanism boundary: fp32 master weights (master_weights_fp32 true). A foreach or per-tensor
AdamW over fp32 states is a large share of a short mixed-precision step too (aud48p: transformers' adamw_hf over
bert-large's fp32 masters on a V100, 45 ms, 21% of the published 0.2146 s fp16 AMP step), and is not counted.
Not counted either: any other optimizer's step. Adafactor prices at nothing while AdamW pays, so on short steps the
engine orders them the wrong way round (aud48p: the transformers docs' V100 pair, Adafactor / AdamW 0.898
published, 1.063 here).

Checked, not fitted, on huggingface/peft method_comparison/MetaMathQA (one L40S, Llama-3.2-3B, pure bf16, torch
AdamW, grad_norm_clip 1.0, batch 4 of ~210 tokens; run.py times each step from tic to toc, evaluations outside).
At @5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40 (torch 2.13): the full fine-tune's step
(results/full-finetuning--llama-3.2-3B-lr_0.00001.json, 2,315 tokens/s, 0.3627 s for 839.6 tokens) less the same
harness's ln_tuning step (results/ln_tuning--llama-3.2-3B-default.json, 175,104 trainable parameters, 7,959
tokens/s, 0.1055 s) less the weight-gradient GEMMs' third of the full fine-tune's FLOPs at the engine's rate
(0.0426 s) leaves 0.215 s; the count gives 23 x 2 B x 3,212,749,824 = 147.8 GB at 0.70 x 864 GB/s = 0.244 s
(+14%): the term is ~14% large on this row while the engine's own short-step compute is fast (the LoRA rows'
finding, ln_tuning's 0.1055 s against the engine's frozen-base step), and the two partly cancel. The audited row (@0a179c1e8659ab4f7df0369b9b03943cfe470ff1, 2,310 tokens/s) goes from 6,537 (+183.0%)
to 2,253 (-2.5%). No other row of the folder holds a large trainable set in 16 bits: the LoRA rows' adapters are
fp32 under a bf16 base (autocast_adapter_dtype), 18.35M parameters at r 64, ~3 ms a step; osf's 194.5M runs
its own per-step projections. No language-model case of the validation table states pure 16-bit AdamW on the
unstated stack with a speed (its pure-bf16 rows are memory rows): nothing else moves.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH
from procurement.sizing.bytes_model import saved_module_bytes, saved_module_params
from procurement.sizing.spec import WorkloadSpec

# element accesses a trainable parameter a step (module docstring): foreach AdamW 20, fused AdamW 7, clip_grad_norm_ 3
FOREACH_ADAMW_ACCESSES = 20.0
FUSED_ADAMW_ACCESSES = 7.0
CLIP_GRAD_NORM_ACCESSES = 3.0
# DeepSpeed's own FusedAdam under ZeRO (spec optimizer_impl deepspeed_fused: the config's optimizer block, type Adam /
# AdamW, without torch_adam or CPU offload: deepspeed/runtime/engine.py _configure_basic_optimizer builds
# deepspeed.ops.adam.FusedAdam), counted at deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641 in 4 B
# accesses of the rank's fp32 master partition (a 16-bit element is half of one):
# csrc/adam/multi_tensor_adam.cu AdamFunctor lines 84-87 read g, p, m, v and 120-122 write p, m, v: 7;
# runtime/zero/stage_1_and_2.py step(): the gradient norm over the bf16 averaged_gradients (scaled_global_norm ->
# get_grad_norm_direct, read 2 B) 0.5; `flat_grad_partition.to(...fp32...)` (line 2361, read 2 B, write 4 B) 1.5;
# unscale_and_clip_grads `grad.data.mul_(1. / combined_scale)` (line 2449, unconditional) 2; the bf16 copy-back
# `bit16_partitions[partition_id].data.copy_(fp32_partition.data)` (line 2386, read 4 B, write 2 B) 1.5.
# 7 + 5.5 = 12.5. (A client torch AdamW under DeepSpeed pays the same wrapper; its foreach / fused rows keep
# clip_grad_norm_'s 3 in its place, not re-priced here: fix50o.)
DEEPSPEED_FUSED_ADAM_ACCESSES = 7.0
DEEPSPEED_ZERO_WRAPPER_ACCESSES = 0.5 + 1.5 + 2.0 + 1.5


def step_accesses(spec: WorkloadSpec, zero_stage=None) -> np.ndarray:
    """Element accesses a stepped parameter, optimizer and clipping, per plan (zero_stage: per row; None: the
    spec's), by the optimizer the spec states (optimizer_impl): torch's fused AdamW 7 + clipping 3, foreach 20 + 3,
    at every zero_stage (FSDP / torchtitan steps torch's AdamW on each rank's shard; HF Trainer + DeepSpeed without
    an optimizer block wraps the client's torch AdamW); DeepSpeed's FusedAdam (deepspeed_fused, ZeRO only) 7 + its
    ZeRO wrapper's 5.5."""
    stage = np.asarray(spec.parallelism.zero_stage if zero_stage is None else zero_stage, dtype=float)
    accesses = {
        "foreach": FOREACH_ADAMW_ACCESSES + CLIP_GRAD_NORM_ACCESSES,
        "fused": FUSED_ADAMW_ACCESSES + CLIP_GRAD_NORM_ACCESSES,
        "deepspeed_fused": DEEPSPEED_FUSED_ADAM_ACCESSES + DEEPSPEED_ZERO_WRAPPER_ACCESSES,
    }[spec.optimizer_impl]
    return np.full_like(stage, accesses)


def applies(spec: WorkloadSpec) -> bool:
    """A pure-16-bit language-model training run stepping torch's foreach AdamW on the GPU on the unstated stack
    (no optimizer offload: ZeRO-Offload steps the optimizer on the CPU)."""
    return (
        spec.is_training
        and spec.parallelism.offload == "none"
        and spec.model.image_arch is None
        and not spec.master_weights_fp32
        and spec.optimizer == "adamw"
        and spec.training_stack == "other"
    )


def seconds_per_step(
    spec: WorkloadSpec, gradient_bytes, owned_share, bandwidth_bytes, zero_stage=None
) -> np.ndarray:
    """Seconds a rank spends on the optimizer's and the clipping's passes once a step: step_accesses (20 + 3, or a
    fused AdamW's 7 + 3 on zero_stage 0) of its gradient_bytes (its trainable parameters x their bytes), times
    owned_share (1 / the ZeRO ranks it steps a shard over, else 1), at the achieved share of bandwidth_bytes
    (bytes/s; inf or NaN: 0). 0 where it does not apply."""
    if not applies(spec):
        return np.zeros_like(np.asarray(gradient_bytes, dtype=float))
    bandwidth = np.asarray(bandwidth_bytes, dtype=float) * ACHIEVED_BANDWIDTH.value
    traffic = step_accesses(spec, zero_stage) * np.asarray(gradient_bytes) * owned_share
    with np.errstate(invalid="ignore", divide="ignore"):
        seconds = traffic / bandwidth
    return np.where(np.isfinite(seconds), seconds, 0.0)


def saved_module_seconds_per_step(
    spec: WorkloadSpec, owned_share, bandwidth_bytes, zero_stage=None
) -> np.ndarray:
    """The same foreach AdamW and clipping passes over lora.modules_to_save's copies (bytes_model), where the run's
    own term does not already count them (master_weights_fp32: fp32 adapters), per plan (zero_stage: per row; None:
    the spec's):
    - zero_stage 0: the HF Trainer / Accelerate autocast run whose torch AdamW steps each copy in its own dtype
      (torch/optim/adamw.py zeros_like states; the Qwen LoRA (emb) runs: QwenLM/Qwen finetune.py modules_to_save,
      transformers' default optim adamw_torch, torch 2.0's _multi_tensor_adamw), at the copy's bytes;
    - ZeRO (aud49e fix list 5): DeepSpeed steps the copies' fp32 master partition (deepspeed runtime/zero/
      stage_1_and_2.py single_partition_of_fp32_groups, `.clone().float().detach()`; the memory side is
      bytes_model.saved_module_optimizer_bytes), owned_share of them a rank, priced as seconds_per_step prices a
      ZeRO rank's step (step_accesses by optimizer_impl: a client torch AdamW 23 / fused 10, DeepSpeed's own
      FusedAdam 12.5, the rank's shard) at the master's 4 B. QwenLM/Qwen@af22d5e0 finetune_lora_ds.sh runs
      ds_config_zero2.json, whose optimizer block (AdamW) builds DeepSpeed's FusedAdam: deepspeed_fused (fix50o).
    0 where it does not apply."""
    owned = np.asarray(owned_share, dtype=float)
    zero = np.zeros_like(owned)
    copies = saved_module_params(spec)
    if not copies or applies(spec):
        return zero
    if not (
        spec.is_training
        and spec.parallelism.offload == "none"
        and spec.model.image_arch is None
        and spec.optimizer == "adamw"
        and spec.training_stack == "other"
    ):
        return zero
    stage = np.asarray(spec.parallelism.zero_stage if zero_stage is None else zero_stage, dtype=float)
    element = np.where(stage >= 1, 4.0, saved_module_bytes(spec))
    bandwidth = np.asarray(bandwidth_bytes, dtype=float) * ACHIEVED_BANDWIDTH.value
    traffic = step_accesses(spec, stage) * copies * element * owned
    with np.errstate(invalid="ignore", divide="ignore"):
        seconds = traffic / bandwidth
    return np.where(np.isfinite(seconds), seconds, 0.0)
