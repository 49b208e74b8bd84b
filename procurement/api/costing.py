"""Cost API: POST a TCO study, read a stored one. Thin shells over procurement.services."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from gpuledger.accounts.teams import TeamChoiceError, get_visible_or_404, team_for_new_object, visible_to
from gpuledger.api_errors import ApiErrorsSerializer, input_error_response, require_body
from gpuledger.roles import ENGINEER, role_permission
from procurement import models
from procurement.api.spec_schemas import TcoStudySpecSerializer, WorkloadSpecSerializer
from procurement.choices import Deployment
from procurement.costing.values import CostInputError
from procurement.ranking import RANKED_PRICING_MODELS
from procurement.services.documents import plain_json
from procurement.services.recommendations import (
    recommendation_create,
    recommendation_preview,
    workload_create_from_spec,
)
from procurement.services.tco import study_errors, tco_study_create

# Every 400 has the API's one error shape (gpuledger/api_errors.py) and nothing else.
ERROR_SCHEMA = ApiErrorsSerializer
RECOMMENDATION_ERROR_SCHEMA = ApiErrorsSerializer


def study_error_response(error: CostInputError, document: object) -> Response:
    """400 listing every error of a study document at once (study_errors). Nothing was stored."""
    found = study_errors(document) or [error]
    problems = [(item.field, item.message) for item in found]
    return input_error_response(CostInputError(error.field, error.message, problems=problems))


def stored_study_body(study: models.TcoStudy) -> dict:
    return study.result | {
        "id": study.pk,
        "computed_at": study.computed_at.isoformat(),
        "prices_used": study.prices_used,
    }


class TcoStudyCreate(APIView):
    """Buy versus rent for a study document (docs/tco-spec.md); the study is stored with its prices,
    owned by the caller and their team."""

    permission_classes = [role_permission(ENGINEER)]

    @extend_schema(
        request=TcoStudySpecSerializer,
        responses={
            201: OpenApiResponse(description="The TCO report (docs/tco-spec.md, Output), stored"),
            200: OpenApiResponse(
                description="The same body for the study already stored from this document, owner and team "
                "(saving twice is one save: its id, nothing added)"
            ),
            400: ERROR_SCHEMA,
        },
    )
    def post(self, request):
        require_body(request)
        try:
            team = team_for_new_object(request.user)
            study = tco_study_create(document=request.data, owner=request.user, team=team)
        except CostInputError as error:
            return study_error_response(error, request.data)
        # the same document saved again by the same owner for the same team: the stored study, nothing added
        answer = status.HTTP_201_CREATED if study.created else status.HTTP_200_OK
        return Response(stored_study_body(study), status=answer)


class TcoStudyDetail(APIView):
    """A stored study of the caller's team (another team's study is 404)."""

    permission_classes = [role_permission(ENGINEER)]

    @extend_schema(
        responses={
            200: OpenApiResponse(description="The stored TCO report"),
            404: OpenApiResponse(description="No such study"),
        }
    )
    def get(self, request, pk: int):
        return Response(stored_study_body(get_visible_or_404(models.TcoStudy.objects, request.user, pk=pk)))


def _names(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(), required=False, help_text=help_text)


# Every field the view accepts (procurement.services.RANKING_OPTION_FIELDS plus the workload itself).
RECOMMENDATION_REQUEST = inline_serializer(
    "RecommendationRequest",
    {
        "workload": WorkloadSpecSerializer(
            required=False,
            help_text="a workload spec (docs/workload-spec.md); stored as a new workload. Give this or workload_id.",
        ),
        "workload_id": serializers.IntegerField(
            required=False, help_text="a stored workload; or give workload"
        ),
        "deadline_hours": serializers.DecimalField(
            max_digits=20,
            decimal_places=6,
            required=False,
            min_value=0,
            help_text="only configurations finishing within this many hours",
        ),
        "budget": serializers.DecimalField(
            max_digits=20,
            decimal_places=6,
            required=False,
            min_value=0,
            help_text="only configurations whose total job cost is at most this, in `currency`",
        ),
        "top": serializers.IntegerField(required=False, min_value=1, default=20, help_text="rows returned"),
        "pricing_models": serializers.ListField(
            child=serializers.ChoiceField(choices=list(RANKED_PRICING_MODELS)),
            required=False,
            help_text="pricing models to rank; default all of them",
        ),
        "providers": _names("provider slugs the catalog knows, e.g. aws"),
        "regions": _names("region codes the catalog knows, e.g. us-east-1"),
        "gpus": _names("GPU model slugs, e.g. h100-sxm5-80gb"),
        "instance_counts": serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            required=False,
            help_text="instance counts to try; default 1, 2, 4, 8",
        ),
        "currency": serializers.CharField(
            required=False, default="USD", help_text="ISO 4217 code of the results, through stored FX rates"
        ),
        "explore_parallelism": serializers.BooleanField(
            required=False,
            default=False,
            help_text="also rank GPU counts and plans other than the spec's stated parallelism (gpus, zero_stage, "
            "tensor_parallel, pipeline_parallel), each row saying what differs; 'gpus: auto' in the spec does "
            "the same for the GPU count",
        ),
        "deployment": serializers.ChoiceField(
            choices=Deployment.choices,
            required=False,
            help_text="production (default): a serving replica split over consumer cards (no ECC; GeForce's "
            "data-center clause) ranks below the first row that is not one; development: ranked by cost like any row",
        ),
        "collapse_identical": serializers.BooleanField(
            required=False,
            help_text="false: keep every region's row; by default rows equal in price, hours and spot band "
            "collapse into one that lists the other regions (docs/cost-model.md)",
        ),
        "include_infeasible": serializers.BooleanField(
            required=False,
            default=False,
            help_text="also list the best configurations that do not fit, with fits: false and why",
        ),
        "include_illustrative": serializers.BooleanField(
            required=False,
            default=False,
            help_text="also rank illustrative (made-up demo) prices, labelled in each row's warnings",
        ),
        "rank_outliers_at_quote": serializers.BooleanField(
            required=False,
            default=False,
            help_text="rank a flagged spot outlier at its raw quote instead of its sibling zones' median",
        ),
        "calibrate": serializers.BooleanField(
            required=False,
            help_text="apply the MFU and memory factors fitted from stored benchmarks (default true); "
            "false ranks on the uncalibrated estimate",
        ),
        "storage_retention_days": serializers.DecimalField(
            max_digits=10,
            decimal_places=3,
            required=False,
            min_value=0,
            max_value=3650,
            help_text="days the job's disk is kept after the run (default 7); storage is billed for the run "
            "plus this retention",
        ),
        "checkpoint_write_hours": serializers.FloatField(
            required=False,
            min_value=0,
            max_value=24,
            help_text="spot: hours one checkpoint takes to write; default from the checkpoint size / storage speed",
        ),
        "restart_hours": serializers.FloatField(
            required=False,
            min_value=0,
            max_value=24,
            help_text="spot: hours a restart takes; default provisioning + image pull + loads + restore",
        ),
        "storage_write_gb_per_s": serializers.FloatField(
            required=False,
            min_value=0,
            max_value=100,
            help_text="spot: checkpoint write bandwidth, default 0.5",
        ),
        "deadline_probability": serializers.FloatField(
            required=False,
            min_value=0,
            max_value=1,
            help_text="probability a row meets deadline_hours on wall-clock time (spot: reclaims, checkpoints and "
            "restarts included), default 0.9",
        ),
        "save": serializers.BooleanField(
            required=False,
            default=False,
            help_text="store this answer, with these options, as the workload's saved one (recompute "
            "keeps the options); without it the answer is returned and nothing of the workload changes",
        ),
        "team": serializers.CharField(
            required=False, help_text="slug of one of your teams for a new workload; default your first team"
        ),
    },
)


class RecommendationCreate(APIView):
    """Rank configurations for a workload; with ``save: true``, store the dated result (with its options
    and the prices it used) as the workload's saved answer. Without ``save`` the answer is returned and
    the workload's saved answer is untouched: a query never replaces a stored decision. A workload given
    inline is stored as a new workload of the caller and their team (``team`` picks one of theirs).

    Body: ``{"workload": {...workload spec...}}`` or ``{"workload_id": 3}``, plus optional
    ``deadline_hours``, ``budget`` (in ``currency``), ``providers``, ``regions``, ``gpus`` (each must
    name something the catalog knows), ``pricing_models``, ``top``, ``currency`` (default USD; converted
    through stored FX rates) and ``include_infeasible`` (also list the best configurations that do not
    fit, after the feasible ones, with ``fits: false`` and why). Spot rows carry a ``spot`` object
    (interruption rate and source, checkpoint interval, overhead, verdict, P50/P90 for the first few).
    Feasible rows carry ``cost_breakdown`` {compute, setup, storage, reruns, total} (adding up to
    ``total_cost``), ``cost_basis`` (what each part is priced on: price, hours and instances; GB, rate and
    months; the rerun fraction; each part rebuilds to the cent from them) and ``unit_costs`` (per GPU-hour,
    per 1M training or generated tokens).
    Every row carries ``interconnect``: the node link and fabric, which collective went over which,
    ``communication_share`` (all traffic), ``exposed_communication_share`` (what it adds to the step) and
    a ``summary`` sentence (docs/cost-model.md, "Interconnects and communication"). Serving rows carry
    ``serving`` with ``priced_as``: "month" (``hours_per_month``, ``cost_per_month``) or, for an image
    generation job, "job" (``job_images``, ``job_hours``, ``job_cost``; the month keys null). Image
    training rows carry ``training`` (``training_images_per_second`` over the row's hours).
    Bad input is a 400 naming the field (a bad workload spec lists every bad field under ``errors``),
    and stores nothing.
    """

    permission_classes = [role_permission(ENGINEER)]

    @extend_schema(
        request=RECOMMENDATION_REQUEST,
        responses={
            201: OpenApiResponse(
                description="{id, workload_id, computed_at, created, saved, options, why_empty, results}: id is "
                "the stored recommendation (null when not saved), options the options it was computed under, "
                "why_empty the top reasons with counts when no configuration is feasible; 201 when a "
                "recommendation or a new workload was stored"
            ),
            200: OpenApiResponse(
                description="The same body for a stored workload when nothing new was stored (a query "
                "without save, a saved answer unchanged since, or the same workload spec saved again by the same owner "
                "for the same team: its workload_id)"
            ),
            400: OpenApiResponse(
                RECOMMENDATION_ERROR_SCHEMA,
                description="Bad input, nothing stored: the first bad field by its path; a bad workload spec "
                "lists every bad field under `errors`.",
            ),
        },
    )
    def post(self, request):
        require_body(request)
        data = dict(request.data) if isinstance(request.data, dict) else {}
        try:
            save = _save_flag(data.pop("save", False))
            with transaction.atomic():  # a bad option or currency also undoes the new workload
                workload = self._workload(request, data)
                options = {
                    key: value
                    for key, value in data.items()
                    if key not in ("workload", "workload_id", "team")
                }
                if save:
                    row, created = recommendation_create(
                        workload=workload, parameters=options, saved_by=request.user
                    )
                    computed_at, results, recommendation_id = row.computed_at, row.results, row.pk
                    why_empty = getattr(row, "why_empty", [])
                else:
                    ranking = recommendation_preview(workload=workload, parameters=options)
                    computed_at, results, recommendation_id, created = (
                        timezone.now(),
                        ranking.results,
                        None,
                        False,
                    )
                    why_empty = ranking.why_empty
        except (CostInputError, TeamChoiceError) as error:  # a bad workload spec: every bad field
            return input_error_response(error)
        body = {
            "id": recommendation_id,
            "workload_id": workload.pk,
            "computed_at": computed_at.isoformat(),
            "created": created,
            "saved": save,
            "options": plain_json(options),
            "why_empty": why_empty,  # when nothing ranked: the top reasons with counts
        }
        # a new recommendation or a new workload (the same spec saved again is the stored workload)
        stored = created or getattr(workload, "created", False)
        return Response(body | {"results": results}, status=201 if stored else 200)

    def _workload(self, request, data: dict) -> models.Workload:
        if data.get("workload_id") is not None:
            workload_id = data["workload_id"]
            if (
                isinstance(workload_id, bool)
                or not isinstance(workload_id, int)
                or not 0 < workload_id < 2**63
            ):
                raise CostInputError(
                    "workload_id", f"must be a whole number id, got {repr(workload_id)[:40]}"
                )
            workload = visible_to(models.Workload.objects, request.user).filter(pk=workload_id).first()
            if workload is None:  # another team's workload reads as missing
                raise CostInputError("workload_id", f"no workload {workload_id}")
            return workload
        if not isinstance(data.get("workload"), dict):
            raise CostInputError("workload", "give a workload spec or a workload_id")
        team = team_for_new_object(request.user, data.get("team"))
        return workload_create_from_spec(document=data["workload"], owner=request.user, team=team)


def _save_flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise CostInputError("save", f"must be true or false, got {value!r}")
    return value
