"""Page routes of the procurement app."""

from django.urls import path

from procurement.views import benchmarks, costing, dashboard, sizing, tco_forms, workloads
from procurement.views.reports import report_urlpatterns

urlpatterns: list = [
    path("dashboard/", dashboard.dashboard_page, name="dashboard"),
    path("tco/", costing.tco_list_page, name="tco-list"),
    path("tco/<int:pk>/", costing.tco_detail_page, name="tco-detail"),
    path("tco/new/", tco_forms.tco_new_page, name="tco-new"),
    path("tco/<int:pk>/edit/", tco_forms.tco_edit_page, name="tco-edit"),
    path("tco/<int:pk>/duplicate/", tco_forms.tco_duplicate_page, name="tco-duplicate"),
    path("tco/<int:pk>/delete/", tco_forms.tco_delete_page, name="tco-delete"),
    path("workloads/<int:workload_id>/recommendations/", costing.recommendation_page, name="recommendations"),
    path("size/", sizing.sizing_page, name="sizing"),
    path("workloads/", workloads.workload_list_page, name="workloads"),
    path("workloads/new/", workloads.workload_create_page, name="workload-create"),
    path("workloads/<int:workload_id>/edit/", workloads.workload_edit_page, name="workload-edit"),
    path(
        "workloads/<int:workload_id>/duplicate/", workloads.workload_duplicate_view, name="workload-duplicate"
    ),
    path("workloads/<int:workload_id>/delete/", workloads.workload_delete_page, name="workload-delete"),
    path("benchmarks/", benchmarks.benchmark_list_page, name="benchmark-list"),
    path("benchmarks/calibration/", benchmarks.calibration_page, name="benchmark-calibration"),
    path("benchmarks/<int:pk>/", benchmarks.benchmark_detail_page, name="benchmark-detail"),
]
urlpatterns += report_urlpatterns()  # /reports/<kind>/<id>/ and its downloads, one pair per report kind
