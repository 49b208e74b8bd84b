"""Requests that only read run outside a transaction; every other request runs in one.

ATOMIC_REQUESTS wraps each view in a transaction, so that a write that fails half-way leaves nothing.
A GET, HEAD or OPTIONS writes nothing (a view that did would also be open to cross-site requests,
which CSRF protection does not check for these methods), and under PostgreSQL's READ COMMITTED each
statement takes its own snapshot inside a transaction or out of it, so the transaction bought such a
request nothing but two round trips (BEGIN, COMMIT) and Django's bookkeeping: about a tenth of a
worker's time on the stored pages under load (py-spy over gunicorn, 2026-12-02). This middleware,
last in MIDDLEWARE so that every other middleware's process_view has run, calls the view itself for
those methods, in autocommit; Django then skips its own call, and with it the transaction. Anything
else goes on to Django's call, atomic as before. What Django's own call adds around a view is skipped
too for reads: the `process_exception` hooks of middleware (none installed; a test keeps it so, as
such a hook would not see a read's exception) and the async-view adapter (no view is async).

Inside a transaction of the caller's (a test's), a read still runs in a savepoint, as Django's own
wrapping would: DRF marks the innermost transaction for rollback when it answers an error, and that
must be the request's, not the caller's.
"""

from __future__ import annotations

from django.db import connection, transaction

from gpuledger.request_memo import read_request_scope

READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ReadsOutsideTransactionMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method not in READ_ONLY_METHODS:
            return None
        with read_request_scope():  # values a read cannot change are read once (request_memo.py)
            if connection.in_atomic_block:
                with transaction.atomic():
                    return view_func(request, *view_args, **view_kwargs)
            return view_func(request, *view_args, **view_kwargs)
