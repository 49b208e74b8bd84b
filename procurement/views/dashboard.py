"""The dashboard: what changed lately, where each stored workload runs cheapest, and rent-or-buy verdicts."""

from __future__ import annotations

from django.shortcuts import render

from procurement import selectors


def dashboard_page(request):
    return render(
        request,
        "procurement/dashboard.html",
        {
            "events": selectors.recent_change_events(),
            "workloads": selectors.workloads_with_latest_option(),
            "studies": selectors.current_tco_studies(),
        },
    )
