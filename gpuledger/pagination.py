"""API pagination with bounds: `?limit=` is capped (a huge limit was a 500 on PostgreSQL and an
unbounded page), and an offset beyond any table is an empty page rather than a database error."""

from rest_framework.pagination import LimitOffsetPagination

MAX_PAGE_LIMIT = 1000
MAX_OFFSET = 10**9


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_PAGE_LIMIT

    def get_offset(self, request):
        return min(super().get_offset(request), MAX_OFFSET)
