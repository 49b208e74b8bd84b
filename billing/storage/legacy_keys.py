"""Rows stored under the row-key scheme before December 2026, matched on re-import through their file.

Those keys were SHA-256 digests of each row's text as the file wrote it ("10.00", "1.5E-7"), which the
stored numeric values no longer hold, so they cannot be recomputed (migration 0003 marks their imports
SHA256_TEXT and keeps 128 bits of each). A re-import would miss them and store every row again, so:

- a file with the checksum of such an import is that file again, byte for byte, so its row N is that
  import's stored row N: each such stored row takes the row's current key (counted unchanged, not
  inserted), and once all of an import's rows have been re-keyed the import counts as current;
- any other row of a day that holds rows of such an import (of the same format) is refused, naming
  the import: it may be one of those rows under a new file's bytes (a month-to-date export downloaded
  again), which nothing can tell apart from a new charge. Re-importing the old file first, or
  deleting its import, lifts the refusal.

Only a database holding such imports pays for any of this (one query per file otherwise).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from django.db import connection
from django.db.models import Count
from django.db.models.functions import TruncDate

from billing.choices import RowKeyScheme
from billing.imports.records import BillingFileError
from billing.models import BillingImport, SpendRecord
from billing.storage.keys import key_hex

REKEY_BATCH = 2000


class LegacyRows:
    def __init__(self, same_file: list[BillingImport], others: list[BillingImport]):
        self.same_file = {item.pk: item for item in same_file}
        self.others = others
        self.rekeyed: dict[int, int] = dict.fromkeys(self.same_file, 0)
        self.other_days = _days_of(others)

    @classmethod
    def find(cls, *, source_format: str, checksum: Callable[[], str]) -> LegacyRows | None:
        """The legacy imports of this format with rows, split into this file's and the others; None
        (without computing the checksum) when there are none."""
        legacy = list(
            BillingImport.objects.filter(row_key_scheme=RowKeyScheme.SHA256_TEXT, source_format=source_format)
            .annotate(rows=Count("records"))
            .filter(rows__gt=0)
        )
        if not legacy:
            return None
        digest = checksum()
        same = [item for item in legacy if digest and item.file_sha256 == digest]
        return cls(same, [item for item in legacy if item not in same])

    def claim(
        self, rows: pd.DataFrame, lanes: np.ndarray, *, file: str, source_columns: Mapping[str, str]
    ) -> tuple[pd.DataFrame, np.ndarray]:
        """Re-key the stored rows these rows are; the rest, once none of them may be a legacy row."""
        claimed = self._rekey(rows, lanes) if self.same_file else np.zeros(len(rows), dtype=bool)
        rest = np.flatnonzero(~claimed)
        days = rows["charge_period_start"].iloc[rest].dt.tz_convert("UTC").dt.date.to_numpy()
        clash = np.isin(days, list(self.other_days))
        if clash.any():
            position = rest[int(clash.argmax())]
            stored = self.other_days[days[int(clash.argmax())]]
            raise BillingFileError(
                file,
                f"spend of {days[int(clash.argmax())]} is also stored by import #{stored.pk} ({stored.file_name}, "
                f"{stored.imported_at:%Y-%m-%d}) under the row keys used before December 2026, which a re-import "
                "cannot match row by row; import that file again first (it is matched by its checksum) or delete "
                "that import (admin: Billing imports)",
                row=int(rows["source_row"].iloc[position]),
                column=source_columns.get("charge_period_start", "charge_period_start"),
            )
        return rows.iloc[rest], lanes[rest]

    def finish(self) -> None:
        """Imports whose every row now carries a current key count as current."""
        for pk in self.same_file:
            if (
                self.rekeyed[pk]
                and self.rekeyed[pk] == SpendRecord.objects.filter(billing_import_id=pk).count()
            ):
                BillingImport.objects.filter(pk=pk).update(row_key_scheme=RowKeyScheme.COLUMN_HASH_128)

    def _rekey(self, rows: pd.DataFrame, lanes: np.ndarray) -> np.ndarray:
        """Flags of the rows that are stored rows of this file's legacy import (same row number)."""
        numbers = rows["source_row"].to_numpy()
        stored = dict(
            (number, (pk, key.hex))
            for number, pk, key in SpendRecord.objects.filter(
                billing_import_id__in=list(self.same_file),
                source_row__gte=int(numbers.min()),
                source_row__lte=int(numbers.max()),
            ).values_list("source_row", "billing_import_id", "row_key")
        )
        claimed = np.array([int(number) in stored for number in numbers], dtype=bool)
        new_keys = key_hex(lanes[claimed])
        taken = set(
            key.hex
            for key in SpendRecord.objects.filter(row_key__in=new_keys.tolist()).values_list(
                "row_key", flat=True
            )
        )  # a current row already holds the key (stored twice before): leave the old row be
        pairs = []
        for number, key in zip(numbers[claimed], new_keys, strict=True):
            pk, old = stored[int(number)]
            if key not in taken:
                pairs.append((key, old))
                self.rekeyed[pk] += 1
        _update_keys(pairs)
        return claimed


def _days_of(imports: list[BillingImport]) -> dict[dt.date, BillingImport]:
    """Each UTC day holding rows of these imports, with one of them."""
    if not imports:
        return {}
    by_pk = {item.pk: item for item in imports}
    days = (
        SpendRecord.objects.filter(billing_import_id__in=list(by_pk))
        .annotate(day=TruncDate("charge_period_start", tzinfo=dt.UTC))
        .values_list("day", "billing_import_id")
        .distinct()
    )
    return {day: by_pk[pk] for day, pk in days}


def _update_keys(pairs: list[tuple[str, str]]) -> None:
    """Give stored rows (old key) their new keys, in batches."""
    table = connection.ops.quote_name(SpendRecord._meta.db_table)
    with connection.cursor() as cursor:
        for start in range(0, len(pairs), REKEY_BATCH):
            cursor.executemany(
                f"UPDATE {table} SET row_key = %s WHERE row_key = %s",  # noqa: S608 (name from the model)
                pairs[start : start + REKEY_BATCH],
            )
