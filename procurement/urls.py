"""Page routes of the procurement app."""

from django.urls import path

from procurement.views import costing, sizing

urlpatterns: list = [
    path("tco/", costing.tco_list_page, name="tco-list"),
    path("tco/<int:pk>/", costing.tco_detail_page, name="tco-detail"),
    path("workloads/<int:workload_id>/recommendations/", costing.recommendation_page, name="recommendations"),
    path("size/", sizing.sizing_page, name="sizing"),
]
