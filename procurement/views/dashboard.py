"""The dashboard: what changed lately, where each stored workload runs cheapest, and rent-or-buy verdicts."""

from __future__ import annotations

from django.shortcuts import render

from procurement import selectors, services


def dashboard_page(request):
    return render(
        request,
        "procurement/dashboard.html",
        {
            "events": [
                # an unsent event says why: nothing configured to send it to, or not sent yet
                item
                | {
                    "no_target": not item["event"].notified_at
                    and not services.change_event_has_target(item["event"])
                }
                for item in selectors.recent_change_events()
            ],
            "workloads": selectors.workloads_with_latest_option(),
            "studies": selectors.current_tco_studies(),
        },
    )
