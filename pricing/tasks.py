"""Celery tasks of the pricing app: thin wrappers that call one service each."""

from celery import shared_task

from pricing.catalog import catalog_load


@shared_task(name="pricing.load_bundled_catalog")
def load_bundled_catalog() -> dict:
    """Load the bundled catalog; returns the change counts (JSON-serializable)."""
    report = catalog_load()
    return {
        "changes": {name: count.changed for name, count in report.changes.items()},
        "prices_inserted": report.prices.inserted if report.prices else 0,
        "total_changes": report.total_changes,
    }
