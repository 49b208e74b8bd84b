"""Pages of the pricing app: thin shells over selectors."""

from django.shortcuts import render

from pricing.selectors import gpu_catalog_rows


def catalog_page(request):
    """The landing page: the GPU catalog with the cheapest current prices per GPU-hour."""
    query = request.GET.get("q", "").strip().lower()
    rows = gpu_catalog_rows()
    if query:
        rows = [r for r in rows if query in r["gpu"].name.lower() or query in r["gpu"].slug]
    return render(request, "pricing/catalog.html", {"rows": rows, "query": query})
