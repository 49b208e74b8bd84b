"""Where one request's time goes: wall time, SQL time and query count per load-test endpoint, in process.

    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python benchmarks/load/profile_requests.py

Runs each request of benchmarks/load/run.py once to warm up, then ``--repeat`` times through Django's
test client against the database that run.py seeded (run it first), with query capture on: the SQL
share is the sum of the database's round trips as Django timed them, the rest is Python (views,
pandas, serializers, templates). The median of the repeats is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, choices=range(1, 51), metavar="1..50")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.production")
    os.environ.update(DEBUG="0", SECRET_KEY="profile", ALLOWED_HOSTS="testserver", SECURE_SSL_REDIRECT="0")
    os.environ["GPULEDGER_API_RATE_USER"] = "1000000/second"  # as run.py sets it
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from run import REVIEW_PAGE_PERIOD, REVIEW_PERIOD, WORKLOAD

    from procurement.models import Workload

    users = {name: get_user_model().objects.get(username=name) for name in ("viewer", "engineer", "finance")}
    clients = {}
    for name, user in users.items():
        clients[name] = Client(secure=True)  # secure: production settings set secure cookies
        clients[name].force_login(user)
    workload = Workload.objects.filter(name=WORKLOAD["name"]).order_by("-pk").first()
    if workload is None:
        print(
            "run benchmarks/load/run.py first: it seeds the database and saves the workload", file=sys.stderr
        )
        return 2
    body = json.dumps({"workload_id": workload.pk})
    requests = {
        "offer list API": ("viewer", "get", "/api/offers/?limit=100", {}),
        "catalog page /": ("viewer", "get", "/", {}),
        "stored recommendation page": ("engineer", "get", f"/workloads/{workload.pk}/recommendations/", {}),
        "computed recommendation API": (
            "engineer",
            "post",
            "/api/recommendations/",
            {"data": body, "content_type": "application/json"},
        ),
        "dashboard (finance)": ("finance", "get", "/dashboard/", {}),
        "spend review API": ("finance", "get", f"/api/billing/spend-review/?{REVIEW_PERIOD}", {}),
        "spend review page": ("finance", "get", f"/billing/?{REVIEW_PAGE_PERIOD}", {}),
    }
    print(f"{'request':<30} {'wall ms':>8} {'SQL ms':>8} {'queries':>8} {'SQL share':>9}")
    for name, (role, method, path, extra) in requests.items():
        walls, sqls, counts = [], [], []
        for attempt in range(args.repeat + 1):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = getattr(clients[role], method)(path, **extra)
                wall = time.perf_counter() - started
            if response.status_code >= 300:
                print(f"{name}: status {response.status_code}", file=sys.stderr)
                return 1
            if attempt:  # the first one warms caches and imports
                walls.append(wall * 1000)
                sqls.append(sum(float(query["time"]) for query in queries.captured_queries) * 1000)
                counts.append(len(queries))
        wall, sql = statistics.median(walls), statistics.median(sqls)
        print(f"{name:<30} {wall:>8.0f} {sql:>8.0f} {statistics.median(counts):>8.0f} {sql / wall:>9.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
