"""python manage.py load_demo_commitments [FILE]: load commitment prices from a JSON file (default: the
bundled illustrative AWS file, pricing/data/providers/aws_commitments_illustrative.json), idempotently.

The bundled catalog has no commitment prices; this puts a few on the offer pages of p5.48xlarge,
p4d.24xlarge and g6e.xlarge in us-east-1 for the demo (`make run` runs it). They are labelled
illustrative: never ranked, never used by the spend review. `--source` names real ones (e.g. a quote).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from pricing.ingest import ingest_price_records
from pricing.providers.commitments_file import read_commitment_file
from pricing.providers.records import SourceRowError

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "providers" / "aws_commitments_illustrative.json"


class Command(BaseCommand):
    help = "Load commitment prices (reserved, savings plans) from a JSON file; default: the illustrative demo file."

    def add_arguments(self, parser):
        parser.add_argument("file", nargs="?", default=str(BUNDLED))
        parser.add_argument("--provider", default="aws")
        parser.add_argument("--source", default="", help="default: illustrative:<file name>")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            result = ingest_price_records(
                read_commitment_file(path, provider=options["provider"], source=options["source"])
            )
        except (SourceRowError, ValueError, KeyError) as error:
            raise CommandError(f"{path.name}: {error}") from None
        self.stdout.write(
            f"{path.name}: {result.seen} commitment prices, {result.inserted} new, {result.unchanged} unchanged"
        )
