"""Django's PostgreSQL backend, with a health check that costs no round trip while the server is there.

Connections persist across requests (CONN_MAX_AGE), so Django checks one before its first use in each
request (CONN_HEALTH_CHECKS): a `SELECT 1` to the server and back. Under load that was a tenth of a
worker's time on the spend review API (py-spy over gunicorn, 2026-12-02), for an answer that is almost
always "yes". A server that goes away (a restart, an idle timeout, `pg_terminate_backend`) sends its
FATAL message and closes the socket, and either makes the socket readable while no query is out. So
the check looks at the socket first and asks the server only when something has arrived; a socket
that is still quiet is a connection that is still open. (A network that drops packets without a reset
is not seen this way; neither does `SELECT 1` see it sooner: it waits for TCP to give up.)
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        if self.connection is None or self.connection.closed or self.connection.broken:
            return False
        try:
            readable, _, _ = select.select([self.connection.fileno()], [], [], 0)
        except (OSError, ValueError):  # the socket is gone already
            return False
        if not readable:
            return True
        return super().is_usable()  # a notice, or the server's goodbye: the round trip tells which
