"""Page routes of the procurement app."""

from django.urls import path

from procurement.views import costing, dashboard, sizing
from procurement.views.reports import report_urlpatterns

urlpatterns: list = [
    path("dashboard/", dashboard.dashboard_page, name="dashboard"),
    path("tco/", costing.tco_list_page, name="tco-list"),
    path("tco/<int:pk>/", costing.tco_detail_page, name="tco-detail"),
    path("workloads/<int:workload_id>/recommendations/", costing.recommendation_page, name="recommendations"),
    path("size/", sizing.sizing_page, name="sizing"),
]
urlpatterns += report_urlpatterns()  # /reports/<kind>/<id>/ and its downloads, one pair per report kind
