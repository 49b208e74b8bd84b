"""The dashboard: what changed lately, where each stored workload runs cheapest, and rent-or-buy verdicts."""

from __future__ import annotations

from django.shortcuts import render

from billing.access import spend_scope
from gpuledger.roles import ENGINEER, FINANCE, role_required, user_has_role
from procurement import selectors
from procurement.services.notifications import change_event_has_target
from procurement.spend_summary import finance_summary


@role_required(ENGINEER, FINANCE)
def dashboard_page(request):
    """What the signed-in engineer's teams rely on (an admin sees every team's). Finance and admin also
    see the spend panel; an engineer only when an admin granted their team its spend, and then only
    that team's (billing/access.py)."""
    scope = spend_scope(request.user)
    spend = finance_summary(scope=scope) if scope is not None else None
    context = {"events": [], "workloads": [], "studies": [], "spend": spend}
    # workloads and studies are visible to engineers (and admins) only (accounts/teams.py): a finance
    # user's lists are empty, and building three empty querysets was a third of their dashboard's time
    if user_has_role(request.user, ENGINEER):
        context |= {
            "events": [
                # an unsent event says why: nothing configured to send it to, or not sent yet
                item
                | {"no_target": not item["event"].notified_at and not change_event_has_target(item["event"])}
                for item in selectors.recent_change_events(user=request.user)
            ],
            "workloads": selectors.workloads_with_latest_option(user=request.user),
            "studies": selectors.current_tco_studies(user=request.user),
        }
    return render(request, "procurement/dashboard.html", context)
