"""The dashboard: recent change events, stored workloads with their cheapest option, TCO verdicts."""

import datetime as dt

from gpuledger.templatetags.formatting import money
from pricing.models import PriceObservation
from procurement import selectors
from procurement.choices import ChangeKind
from procurement.models import ChangeEvent, Recommendation, TcoStudy, Workload
from procurement.services.recompute import recommendation_recompute
from tests.procurement.costing.tco_fixtures import study_document

WORKLOAD = {
    "name": "llama-qlora",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "training_tokens": 1e9,
}


def _raise_price(observation_id: int, factor: int = 4) -> None:
    current = PriceObservation.objects.get(pk=observation_id)
    PriceObservation.objects.create(
        offer=current.offer,
        pricing_model=current.pricing_model,
        payment_option=current.payment_option,
        amount_per_hour=current.amount_per_hour * factor,
        currency=current.currency,
        observed_at=current.observed_at + dt.timedelta(days=1),
        source="test: price rise",
    )


def test_it_shows_a_change_event_the_new_cheapest_option_and_a_study(
    engineer_client, bundled_catalog, django_capture_on_commit_callbacks
):
    created = engineer_client.post(
        "/api/recommendations/",
        {"workload": WORKLOAD, "top": 5, "save": True},
        content_type="application/json",
    )
    first = created.json()["results"][0]
    _raise_price(first["observation_id"])
    with django_capture_on_commit_callbacks(execute=True):
        recommendation_recompute(created.json()["workload_id"])
    newest = Recommendation.objects.order_by("-pk").first().results[0]
    TcoStudy.objects.create(
        name="8xH100 for 3 years",
        spec={},
        result={"recommendation": "buy", "currency": "USD"},
        owner=engineer_client.user,
        team=engineer_client.user.teams.get(),
    )

    html = engineer_client.get("/dashboard/").content.decode()
    assert "Cheapest feasible option changed" in html
    assert f"1 x {first['provider']} {first['instance_type']} {first['region']}" in html  # before
    assert money(newest["total_cost"], "USD") in html  # the workload's current cheapest option
    # eager Celery ran the notification task; the workload has no e-mail or webhook, and the page says so
    assert "not yet" not in html and "no target configured" in html
    assert "8xH100 for 3 years" in html and ">buy<" in html


def test_it_lists_a_workload_by_its_newest_ranking_and_says_when_nothing_fits(db):
    ranked = Workload.objects.create(name="a", task="qlora", spec=WORKLOAD)
    unranked = Workload.objects.create(name="b", task="qlora", spec=WORKLOAD)
    old = {"fits": True, "provider": "old", "total_cost": "9.00"}
    Recommendation.objects.create(workload=ranked, results=[old], fingerprint="1")
    Recommendation.objects.create(
        workload=ranked, results=[{"fits": False, "provider": "x"}], fingerprint="2"
    )
    rows = {row["workload"].name: row for row in selectors.workloads_with_latest_option()}
    assert (
        rows["a"]["cheapest"] is None and rows["a"]["computed_at"] is not None
    )  # newest ranking: nothing fits
    assert rows["b"]["cheapest"] is None and rows["b"]["computed_at"] is None
    assert [row["workload"].pk for row in selectors.workloads_with_latest_option()] == [
        ranked.pk,
        unranked.pk,
    ]


def test_it_describes_each_kind_of_change_in_words():
    option = {
        "instances": 2,
        "provider": "aws",
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "pricing_model": "on_demand",
        "total_cost": "1234.56",
    }
    text = selectors.change_side_text
    assert text(ChangeKind.CHEAPEST_OPTION, option) == "2 x aws p5.48xlarge us-east-1 on_demand: 1234.56"
    assert text(ChangeKind.CHEAPEST_OPTION, {}) == "no feasible option"
    assert text(ChangeKind.SPOT_VERDICT, {"spot_usable": False, "cheapest_spot": None}) == "spot unusable"
    assert text(ChangeKind.RENT_OR_BUY, {"recommendation": "rent", "study_id": 3}) == "rent"


def test_it_shows_only_the_current_version_of_a_study(db):
    old = TcoStudy.objects.create(name="s", spec=study_document(), result={"recommendation": "rent"})
    new = TcoStudy.objects.create(
        name="s", spec=study_document(), result={"recommendation": "buy"}, previous=old
    )
    assert selectors.current_tco_studies() == [new]
    assert ChangeEvent.objects.count() == 0
