"""`/api/schema/`: drf-spectacular's schema view, with its errors rendered as JSON.

The view's renderers are YAML and JSON OpenAPI documents; DRF renders an error with the negotiated (or,
for an unknown `?format=`, the first) renderer, so a 401 or 404 came back as an OpenAPI YAML document
holding the error. The schema documents every error as application/json ApiErrors (found by the
schemathesis suite).
"""

from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer

# The API token's bearer scheme registers itself on import: before any schema is generated (this module
# is loaded with the URLconf, which `manage.py spectacular` and /api/schema/ both walk).
from gpuledger.accounts import schema  # noqa: F401


class SchemaView(SpectacularAPIView):
    def finalize_response(self, request, response, *args, **kwargs):
        if getattr(response, "exception", False):
            request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
