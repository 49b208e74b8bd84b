#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

# Schema tooling reads models, never a secret or a request: on a fresh clone with no environment,
# `manage.py makemigrations --check` must answer about migrations, not stop on the production rule
# "SECRET_KEY must be set when DEBUG is off". Everything else keeps that rule.
SCHEMA_TOOLING_COMMANDS = {"makemigrations", "showmigrations", "sqlmigrate"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings")
    if len(sys.argv) > 1 and sys.argv[1] in SCHEMA_TOOLING_COMMANDS:
        os.environ.setdefault("DEBUG", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
