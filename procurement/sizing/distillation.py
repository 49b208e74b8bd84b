"""Knowledge distillation in a training spec (the spec's `distillation` section): what a teacher adds to the
student's run. Two modes, as distillation runs are built:

- online: the teacher runs a forward per student token on the same GPUs (Hugging Face transformers'
  research_projects/distillation/distiller.py computes `t_logits` under torch.no_grad() in each step; Sanh et al.
  2019, DistilBERT, trained that way). Its weights sit in memory at its precision, its forward costs 2 FLOPs a
  matmul weight plus its causal attention a token (no backward, no recomputation), and its logits (micro-batch x
  seq x vocab) are held for the loss beside a fp32 softmax of them. Under torch.no_grad() the forward keeps no
  activations for backward and no KV cache: one layer's working set lives at a time.
- precomputed: the teacher's top-k logits a token were written beforehand and are read from storage: no teacher
  compute or weights in the run, k (value, index) pairs a token in memory and on disk. The one-off pass that wrote
  them is priced as the teacher's own inference forward only where `include_logit_generation` is true.

The temperature scales the logits before the softmax and costs nothing; it is accepted and not priced.
Plain Python; no ORM.
"""

from __future__ import annotations

from dataclasses import dataclass

from procurement.sizing.model_spec import ModelSpec

DISTILLATION_MODES = ("online", "precomputed")
TEACHER_PRECISIONS = ("fp32", "fp16", "bf16", "fp8")
TEACHER_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}
DISTILLATION_KEYS = frozenset(
    {"teacher", "mode", "teacher_precision", "top_k", "temperature", "include_logit_generation"}
)
MAX_TOP_K = 1_000_000  # no vocabulary is larger; a bound, not a model
# A stored top-k entry: a fp32 logit and an int32 token index (assumed: the layout of a stored sparse logit,
# e.g. torch.topk's values and indices cast to fp32 / int32; 16-bit values would halve it).
TOP_K_ENTRY_BYTES = 8.0
# The loss in online mode holds the teacher's logits at its precision and one fp32 softmax of them over the
# vocabulary (F.softmax(t_logits / T) in distiller.py; fp32 under autocast's softmax rule). Assumed: no chunked
# loss (a chunked KL, e.g. Liger's fused distillation loss, would hold a chunk, not the whole batch).
TEACHER_SOFTMAX_BYTES = 4.0


@dataclass(frozen=True)
class DistillationSpec:
    teacher: ModelSpec
    mode: str = "online"
    teacher_precision: str = "bf16"
    top_k: int | None = None  # precomputed mode: logits stored a token (None: the whole vocabulary)
    temperature: float = 1.0  # not priced
    include_logit_generation: bool = False  # precomputed mode: price the one-off teacher pass

    @property
    def online(self) -> bool:
        return self.mode == "online"


def teacher_weight_bytes(spec, tensor_parallel) -> float:
    """The teacher's weights on a GPU in online mode: its parameters at teacher_precision, split by tensor
    parallelism like the student's linears (assumed: the teacher runs with the student's TP degree and is not
    sharded by ZeRO / FSDP, a frozen module outside the optimizer's groups); 0 otherwise."""
    distill = getattr(spec, "distillation", None)
    if distill is None or not distill.online:
        return 0.0 * tensor_parallel
    return distill.teacher.params * TEACHER_BYTES[distill.teacher_precision] / tensor_parallel


def teacher_activation_bytes(spec, tensor_parallel) -> float:
    """What distillation holds beside the student's activations on a GPU. Online: the teacher's logits
    (micro-batch x seq x vocab at teacher_precision) and a fp32 softmax of them for the loss, plus one layer's
    forward working set under no_grad (its input, q / k / v / attention output 4 x hidden and the MLP's
    gate / up / act 3 x intermediate at teacher_precision; no KV cache, nothing kept for backward). Precomputed:
    the batch's top-k (value, index) pairs and the softmax over them. The vocabulary-sized terms are split by TP
    as the student's vocab-parallel head is."""
    distill = getattr(spec, "distillation", None)
    if distill is None:
        return 0.0 * tensor_parallel
    tokens = spec.micro_batch_size * spec.seq_len
    if not distill.online:
        k = distill.top_k or distill.teacher.vocab_size
        return tokens * k * (TOP_K_ENTRY_BYTES + TEACHER_SOFTMAX_BYTES) + 0.0 * tensor_parallel
    teacher = distill.teacher
    width = TEACHER_BYTES[distill.teacher_precision]
    logits = tokens * teacher.vocab_size * (width + TEACHER_SOFTMAX_BYTES)
    layer = tokens * (5 * teacher.hidden_size + 3 * teacher.intermediate_size) * width
    return (logits + layer) / tensor_parallel


def stored_logit_bytes(spec) -> float:
    """Precomputed mode: the bytes the stored top-k logits take for the run's training tokens (0 otherwise)."""
    distill = getattr(spec, "distillation", None)
    if distill is None or distill.online or not spec.training_tokens:
        return 0.0
    k = distill.top_k or distill.teacher.vocab_size
    return spec.training_tokens * k * TOP_K_ENTRY_BYTES
