"""Rent-or-buy studies from a form of fields: create (with a preview before saving), edit, duplicate
and delete. Thin shells: the form maps fields to the study document (procurement.tco_form) and the
services evaluate and store it (procurement.services.tco)."""

from __future__ import annotations

from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from gpuledger.accounts.teams import get_visible_or_404, team_for_new_object
from gpuledger.roles import role_required
from procurement import models
from procurement.services.tco import study_errors, tco_study_create, tco_study_evaluate, tco_study_update
from procurement.tco_form import (
    GROUPS,
    TcoStudyForm,
    field_for_path,
    initial_from_document,
    message_for_field,
)
from procurement.views.costing import EXAMPLE_STUDY

STUDY_EDITORS = ("engineer", "admin")


def _example_initial() -> dict:
    import yaml

    return initial_from_document(yaml.safe_load(EXAMPLE_STUDY))


def _grouped(form: TcoStudyForm) -> list[tuple[str, list]]:
    from procurement.tco_form import FIELDS

    return [(title, [form[spec.name] for spec in FIELDS if spec.group == group]) for group, title in GROUPS]


def _check(form: TcoStudyForm):
    """The evaluated study, or None with every error placed next to its field: the form's own
    checks and the engine's, at once (fields the form already refused are not checked again)."""
    valid = form.is_valid()
    document = form.document()
    for error in study_errors(document):
        field = field_for_path(error.field)
        if field is not None and field in form.errors:
            continue
        form.add_error(field, message_for_field(field, error.message) if field else str(error))
        valid = False
    if not valid:
        return None
    return document, tco_study_evaluate(document=document)


def _study_form_page(request, *, study: models.TcoStudy | None, initial: dict, title: str):
    # bound on every POST, an empty one too (an empty QueryDict is falsy: an unbound form had no cleaned_data)
    form = TcoStudyForm(request.POST if request.method == "POST" else None, initial=initial)
    preview = None
    if request.method == "POST":
        checked = _check(form)
        if checked is not None:
            document, evaluated = checked
            if request.POST.get("action") == "save":
                if study is None:
                    saved = tco_study_create(
                        document=document, owner=request.user, team=team_for_new_object(request.user)
                    )
                else:
                    saved = tco_study_update(study=study, document=document)
                return redirect("tco-detail", pk=saved.pk)
            preview = evaluated.report
    error_list = [
        (name, form[name].label if name in form.fields else "", message)
        for name, messages in form.errors.items()
        for message in messages
    ]
    return render(
        request,
        "procurement/tco_form.html",
        {
            "form": form,
            "groups": _grouped(form),
            "preview": preview,
            "title": title,
            "study": study,
            "error_list": error_list,
        },
    )


@role_required(*STUDY_EDITORS)
@require_http_methods(["GET", "POST"])
def tco_new_page(request):
    return _study_form_page(request, study=None, initial=_example_initial(), title="New rent-or-buy study")


@role_required(*STUDY_EDITORS)
@require_http_methods(["GET", "POST"])
def tco_edit_page(request, pk: int):
    study = get_visible_or_404(models.TcoStudy.objects, request.user, pk=pk)
    return _study_form_page(
        request, study=study, initial=initial_from_document(study.spec), title=f"Edit {study.name}"
    )


@role_required(*STUDY_EDITORS)
@require_http_methods(["GET", "POST"])
def tco_duplicate_page(request, pk: int):
    """The form filled with a copy of the study; saving it stores a new study, the original is kept."""
    original = get_visible_or_404(models.TcoStudy.objects, request.user, pk=pk)
    initial = initial_from_document(original.spec) | {"name": f"{original.name} (copy)"[:200]}
    return _study_form_page(request, study=None, initial=initial, title=f"Duplicate {original.name}")


@role_required(*STUDY_EDITORS)
@require_http_methods(["GET", "POST"])
def tco_delete_page(request, pk: int):
    study = get_visible_or_404(models.TcoStudy.objects, request.user, pk=pk)
    if request.method == "POST":
        study.delete()
        return redirect("tco-list")
    return render(request, "procurement/tco_delete.html", {"study": study})
