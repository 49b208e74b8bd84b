"""The recommendation page's form carries the issue-26 options: the deadline probability and exploring
plans other than the spec's parallelism."""

from django.http import QueryDict

from procurement.services.recommendations import ranking_options_parse
from procurement.views.ranking_form import form_values, options_from_form


def test_the_form_posts_a_deadline_probability_and_the_explore_option():
    post = QueryDict("deadline_hours=48&deadline_probability=0.8&explore_parallelism=1")
    options = options_from_form(post)
    assert options == {"deadline_hours": 48, "deadline_probability": 0.8, "explore_parallelism": True}
    parsed = ranking_options_parse(options)
    assert (parsed.deadline_hours, parsed.deadline_probability, parsed.explore_parallelism) == (
        48.0,
        0.8,
        True,
    )
    assert form_values(options)["deadline_probability"] == 0.8


def test_an_empty_probability_means_the_default():
    assert "deadline_probability" not in options_from_form(QueryDict("deadline_probability="))
    assert ranking_options_parse({}).deadline_probability == 0.9


def test_the_form_posts_development_deployment_and_production_by_default():
    # rankpp (aud49k item 4): ticked, the consumer serving split is ranked by cost; unticked, production
    ticked = options_from_form(QueryDict("deployment=development"))
    assert ticked == {"deployment": "development"}
    assert ranking_options_parse(ticked).deployment == "development"
    assert form_values(ticked)["deployment"] == "development"
    assert "deployment" not in options_from_form(QueryDict(""))
    assert ranking_options_parse(options_from_form(QueryDict(""))).deployment == "production"
