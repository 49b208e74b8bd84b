#!/usr/bin/env python
"""Django's command-line utility for administrative tasks.

With nothing set it runs on the local, embedded settings (gpuledger.settings.local: debug, SQLite under
var/, Celery in-process), so every README command works from a checkout as written. Production names
its settings: DJANGO_SETTINGS_MODULE=gpuledger.settings.production (infra/ does).
"""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
