"""Page routes of the procurement app."""

from django.urls import path

from procurement.views import benchmarks, costing, dashboard, sizing

urlpatterns: list = [
    path("dashboard/", dashboard.dashboard_page, name="dashboard"),
    path("tco/", costing.tco_list_page, name="tco-list"),
    path("tco/<int:pk>/", costing.tco_detail_page, name="tco-detail"),
    path("workloads/<int:workload_id>/recommendations/", costing.recommendation_page, name="recommendations"),
    path("size/", sizing.sizing_page, name="sizing"),
    path("benchmarks/", benchmarks.benchmark_list_page, name="benchmark-list"),
    path("benchmarks/calibration/", benchmarks.calibration_page, name="benchmark-calibration"),
    path("benchmarks/<int:pk>/", benchmarks.benchmark_detail_page, name="benchmark-detail"),
]
