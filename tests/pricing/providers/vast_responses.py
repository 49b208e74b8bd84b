"""Recorded-shape answers of Vast's offer search, ``GET https://console.vast.ai/api/v0/bundles/?q=...``.

The keys, types and units are those Vast's CLI and SkyPilot's catalog fetcher read (vast-ai/vast-python
``vast.py`` ``search offers``: rows under ``offers``; skypilot ``sky/catalog/data_fetchers/fetch_vast.py``:
``cpu_ram`` and ``gpu_total_ram`` in MB, i.e. MiB, ``search.totalHour`` beside ``dph_total``). The values
are written for the tests (the prices are near the bundled SkyPilot Vast snapshot's: a 1x RTX 4090 at
0.35 $/h, an 8x H100 SXM at about 2 $/GPU-hour); they are not a capture of a live answer.
"""

from __future__ import annotations

import copy
import json
from urllib.parse import parse_qs, urlsplit

from pricing.providers.http_api import HttpAnswer
from tests.pricing.providers.fake_http import FakeHttp


def offer(offer_id: int, gpu_name: str, num_gpus: int, dph_total: float, min_bid: float, **overrides) -> dict:
    """One ask as the search returns it (the fields gpuledger reads plus the usual others)."""
    gpu_ram = overrides.pop("gpu_ram", 24564)
    row = {
        "id": offer_id,
        "ask_contract_id": offer_id,
        "bundle_id": offer_id + 7_000_000,
        "machine_id": offer_id % 9973,
        "host_id": 41_000 + offer_id % 97,
        "gpu_name": gpu_name,
        "num_gpus": num_gpus,
        "gpu_ram": gpu_ram,
        "gpu_total_ram": gpu_ram * num_gpus,
        "gpu_frac": 1.0,
        "compute_cap": 890,
        "cpu_name": "AMD EPYC 7B13",
        "cpu_cores": 128,
        "cpu_cores_effective": 16.0 * num_gpus,
        "cpu_ram": 64414 * num_gpus,
        "disk_space": 512.3,
        "disk_bw": 3512.4,
        "inet_down": 912.5,
        "inet_up": 805.1,
        "direct_port_count": 40,
        "dph_base": round(dph_total - 0.011, 6),
        "dph_total": dph_total,
        "min_bid": min_bid,
        "storage_cost": 0.15,
        "reliability2": 0.9953,
        "rentable": True,
        "rented": False,
        "verified": True,
        "external": False,
        "geolocation": "Texas, US",
        "pci_gen": 4.0,
        "pcie_bw": 24.8,
        "dlperf": 81.3,
        "dlperf_per_dphtotal": 232.2,
        "total_flops": 82.6,
        "duration": 2_592_000.0,
        "end_date": 1_796_000_000.0,
        "search": {"gpuCostPerHour": dph_total - 0.011, "diskHour": 0.011, "totalHour": dph_total},
    }
    row.update(overrides)
    return row


RTX_4090 = offer(21_501, "RTX 4090", 1, 0.35, 0.18)
H100_SXM_8 = offer(21_536, "H100 SXM", 8, 16.008, 9.6, gpu_ram=81559, geolocation="Quebec, CA")
A100_SXM4_80_2 = offer(21_840, "A100 SXM4", 2, 1.602, 0.0, gpu_ram=81920, geolocation="Norway, NO")


def answer(*offers: dict) -> bytes:
    return json.dumps({"offers": [copy.deepcopy(o) for o in offers]}).encode()


HTML_ERROR_PAGE = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
    b"</h1></center><hr><center>nginx</center></body></html>"
)
EMPTY = b'{"offers": []}'


def ok_json(body: bytes) -> HttpAnswer:
    """A 200 answer of the search, headers as Vast's gateway sends them."""
    return HttpAnswer(200, body, {"Content-Type": "application/json"})


class RecordedTransport(FakeHttp):
    """Recorded answers in order (tests/pricing/providers/fake_http.py), and the searches asked for."""

    @property
    def urls(self) -> list[str]:
        return [url for url, _headers in self.calls]

    def queries(self) -> list[dict]:
        return [json.loads(parse_qs(urlsplit(url).query)["q"][0]) for url in self.urls]
