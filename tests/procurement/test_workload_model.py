"""A stored Workload holds a valid workload spec: the admin and services refuse a broken one."""

import pytest
from django.core.exceptions import ValidationError

from procurement.models import Workload

pytestmark = pytest.mark.django_db

VALID = {"name": "qlora 8b", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e8}


def test_it_accepts_a_valid_spec():
    workload = Workload(name="qlora 8b", task="qlora", spec=VALID)
    workload.full_clean()


def test_it_names_every_offending_field_by_path():
    spec = {
        "task": "lora",
        "model": {
            "num_layers": 0,
            "hidden_size": 4096,
            "num_attention_heads": 30,
            "intermediate_size": 11008,
            "vocab_size": 32000,
        },
        "precision": "fp12",
    }
    with pytest.raises(ValidationError) as caught:
        Workload(name="broken", task="lora", spec=spec).full_clean()
    messages = " ".join(caught.value.message_dict["spec"])
    assert "model.num_layers" in messages and "precision" in messages


def test_it_refuses_heads_that_do_not_divide_the_hidden_size():
    spec = {
        "task": "lora",
        "model": {
            "num_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 30,
            "intermediate_size": 11008,
            "vocab_size": 32000,
        },
    }
    with pytest.raises(ValidationError) as caught:
        Workload(name="broken", task="lora", spec=spec).full_clean()
    assert "model.num_attention_heads" in " ".join(
        caught.value.message_dict["spec"]
    )  # 4096 / 30 is not whole


def test_the_task_column_must_agree_with_the_spec():
    with pytest.raises(ValidationError) as caught:
        Workload(name="mismatch", task="inference", spec=VALID).full_clean()
    assert "task" in caught.value.message_dict
