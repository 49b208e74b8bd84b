"""`manage.py pull_cost_explorer --from YYYY-MM-DD --to YYYY-MM-DD [--tag team]` (--to exclusive)."""

from __future__ import annotations

import datetime as dt

import boto3
from django.core.management.base import BaseCommand, CommandError

from billing.imports.cost_explorer import pages, request_params
from billing.imports.records import BillingFileError
from billing.storage.store import pull_cost_explorer
from pricing.providers.retry import RetryPolicy, TransientSourceError


class Command(BaseCommand):
    help = "Pull daily EC2 cost and usage from AWS Cost Explorer (credentials from the usual AWS chain)."

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="start", required=True)
        parser.add_argument("--to", dest="end", required=True, help="exclusive")
        parser.add_argument("--tag", default="", help="group by this tag instead of PURCHASE_TYPE")

    def handle(self, *args, **options):
        try:
            start, end = dt.date.fromisoformat(options["start"]), dt.date.fromisoformat(options["end"])
            params = request_params(start, end, tag=options["tag"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        client = boto3.client("ce", region_name="us-east-1")  # Cost Explorer's one endpoint
        try:
            result = pull_cost_explorer(
                pages(client, params, RetryPolicy()), start=start, end=end, tag=options["tag"]
            )
        except (BillingFileError, TransientSourceError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(result.line())
