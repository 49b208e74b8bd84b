"""Study files: YAML or JSON, exact decimals, syntax errors by file, line and column."""

from decimal import Decimal

import pytest

from procurement.costing.documents import DocumentSyntaxError, load_document_file, load_document_text
from procurement.costing.values import CostInputError


def test_it_reads_json_numbers_as_exact_decimals():
    assert load_document_text('{"price_per_gpu_hour": 2.99}') == {"price_per_gpu_hour": Decimal("2.99")}


def test_it_reads_yaml():
    assert load_document_text("rent:\n  pricing_model: spot\n") == {"rent": {"pricing_model": "spot"}}


def test_it_points_at_the_line_and_column_of_a_json_error():
    with pytest.raises(DocumentSyntaxError) as error:
        load_document_text('{\n  "a": 1,\n  "b": }', "study.json")
    assert error.value.field == "study.json, line 3, column 8"


def test_it_points_at_the_line_and_column_of_a_yaml_error():
    with pytest.raises(DocumentSyntaxError) as error:
        load_document_text("buy:\n  servers: 1\n    gpu: h100\n", "study.yaml")
    assert error.value.field.startswith("study.yaml, line 3, column ")


def test_it_names_a_missing_file(tmp_path):
    with pytest.raises(CostInputError) as error:
        load_document_file(tmp_path / "nope.yaml")
    assert error.value.field.endswith("nope.yaml")
