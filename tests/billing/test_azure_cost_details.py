"""Azure cost details exports (actual and amortized cost, EA and MCA) read by azure_cost_details.py.

Sources:
- Microsoft's own sample files, microsoft/finops-toolkit commit 62f3d5f852cf4113e80ce7bbf67d04e735311290,
  `src/powershell/Tests/assets/EA_ActualCost_Small.csv` and `EA_AmortizedCost_Small.csv` (MIT), kept byte for
  byte in tests/billing/outside/data/ (SOURCES.md there).
- How a row maps: "Convert Cost Management data to FOCUS",
  https://learn.microsoft.com/cloud-computing/finops/focus/convert (BilledCost 0 on usage a reservation or
  savings plan covers; EffectiveCost 0 on the purchase or refund of one; Quantity on Usage rows only).
- Quantity counts blocks of UnitOfMeasure: Microsoft's FinOps hubs take ConsumedQuantity = Quantity x
  x_PricingBlockSize, "10 Hours" a block of 10 (microsoft/finops-toolkit `src/open-data/PricingUnits.csv` and
  `IngestionSetup_v1_0.kql`); the sample's storage rows show it: 0.0004 x 0.1 per "10K" = 0.00004.
- MCA column names: Microsoft's MCA cost details schema
  (https://learn.microsoft.com/azure/cost-management-billing/dataset-schema/cost-usage-details-mca). No real
  public MCA export was found: the MCA file below is written here with the documented header.
- ND96isr H100 v5: 8 H100 (https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/);
  98.32 USD an hour and the other amounts are illustrative, chosen so that the hand computations are short.
"""

from __future__ import annotations

import csv
import gzip
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from billing.imports.azure_cost_details import _hour_block, read_azure_cost_details, vm_size_of_meter
from billing.imports.importer import detect_format, import_file
from billing.imports.records import BillingFileError, WrongFormatError
from billing.models import BillingImport
from pricing.models import GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
OUTSIDE = Path(__file__).parent / "outside" / "data"
ACTUAL = OUTSIDE / "azure_ea_actual_cost_small.csv"
AMORTIZED = OUTSIDE / "azure_ea_amortized_cost_small.csv"
EA_HEADER = next(csv.reader(ACTUAL.read_text(encoding="utf-8-sig").splitlines()))
# Microsoft's MCA cost details schema, in its order
MCA_HEADER = (
    "invoiceId,previousInvoiceId,billingAccountId,billingAccountName,billingProfileId,billingProfileName,"
    "invoiceSectionId,invoiceSectionName,resellerName,resellerMpnId,costCenter,billingPeriodEndDate,"
    "billingPeriodStartDate,servicePeriodEndDate,servicePeriodStartDate,date,serviceFamily,productOrderId,"
    "productOrderName,consumedService,meterId,meterName,meterCategory,meterSubCategory,meterRegion,ProductId,"
    "ProductName,SubscriptionId,subscriptionName,publisherType,publisherId,publisherName,resourceGroupName,"
    "ResourceId,resourceLocation,location,effectivePrice,quantity,unitOfMeasure,chargeType,billingCurrency,"
    "pricingCurrency,costInBillingCurrency,costInPricingCurrency,costInUsd,paygCostInBillingCurrency,"
    "paygCostInUsd,exchangeRatePricingToBilling,exchangeRateDate,isAzureCreditEligible,serviceInfo1,"
    "serviceInfo2,additionalInfo,tags,PayGPrice,frequency,term,reservationId,reservationName,pricingModel,"
    "unitPrice,costAllocationRuleName,benefitId,benefitName,provider"
).split(",")


def write_rows(path: Path, header: list[str], rows: list[dict]) -> Path:
    unknown = {name for row in rows for name in row} - set(header)
    assert not unknown, unknown  # a typo in a test row would otherwise be a silently empty cell
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def vm_row(**cells) -> dict:
    """An EA row as the sample's D2s v3 line is written, with the given cells changed."""
    base = {
        "BillingAccountId": "8611537",
        "BillingProfileId": "8611537",
        "BillingPeriodStartDate": "05/01/2026",
        "BillingPeriodEndDate": "05/31/2026",
        "SubscriptionId": "1caaa5a3-2b66-438e-8ab4-bce37d518c5d",
        "Date": "05/04/2026",
        "MeterCategory": "Virtual Machines",
        "BillingCurrency": "USD",
        "ResourceLocation": "EastUS",
        "UnitOfMeasure": "1 Hour",
        "ChargeType": "Usage",
        "PricingModel": "OnDemand",
        "Frequency": "UsageBased",
        "Tags": '"team": "ml"',
    }
    return base | cells


