"""python manage.py sync_schedule: load the beat schedule declared in scheduler/schedule.py."""

import json

from django.core.management.base import BaseCommand
from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from scheduler.schedule import SCHEDULE


class Command(BaseCommand):
    help = "Create or update the django-celery-beat periodic tasks from the schedule in code."

    @transaction.atomic
    def handle(self, *args, **options):
        changed = 0
        for job in SCHEDULE:
            interval, _ = IntervalSchedule.objects.get_or_create(
                every=job.every_seconds, period=IntervalSchedule.SECONDS
            )
            values = {
                "task": job.task,
                "interval": interval,
                "kwargs": json.dumps(job.kwargs),
                "description": job.description,
            }
            task, created = PeriodicTask.objects.get_or_create(name=job.name, defaults=values)
            differs = any(getattr(task, k) != v for k, v in values.items())
            if not created and differs:
                for key, value in values.items():
                    setattr(task, key, value)
                task.save()
            changed += created or differs
        self.stdout.write(f"Beat schedule: {len(SCHEDULE)} jobs, {changed} created or updated.")
