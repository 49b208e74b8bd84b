"""API pagination with bounds: `?limit=` is capped (a huge limit was a 500 on PostgreSQL and an
unbounded page), and an offset beyond any table is an empty page rather than a database error.

`ListBodyPage` pages a list whose body must stay a plain JSON list (a contract clients rely on, e.g.
`/api/offers/`): the page travels in the query (`limit`, `offset`), the total in `X-Total-Count` and
the neighbours in an RFC 8288 `Link` header, so the body is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.utils.urls import replace_query_param

MAX_PAGE_LIMIT = 1000
MAX_OFFSET = 10**9
DEFAULT_LIST_LIMIT = 100


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_PAGE_LIMIT

    def get_offset(self, request):
        return min(super().get_offset(request), MAX_OFFSET)


def _bounded_int(request, name: str, *, default: int, low: int, high: int) -> int:
    """A whole number from the query, in [low, high]; anything else (1e20, -1, "abc") is a 400 naming it."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        shown = text[:30]
        raise ValidationError({name: [f"{shown!r} is not a whole number from {low} to {high}"]})
    return int(text)


@dataclass(frozen=True)
class ListBodyPage:
    limit: int
    offset: int

    @classmethod
    def from_request(cls, request) -> ListBodyPage:
        limit = _bounded_int(request, "limit", default=DEFAULT_LIST_LIMIT, low=1, high=MAX_PAGE_LIMIT)
        offset = _bounded_int(request, "offset", default=0, low=0, high=MAX_OFFSET)
        return cls(limit=limit, offset=offset)

    def headers(self, request, *, total: int) -> dict[str, str]:
        """X-Total-Count, and Link with rel="next" / rel="prev" where such a page exists (RFC 8288)."""
        url = request.build_absolute_uri()
        links = []
        if self.offset + self.limit < total:
            links.append(f'<{self._url(url, self.offset + self.limit)}>; rel="next"')
        if self.offset > 0:
            links.append(f'<{self._url(url, max(0, min(self.offset, total) - self.limit))}>; rel="prev"')
        headers = {"X-Total-Count": str(total)}
        if links:
            headers["Link"] = ", ".join(links)
        return headers

    def _url(self, url: str, offset: int) -> str:
        return replace_query_param(replace_query_param(url, "limit", self.limit), "offset", offset)


LIST_PAGE_PARAMETERS = [
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT, "default": DEFAULT_LIST_LIMIT},
        description=f"Rows per page, 1 to {MAX_PAGE_LIMIT} (default {DEFAULT_LIST_LIMIT}); "
        "anything else is a 400 naming `limit`.",
    ),
    OpenApiParameter(
        "offset",
        {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
        description=f"Rows to skip, 0 to {MAX_OFFSET:,} (default 0); past the end is an empty page.",
    ),
    OpenApiParameter(
        "X-Total-Count",
        int,
        location=OpenApiParameter.HEADER,
        response=True,
        description="How many rows match the filters, over all pages (an exact count).",
    ),
    OpenApiParameter(
        "Link",
        str,
        location=OpenApiParameter.HEADER,
        response=True,
        description='RFC 8288 links to the neighbouring pages: `<url>; rel="next"` while rows remain, '
        '`<url>; rel="prev"` after the first page. Absent when there is neither.',
    ),
]
