"""Report pages and downloads: thin shells over procurement.services.reports.

Each registered report kind gets its page, which computes the report from the subject's stored inputs
on GET and stores nothing (issue 31: nothing changes on GET), and keeps it as a snapshot only on an
explicit POST ("Keep this report"); its downloads, computed the same way; and a kept snapshot's
downloads. Both are protected with the
kind's roles through ``role_required``. A kind whose subject is a period (``by_period``) takes the
period from the query (``start``, ``end`` exclusive, ``team``, ``project``, ``provider``: the names the
finance page uses) instead of an id, and gets one more route that downloads a period's report at once.
"""

from __future__ import annotations

import datetime as dt

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from gpuledger.accounts.teams import get_visible_or_404
from gpuledger.roles import role_required
from procurement import models
from procurement.reports.registry import ReportInputError, ReportKind, ReportPeriod, report_kinds
from procurement.reports.render import render as render_report
from procurement.reports.render import render_csv
from procurement.reports.render.html import report_context
from procurement.services.reports import report_build, report_snapshot_create, snapshot_report

DOWNLOADS = (("pdf", "PDF"), ("xlsx", "Excel"), ("csv", "CSV"), ("html", "HTML"))
FILTER_MAX_LENGTH = 100  # a team, project or provider name in the query
# Reports about a team-owned object: the reader must be able to see that object (another team's is 404).
TEAM_OWNED_SUBJECTS = {"spot": models.Workload, "rent_or_buy": models.TcoStudy}


def _check_subject_visible(kind: str, subject_id: int, user) -> None:
    if kind == "capacity_plan":  # spend data: the plan's teams must be within the reader's spend access
        from planning.services.capacity_plans import plan_visible_or_404

        plan_visible_or_404(user, subject_id)
        return
    subject_model = TEAM_OWNED_SUBJECTS.get(kind)
    if subject_model is not None:
        get_visible_or_404(subject_model.objects, user, pk=subject_id)


def _file_response(request, report, fmt: str, stem: str) -> HttpResponse:
    if fmt not in dict(DOWNLOADS):
        raise Http404(f"unknown format {fmt!r}")
    table = request.GET.get("table", "")[:100]
    if fmt == "csv" and table:  # one table as a plain CSV file instead of the zip of all of them
        try:
            content, content_type, extension = render_csv(report, table)[0], "text/csv; charset=utf-8", "csv"
        except ValueError as problem:
            raise Http404(str(problem)) from None
    else:
        content, content_type, extension = render_report(report, fmt)
    response = HttpResponse(content, content_type=content_type)
    suffix = f"-{table}" if fmt == "csv" and table else ""
    response["Content-Disposition"] = f'attachment; filename="{stem}{suffix}.{extension}"'
    return response


def _snapshot_file(request, kind: ReportKind, snapshot: models.ReportSnapshot, fmt: str) -> HttpResponse:
    stem = f"{kind.name}-{snapshot.subject_id}-{snapshot.pk}"
    return _file_response(request, snapshot_report(snapshot), fmt, stem)


def _page(kind: ReportKind):
    @require_http_methods(["GET", "POST"])
    def report_page(request, subject_id: int):
        _check_subject_visible(kind.name, subject_id, request.user)
        try:
            if request.method == "POST":  # the explicit action that keeps the report
                snapshot = report_snapshot_create(kind=kind.name, subject_id=subject_id, user=request.user)
                return _snapshot_page(request, kind, snapshot)
            report, _ = report_build(kind=kind.name, subject_id=subject_id)
        except ReportInputError as problem:
            raise Http404(problem.message) from None
        downloads = [
            reverse(f"report-{kind.name}-live-download", args=[subject_id, fmt]) for fmt, _ in DOWNLOADS
        ]
        return _live_page(request, report, downloads)

    report_page.__name__ = f"report_{kind.name}_page"
    return role_required(*kind.roles)(report_page)


def _live_download(kind: ReportKind):
    """A subject's report in one format, computed now and stored nowhere."""

    def report_download(request, subject_id: int, fmt: str):
        _check_subject_visible(kind.name, subject_id, request.user)
        try:
            report, _ = report_build(kind=kind.name, subject_id=subject_id)
        except ReportInputError as problem:
            raise Http404(problem.message) from None
        return _file_response(request, report, fmt, f"{kind.name}-{subject_id}")

    report_download.__name__ = f"report_{kind.name}_live_download"
    return role_required(*kind.roles)(report_download)


def _live_page(request, report, download_urls: list[str]):
    """A report computed for this request: its downloads compute it again, "Keep" stores it."""
    downloads = [(fmt, label, url) for (fmt, label), url in zip(DOWNLOADS, download_urls, strict=True)]
    context = report_context(report) | {"snapshot": None, "downloads": downloads}
    return render(request, "procurement/reports/page.html", context)


