"""`python -m tests.faults.driver ACTION ...`: app code run as its own process by the fault tests, with
DATABASE_URL and REDIS_URL pointing at their private instances.

- `refresh FILE [--pause-file P --go-file G]`: one refresh (pricing.sources.refresh.refresh_run, the code of the
  beat task and of `refresh_prices`) of a generic price CSV. With the two files it stops half-way through
  the rows (inside the ingest transaction, holding the refresh lock), creates P and waits for G, so a
  test can fault a service or race a second run at a known point.
- `events N`: one workload with an e-mail target and N change events through the outbox service.
- `stored N`: N workloads with a stored recommendation whose cheapest price then rises fourfold.

Prints one JSON line with the outcome; a failure exits 1 with one line naming the error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

PAUSE_LIMIT_S = 120


def _paused(records, pause_file: Path, go_file: Path):
    records = list(records)
    half = len(records) // 2
    yield from records[:half]
    pause_file.touch()
    deadline = time.monotonic() + PAUSE_LIMIT_S
    while not go_file.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{go_file} never appeared")
        time.sleep(0.05)
    yield from records[half:]


def refresh(args) -> dict:
    from pricing.providers.aws import AwsReadStats
    from pricing.providers.generic_csv import read_generic_csv
    from pricing.sources.refresh import refresh_run
    from pricing.sources.registry import Fetch, Source

    def fetch(region, now):
        records = read_generic_csv(args.file)
        if args.pause_file:
            records = _paused(records, Path(args.pause_file), Path(args.go_file))
        return Fetch(records, AwsReadStats())

    run = refresh_run(Source("faults-csv", fetch, lambda: ["faults"]), "faults")
    return {"refresh_id": run.pk, "status": run.status, "rows_inserted": run.rows_inserted}


def events(args) -> dict:
    from procurement.choices import ChangeKind
    from procurement.models import ChangeEvent, Workload
    from procurement.services.notifications import change_events_create

    spec = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
    workload = Workload.objects.create(name="q", task="qlora", spec=spec, notify_email="owner@example.com")
    created = change_events_create(
        [
            ChangeEvent(kind=ChangeKind.CHEAPEST_OPTION, workload=workload, before={}, after={})
            for _ in range(args.count)
        ]
    )
    return {"events": [event.pk for event in created]}


def stored(args) -> dict:
    """`count` workloads with a stored recommendation, then a fourfold rise of their cheapest price, so a
    recompute has a new result and change events to store for each."""
    import datetime as dt

    from pricing.models import PriceObservation
    from procurement.models import Workload
    from procurement.services.recommendations import recommendation_create

    spec = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
    recommendations = []
    for number in range(args.count):
        workload = Workload.objects.create(
            name=f"q{number}", task="qlora", spec=spec, notify_email="o@example.com"
        )
        recommendations.append(recommendation_create(workload=workload, parameters={"top": 5})[0])
    cheapest = PriceObservation.objects.get(pk=recommendations[0].results[0]["observation_id"])
    PriceObservation.objects.create(
        offer=cheapest.offer,
        pricing_model=cheapest.pricing_model,
        payment_option=cheapest.payment_option,
        amount_per_hour=cheapest.amount_per_hour * 4,
        currency=cheapest.currency,
        observed_at=cheapest.observed_at + dt.timedelta(seconds=1),
        source="faults: price rise",
    )
    return {"workloads": [r.workload_id for r in recommendations]}


def main(argv: list[str]) -> int:
    import django

    django.setup()
    parser = argparse.ArgumentParser(prog="tests.faults.driver")
    actions = parser.add_subparsers(dest="action", required=True)
    run = actions.add_parser("refresh")
    run.add_argument("file", type=Path)
    run.add_argument("--pause-file")
    run.add_argument("--go-file")
    make = actions.add_parser("events")
    make.add_argument("count", type=int)
    store = actions.add_parser("stored")
    store.add_argument("count", type=int)
    args = parser.parse_args(argv)
    try:
        outcome = {"refresh": refresh, "events": events, "stored": stored}[args.action](args)
    except Exception as error:  # noqa: BLE001 (the test reads this line and the stored rows)
        print(json.dumps({"failed": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}))
        return 1
    print(json.dumps(outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
