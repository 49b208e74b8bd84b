"""python manage.py recompute [--workload ID | --all]: the recompute service by hand, with a progress bar."""

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from procurement import models
from procurement.services.recommendations import RankingContext
from procurement.services.recompute import (
    recommendations_recompute_chunk,
    recompute_targets,
    tco_study_recompute,
)
from procurement.tasks import RECOMPUTE_CHUNK


class Command(BaseCommand):
    help = "Recompute stored recommendations and TCO studies against current prices."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--workload", type=int, help="one workload's recommendation")
        target.add_argument(
            "--all", action="store_true", help="every stored recommendation and offer-priced study"
        )

    def handle(self, *args, **options):
        workload_ids, study_ids = recompute_targets(workload_id=options["workload"])
        if (
            options["workload"] is not None
            and not models.Workload.objects.filter(pk=options["workload"]).exists()
        ):
            raise CommandError(f"--workload: no workload {options['workload']}")
        context = RankingContext.current()
        created = events = 0
        with tqdm(total=len(workload_ids), desc="recommendations", disable=not workload_ids) as progress:
            for start in range(0, len(workload_ids), RECOMPUTE_CHUNK):
                chunk = workload_ids[start : start + RECOMPUTE_CHUNK]
                for result in recommendations_recompute_chunk(chunk, context=context):
                    created += bool(result.get("created"))
                    events += len(result.get("events", []))
                progress.update(len(chunk))
        for study_id in tqdm(study_ids, desc="tco studies", disable=not study_ids):
            result = tco_study_recompute(study_id)
            created += bool(result.get("created"))
            events += len(result.get("events", []))
        self.stdout.write(
            f"recomputed {len(workload_ids)} recommendations and {len(study_ids)} TCO studies: "
            f"{created} new dated results, {events} change events"
        )
        from planning.services.capacity_plans import capacity_plan_recompute, capacity_plan_targets

        plan_ids = capacity_plan_targets() if options["all"] else []
        changed = 0
        for plan_id in tqdm(plan_ids, desc="capacity plans", disable=not plan_ids):
            result = capacity_plan_recompute(plan_id)
            if result.get("created"):
                changed += 1
                self.stdout.write(
                    f"capacity plan {plan_id} -> {result['plan_id']}: total cost {result['previous_total']} -> "
                    f"{result['total']}"
                )
        if plan_ids:
            self.stdout.write(f"recomputed {len(plan_ids)} capacity plans: {changed} new dated results")