def size_info(size: str) -> str:
    return json.dumps({"UsageType": "ComputeHR", "ServiceType": size, "VCPUs": 96}, separators=(",", ":"))


def review_json(start: str, end: str) -> dict:
    out = StringIO()
    call_command("spend_review", "--from", start, "--to", end, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def invoice_lines(client, query: str) -> dict:
    response = client.get(f"/billing/invoice/?{query}&format=json")
    assert response.status_code == 200, response.content
    (invoice,) = response.json()["invoices"]
    lines = {line["line"]: (line["billed_cost"], line["effective_cost"]) for line in invoice["lines"]}
    return {**invoice, "lines": lines, "totals": (invoice["billed_total"], invoice["effective_total"])}


@pytest.fixture
def azure_catalog():
    make_catalog()
    azure, _ = Provider.objects.get_or_create(slug="azure", defaults={"name": "azure"})
    InstanceType.objects.create(
        provider=azure,
        name="Standard_ND96isr_H100_v5",
        gpu=GpuModel.objects.get(slug="h100-sxm5-80gb"),
        gpu_name="h100",
        gpu_count=8,
    )


# Microsoft's sample files ------------------------------------------------------------------------------


def test_it_detects_both_sample_files_as_azure_cost_details():
    assert detect_format(ACTUAL) == detect_format(AMORTIZED) == "azure"


def test_a_gzipped_export_reads_as_the_csv_does(tmp_path):
    # Cost Management exports may be gzip-compressed: the same rows, cell for cell
    packed = tmp_path / "actual.csv.gz"
    packed.write_bytes(gzip.compress(ACTUAL.read_bytes()))
    assert detect_format(packed) == "azure"
    (plain,) = read_azure_cost_details(ACTUAL)
    (unpacked,) = read_azure_cost_details(packed)
    assert plain.astype(str).equals(unpacked.astype(str))


def test_the_actual_cost_sample_ties_to_its_invoice(client_as):
    # By hand from the raw file (11 rows, USD, billing period 09/01/2023): one Purchase, a 3-year Standard_B1s
    # reservation's monthly payment, Cost 3.25 (PricingModel Reservation: effective 0, the usage amortizes
    # it); ten Usage rows, OnDemand: 0.00004 + 0.000011139 + 2.64 + 0 + 0 + 0.000002 + 0.21268368 + 0
    # + 1.9584 + 0.4838709677419368 = 5.2950077867419368. Billed 8.5450... = 8.55; effective 5.30.
    make_catalog()
    import_file(ACTUAL)
    invoice = invoice_lines(client_as("finance"), "from=2023-09&to=2023-10")
    assert (invoice["provider"], invoice["billing_period"], invoice["currency"]) == (
        "azure",
        "2023-09",
        "USD",
    )
    assert invoice["lines"] == {"usage": ("5.30", "5.30"), "purchase": ("3.25", "0.00")}
    assert invoice["totals"] == ("8.55", "5.30")
    review = review_json("2023-09-01", "2023-10-01")
    # no GPU size (D2s v3, and B1s from the purchase's meter); every Compute row names its size: nothing
    # undetermined
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("0.00", "0.00")
    assert (review["non_gpu_cost"], review["undetermined_cost"]) == ("5.30", "0.00")


def test_the_amortized_sample_gives_effective_cost_and_bills_covered_usage_zero(client_as):
    # By hand from the raw file (28 Usage rows): Cost sums to 16.2969321366... = effective 16.30. Two rows are
    # covered usage, billed 0: the D2 v2 reservation's 0.493152 and the B2s savings plan's 0.006000000468;
    # billed = 16.2969321366 - 0.493152 - 0.006000000468 = 15.7977801361... = 15.80.
    make_catalog()
    import_file(AMORTIZED)
    invoice = invoice_lines(client_as("finance"), "from=2023-09&to=2023-10")
    assert invoice["lines"] == {"usage": ("15.80", "16.30")}
    review = review_json("2023-09-01", "2023-10-01")
    assert (review["non_gpu_cost"], review["undetermined_cost"]) == ("16.30", "0.00")


def test_the_amortized_samples_commitment_rows_as_read():
    (chunk,) = read_azure_cost_details(AMORTIZED)
    reservation, plan = chunk.iloc[0], chunk.iloc[1]
    # row 2: D2 v2/DS2 v2 on the reservation ProdDS1VMReservation (ProductOrderName names Standard_DS1_v2);
    # row 3: B2s under a savings plan (its BenefitId is a Microsoft.BillingBenefits savings plan)
    assert (reservation["commitment_discount_id"], reservation["commitment_status"]) == (
        "/providers/Microsoft.Capacity/reservationOrders/a965d46f-aedf-4176-8ff1-2617943b8960/reservations/"
        "f39d1c73-af74-4308-9083-fbf5efab37d1",
        "used",
    )
    assert (reservation["commitment_type"], reservation["commitment_family"]) == (
        "Reservation",
        "Standard_DS1_v2",
    )
    assert (reservation["instance_type"], reservation["consumed_quantity"], reservation["consumed_unit"]) == (
        "Standard_DS2_v2",
        "8",
        "Hours",
    )
    assert (reservation["billed_cost"], reservation["effective_cost"]) == ("0", "0.493152")
    assert (plan["commitment_type"], plan["commitment_family"], plan["pricing_category"]) == (
        "Savings Plan",
        "",
        "committed",
    )


# GPU VM sizes and hours -----------------------------------------------------------------------------------


def test_gpu_vm_rows_hours_in_blocks_undetermined_and_non_gpu(azure_catalog, tmp_path):
    # ND96isr H100 v5 (catalog: 8 H100), Quantity 0.3 at "10 Hours" = 3 hours (not 0.3): 24 GPU-hours,
    # 3 x 98.32 = 294.96; its Windows licence row (Virtual Machines Licenses, same size, 3 "Hours" as MCA
    # spells the unit) 1.20 is GPU spend with no hours of its own: GPU 296.16 over 24 GPU-hours (48 if the
    # licence's hours were counted too). NC24ads A100 v4 named only by its meter (no
    # AdditionalInfo), a GPU size the catalog lacks: undetermined 24 x 3.67 = 88.08; a VM meter naming no size:
    # undetermined 5.00; D4s v5 24 x 0.192 = 4.608 and a disk 4.10: non-GPU 8.708 = 8.71.
    rows = [
        vm_row(
            MeterName="ND96isr H100 v5",
            AdditionalInfo=size_info("Standard_ND96isr_H100_v5"),
            Quantity="0.3",
            UnitOfMeasure="10 Hours",
            EffectivePrice="983.2",
            Cost="294.96",
        ),
        vm_row(
            MeterCategory="Virtual Machines Licenses",
            MeterName="ND96isr H100 v5 Windows",
            AdditionalInfo=size_info("Standard_ND96isr_H100_v5"),
            Quantity="3",
            UnitOfMeasure="Hours",
            Cost="1.20",
        ),
        vm_row(MeterName="NC24ads A100 v4", Quantity="24", Cost="88.08"),
        vm_row(MeterName="", MeterSubCategory="NDasrA100_v4 Series", Quantity="1", Cost="5.00"),
        vm_row(MeterName="D4s v5", AdditionalInfo=size_info("Standard_D4s_v5"), Quantity="24", Cost="4.608"),
        vm_row(
            MeterCategory="Storage",
            MeterName="P10 LRS Disk",
            Quantity="0.033336",
            UnitOfMeasure="1/Month",
            Cost="4.10",
        ),
    ]
    path = write_rows(tmp_path / "ea_gpu.csv", EA_HEADER, rows)
    assert import_file(path).unmapped == {"azure:Standard_NC24ads_A100_v4": 1, "azure:Standard_D4s_v5": 1}
    review = review_json("2026-05-01", "2026-06-01")
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("296.16", "24.00")
    assert (review["undetermined_cost"], review["non_gpu_cost"]) == ("93.08", "8.71")
    assert {(u["instance_type"], u["effective_cost"]) for u in review["undetermined"]} == {
        ("Standard_NC24ads_A100_v4", "88.08"),
        ("", "5.00"),
    }


def test_an_unused_gpu_reservation_in_an_amortized_file(azure_catalog, tmp_path, client_as):
    # An ND96isr H100 v5 reservation (ProductOrderName names the size) on one day: 19 hours used, amortized
    # 60.00 an hour = 1,140.00 (152 GPU-hours), and the UnusedReservation row for the other 5 hours, 300.00.
    # Both billed 0 (the purchase is the bill); effective 1,440.00, all GPU spend.
    reservation = {
        "PricingModel": "Reservation",
        "ReservationId": "r-1",
        "ReservationName": "ND96-1y",
        "ProductOrderName": "Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
        "MeterName": "ND96isr H100 v5",
    }
    rows = [
        vm_row(
            AdditionalInfo=size_info("Standard_ND96isr_H100_v5"), Quantity="19", Cost="1140.00", **reservation
        ),
        vm_row(ChargeType="UnusedReservation", Quantity="5", Cost="300.00", **reservation),
    ]
    import_file(write_rows(tmp_path / "ea_amortized_gpu.csv", EA_HEADER, rows))
    (chunk,) = read_azure_cost_details(tmp_path / "ea_amortized_gpu.csv")
    assert list(chunk["commitment_status"]) == ["used", "unused"]
    assert list(chunk["consumed_unit"]) == ["Hours", ""]  # the unused hours are no hours run
    assert list(chunk["commitment_family"]) == ["Standard_ND96isr_H100_v5"] * 2
    invoice = invoice_lines(client_as("finance"), "from=2026-05&to=2026-06")
    assert invoice["lines"] == {"usage": ("0.00", "1440.00")}
    review = review_json("2026-05-01", "2026-06-01")
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("1440.00", "152.00")
    assert (review["non_gpu_cost"], review["undetermined_cost"]) == ("0.00", "0.00")


@pytest.mark.parametrize(
    "meter, size",
    [
        ("NC24ads A100 v4", "Standard_NC24ads_A100_v4"),
        ("ND96isr H100 v5", "Standard_ND96isr_H100_v5"),
        ("D2 v3/D2s v3", "Standard_D2_v3"),
        ("B1s", "Standard_B1s"),
        ("NC6s v3 Spot", "Standard_NC6s_v3"),
        ("D2s v3 Low Priority", "Standard_D2s_v3"),
        ("", ""),
        ("Compute Hours", ""),
    ],
)
def test_the_size_a_vm_meter_names(meter, size):
    assert vm_size_of_meter(meter) == size


@pytest.mark.parametrize(
    "unit, block",
    [
        ("1 Hour", 1),
        ("10 Hours", 10),
        ("100 Hours", 100),
        ("1  hour", 1),
        ("Hours", 1),
        ("10K", None),
        ("1/Month", None),
    ],
)
def test_hours_in_a_unit_of_measure(unit, block):
    assert _hour_block(unit) == block


# MCA -------------------------------------------------------------------------------------------------------


def mca_row(**cells) -> dict:
    base = {
        "billingAccountId": "a1b2c3:d4e5_2019-05-31",
        "billingProfileId": "AB12-CD34-EF5-GH6",
        "billingPeriodStartDate": "09/01/2026",
        "billingPeriodEndDate": "09/30/2026",
        "date": "09/17/2026",
        "meterCategory": "Virtual Machines",
        "meterName": "ND96isr H100 v5",
        "additionalInfo": size_info("Standard_ND96isr_H100_v5"),
        "quantity": "1",
        "unitOfMeasure": "1 Hour",
        "chargeType": "Usage",
        "pricingModel": "OnDemand",
        "billingCurrency": "EUR",
        "pricingCurrency": "USD",
        "tags": '"team": "ml"',
    }
    return base | cells


def test_an_mca_file_in_its_own_column_names(azure_catalog, tmp_path, client_as):
    # Usage 10.00 (MM/DD/YYYY) + 20.00 (ISO date) EUR; a reservation bought for 100.00 (effective 0) and a
    # refund of 50.00 of another (billed -50.00, effective 0, the invoice's refund line). Billed 80.00.
    purchase = {"meterName": "", "additionalInfo": "", "pricingModel": "Reservation", "reservationId": "r-2"}
    rows = [
        mca_row(costInBillingCurrency="10.00"),
        mca_row(date="2026-09-18", costInBillingCurrency="20.00"),
        mca_row(chargeType="Purchase", costInBillingCurrency="100.00", **purchase),
        mca_row(chargeType="Refund", costInBillingCurrency="-50.00", **purchase),
    ]
    path = write_rows(tmp_path / "mca.csv", MCA_HEADER, rows)
    assert detect_format(path) == "azure"
    (chunk,) = read_azure_cost_details(path)
    # MCA's invoice is the billing profile's (Microsoft's FOCUS mapping: BillingAccountId <- BillingProfileId)
    assert set(chunk["billing_account_id"]) == {"AB12-CD34-EF5-GH6"}
    assert [str(day.date()) for day in chunk["charge_period_start"][:2]] == ["2026-09-17", "2026-09-18"]
    import_file(path)
    invoice = invoice_lines(client_as("finance"), "from=2026-09&to=2026-10")
    assert invoice["currency"] == "EUR"
    assert invoice["lines"] == {
        "usage": ("30.00", "30.00"),
        "purchase": ("100.00", "0.00"),
        "refund": ("-50.00", "0.00"),
    }
    assert invoice["totals"] == ("80.00", "30.00")


# Bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cells, message",
    [
        (
            {"Date": "21/05/2026"},
            "3:Date: unparseable date '21/05/2026' (Azure writes MM/DD/YYYY or YYYY-MM-DD)",
        ),
        ({"ChargeType": "Bonus"}, "3:ChargeType: unknown value 'Bonus' (expected one of: Usage, Purchase,"),
        ({"Cost": "12,5"}, "3:Cost: not a number: '12,5'"),
        ({"BillingCurrency": ""}, "3:BillingCurrency: a currency is required here"),
        ({"Quantity": "2e11", "UnitOfMeasure": "100 Hours"}, "3:Quantity: too large once counted in hours"),
    ],
)
def test_a_malformed_row_names_file_line_and_column_and_stores_nothing(tmp_path, cells, message):
    make_catalog()
    rows = [
        vm_row(MeterName="D4s v5", Quantity="24", Cost="4.608"),
        vm_row(**({"MeterName": "D4s v5", "Cost": "1"} | cells)),
    ]
    path = write_rows(tmp_path / "bad.csv", EA_HEADER, rows)
    with pytest.raises(BillingFileError) as refused:
        import_file(path)
    assert str(refused.value).startswith(f"{path}:{message}")
    assert BillingImport.objects.count() == 0


