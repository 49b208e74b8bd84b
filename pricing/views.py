"""Pages of the pricing app: thin shells over selectors."""

from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import get_object_or_404, render
from django.utils.functional import SimpleLazyObject

from gpuledger.roles import VIEWER, role_required
from pricing.catalog_table import catalog_table_version, gpu_catalog_rows
from pricing.models import GpuModel, Offer
from pricing.offer_moves import offer_gpu_type_gone, offer_price_moves
from pricing.offer_prices import offer_price_rows
from pricing.refresh_changes import MOVE_SHARE
from pricing.sources.status import providers_not_refreshed
from pricing.spot_charts import spot_history_chart
from pricing.spot_selectors import offer_spot_history

CATALOG_PAGE_SIZE = 50  # GPU rows per page (the bundled catalog has 33: one page)


@role_required(VIEWER)
def catalog_page(request):
    """The landing page: the GPU catalog with the cheapest current prices per GPU-hour, one page of
    GPUs at a time, searched in SQL."""
    query = request.GET.get("q", "").strip().lower()
    gpus = GpuModel.objects.all()
    if query:
        gpus = gpus.filter(Q(name__icontains=query) | Q(slug__icontains=query))
    page = Paginator(gpus, CATALOG_PAGE_SIZE).get_page(request.GET.get("page"))
    # The table is rendered once per price version, search and page until one of its prices turns stale
    # (pricing/price_cache.py);
    # its rows are read only when that rendering is missing.
    rows = SimpleLazyObject(lambda: gpu_catalog_rows(gpus=page.object_list))
    table_key = f"{catalog_table_version()}:{query}:{page.number}"
    context = {
        "rows": rows,
        "query": query,
        "page": page,
        "table_key": table_key,
        "not_refreshed": SimpleLazyObject(providers_not_refreshed),
    }
    return render(request, "pricing/catalog.html", context)


@role_required(VIEWER)
def offer_page(request, pk: int):
    """One offer: every current price of its instance type in its region side by side (on-demand, spot,
    each commitment, with savings against on-demand), and spot price over time per zone."""
    offer = get_object_or_404(
        Offer.objects.select_related("instance_type__provider", "instance_type__gpu", "region"), pk=pk
    )
    days = 30
    history = offer_spot_history(offer, window_days=days)
    context = {
        "offer": offer,
        "history": history,
        "days": days,
        "chart": spot_history_chart(history),
        "prices": offer_price_rows(offer),
        "moves": offer_price_moves(offer),
        "gpu_type_gone": offer_gpu_type_gone(offer),
        "move_share": MOVE_SHARE,
    }
    return render(request, "pricing/offer.html", context)