def _snapshot_page(request, kind: ReportKind, snapshot):
    """A stored report as a page, with its download links."""
    context = report_context(snapshot_report(snapshot)) | {
        "snapshot": snapshot,
        "downloads": [
            (fmt, label, reverse(f"report-{kind.name}-download", args=[snapshot.pk, fmt]))
            for fmt, label in DOWNLOADS
        ],
    }
    return render(request, "procurement/reports/page.html", context)


def _download(kind: ReportKind):
    def report_download(request, pk: int, fmt: str):
        snapshot = get_object_or_404(models.ReportSnapshot, pk=pk, kind=kind.name)
        _check_subject_visible(kind.name, snapshot.subject_id, request.user)
        return _snapshot_file(request, kind, snapshot, fmt)

    report_download.__name__ = f"report_{kind.name}_download"
    return role_required(*kind.roles)(report_download)


def default_period(today: dt.date) -> tuple[dt.date, dt.date]:
    """The six whole months up to the end of this one (what the finance page shows unfiltered)."""
    end = (today.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    start = end
    for _ in range(6):
        start = (start - dt.timedelta(days=1)).replace(day=1)
    return start, end


def period_from_query(query) -> ReportPeriod:
    """Raises ReportInputError naming the field for a bad date or an over-long filter."""
    default_start, default_end = default_period(dt.date.today())
    dates = {}
    for field, default in (("start", default_start), ("end", default_end)):
        text = query.get(field, "")
        try:
            dates[field] = dt.date.fromisoformat(text) if text else default
        except ValueError:
            raise ReportInputError(field, f"must be YYYY-MM-DD, got {text[:20]!r}") from None
    filters = {name: query.get(name, "") for name in ("team", "project", "provider")}
    for name, value in filters.items():
        if len(value) > FILTER_MAX_LENGTH:
            raise ReportInputError(name, f"at most {FILTER_MAX_LENGTH} characters")
    allocation = query.get("allocation", "")[:20]  # checked by the spend review (a 400 naming the field)
    return ReportPeriod(start=dates["start"], end=dates["end"], **filters, allocation=allocation)


def _period_page(kind: ReportKind):
    @require_http_methods(["GET", "POST"])
    def report_page(request):
        try:
            period = period_from_query(request.GET)  # a POST keeps the period its page was opened on
            if request.method == "POST":  # the explicit action that keeps the report
                snapshot = report_snapshot_create(kind=kind.name, period=period, user=request.user)
                return _snapshot_page(request, kind, snapshot)
            report, _ = report_build(kind=kind.name, period=period)
        except ReportInputError as problem:
            return HttpResponseBadRequest(f"{problem.field}: {problem.message}", content_type="text/plain")
        query = request.GET.urlencode()
        downloads = [
            reverse(f"report-{kind.name}-period-download", args=[fmt]) + (f"?{query}" if query else "")
            for fmt, _ in DOWNLOADS
        ]
        return _live_page(request, report, downloads)

    report_page.__name__ = f"report_{kind.name}_page"
    return role_required(*kind.roles)(report_page)


def _period_download(kind: ReportKind):
    """The period's report in one format, computed now and stored nowhere (the finance page's links)."""

    def report_download(request, fmt: str):
        if fmt not in dict(DOWNLOADS):
            raise Http404(f"unknown format {fmt!r}")
        try:
            report, subject_id = report_build(kind=kind.name, period=period_from_query(request.GET))
        except ReportInputError as problem:
            return HttpResponseBadRequest(f"{problem.field}: {problem.message}", content_type="text/plain")
        return _file_response(request, report, fmt, f"{kind.name}-{subject_id}")

    report_download.__name__ = f"report_{kind.name}_period_download"
    return role_required(*kind.roles)(report_download)


def _period_urlpatterns(kind: ReportKind) -> list:
    return [
        path(f"reports/{kind.name}/", _period_page(kind), name=f"report-{kind.name}"),
        path(
            f"reports/{kind.name}/download/<str:fmt>/",
            _period_download(kind),
            name=f"report-{kind.name}-period-download",
        ),
        path(
            f"reports/{kind.name}/snapshots/<int:pk>/<str:fmt>/",
            _download(kind),
            name=f"report-{kind.name}-download",
        ),
    ]


def report_urlpatterns() -> list:
    patterns = []
    for kind in report_kinds().values():
        if kind.by_period:
            patterns += _period_urlpatterns(kind)
            continue
        patterns += [
            path(f"reports/{kind.name}/<int:subject_id>/", _page(kind), name=f"report-{kind.name}"),
            path(
                f"reports/{kind.name}/<int:subject_id>/download/<str:fmt>/",
                _live_download(kind),
                name=f"report-{kind.name}-live-download",
            ),
            path(
                f"reports/{kind.name}/snapshots/<int:pk>/<str:fmt>/",
                _download(kind),
                name=f"report-{kind.name}-download",
            ),
        ]
    return patterns
