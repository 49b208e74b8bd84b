"""Read-only API over the catalog and current prices."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.roles import VIEWER, role_permission
from pricing.api.serializers import GpuModelSerializer, OfferPriceSerializer
from pricing.models import GpuModel
from pricing.selectors import offer_frame


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
    """Current prices, one row per offer × pricing model; filter by gpu, provider, pricing_model."""

    permission_classes = [role_permission(VIEWER)]

    @extend_schema(
        parameters=[
            OpenApiParameter("gpu", str),
            OpenApiParameter("provider", str),
            OpenApiParameter("pricing_model", str),
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
        frame = offer_frame(**filters)
        return Response(OfferPriceSerializer(frame.to_dict("records"), many=True).data)
