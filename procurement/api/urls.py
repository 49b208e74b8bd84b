"""API routes of the procurement app (one module per resource under procurement/api/)."""

from django.urls import path

from procurement.api import benchmarks, commitments, costing, sizing

urlpatterns: list = [
    path("tco/", costing.TcoStudyCreate.as_view(), name="api-tco-create"),
    path("tco/<int:pk>/", costing.TcoStudyDetail.as_view(), name="api-tco-detail"),
    path("recommendations/", costing.RecommendationCreate.as_view(), name="api-recommendation-create"),
    path("size/", sizing.SizeWorkload.as_view(), name="api-size"),
    path("commitments/", commitments.CommitmentAnalysis.as_view(), name="api-commitments"),
    path("benchmarks/", benchmarks.BenchmarkListCreate.as_view(), name="api-benchmarks"),
]
