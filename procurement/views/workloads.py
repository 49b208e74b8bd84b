"""Workload pages: list the team's workloads; create one from the spec form, a preset or pasted YAML;
edit, duplicate, delete. "Find offers" (from /size/ or the create form) saves the workload and its first
ranking under default options, then opens its recommendations page.

Thin shells over procurement.services; every page is for engineers, on their teams' workloads only
(another team's workload is 404).
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from gpuledger.accounts.models import Team
from gpuledger.accounts.teams import TeamChoiceError, get_visible_or_404, sees_everything, team_for_new_object
from gpuledger.roles import ENGINEER, role_required
from procurement import models, selectors
from procurement.costing.values import CostInputError
from procurement.services.recommendations import (
    WorkloadSpecInputError,
    recommendation_create,
    workload_create_from_spec,
    workload_duplicate,
    workload_update_spec,
)
from procurement.sizing import WorkloadSpecError
from procurement.sizing.documents import load_spec_text, spec_from_knobs, spec_to_yaml
from procurement.sizing.image_knobs import IMAGE_KNOB_DEFAULTS
from procurement.sizing.presets import known_preset_names
from procurement.views.sizing import KNOB_DEFAULTS, form_fields, knob_defaults, knob_errors, posted_knobs
from procurement.views.sizing_image_fields import image_section_context


def _visible(request, workload_id: int) -> models.Workload:
    return get_visible_or_404(
        models.Workload.objects.select_related("team", "owner"), request.user, pk=workload_id
    )


def _team_choices(user) -> list[Team]:
    return list(Team.objects.all() if sees_everything(user) else Team.objects.filter(members=user))


@role_required(ENGINEER)
def workload_list_page(request):
    return render(
        request,
        "procurement/workload_list.html",
        {"rows": selectors.workloads_with_latest_option(user=request.user)},
    )


def _posted_document(request) -> tuple[str, dict[str, str], dict]:
    """(YAML text, form knobs, spec dict) from the posted fields or the pasted spec; raises
    WorkloadSpecError for text that is not a spec document."""
    if request.POST.get("source") == "fields":
        knobs = posted_knobs(request.POST)
        document = spec_from_knobs(knobs)
        return spec_to_yaml(document), knobs, document
    text = request.POST.get("spec", "")
    return text, KNOB_DEFAULTS | IMAGE_KNOB_DEFAULTS, load_spec_text(text, "spec")


@role_required(ENGINEER)
def workload_create_page(request):
    """GET: the form (`?preset=` starts it on a preset). POST: validate and store the workload (owner:
    the signed-in engineer; team: the one picked, else their first); with `find_offers`, also rank it
    and save that answer, then open its recommendations."""
    preset = request.GET.get("preset")
    knobs = knob_defaults(preset) | IMAGE_KNOB_DEFAULTS
    text, errors, team_slug = spec_to_yaml(spec_from_knobs(knobs)), [], ""
    if request.method == "POST":
        team_slug = request.POST.get("team", "")
        try:
            text, knobs, document = _posted_document(request)
            team = team_for_new_object(request.user, team_slug or None)
            workload = workload_create_from_spec(document=document, owner=request.user, team=team)
        except WorkloadSpecError as error:
            errors = [field.as_dict() for field in error.errors]
        except WorkloadSpecInputError as error:
            errors = [{"path": item.path, "message": item.message} for item in error.errors]
        except TeamChoiceError as error:
            errors = [{"path": error.field, "message": error.message}]
        else:
            if request.POST.get("find_offers"):
                return _find_offers(request, workload)
            messages.success(request, f"Workload {workload.name!r} saved.")
            return redirect("workloads")
    return render(
        request,
        "procurement/workload_form.html",
        {
            "creating": True,
            "text": text,
            "errors": errors,
            "form_fields": form_fields(knobs, knob_errors(errors)),
            "presets": known_preset_names(),
            "selected_preset": preset or "",
            "teams": _team_choices(request.user),
            "team_slug": team_slug,
        }
        | image_section_context(knobs, knob_errors(errors)),
    )


def _find_offers(request, workload: models.Workload):
    """Rank a just-saved workload under default options and save that as its answer; a ranking error
    (e.g. training without training_tokens) is shown on the recommendations page, the workload stays."""
    try:
        recommendation_create(workload=workload, parameters={}, saved_by=request.user)
    except CostInputError as error:
        messages.error(request, f"Could not rank it: {error.field}: {error.message}")
    return redirect("recommendations", workload_id=workload.pk)


@role_required(ENGINEER)
def workload_edit_page(request, workload_id: int):
    workload = _visible(request, workload_id)
    text, errors = spec_to_yaml(workload.spec), []
    if request.method == "POST":
        text = request.POST.get("spec", "")
        try:
            workload_update_spec(workload, document=load_spec_text(text, "spec"))
        except WorkloadSpecError as error:
            errors = [field.as_dict() for field in error.errors]
        except WorkloadSpecInputError as error:
            errors = [{"path": item.path, "message": item.message} for item in error.errors]
        else:
            messages.success(request, f"Workload {workload.name!r} saved.")
            return redirect("workloads")
    return render(
        request,
        "procurement/workload_form.html",
        {"creating": False, "workload": workload, "text": text, "errors": errors},
    )


@role_required(ENGINEER)
@require_POST
def workload_duplicate_view(request, workload_id: int):
    workload = _visible(request, workload_id)
    copy = workload_duplicate(workload, owner=request.user, team=workload.team)
    messages.success(request, f"Duplicated as {copy.name!r}.")
    return redirect("workload-edit", workload_id=copy.pk)


@role_required(ENGINEER)
def workload_delete_page(request, workload_id: int):
    """GET: confirm (it says what goes with it); POST: delete the workload and its saved answers."""
    workload = _visible(request, workload_id)
    if request.method == "POST":
        name = workload.name
        workload.delete()
        messages.success(request, f"Workload {name!r} deleted.")
        return redirect("workloads")
    return render(
        request,
        "procurement/workload_delete.html",
        {"workload": workload, "saved_answers": workload.recommendations.count()},
    )
