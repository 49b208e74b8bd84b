"""Pages of the pricing app: thin shells over selectors."""

from django.shortcuts import get_object_or_404, render

from gpuledger.roles import VIEWER, role_required
from pricing.models import Offer
from pricing.selectors import gpu_catalog_rows
from pricing.spot_charts import spot_history_chart
from pricing.spot_selectors import offer_spot_history


@role_required(VIEWER)
def catalog_page(request):
    """The landing page: the GPU catalog with the cheapest current prices per GPU-hour."""
    query = request.GET.get("q", "").strip().lower()
    rows = gpu_catalog_rows()
    if query:
        rows = [r for r in rows if query in r["gpu"].name.lower() or query in r["gpu"].slug]
    return render(request, "pricing/catalog.html", {"rows": rows, "query": query})


@role_required(VIEWER)
def offer_page(request, pk: int):
    """One offer: spot price over time per zone, with on-demand as a reference line."""
    offer = get_object_or_404(
        Offer.objects.select_related("instance_type__provider", "instance_type__gpu", "region"), pk=pk
    )
    days = 30
    history = offer_spot_history(offer, window_days=days)
    context = {"offer": offer, "history": history, "days": days, "chart": spot_history_chart(history)}
    return render(request, "pricing/offer.html", context)
