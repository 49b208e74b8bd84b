"""The billing export sources' part of /status/ (scheduler/templates/scheduler/status.html loads it as
a tag, so the price status view, in an app below billing, imports nothing of billing). No money: the
page is every role's; it says what was imported when, and which months were restated."""

from __future__ import annotations

from django import template

from billing.models import BillingExportSource

register = template.Library()
MONTHS_SHOWN = 6


@register.inclusion_tag("billing/_export_status.html")
def billing_export_status() -> dict:
    sources = list(BillingExportSource.objects.all())
    for source in sources:
        source.recent = list(source.deliveries.all()[:MONTHS_SHOWN])
    return {"export_sources": sources}
