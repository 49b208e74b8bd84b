"""python manage.py validate_sizing: regenerate docs/validation.md from the published reference measurements,
and the measured-accuracy class table the sizing and ranking rows state (procurement/sizing/accuracy.py)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from procurement.sizing.accuracy import ACCURACY_CLASSES_JSON, accuracy_document, published_errors
from procurement.sizing.validation import median_absolute_error, render_markdown, unexplained, validation_rows


class Command(BaseCommand):
    help = (
        "Compare the sizing engine with published measurements and write docs/validation.md and the "
        "accuracy classes (procurement/data/reference/accuracy_classes.json)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--output", default=str(Path(settings.BASE_DIR) / "docs" / "validation.md"))
        parser.add_argument(
            "--accuracy-output",
            default=str(ACCURACY_CLASSES_JSON),
            help="where to write the accuracy class table (default: the committed file the product reads)",
        )

    def handle(self, *args, **options):
        rows = validation_rows()
        output = Path(options["output"])
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(render_markdown(rows), encoding="utf-8")
        for kind in ("memory", "throughput", "mfu"):
            self.stdout.write(f"median absolute error, {kind}: {median_absolute_error(rows, kind):.1%}")
        missing = unexplained(rows)
        if missing:
            self.stderr.write(f"cases over 25% without an explanation: {', '.join(missing)}")
        self.stdout.write(f"wrote {output} ({len(rows)} cases)")
        accuracy_output = Path(options["accuracy_output"])
        accuracy_output.parent.mkdir(parents=True, exist_ok=True)
        accuracy_output.write_text(accuracy_document(published_errors(rows)), encoding="utf-8")
        self.stdout.write(f"wrote {accuracy_output} (measured accuracy by workload class)")
