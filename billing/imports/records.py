"""The normalized spend rows every billing source yields, and the errors a bad file raises.

Readers (focus.py, cur.py, cost_explorer.py) turn one source into pandas chunks with exactly
NORMALIZED_COLUMNS; `store.py` is the only code that writes them. Money stays text here (validated
as decimal numbers) so that no cost is ever rounded through a float on its way to the database.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from gpuledger.errors import InputError

NORMALIZED_COLUMNS = [
    "source_row",
    "charge_period_start",
    "charge_period_end",
    "billing_period_start",
    "charge_category",
    "is_correction",
    "provider",
    "billing_account_id",
    "sub_account_id",
    "sub_account_name",
    "region",
    "availability_zone",
    "resource_id",
    "resource_type",
    "service_category",
    "sku_id",
    "instance_type",
    "pricing_category",
    "commitment_discount_id",
    "commitment_status",
    "consumed_quantity",
    "consumed_unit",
    "billed_cost",
    "effective_cost",
    "list_cost",
    "contracted_cost",
    "currency",
    "tags",
    "commitment_type",
    "commitment_family",
    "commitment_end",
    "is_refund",
]
# What a row says of its commitment beyond its id and status (commitment_attribution.py): the kind
# ("Reservation", "EC2 Instance Savings Plan"...), the instance family it is scoped to ("p5"; "" for a
# flexible or spend-based one) and the end of its term (NaT where the export does not say). Not part
# of a row's key (keys.py), so rows stored before these columns existed keep their keys.
COMMITMENT_COLUMNS = ("commitment_type", "commitment_family", "commitment_end")
# A refund of a charge (CUR's Refund line; Azure's Refund; FOCUS's negative Usage, Purchase or Tax): the invoice view's own line
# (invoice/lines.py). Not part of a row's key either, for the same reason.
LABEL_COLUMNS = ("is_refund",)

# The export's own id of a line where it has one (CUR 2.0's identity_line_item_id): part of the row key
# (keys.py), so identical lines under two ids stay two charges. Not stored; "" where the line has none.
LINE_ID = "line_id"

MAX_ROWS_PER_FILE = 20_000_000  # a bound on what one import may hold in a transaction
CHUNK_ROWS = 100_000
READ_BLOCK = 1 << 20


def blocks(handle, size: int = READ_BLOCK):
    """The bytes of a binary file `handle`, in blocks of `size`, read into one buffer reused from block to
    block (a bytearray: find, count, isascii, hashlib and the decoders take it; a block is valid until the
    next one is read, so a caller that keeps one keeps a copy). `handle.read(size)` made a new object a
    block, and at 1 MiB each was a fresh mapping of the C heap (arrow_memory.MMAP_THRESHOLD), every page
    of it faulted in: the checksum's and the bounds' passes took 0.4 s of system time a million bench
    rows (issue 28). The last, short block comes as a bytearray of its own."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    while True:
        count = handle.readinto(view)
        if not count:
            return
        yield buffer if count == size else bytearray(view[:count])


class BillingFileError(InputError):
    """A file that cannot be imported; names the file, the row (CSV line, 1 = header) and the column."""

    def __init__(self, file: str, message: str, *, row: int | None = None, column: str | None = None):
        self.row = row
        text = ":".join([file] + ([str(row)] if row is not None else []) + ([column] if column else []))
        super().__init__(message=message, file=file, line=row, column=column, text=f"{text}: {message}")


class WrongFormatError(BillingFileError):
    """The file is another format than the one asked for (said in one line)."""


@dataclass(frozen=True)
class TagMapping:
    """Which tags give team, project and environment (first present wins), and mark interruptible work."""

    team: tuple[str, ...] = ("team", "cost-center")
    project: tuple[str, ...] = ("project",)
    environment: tuple[str, ...] = ("environment", "env")
    interruptible: str = "interruptible"

    @classmethod
    def from_settings(cls, value: dict | None) -> TagMapping:
        if not value:
            return cls()
        return cls(
            team=tuple(value.get("team", cls.team)),
            project=tuple(value.get("project", cls.project)),
            environment=tuple(value.get("environment", cls.environment)),
            interruptible=value.get("interruptible", cls.interruptible),
        )

    def pick(self, tags: dict, keys: tuple[str, ...]) -> str:
        """The first of `keys` whose value names something (tag_name); "" for none. A value that names
        nothing (an object, an array, a boolean) counts as absent: such a row is untagged, never a team
        called by Python's text of the value (the import warns of it: tag_formats.TagNotes)."""
        lowered = {str(k).lower(): v for k, v in tags.items()}
        for key in keys:
            name = tag_name(lowered.get(key.lower()))
            if name:
                return name[:100]
        return ""

    def named_keys(self) -> tuple[str, ...]:
        """The tags that give a name (team, project, environment), lower-cased."""
        return tuple(k.lower() for k in (*self.team, *self.project, *self.environment))


def tag_name(value) -> str:
    """The name a tag value gives a team, project or environment: a string as written; a JSON number as
    its JSON text (a cost center 1234 is "1234", 12.5 is "12.5"), since FOCUS and CUR tag values are
    strings and a number is one written without quotes; "" for none (null, "") and for a value that is
    no name: an object, an array, a boolean or a non-finite number (FOCUS 1.2 "Tags": key/value pairs of
    strings; Azure's and GCP's tag/label values are strings too)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ""
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return json.dumps(value)
    return ""


def tag_mapping() -> TagMapping:
    """The deployment's tag mapping (settings.BILLING_TAG_MAPPING; the defaults where unset)."""
    from django.conf import settings

    return TagMapping.from_settings(getattr(settings, "BILLING_TAG_MAPPING", None))
