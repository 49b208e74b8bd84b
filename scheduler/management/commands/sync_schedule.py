"""python manage.py sync_schedule [--reset]: load the beat schedule in code (scheduler/schedule.py).

Creates missing jobs and writes what the code changed since the last sync; edits made in the admin
(a period, kwargs, a disabled job) are kept otherwise. `--reset` writes every job from code and enables
it. The rules: scheduler/beat_sync.py.
"""

from django.core.management.base import BaseCommand

from scheduler.beat_sync import ADOPTED, CREATED, KEPT, RESET, UPDATED, beat_schedule_sync, jobs_not_in_code


class Command(BaseCommand):
    help = "Create missing django-celery-beat jobs from the schedule in code and apply what the code changed."

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Overwrite every job with the values in code (and enable it), undoing admin edits.",
        )

    def handle(self, *args, reset: bool, **options):
        outcomes = beat_schedule_sync(reset=reset)
        for outcome in outcomes:
            line = f"  {outcome.name}: {outcome.action}"
            if outcome.fields:
                line += f" ({', '.join(outcome.fields)})"
            if outcome.differs_from_code:
                line += f"; kept as set in the admin: {', '.join(outcome.differs_from_code)} (--reset to use the code's)"
            self.stdout.write(line)
        counts = {
            action: sum(o.action == action for o in outcomes)
            for action in (CREATED, UPDATED, RESET, KEPT, ADOPTED)
        }
        summary = ", ".join(f"{n} {action}" for action, n in counts.items() if n)
        self.stdout.write(f"Beat schedule: {len(outcomes)} jobs: {summary}.")
        for name in jobs_not_in_code():
            self.stdout.write(
                f"  {name}: no longer in scheduler/schedule.py; left as it is (disable or delete it in the admin)"
            )
