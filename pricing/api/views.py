"""Read-only API over the catalog and current prices."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.pagination import LIST_PAGE_PARAMETERS, ListBodyPage
from gpuledger.roles import VIEWER, role_permission
from pricing.api.serializers import GpuModelSerializer, OfferPriceSerializer
from pricing.models import GpuModel
from pricing.offer_pages import current_price_count, offer_frame_page
from pricing.price_cache import read_until_stale
from pricing.selectors import next_staleness_change


class GpuModelList(generics.ListAPIView):
    permission_classes = [role_permission(VIEWER)]
    queryset = GpuModel.objects.all()
    serializer_class = GpuModelSerializer
    filterset_fields = ["vendor", "architecture"]


class GpuModelDetail(generics.RetrieveAPIView):
    permission_classes = [role_permission(VIEWER)]
    queryset = GpuModel.objects.all()
    serializer_class = GpuModelSerializer
    lookup_field = "slug"


class OfferPriceList(APIView):
    """Current prices, one row per offer × pricing model; filter by gpu, provider, pricing_model.

    The body stays a plain list (clients rely on it); it is one page (`limit`, `offset`) in the order
    offer, pricing model, payment option, with the total and the next page in headers."""

    permission_classes = [role_permission(VIEWER)]

    @extend_schema(
        parameters=[
            OpenApiParameter("gpu", str),
            OpenApiParameter("provider", str),
            OpenApiParameter("pricing_model", str),
            *LIST_PAGE_PARAMETERS,
        ],
        responses=OfferPriceSerializer(many=True),
    )
    def get(self, request):
        filters = {}
        if gpu := request.query_params.get("gpu"):
            filters["offer__instance_type__gpu__slug"] = gpu
        if provider := request.query_params.get("provider"):
            filters["offer__instance_type__provider__slug"] = provider
        if model := request.query_params.get("pricing_model"):
            filters["pricing_model"] = model
        page = ListBodyPage.from_request(request)

        def build(now):
            frame = offer_frame_page(limit=page.limit, offset=page.offset, now=now, **filters)
            rows = OfferPriceSerializer(frame.to_dict("records"), many=True).data
            return (list(rows), offer_count(filters)), next_staleness_change(frame)

        # the same page is asked for again and again between price changes (pricing/price_cache.py)
        rows, total = read_until_stale("offer-list", build, page.limit, page.offset, sorted(filters.items()))
        return Response(rows, headers=page.headers(request, total=total))


def offer_count(filters: dict) -> int:
    """The total under these filters, one count per price version for every page (a COUNT over every
    current price is a fifth of a page's build); it changes with prices only, never with the clock."""
    return read_until_stale(
        "offer-count", lambda now: (current_price_count(**filters), None), sorted(filters.items())
    )