def test_an_mca_error_names_the_files_own_header(tmp_path):
    make_catalog()
    path = write_rows(tmp_path / "mca_bad.csv", MCA_HEADER, [mca_row(costInBillingCurrency="n/a")])
    with pytest.raises(BillingFileError, match=r"mca_bad.csv:2:costInBillingCurrency: not a number: 'n/a'"):
        import_file(path)


def test_a_file_without_a_cost_column_says_which_it_needs(tmp_path):
    header = [name for name in EA_HEADER if name != "Cost"]
    path = write_rows(tmp_path / "no_cost.csv", header, [{"Date": "05/04/2026"}])
    with pytest.raises(BillingFileError) as refused:
        import_file(path)
    assert str(refused.value) == f"{path}:1:CostInBillingCurrency or Cost: missing required column(s): " + (
        "CostInBillingCurrency or Cost"
    )


def test_the_format_asked_for_and_the_files_are_named_when_they_differ(tmp_path):
    make_catalog()
    with pytest.raises(WrongFormatError) as refused:
        import_file(ACTUAL, fmt="focus")
    assert str(refused.value) == (
        f"{ACTUAL}: this is an Azure cost details export (actual or amortized cost), not a FOCUS export "
        "(--format focus)"
    )
    assert import_file(ACTUAL, fmt="azure").inserted == 11


def test_the_upload_form_takes_the_azure_format(client_as):
    from django.core.files.uploadedfile import SimpleUploadedFile

    make_catalog()
    upload = SimpleUploadedFile(ACTUAL.name, ACTUAL.read_bytes(), content_type="text/csv")
    response = client_as("finance").post("/billing/upload/", {"file": upload, "format": "azure"}, follow=True)
    assert b"inserted 11, unchanged 0, rejected 0" in response.content


def test_the_api_takes_the_azure_format(client_as):
    """The API's format choices are the importer's (FORMAT_NAMES): `azure` was missing there at first."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    make_catalog()
    upload = SimpleUploadedFile(ACTUAL.name, ACTUAL.read_bytes(), content_type="text/csv")
    response = client_as("finance").post("/api/billing/imports/", {"file": upload, "format": "azure"})
    assert response.status_code == 201, response.content
    assert response.json()["inserted"] == 11  # the sample's 11 rows
