"""A refused page is the site's page with the menu, the reason and who can grant access; the API keeps
its one error shape (issue 30)."""

import pytest

pytestmark = pytest.mark.django_db


def test_finance_refused_rent_or_buy_sees_the_menu_the_reason_and_the_admins(client_as, user_with_role):
    user_with_role("admin", username="ops-admin")
    finance = client_as("finance")
    response = finance.get("/tco/")
    assert response.status_code == 403
    page = response.content.decode()
    assert '<nav aria-label="Main">' in page
    assert 'href="/billing/"' in page  # the menu lists what finance may open (Spend)
    assert 'href="/tco/"' not in page  # and not the page it was refused
    assert "This page needs the role engineer." in page
    assert "finance, viewer" in page  # the roles the user holds
    assert "<strong>ops-admin</strong>" in page  # who to ask
    # spend grants are the answer to a refused spend page only, not to rent-or-buy (x30: a new user read
    # "Spend of one team is granted to its engineers" on a page about buying servers and was lost)
    assert "Spend grants" not in page


def test_a_refused_spend_page_names_its_roles(client_as):
    response = client_as("engineer", team="research").get("/billing/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "finance or admin" in page and '<nav aria-label="Main">' in page
    assert "Spend grants" in page  # an engineer may be granted one team's spend
    assert "No admin account exists yet" in page  # none in this database


def test_a_view_s_own_message_is_the_reason(client_as):
    # finance_views raises PermissionDenied("budgets are edited by finance and admin") for others
    from gpuledger.refusals import _reason

    class Request:
        path = "/nowhere/"

    assert _reason(Request(), PermissionError("budgets are edited by finance and admin")) == (
        "budgets are edited by finance and admin"
    )
    assert _reason(Request(), PermissionError()) == "Your account has no access to this page."


def test_the_api_keeps_its_error_shape(client_as):
    response = client_as("finance").post("/api/tco/", data={}, content_type="application/json")
    assert response.status_code == 403
    body = response.json()
    assert body["errors"][0]["path"] and "engineer" in body["errors"][0]["message"]
