"""A content security policy the pages satisfy: scripts and styles from this site's static files only.

No page has an inline script, inline style or event-handler attribute (they live in
gpuledger/static/gpuledger/), so an injected `<script>` or `style=` in stored text does nothing. Two
The admin alone gets a relaxed style policy (Django's own templates set a few inline
styles); Swagger UI at /api/docs/ runs under the strict one (its start-up code is a script file:
SpectacularSwaggerSplitView). Scripts stay 'self' everywhere.
"""

from __future__ import annotations

from django.conf import settings

STRICT_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
RELAXED_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
RELAXED_PREFIXES = ("/admin/",)


def policy_for(path: str) -> str:
    prefixes = getattr(settings, "GPULEDGER_CSP_RELAXED_PREFIXES", RELAXED_PREFIXES)
    return RELAXED_POLICY if path.startswith(tuple(prefixes)) else STRICT_POLICY


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", policy_for(request.path))
        return response
