"""The capacity plan's shell fixtures (the bundled catalog, the demo bills), shared with the outside review."""

from tests.procurement.capacity_plans.conftest import demo_bills  # noqa: F401
