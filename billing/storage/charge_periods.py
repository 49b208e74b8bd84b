"""Which days or months hold spend rows, found by one probe of the charge-period index per day or month
(a loose index scan), not by a scan of the rows: the import asks which days it may meet stored keys in
(spend_writer.py), the snapshot rebuild which months to build (spend_snapshot.py)."""

from __future__ import annotations

import datetime as dt

from django.db import connection

from billing.models import SpendRecord

LOOSE_SCAN_SQL = """
WITH RECURSIVE period(start) AS (
    SELECT date_trunc('{unit}', min(charge_period_start), 'UTC') FROM {table}
  UNION ALL
    SELECT (SELECT date_trunc('{unit}', min(charge_period_start), 'UTC') FROM {table}
            WHERE charge_period_start >= period.start + interval '1 {unit}')
    FROM period WHERE period.start IS NOT NULL
)
SELECT start FROM period WHERE start IS NOT NULL
"""


def starts_with_rows(unit: str) -> list[dt.date]:
    """The first day (UTC) of every `unit` ("day" or "month") that holds spend rows, in order."""
    if unit not in ("day", "month"):
        raise ValueError(f"unit must be day or month, not {unit!r}")
    table = connection.ops.quote_name(SpendRecord._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(LOOSE_SCAN_SQL.format(unit=unit, table=table))
        return [start.astimezone(dt.UTC).date() for (start,) in cursor.fetchall()]
