"""One bad-input error class (gpuledger/errors.py), mapped once to the API's error shape."""

import importlib
import inspect
import pkgutil

import pytest

from billing.finance.allocation import AllocationError
from billing.imports.records import BillingFileError, WrongFormatError
from billing.imports.s3_exports import ExportManifestError
from billing.input_errors import ReviewInputError
from gpuledger.accounts.teams import TeamChoiceError
from gpuledger.accounts.tokens import TokenError
from gpuledger.api_errors import api_exception_handler
from gpuledger.errors import InputError
from planning.engine.errors import PlanInputError
from pricing.catalog import CatalogError
from pricing.providers.records import SourceRowError
from procurement.architectures import ArchitectureFileError
from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.costing.documents import DocumentSyntaxError
from procurement.costing.values import CostInputError
from procurement.ranking.interconnects import InterconnectTableError
from procurement.reports.registry import ReportInputError
from procurement.services.recommendations import WorkloadSpecInputError
from procurement.sizing.spec import FieldError, WorkloadSpecError

EVERY_INPUT_ERROR = [
    TeamChoiceError,
    TokenError,
    CatalogError,
    SourceRowError,
    ArchitectureFileError,
    BenchmarkDocumentError,
    AllocationError,
    ReviewInputError,
    BillingFileError,
    WrongFormatError,
    DocumentSyntaxError,
    CostInputError,
    PlanInputError,
    InterconnectTableError,
    ReportInputError,
    WorkloadSpecInputError,
    WorkloadSpecError,
    ExportManifestError,
]
APPS = ("billing", "gpuledger", "planning", "pricing", "procurement", "scheduler")
# ValueErrors of the project that are not bad input a person gives, each with the reason
NOT_INPUT_ERRORS = {
    "MicrosOutOfRange": "internal: the dataset writer gives up and the import's rows are read from the database",
    "SourceNotQueryable": "a billing source's configuration (no Athena table yet), reported on /status/",
    "AmbiguousGpu": "one price-source row, counted among the source's refused rows by its reader",
}


@pytest.mark.parametrize("error_class", EVERY_INPUT_ERROR, ids=lambda cls: cls.__name__)
def test_it_derives_every_input_error_from_the_one_base(error_class):
    assert issubclass(error_class, InputError) and issubclass(error_class, ValueError)


def test_no_value_error_of_the_project_bypasses_the_one_base():
    """Every ValueError class defined in the project's packages is an InputError (or named above with a
    reason): stop 34's ExportManifestError derived from ValueError and slipped past the list above."""
    found = set()
    for app in APPS:
        package = importlib.import_module(app)
        for module_info in pkgutil.walk_packages(package.__path__, f"{app}."):
            if ".migrations" in module_info.name or module_info.name.endswith(("wsgi", "asgi", "celery")):
                continue
            module = importlib.import_module(module_info.name)
            for _name, value in inspect.getmembers(module, inspect.isclass):
                if value.__module__ == module.__name__ and issubclass(value, ValueError):
                    found.add(value)
    strays = sorted(
        f"{c.__module__}.{c.__name__}"
        for c in found
        if not issubclass(c, InputError) and c.__name__ not in NOT_INPUT_ERRORS
    )
    assert not strays
    assert ExportManifestError in found  # the walk reaches billing/imports


def test_it_names_a_file_line_and_column_when_there_is_no_field():
    error = BillingFileError("bill.csv", "not a number: 'x'", row=2, column="BilledCost")
    assert str(error) == "bill.csv:2:BilledCost: not a number: 'x'"  # the import's own one-line form
    assert error.problems == [("bill.csv, line 2, column BilledCost", "not a number: 'x'")]
    row = SourceRowError("vms.csv:7", "Price", "not a number")
    assert row.problems == [("vms.csv:7, column Price", "not a number")]


def test_the_api_maps_any_input_error_to_the_one_shape_listing_every_problem():
    spec = WorkloadSpecError([FieldError("model.num_layers", "required"), FieldError("headroom", "above 1")])
    response = api_exception_handler(spec, {})
    assert response.status_code == 400
    assert response.data == {
        "errors": [
            {"path": "model.num_layers", "message": "required"},
            {"path": "headroom", "message": "above 1"},
        ]
    }
    located = api_exception_handler(CatalogError("data/gpus.csv:3: column 'tdp': must be above zero"), {})
    assert located.data == {
        "errors": [{"path": "(root)", "message": "data/gpus.csv:3: column 'tdp': must be above zero"}]
    }
