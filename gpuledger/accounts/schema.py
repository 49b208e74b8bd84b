"""The API token in the OpenAPI schema: an HTTP bearer scheme (imported by gpuledger/schema_view.py, with the URLconf)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "gpuledger.accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A per-user API token (create one on /accounts/me/ or with manage.py api_token).",
        }
