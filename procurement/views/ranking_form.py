"""The recommendation page's options form: posted fields into ranking options, and options back into
field values (to show what a saved answer was computed under and to re-run it with changes)."""

from __future__ import annotations

from typing import Any

from procurement.ranking import RANKED_PRICING_MODELS

NUMBER_FIELDS = ("deadline_hours", "deadline_probability", "budget")
NAME_LIST_FIELDS = ("providers", "regions", "gpus")
OPTION_LABELS = {
    "deadline_hours": "Deadline (hours)",
    "deadline_probability": "Meet the deadline with probability",
    "budget": "Budget",
    "top": "Rows",
    "providers": "Providers",
    "regions": "Regions",
    "gpus": "GPU models",
    "pricing_models": "Pricing models",
    "instance_counts": "Instance counts",
    "currency": "Currency",
    "include_infeasible": "Also list what does not fit",
    "explore_parallelism": "Also rank plans other than the spec's parallelism",
    "deployment": "Development use (consumer serving splits ranked by cost)",
}


def _number(text: str) -> Any:
    """A number where the text is one; otherwise the text, so the option parser names the field."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def options_from_form(post) -> dict[str, Any]:
    """Only the fields the person filled in: an empty field means the default, not zero."""
    options: dict[str, Any] = {}
    for key in NUMBER_FIELDS:
        if text := post.get(key, "").strip():
            options[key] = _number(text)
    if text := post.get("top", "").strip():
        options["top"] = _number(text)
    for key in NAME_LIST_FIELDS:
        names = [part.strip() for part in post.get(key, "").split(",") if part.strip()]
        if names:
            options[key] = names
    if text := post.get("instance_counts", "").strip():
        options["instance_counts"] = [_number(part.strip()) for part in text.split(",") if part.strip()]
    models = [model for model in post.getlist("pricing_models") if model]
    if models:
        options["pricing_models"] = models
    if text := post.get("currency", "").strip():
        options["currency"] = text.upper()
    if post.get("include_infeasible"):
        options["include_infeasible"] = True
    if post.get("explore_parallelism"):
        options["explore_parallelism"] = True
    if post.get("deployment") == "development":  # unticked: production, the default
        options["deployment"] = "development"
    return options


def form_values(options: dict[str, Any]) -> dict[str, Any]:
    """Options as the form shows them (lists joined by commas)."""
    values: dict[str, Any] = {key: "" for key in OPTION_LABELS}
    for key, value in (options or {}).items():
        values[key] = (
            ", ".join(str(v) for v in value) if isinstance(value, list) and key != "pricing_models" else value
        )
    values["pricing_models"] = list((options or {}).get("pricing_models") or [])
    return values


def options_summary(options: dict[str, Any]) -> list[tuple[str, str]]:
    """The options in words, for the page: (label, value); defaults are named as such."""
    if not options:
        return [("Options", "defaults (every provider, region, GPU and pricing model; USD; 20 rows)")]
    rows = []
    for key, value in options.items():
        shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        rows.append((OPTION_LABELS.get(key, key), shown))
    return rows


PRICING_MODEL_CHOICES = RANKED_PRICING_MODELS
