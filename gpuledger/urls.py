"""Top-level routes: pages per app, one API namespace per resource, the admin and the schema."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from gpuledger.api_root import ApiRoot
from gpuledger.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", ApiRoot.as_view(), name="api-root"),
    path("api/", include("pricing.api.urls")),
    path("api/", include("procurement.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("", include("pricing.urls")),
    path("", include("procurement.urls")),
    path("", include("scheduler.urls")),
]
