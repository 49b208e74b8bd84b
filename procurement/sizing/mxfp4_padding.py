"""The widths vLLM allocates an MXFP4 checkpoint's routed experts at, per card and per tensor-parallel rank.

vLLM's Mxfp4MoEMethod.create_weights (vllm-project/vllm @afdb4a4f vllm/model_executor/layers/quantization/mxfp4.py)
rounds each expert's hidden width and its per-rank intermediate width (intermediate_size_per_partition, the
FusedMoE's intermediate_size // tp) up to its MoE backend's multiple and allocates w13 [E, 2 x I_pad, H_pad / 2],
w2 [E, H_pad, I_pad / 2] and their scales at those widths; the padded shapes stay after loading. The backend by card
(get_mxfp4_backend, FlashInfer installed, no VLLM_* override):
- capability 10.0 (B200, GB200): SM100_FI_MXFP4_BF16, FlashInfer TRT-LLM: hidden and intermediate to 256;
- capability 9.x (Hopper) and 12.x (consumer Blackwell, GB202): the Triton backend: intermediate to 64 only;
- capability 8.x (Ampere, Ada: `get_device_capability()[0] < 9`): Marlin, "n % 256 == 0 and k % 128 == 0":
  hidden to 256, intermediate to 128;
- below 8.0 (Mxfp4Config.get_min_capability 80) and other vendors: no multiple read here (1, 1).
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.spec import WorkloadSpec

NO_PADDING = (1, 1)
SM100_TRTLLM_MULTIPLES = (256, 256)
HOPPER_TRITON_MULTIPLES = (1, 64)
MARLIN_MULTIPLES = (256, 128)


def mxfp4_backend_multiples(gpu) -> tuple[int, int]:
    """(hidden multiple, per-rank intermediate multiple) of the card's MXFP4 MoE backend (module docstring)."""
    generation = gpu.generation or 0
    if generation == 100:
        return HOPPER_TRITON_MULTIPLES if gpu.is_consumer else SM100_TRTLLM_MULTIPLES
    if generation == 90:
        return HOPPER_TRITON_MULTIPLES
    if 80 <= generation < 90:
        return MARLIN_MULTIPLES
    return NO_PADDING


def _round_up(width: np.ndarray, multiple: np.ndarray) -> np.ndarray:
    return np.ceil(width / multiple) * multiple


def mxfp4_padded_expert_factor(spec: WorkloadSpec, tensor_parallel, multiples) -> np.ndarray:
    """Per row: a rank's padded routed-expert bytes over its unpadded share (1 where no multiple is given).
    gpt-oss-120b (H = I = 2,880) on GB200: TP 1 3,072^2 / 2,880^2 = 1.1378; TP 2 3,072 x 1,536 / (2,880 x 1,440) =
    1.1378; TP 8 3,072 x 512 / (2,880 x 360) = 1.5170."""
    tp = np.asarray(tensor_parallel, dtype=float)
    if multiples is None:
        return np.ones_like(tp)
    model = spec.model
    hidden_multiple, intermediate_multiple = (np.asarray(m, dtype=float) for m in multiples)
    per_rank = np.ceil(model.moe_intermediate_size / tp)
    hidden = _round_up(np.asarray(float(model.hidden_size)), hidden_multiple)
    intermediate = _round_up(per_rank, intermediate_multiple)
    return hidden * intermediate / (model.hidden_size * model.moe_intermediate_size / tp)


def kind_multiples(gpus, kind_index) -> tuple[np.ndarray, np.ndarray]:
    """The multiples of each row's card, rows indexing ``gpus`` by ``kind_index``."""
    table = np.array([mxfp4_backend_multiples(gpu) for gpu in gpus], dtype=float).reshape(-1, 2)
    rows = table[np.asarray(kind_index, dtype=int)]
    return rows[..., 0], rows[..., 1]
