"""The review's GPU sums of one billing export source, on the engine the source names (issue 28, item 2).

`BillingExportSource.query_engine` selects it: `duckdb` reads the imported Parquet (a store with
`files(start, end)`, storage/); `athena` runs the same statements, translated to Trino by sqlglot, on
Athena over the export's table where it lands (the CUR 2.0 or FOCUS relation of export_relations.py,
the catalog's GPU instance types passed in). Both answer duckdb_review.review_sums' shape.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from billing.choices import QueryEngine
from billing.imports.records import tag_mapping
from billing.models import BillingExportSource
from billing.storage.athena import AthenaRunner
from billing.storage.duckdb_review import review_sums
from billing.storage.export_relations import cur2_relation, focus_relation
from billing.storage.translated_review import review_sums_with
from pricing.models import InstanceType


class SourceNotQueryable(ValueError):
    pass


def instance_gpus(provider: str = "aws") -> dict[str, tuple[str, Decimal]]:
    """Instance type -> (GPU slug, GPUs per instance) of the provider's GPU instance types."""
    rows = InstanceType.objects.filter(provider__slug=provider, gpu__isnull=False).values_list(
        "name", "gpu__slug", "gpu_count"
    )
    return {name: (slug, Decimal(count)) for name, slug, count in rows}


def export_relation(source: BillingExportSource) -> str:
    if not (source.athena_database and source.athena_table):
        raise SourceNotQueryable(
            f"billing export source {source.name}: athena_database and athena_table are empty"
        )
    tags = tag_mapping()
    table = f"{source.athena_database}.{source.athena_table}"
    keys = {"team_tag": tags.team[0], "project_tag": tags.project[0]}
    if source.export_format == "cur":
        return cur2_relation(table, instance_gpus(source.provider), provider=source.provider, **keys)
    return focus_relation(table, instance_gpus(source.provider), **keys)


def source_review_sums(
    source: BillingExportSource,
    start: dt.date,
    end: dt.date,
    allowed_teams: Sequence[str] = (),
    *,
    store=None,
    athena_client=None,
) -> dict:
    if source.query_engine == QueryEngine.ATHENA:
        runner = AthenaRunner(
            athena_client or _athena_client(),
            database=source.athena_database,
            workgroup=source.athena_workgroup or "primary",
            output_location=source.athena_output_location,
        )
        relation = export_relation(source)
        return review_sums_with(
            runner, "athena", start, end, allowed_teams, rows="export_rows", ctes=relation
        )
    if store is None:
        raise SourceNotQueryable(
            f"billing export source {source.name}: DuckDB needs the imports' Parquet store"
        )
    return review_sums(store, start, end, allowed_teams)


def _athena_client():
    import boto3

    return boto3.client("athena")
