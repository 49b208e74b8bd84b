"""The dashboard: what changed lately, where each stored workload runs cheapest, and rent-or-buy verdicts."""

from __future__ import annotations

from django.shortcuts import render

from gpuledger.roles import ENGINEER, role_required
from procurement import selectors, services


@role_required(ENGINEER)
def dashboard_page(request):
    """What the signed-in engineer's teams rely on (an admin sees every team's)."""
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
                for item in selectors.recent_change_events(user=request.user)
            ],
            "workloads": selectors.workloads_with_latest_option(user=request.user),
            "studies": selectors.current_tco_studies(user=request.user),
        },
    )
