"""Submitted documents (workload specs, TCO studies, ranking parameters) as JSON-storable data."""

from __future__ import annotations

import json
from typing import Any


def plain_json(document: object) -> Any:
    """The submitted document as JSON-storable data (YAML/JSON decimals become strings, exactly)."""
    return json.loads(json.dumps(document, default=str))
