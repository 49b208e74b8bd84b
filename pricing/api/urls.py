"""API routes of the pricing app."""

from django.urls import path

from pricing.api import views
from pricing.api.spot_history import OfferSpotHistory

urlpatterns = [
    path("gpus/", views.GpuModelList.as_view(), name="api-gpu-list"),
    path("gpus/<slug:slug>/", views.GpuModelDetail.as_view(), name="api-gpu-detail"),
    path("offers/", views.OfferPriceList.as_view(), name="api-offer-list"),
    path("offers/<int:pk>/spot-history/", OfferSpotHistory.as_view(), name="api-offer-spot-history"),
]
