"""An empty file, pasted or uploaded, is called what it is everywhere: "empty file", naming the input."""

import pytest
from django.core.management import CommandError, call_command

from procurement.costing.documents import load_document_text
from procurement.costing.values import CostInputError
from procurement.models import TcoStudy
from procurement.sizing import WorkloadSpecError
from procurement.sizing.documents import load_spec_text
from scheduler.models import PriceRefresh


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_the_document_readers_say_empty_file(text):
    with pytest.raises(WorkloadSpecError) as spec_error:
        load_spec_text(text, "spec.yaml")
    [field] = spec_error.value.errors
    assert field.path == "spec.yaml" and field.message.startswith("empty file")
    with pytest.raises(CostInputError) as study_error:
        load_document_text(text, "study.yaml")
    assert study_error.value.field == "study.yaml" and study_error.value.message.startswith("empty file")


@pytest.mark.django_db
def test_the_pages_say_empty_file_and_store_nothing(client_as, bundled_catalog):
    client = client_as("engineer")
    sizing = client.post("/size/", {"spec": ""})
    assert sizing.context["errors"] == [
        {"path": "spec", "message": "empty file: paste or upload a workload spec"}
    ]
    assert "empty file" in sizing.content.decode()
    tco = client.post("/tco/", {"study": "   "})
    assert "empty file" in tco.content.decode()
    assert TcoStudy.objects.count() == 0


@pytest.mark.django_db
def test_importing_an_empty_price_file_says_so_and_records_no_refresh(tmp_path):
    empty = tmp_path / "prices.csv"
    empty.write_text("\n")
    with pytest.raises(CommandError, match=r"prices\.csv: empty file; nothing was stored"):
        call_command("import_prices", str(empty))
    assert PriceRefresh.objects.count() == 0
