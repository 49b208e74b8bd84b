"""Finance pages: the spend review (filters, charts, exports) and the billing upload. Finance and admin;
the review and its exports also for engineers of a team an admin granted its spend (access.py)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render

from billing.access import spend_page
from billing.forms import ReviewFilterForm, UploadForm
from billing.imports.upload_jobs import import_upload
from billing.imports.uploads import UploadTooLarge
from billing.models import BillingImport
from billing.review.cache import cached_review
from billing.review.engine import ReviewInputError
from billing.review.report import render_body, render_csv, render_html, render_json
from billing.review.service import build_report, make_request
from gpuledger.roles import ADMIN, FINANCE, role_required

EXPORTS = {
    "csv": ("text/csv", render_csv),
    "json": ("application/json", render_json),
    "html": ("text/html", render_html),
}


def _review_request(form: ReviewFilterForm, scope):
    start, end = form.period()
    filters = {k: form.cleaned_data.get(k, "") for k in ("team", "project", "provider", "allocation")}
    return make_request(start=start, end=end, scope=scope, **filters)


def _report(form: ReviewFilterForm, scope) -> dict:
    return build_report(_review_request(form, scope))


@spend_page
def spend_review_page(request):
    form = ReviewFilterForm(request.GET)  # every filter is optional: an empty query shows the default period
    body, error = None, None
    if form.is_valid():
        try:
            review_request = _review_request(form, request.spend_scope)
            # the rendered body is cached as the review is (review/cache.py), so a repeat reads neither
            body = cached_review(
                "page-body", review_request, lambda: render_body(build_report(review_request))
            )
        except ReviewInputError as exc:
            error = str(exc)
    context = {
        "form": form,
        "body": body,
        "error": error,
        "query": request.GET.urlencode(),
        "spend_teams": request.spend_scope.teams,
    }
    return render(request, "billing/spend_review.html", context, status=400 if error or form.errors else 200)


@spend_page
def spend_review_export(request, fmt: str):
    if fmt not in EXPORTS:
        raise Http404(f"no export format {fmt!r}; use csv, json or html")
    form = ReviewFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    try:
        data = _report(form, request.spend_scope)
    except ReviewInputError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    content_type, render_body = EXPORTS[fmt]
    response = HttpResponse(render_body(data), content_type=content_type)
    response["Content-Disposition"] = (
        f'attachment; filename="spend_review_{data["period"]["from"]}_{data["period"]["to"]}.{fmt}"'
    )
    return response


@role_required(FINANCE, ADMIN)
def upload_page(request):
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:  # the import runs in the worker (upload_jobs.py); this process only hands the file over
            result = import_upload(
                upload,
                fmt=form.cleaned_data["format"] or None,
                provider=form.cleaned_data["provider"],
                user=request.user,
            )
        except UploadTooLarge as exc:
            form.add_error("file", str(exc))
        else:
            if result is None:
                messages.info(request, f"{upload.name}: queued; it appears below when the worker is done")
                return redirect("billing-upload")
            if result.errors:
                for error in result.errors:
                    form.add_error("file", error)
            else:
                messages.success(request, f"{upload.name}: {result.line()}")
                for warning in result.warnings:  # stored on the import too: the list below shows them
                    messages.warning(request, f"warning: {warning}")
                return redirect("billing-upload")
    imports = BillingImport.objects.prefetch_related("export_deliveries__source")[:20]
    return render(
        request, "billing/upload.html", {"form": form, "imports": imports}, status=400 if form.errors else 200
    )
