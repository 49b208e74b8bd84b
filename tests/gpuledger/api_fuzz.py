"""The harness behind test_api_schemathesis.py: the OpenAPI schema as schemathesis loads it, an in-process
WSGI app, and a bounded, seeded hypothesis run of one operation that counts the requests it sent.

The schema is generated from the code (drf-spectacular, the same generator `/api/schema/` serves), so an
endpoint another change adds is fuzzed without editing this file.
"""

from __future__ import annotations

import json

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def openapi_document() -> dict:
    """The schema `/api/schema/` serves, as JSON-compatible data (Decimal and lazy text rendered)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    raw = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(raw, renderer_context={}))


def load_schema() -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(openapi_document())


def operations(schema) -> list:
    """Every operation of the schema; one that schemathesis cannot read fails the suite (never skipped)."""
    found = []
    for result in schema.get_all_operations():
        found.append(result.ok())  # raises on an operation whose schema is invalid
    return found


def in_process_wsgi_app():
    """Django's WSGI handler: the whole stack a request meets in production (middleware included)."""
    from django.core.handlers.wsgi import WSGIHandler

    return WSGIHandler()


def case_strategy(operation, known_path_values: dict[str, list]):
    """Valid and invalid requests, plus valid ones aimed at objects that exist (a random id is a 404 nearly
    every time, so the 200 answer of a detail endpoint would otherwise go unchecked)."""
    strategies = [
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    ]
    names = [parameter.name for parameter in operation.path_parameters]
    if names and all(known_path_values.get(name) for name in names):
        fixed = st.fixed_dictionaries({name: st.sampled_from(known_path_values[name]) for name in names})
        strategies.append(
            fixed.flatmap(
                lambda values: operation.as_strategy(
                    generation_mode=GenerationMode.POSITIVE, path_parameters=values
                )
            )
        )
    return st.one_of(strategies)


def fuzz_operation(
    operation, *, app, headers: dict[str, str], max_examples: int, known_path_values: dict
) -> int:
    """Send up to `max_examples` generated requests (seeded: the same ones every run), check each answer
    against the schema, and return how many were sent. A failure is shrunk to its smallest request and
    raised with a curl line that reproduces it."""
    sent = 0

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(case=case_strategy(operation, known_path_values))
    def run(case):
        nonlocal sent
        response = case.call(app=app, headers=headers)
        sent += 1
        case.validate_response(response, checks=CHECKS, headers=headers)

    run()
    return sent
