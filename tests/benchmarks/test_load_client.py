"""The load client (benchmarks/load/client.py): nearest-rank percentiles, errors counted, runs bounded."""

from __future__ import annotations

import importlib.util
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "benchmarks" / "load" / "client.py"


def load_client():
    spec = importlib.util.spec_from_file_location("load_client", CLIENT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["load_client"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


client = load_client()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as gunicorn answers

    def do_GET(self):  # noqa: N802 (http.server's name)
        status = 200 if self.path == "/ok" else 500
        body = b"fine" if status == 200 else b"broken"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_percentiles_are_nearest_rank():
    # NIST e-Handbook 7.2.6.2 nearest rank: sample ceil(p/100 * n) of the sorted samples
    samples = [0.4, 0.1, 0.3, 0.2]
    assert [client.percentile(samples, p) for p in (50, 95, 99, 100)] == [0.2, 0.4, 0.4, 0.4]
    assert client.percentile(list(range(1, 101)), 95) == 95
    assert client.percentile([7.0], 1) == 7.0
    with pytest.raises(ValueError):
        client.percentile([], 50)


def scenario(path: str):
    return client.Scenario(path, "stored", lambda n: client.Request("GET", path))


def test_a_level_stops_at_its_request_budget_and_counts_no_errors_on_2xx(server):
    result = client.run_level(server, scenario("/ok"), users=4, seconds=30, max_requests=40)
    assert result.requests == 40 and result.errors == 0 and dict(result.statuses) == {200: 40}
    assert result.seconds < 30  # the budget ended it, not the clock
    figures = result.as_dict()
    assert figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]


def test_every_non_2xx_answer_and_refused_connection_is_an_error(server):
    bad = client.run_level(server, scenario("/bad"), users=2, seconds=30, max_requests=10)
    assert bad.errors == bad.requests == 10 and dict(bad.statuses) == {500: 10}
    assert "500" in bad.error_samples[0]
    closed = "http://127.0.0.1:9"  # discard port: nothing listens on loopback
    refused = client.run_level(closed, scenario("/ok"), users=1, seconds=30, max_requests=3)
    assert refused.errors == refused.requests == 3 and not refused.statuses


def test_a_level_ends_at_its_time_limit(server):
    result = client.run_level(server, scenario("/ok"), users=2, seconds=0.3, max_requests=10**6)
    assert 0 < result.requests < 10**6 and 0.3 <= result.seconds < 5
