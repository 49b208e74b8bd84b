"""The Celery application; tasks live in each app's tasks.py and are autodiscovered.

Workers and beat serve production: they default to the production settings, as gunicorn's WSGI module
does (importing this package sets the default first). `make worker`/`make beat` name the local ones, and
manage.py names them before anything imports this package.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.production")

app = Celery("gpuledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
