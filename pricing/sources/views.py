"""The /status/ page: is the price data fresh, and what did the last refreshes do?"""

from django.shortcuts import render
from django.utils import timezone

from gpuledger.roles import VIEWER, role_required
from pricing.sources.status import status_overview


@role_required(VIEWER)
def status_page(request):
    return render(request, "scheduler/status.html", status_overview(now=timezone.now()))
