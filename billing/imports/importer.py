"""Import one billing file: pick its reader, say in one line when it is another format, store it.

Each file is all or nothing: on the first bad cell the file's transaction rolls back, every row of
it counts as rejected and the error (file:row:column) is kept for the caller to show.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from django.conf import settings

from billing.imports import azure_cost_details, cur, focus, utilization
from billing.imports.arrow_memory import map_large_blocks, use_returning_pool
from billing.imports.bounds import FileOutOfBounds, check_bounds
from billing.imports.chunks import check_text, count_rows, file_kind, header
from billing.imports.column_maps import looks_like_legacy_cur, looks_like_oci_cost_report
from billing.imports.records import BillingFileError, WrongFormatError, blocks, tag_mapping
from billing.imports.tag_formats import TagNotes
from billing.storage.keys import export_part
from billing.storage.store import ImportResult, file_sha256, store_chunks

FORMAT_NAMES = {
    "focus": "a FOCUS export",
    "cur": "an AWS CUR 2.0 export",
    "azure": "an Azure cost details export (actual or amortized cost)",
    "utilization": "a GPU utilization file",
}


def _noting_tags(chunks: Iterator, notes: TagNotes) -> Iterator:
    """The reader's chunks, each looked at by `notes` on its way to the store."""
    for chunk in chunks:
        notes.note(chunk)
        yield chunk


def detect_format(path: Path) -> str | None:
    if path.suffix.lower() == ".json":
        return "utilization"
    try:
        columns = header(path)
    except BillingFileError as error:
        if error.row is not None and error.row > 1:
            # the header line read well, a later one did not (header() decodes ahead of it: a byte that
            # is not UTF-8, a NUL): that line is the file's problem, not an unknown format (issue 28)
            raise
        return None
    except OSError:
        return None
    if azure_cost_details.looks_like_azure_cost_details(columns):
        return "azure"  # before FOCUS: it shares BillingCurrency and BillingAccountId with FOCUS
    if focus.looks_like_focus(columns):
        return "focus"
    if cur.looks_like_cur(columns):
        return "cur"
    if utilization.looks_like_dcgm(columns):
        return "utilization"
    return None


def _is_oci_cost_report(path: Path) -> bool:
    try:
        return looks_like_oci_cost_report(header(path))
    except (OSError, BillingFileError):
        return False  # the reader names what is wrong with such a file


def import_file(
    path: Path,
    *,
    fmt: str | None = None,
    provider: str = "",
    user=None,
    progress_factory: Callable[[int, str], Callable[[int], None]] | None = None,
) -> ImportResult:
    file = str(path)
    use_returning_pool()  # Arrow hands freed memory back: the peak stays under 512 MiB at 5M rows
    map_large_blocks()  # and so do the C heap's large blocks: the peak stays flat as the file grows
    checksum = _checksum_meanwhile(path)  # read on another thread while the bounds are checked
    check_bounds(path)  # a decompression bomb or a file of one endless line stops here, early
    detected = detect_format(path)
    if detected is None and fmt != "utilization" and _is_oci_cost_report(path):
        # "no known header; give --format" sent the user to a --format that cannot read it either
        raise WrongFormatError(
            file,
            "this is an OCI cost report (lineItem/referenceNo, product/service, cost/myCost), not FOCUS; "
            "import the tenancy's FOCUS report instead",
        )
    if fmt and detected and detected != fmt:
        name = FORMAT_NAMES[detected]
        if detected == "cur" and looks_like_legacy_cur(header(path)):
            name = "an AWS legacy CUR export"
        raise WrongFormatError(file, f"this is {name}, not {FORMAT_NAMES[fmt]} (--format {fmt})")
    fmt = fmt or detected
    if fmt is None:
        raise WrongFormatError(
            file,
            "not a FOCUS, CUR (2.0 or legacy), Azure cost details or utilization file (no known header); "
            "give --format",
        )
    if fmt == "utilization":
        return utilization.import_utilization(path, user=user)
    progress = progress_factory(count_rows(path), path.name) if progress_factory else None
    columns = header(path)
    if fmt == "focus":
        chunks = focus.read_focus(
            path, provider=provider, instance_types=getattr(settings, "BILLING_INSTANCE_TYPES", {})
        )
        source_columns = focus.source_columns(columns)
    elif fmt == "azure":
        chunks = azure_cost_details.read_azure_cost_details(path, provider=provider or "azure")
        source_columns = azure_cost_details.source_columns(columns)
    else:
        chunks = cur.read_cur(path, provider=provider or "aws")
        source_columns = cur.source_columns(columns)
    tags_column = "resource_tags" if fmt == "cur" else "Tags"  # the column the readers take tags from
    notes = TagNotes(file, tags_column, tag_mapping().named_keys())
    # a file imported before is recognized by its checksum before a line is read; a file no import of the
    # same size is (file_bytes) is read and stored while the checksum is computed (store_chunks)
    return store_chunks(
        _noting_tags(chunks, notes),
        file_name=path.name,
        source_format=fmt,
        provider=provider,
        sha256=checksum,
        user=user,
        progress=progress,
        location=file,
        source_columns=source_columns,
        part=export_part(path.name),  # identical lines of two parts of one export are two charges
        warnings=notes.lines,  # once every chunk is read; stored on the import
        file_bytes=path.stat().st_size,
    )


def _checksum_meanwhile(path: Path) -> Future:
    """file_sha256 on a thread of its own (hashlib releases the GIL), computed while check_bounds scans the
    file: the checksum is still known before a line is read (store_chunks' shortcut for a file imported
    before), at no extra pass over the file on the importing thread."""
    computing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="billing-checksum")
    try:
        return computing.submit(_checksum_checking_text, path)
    finally:
        computing.shutdown(wait=False)  # its thread ends once the checksum is computed


def _checksum_checking_text(path: Path) -> str:
    """The file's sha256 and, for a plain CSV, in the same pass, that every byte is UTF-8: Arrow checks only
    the columns a reader asks for, so a bad byte in any other column was stored silently (outside round x28).
    A block of ASCII, the usual bill, costs one `isascii`; the decoder runs on the others and on a block
    after one that ended inside a character. A bad byte is named by its line (chunks.check_text), raised
    where the checksum is asked for, before a line is stored. A gzip file is checked by Arrow's parse only."""
    if file_kind(path) != "csv":
        return file_sha256(path)
    digest, decoder = hashlib.sha256(), codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as handle:
            for block in blocks(handle):
                digest.update(block)
                if not block.isascii() or decoder.getstate()[0]:
                    decoder.decode(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        check_text(path)  # raises, naming the line and the byte
        raise BillingFileError(str(path), "not UTF-8 text") from None
    return digest.hexdigest()


def import_files(
    paths, *, fmt=None, provider="", user=None, progress_factory=None, import_one=None
) -> ImportResult:
    """Every file on its own (one bad file does not stop the others); errors collected in the result.
    `import_one` imports one file (import_file by default; restate.import_restating for --restate)."""
    total = ImportResult()
    import_one = import_one or import_file
    for path in paths:
        path = Path(path)
        try:
            total.add(
                import_one(path, fmt=fmt, provider=provider, user=user, progress_factory=progress_factory)
            )
        except BillingFileError as error:
            total.errors.append(str(error))
            try:
                counted = not isinstance(error, WrongFormatError | FileOutOfBounds)  # never re-read a bomb
                total.rejected += count_rows(path) if counted else 0
            except (OSError, BillingFileError):
                pass  # an unreadable file: its rows cannot be counted either
    return total
