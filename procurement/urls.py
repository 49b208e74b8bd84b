"""Page routes of the procurement app."""

from django.urls import path

from procurement.views import costing, dashboard, sizing, tco_forms
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
]
urlpatterns += report_urlpatterns()  # /reports/<kind>/<id>/ and its downloads, one pair per report kind
