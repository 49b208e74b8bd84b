"""The family an image validation case's words name: a test-side check of the explicit ImageCase.family the
accuracy table reads (moved out of procurement/sizing/accuracy.py at stop 48: no product code calls it)."""

from __future__ import annotations

# A model named in an image case's words (image_case_family, a check of the text against the explicit
# ImageCase.family): detectors and classifiers by their architecture names, every other model diffusion. Only the
# model's own name counts (the second field, before any parenthesis), not the encoders or tools it mentions.
DETECTION_WORDS = ("yolo", "detr", "r-cnn", "rcnn", "retinanet", "ssd", "fcos")
VISION_WORDS = ("vit", "deit", "resnet", "convnext", "swin", "efficientnet")


def image_case_family(inputs: str, previous: str | None) -> str:
    """The family an image case's words name (``previous``: the case before it, for a "same," row). The table
    reads ImageCase.family; this is the check that the words and the field agree."""
    text = inputs.lower()
    if text.startswith("same,") and previous is not None:
        return previous
    fields = [part.strip() for part in text.split(",")]
    first = fields[0].split()[0] if fields[0] else ""
    model = (
        fields[1]
        if len(fields) > 1 and first in {"inference", "training", "lora", "full_finetune"}
        else fields[0]
    )
    model = model.split("(")[0]
    if any(word in model for word in DETECTION_WORDS):
        return "image_detection"
    if any(word in model for word in VISION_WORDS):
        return "image_vision"
    return "image_diffusion"
