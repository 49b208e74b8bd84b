"""Every example in docs/workload-spec.md parses and sizes."""

import re
from pathlib import Path

import pytest
import yaml

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload

DOC = Path(__file__).resolve().parents[3] / "docs" / "workload-spec.md"
EXAMPLES = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_it_has_an_example_for_every_task_kind():
    tasks = {yaml.safe_load(text)["task"] for text in EXAMPLES}
    presets = {yaml.safe_load(text)["model"].get("preset") for text in EXAMPLES}
    assert tasks == {"pretrain", "full_finetune", "lora", "qlora", "inference"}
    assert {"yolo-small", "sd15", "sdxl", "flux.1-dev", "yolov8s", "sdxl-tier"} <= presets


@pytest.mark.parametrize("text", EXAMPLES)
def test_it_sizes_each_documented_example(text):
    report = size_workload(parse_workload_spec(yaml.safe_load(text)), [gpu_by_slug("h100-sxm5-80gb")])
    assert report["memory"]["total_per_gpu_gib"] > 0
