"""Benchmark: every live source's reader over recorded answers, against json/csv parsing alone.

    .venv/bin/python benchmarks/refresh_bench.py [--scale 1]

The readers only (answer bytes -> PriceRecord / SpotAdvisoryRecord), no database: the ingest of the records
is pricing.ingest's own benchmark (benchmarks/ingest_bench.py). Each source reads answers built from its
recorded ones in tests/pricing/providers/recorded/ (real ones where PROVENANCE.md lists one), repeated over
synthetic region codes until the whole run holds at least 50,000 records at --scale 1:

- aws-spot-advisor: both REAL advisor files (2022-07-09, 2022-07-23), every Linux row;
- gcp-billing: opencost's REAL Cloud Billing page, its SKUs' serviceRegions set to 2,000 region codes;
- azure-retail: the recorded pages' items repeated over 1,200 region codes, 1,000 items a page;
- lambda-cloud: the recorded instance-types answer with its types repeated 2,000 times;
- vast-market: the REAL captured offer search (vast-python search.json, 1,396 offers) repeated 8 times;
- gpuhunt: the recorded gpuhunt CSV rows repeated 2,000 times.

The floor of each source is json.loads (csv.DictReader for gpuhunt) of the very same answer bytes, in
the same run. Printed: records, seconds, records/s and the ratio reader / floor per source and in all.
AWS spot price history, list prices and Savings Plans are not in it (their answers come through boto3
paginators, and no recorded answer of theirs for a GPU type is real).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import io
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RECORDED = ROOT / "tests/pricing/providers/recorded"
NOW = dt.datetime(2026, 12, 4, tzinfo=dt.UTC)


def setup_django() -> None:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
    os.environ.setdefault("DEBUG", "1")
    django.setup()


def transport_of(bodies: list[bytes]):
    from pricing.providers.http_api import HttpAnswer

    answers = iter(bodies)

    def transport(url, headers):
        return HttpAnswer(200, next(answers), {"Content-Type": "application/json"})

    return transport


def azure_bodies(regions: int) -> list[bytes]:
    items = []
    for name in ("azure_page1.json", "azure_page2.json"):
        items += json.loads((RECORDED / name).read_text())["Items"]
    expanded = [{**item, "armRegionName": f"bench{r}"} for r in range(regions) for item in items]
    pages = [expanded[i : i + 1000] for i in range(0, len(expanded), 1000)]
    link = "https://prices.azure.com/api/retail/prices?$skip="
    return [
        json.dumps(
            {
                "BillingCurrency": "USD",
                "Items": page,
                "NextPageLink": f"{link}{(n + 1) * 1000}" if n + 1 < len(pages) else None,
            }
        ).encode()
        for n, page in enumerate(pages)
    ]


def gcp_bodies(regions: int) -> list[bytes]:
    page = json.loads((RECORDED / "real/gcp_opencost_skus.json").read_text())
    page.pop("nextPageToken")
    for sku in page["skus"]:
        sku["serviceRegions"] = [f"bench{r}" for r in range(regions)]
    return [json.dumps(page).encode()]


def lambda_bodies(copies: int) -> list[bytes]:
    document = json.loads((RECORDED / "lambda_instance_types.json").read_text())
    data = {
        f"{name}_{n}" if n else name: entry for n in range(copies) for name, entry in document["data"].items()
    }
    return [json.dumps({"data": data}).encode()]


def vast_bodies(copies: int) -> tuple[list[bytes], int]:
    """The REAL captured search (1,396 offers) repeated with fresh ids, on one page, then an empty one."""
    real = json.loads(gzip.open(RECORDED / "real/vast_python_search.json.gz").read())
    rows = [{**offer, "id": n * len(real) + i + 1} for n in range(copies) for i, offer in enumerate(real)]
    return [json.dumps({"offers": rows}).encode(), json.dumps({"offers": []}).encode()], len(rows) + 1


def run_source(name: str, read, floor) -> tuple[str, int, float, float]:
    started = time.perf_counter()
    count = sum(1 for _ in read())
    reader_s = time.perf_counter() - started
    started = time.perf_counter()
    floor()
    floor_s = time.perf_counter() - started
    return name, count, reader_s, floor_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    scale = parser.parse_args().scale
    setup_django()
    from pricing.price_checks import Refusals
    from pricing.providers import azure_retail, gcp_billing_catalog, gpuhunt_offers, lambda_cloud, vast_market
    from pricing.providers.retry import RetryPolicy
    from pricing.providers.spot_advisor import parse_spot_advisor

    def n(value: int) -> int:
        return max(1, int(value * scale))

    results = []
    advisor = [
        (ROOT / "pricing/data/spot_advisor/spot-advisor-data-2022-07-23.json").read_bytes(),
        gzip.open(RECORDED / "real/spot-advisor-data-2022-07-09.json.gz").read(),
    ]
    results.append(
        run_source(
            "aws-spot-advisor",
            lambda: (
                r
                for body in advisor
                for r in parse_spot_advisor(json.loads(body), observed_at=NOW, source="bench")
            ),
            lambda: [json.loads(body) for body in advisor],
        )
    )
    bodies = gcp_bodies(n(2000))
    results.append(
        run_source(
            "gcp-billing",
            lambda: gcp_billing_catalog.fetch_gcp_prices(
                api_key="k",
                now=NOW,
                refusals=Refusals(),
                stats=gcp_billing_catalog.GcpReadStats(),
                transport=transport_of(bodies),
            ),
            lambda: [json.loads(body) for body in bodies],
        )
    )
    azure = azure_bodies(n(1200))
    results.append(
        run_source(
            "azure-retail",
            lambda: azure_retail.fetch_azure_prices(
                now=NOW,
                refusals=Refusals(),
                stats=azure_retail.AzureReadStats(),
                transport=transport_of(azure),
                policy=RetryPolicy(),
            ),
            lambda: [json.loads(body) for body in azure],
        )
    )
    lam = lambda_bodies(n(2000))
    results.append(
        run_source(
            "lambda-cloud",
            lambda: lambda_cloud.fetch_lambda_prices(
                api_key="k",
                now=NOW,
                refusals=Refusals(),
                stats=lambda_cloud.LambdaReadStats(),
                transport=transport_of(lam),
            ),
            lambda: [json.loads(body) for body in lam],
        )
    )
    vast, page_size = vast_bodies(n(8))
    results.append(
        run_source(
            "vast-market",
            lambda: vast_market.fetch_vast_market(now=NOW, transport=transport_of(vast), page_size=page_size),
            lambda: [json.loads(body) for body in vast],
        )
    )
    text = (RECORDED / "gpuhunt_runpod.csv").read_text()
    header, rows = text.splitlines()[0], text.splitlines()[1:]
    big = "\n".join([header, *(rows * n(2000))]) + "\n"

    def gpuhunt_items():
        return [
            SimpleNamespace(**{**row, "spot": row["spot"] == "True", "gpu_count": int(row["gpu_count"])})
            for row in csv.DictReader(io.StringIO(big))
        ]

    results.append(
        run_source(
            "gpuhunt",
            lambda: gpuhunt_offers.gpuhunt_price_records(
                gpuhunt_items(),
                provider="runpod",
                observed_at=NOW,
                refusals=Refusals(),
                stats=gpuhunt_offers.GpuhuntReadStats(),
            ),
            lambda: list(csv.DictReader(io.StringIO(big))),
        )
    )

    print(f"{'source':18} {'records':>9} {'reader s':>9} {'records/s':>11} {'json/csv s':>10} {'ratio':>7}")
    for name, count, reader_s, floor_s in results:
        print(
            f"{name:18} {count:9,} {reader_s:9.3f} {count / reader_s:11,.0f} {floor_s:10.3f} {reader_s / floor_s:7.1f}"
        )
    total, reader, floor = (sum(r[i] for r in results) for i in (1, 2, 3))
    print(f"{'all':18} {total:9,} {reader:9.3f} {total / reader:11,.0f} {floor:10.3f} {reader / floor:7.1f}")


if __name__ == "__main__":
    main()
