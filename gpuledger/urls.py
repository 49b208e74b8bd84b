"""Top-level routes: pages per app, one API namespace per resource, the admin and the schema."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from gpuledger.api_root import ApiRoot
from gpuledger.health import healthz
from gpuledger.schema_view import SchemaView

# An unmatched /api/ address answers JSON in the API's error shape; pages keep Django's 404 page.
handler404 = "gpuledger.api_not_found.not_found"
# A refused page is the site's page with the menu, the reason and who can grant access (issue 30).
handler403 = "gpuledger.refusals.permission_denied"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", ApiRoot.as_view(), name="api-root"),
    path("api/", include("pricing.api.urls")),
    path("api/", include("procurement.api.urls")),
    path("api/", include("planning.api.urls")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up code as a script file, so the page needs no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("pricing.urls")),
    path("", include("procurement.urls")),
    path("", include("planning.urls")),
    path("", include("pricing.sources.urls")),
    path("api/", include("billing.api_urls")),
    path("", include("billing.urls")),
    path("", include("gpuledger.accounts.urls")),
]
