"""Many new rows of one model stored with PostgreSQL's COPY (a recompute chunk's 500 stored rankings).

Why: ``bulk_create`` on psycopg 3 binds its parameters client-side, so 500 rankings of ~76 KB of JSON each
became one ~38 MB INSERT statement, built and escaped in Python (Django's ``as_sql``, psycopg's query
conversion: ~0.4 ms of a workload's ~5 ms recompute in process) and then lexed by the server before the
JSON was parsed. COPY streams the same values, adapted by psycopg in C, and the server parses only the
values (issue 26, "Speed"). The values are what ``bulk_create`` would store: each field's ``pre_save``
(``auto_now_add`` stamps) and ``get_db_prep_save`` (the JSON fields' encoders); the rows get no primary
key back and send no signal (as ``bulk_create``). Another database falls back on ``bulk_create``.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connections, models


def copy_insert(objects: Sequence[models.Model], *, using: str = "default") -> None:
    """Insert ``objects`` (new rows of one model, primary keys left to the database) in one COPY."""
    if not objects:
        return
    model = type(objects[0])
    connection = connections[using]
    if connection.vendor != "postgresql":
        model.objects.using(using).bulk_create(objects)
        return
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    statement = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, connection.wrap_database_errors:  # psycopg errors → Django's
        with cursor.cursor.copy(statement) as copy:
            write_row = copy.write_row
            for instance in objects:
                write_row(
                    [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
                )
