"""Report pages and downloads: thin shells over procurement.services.reports.

Each registered report kind gets two routes (procurement.urls): its page, which builds (or finds) a
snapshot of the subject's stored inputs, and the snapshot's downloads. Both are protected with the
kind's roles through ``role_required``.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from gpuledger.accounts.teams import get_visible_or_404
from gpuledger.roles import role_required
from procurement import models
from procurement.reports.registry import ReportInputError, ReportKind, report_kinds
from procurement.reports.render import render as render_report
from procurement.reports.render import render_csv
from procurement.reports.render.html import report_context
from procurement.services.reports import report_snapshot_create, snapshot_report

DOWNLOADS = (("pdf", "PDF"), ("xlsx", "Excel"), ("csv", "CSV"), ("html", "HTML"))
# Reports about a team-owned object: the reader must be able to see that object (another team's is 404).
TEAM_OWNED_SUBJECTS = {"spot": models.Workload, "rent_or_buy": models.TcoStudy}


def _check_subject_visible(kind: str, subject_id: int, user) -> None:
    subject_model = TEAM_OWNED_SUBJECTS.get(kind)
    if subject_model is not None:
        get_visible_or_404(subject_model.objects, user, pk=subject_id)


def _page(kind: ReportKind):
    def report_page(request, subject_id: int):
        _check_subject_visible(kind.name, subject_id, request.user)
        try:
            snapshot = report_snapshot_create(kind=kind.name, subject_id=subject_id, user=request.user)
        except ReportInputError as problem:
            raise Http404(problem.message) from None
        context = report_context(snapshot_report(snapshot)) | {
            "snapshot": snapshot,
            "downloads": [
                (fmt, label, reverse(f"report-{kind.name}-download", args=[snapshot.pk, fmt]))
                for fmt, label in DOWNLOADS
            ],
        }
        return render(request, "procurement/reports/page.html", context)

    report_page.__name__ = f"report_{kind.name}_page"
    return role_required(*kind.roles)(report_page)


def _download(kind: ReportKind):
    def report_download(request, pk: int, fmt: str):
        snapshot = get_object_or_404(models.ReportSnapshot, pk=pk, kind=kind.name)
        _check_subject_visible(kind.name, snapshot.subject_id, request.user)
        if fmt not in dict(DOWNLOADS):
            raise Http404(f"unknown format {fmt!r}")
        report = snapshot_report(snapshot)
        table = request.GET.get("table", "")[:100]
        if fmt == "csv" and table:  # one table as a plain CSV file instead of the zip of all of them
            try:
                content, content_type, extension = (
                    render_csv(report, table)[0],
                    "text/csv; charset=utf-8",
                    "csv",
                )
            except ValueError as problem:
                raise Http404(str(problem)) from None
        else:
            content, content_type, extension = render_report(report, fmt)
        response = HttpResponse(content, content_type=content_type)
        suffix = f"-{table}" if fmt == "csv" and table else ""
        filename = f"{kind.name}-{snapshot.subject_id}-{snapshot.pk}{suffix}.{extension}"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    report_download.__name__ = f"report_{kind.name}_download"
    return role_required(*kind.roles)(report_download)


def report_urlpatterns() -> list:
    patterns = []
    for kind in report_kinds().values():
        patterns += [
            path(f"reports/{kind.name}/<int:subject_id>/", _page(kind), name=f"report-{kind.name}"),
            path(f"reports/{kind.name}/snapshots/<int:pk>/<str:fmt>/", _download(kind),
                 name=f"report-{kind.name}-download"),
        ]  # fmt: skip
    return patterns
