"""Where the imports' Parquet datasets live (issue 28, item 1): a folder (settings.BILLING_DATASET_DIR) or,
when settings.BILLING_DATASET_URL is set, an S3 prefix.

`dataset_root()` gives a `Path` for a folder or an `S3Root` for a prefix; both answer `root / relative`
with something that has `is_file()` and whose `str()` is what DuckDB reads (a path, or an s3:// URL), so
the readers and the writer treat both alike. DuckDB's httpfs extension is downloaded at run time, which
these machines cannot do: DuckDB reads S3 through pyarrow's own S3 client (in the pyarrow wheel),
wrapped as an fsspec filesystem and registered on each connection (`register_on`).

PostgreSQL's BillingImportFile rows are the truth of what exists: a writer uploads an import's whole
dataset before its rows are recorded (S3 has no rename: the objects are written under the import's own
key, which no committed record names yet, so no reader lists them until the transaction commits), and a
file no record names any longer is removed once the deletion commits (`remove_unrecorded`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pyarrow.fs as pafs
from django.conf import settings
from fsspec.implementations.arrow import ArrowFSWrapper

logger = logging.getLogger(__name__)


class S3Root:
    """An s3://bucket/prefix holding the datasets; `self / "import=1/month=2026-01/part-00000.parquet"`
    is an S3Object."""

    def __init__(self, url: str, endpoint: str = "", region: str = ""):
        parts = urlsplit(url)
        self.bucket, self.prefix = parts.netloc, parts.path.strip("/")
        self.endpoint, self.region = endpoint, region
        self._filesystem: pafs.S3FileSystem | None = None

    def __truediv__(self, relative) -> S3Object:
        return S3Object(self, str(PurePosixPath(str(relative))))

    def __str__(self) -> str:
        return f"s3://{self.key('')}".rstrip("/")

    def __eq__(self, other) -> bool:
        return isinstance(other, S3Root) and str(self) == str(other) and self.endpoint == other.endpoint

    def __hash__(self) -> int:
        return hash(str(self))

    def key(self, relative: str) -> str:
        """bucket/prefix/relative, as pyarrow names an object."""
        return "/".join(part for part in (self.bucket, self.prefix, relative.strip("/")) if part)

    def relative(self, url: str) -> str:
        """The path under the root of one of its objects' URLs (what BillingImportFile.path holds)."""
        head = str(self) + "/"
        if not url.startswith(head):
            raise ValueError(f"{url} is not under {self}")
        return url[len(head) :]

    @property
    def filesystem(self) -> pafs.S3FileSystem:
        if self._filesystem is None:
            options = {"region": self.region} if self.region else {}
            if self.endpoint:
                endpoint = urlsplit(self.endpoint)
                options.update(endpoint_override=endpoint.netloc, scheme=endpoint.scheme)
            self._filesystem = pafs.S3FileSystem(**options)
        return self._filesystem

    def upload(self, folder: Path, name: str) -> None:
        """Every file under the local `folder` to `name/...` under the root, whatever was at `name`
        before removed first (an orphan: see DatasetWriter.finish)."""
        self.remove_tree(name)
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            target = self.key(f"{name}/{path.relative_to(folder).as_posix()}")
            pafs.copy_files(
                str(path),
                target,
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=self.filesystem,
            )

    @property
    def client(self):
        """boto3's S3 client for deletions: pyarrow's delete_file/delete_dir leave a directory marker
        object for the parent behind (it keeps "folders" existing), boto3's DeleteObject does not."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint or None, region_name=self.region or None)

    def remove_tree(self, name: str) -> None:
        prefix = self.key(name).split("/", 1)[1] + "/"
        client = self.client
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                client.delete_object(Bucket=self.bucket, Key=item["Key"])

    def remove(self, relative: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.key(relative).split("/", 1)[1])

    def register_on(self, connection) -> None:
        """Let the DuckDB `connection` read this root's s3:// URLs."""
        connection.register_filesystem(_S3ForDuckDB(self.filesystem))


class S3Object:
    def __init__(self, root: S3Root, relative: str):
        self.root, self.relative = root, relative

    def is_file(self) -> bool:
        info = self.root.filesystem.get_file_info(self.root.key(self.relative))
        return info.type == pafs.FileType.File

    @property
    def parent(self) -> S3Object:
        return S3Object(self.root, str(PurePosixPath(self.relative).parent))

    def __str__(self) -> str:
        return f"s3://{self.root.key(self.relative)}"

    def __fspath__(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, S3Object) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


class _S3ForDuckDB(ArrowFSWrapper):
    """pyarrow's S3 client as the fsspec filesystem DuckDB reads s3:// URLs through."""

    protocol = ("s3",)


def dataset_root() -> Path | S3Root:
    """The configured datasets' root: the S3 prefix when BILLING_DATASET_URL is set, else the folder."""
    if settings.BILLING_DATASET_URL:
        return S3Root(
            settings.BILLING_DATASET_URL,
            settings.BILLING_DATASET_S3_ENDPOINT,
            settings.BILLING_DATASET_S3_REGION,
        )
    return Path(settings.BILLING_DATASET_DIR)


def relative_to_root(root: Path | S3Root, name: str) -> str:
    """What BillingImportFile.path holds for the file DuckDB read as `name`."""
    return root.relative(name) if isinstance(root, S3Root) else str(Path(name).relative_to(root))


def register_datasets(connection) -> None:
    """Let the DuckDB `connection` read the datasets wherever they are (nothing to do for a folder)."""
    root = dataset_root()
    if isinstance(root, S3Root):
        root.register_on(connection)


def remove_unrecorded(paths: Iterable[str]) -> None:
    """Remove each dataset file of `paths` (relative to the root) that no BillingImportFile names any
    longer: a deleted import's own files, unless a later import of the same file recorded them too. A
    file already gone is fine; a failure is logged (the import is deleted either way: an unrecorded file
    is never read)."""
    from billing.models import BillingImportFile

    candidates = set(paths)
    still = set(BillingImportFile.objects.filter(path__in=candidates).values_list("path", flat=True))
    root = dataset_root()
    for relative in sorted(candidates - still):
        try:
            _remove(root, relative)
        except Exception as error:  # noqa: BLE001 (botocore's errors too: a removal never fails a deletion)
            logger.warning("billing datasets: could not remove %s under %s: %s", relative, root, error)


def _remove(root: Path | S3Root, relative: str) -> None:
    if isinstance(root, S3Root):
        root.remove(relative)  # S3 deletes a key that is not there without error
        return
    path = root / relative
    path.unlink(missing_ok=True)
    for folder in path.parents:  # the month's and the import's folders once empty, never the root
        if folder == root or root not in folder.parents:
            break
        try:
            folder.rmdir()
        except OSError:
            break
