"""`laketx serve` hardened against what a browser on another origin, or a careless client, can
do: credentials in the query string, login CSRF, cross-origin dashboard forms and a logout
without its token. A real uvicorn on 127.0.0.1 and httpx; no JVM (no run is started)."""

from __future__ import annotations

import contextlib
import html
import re
from collections.abc import Iterator

import httpx
import pytest

from lakeguard.actors.keys import Scope
from openlaketx.service.dashboard.sessions import LoginForms, cross_origin
from tests.support.project import cells_yaml, write
from tests.support.service import Served, serving

API = "/api/v1"
S = "_web"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("web")
    with serving(root / "lakehouse") as found:
        found.tenants.get("default").apply(write(root / "p" / "cells.yaml", cells_yaml(S)))
        yield found


@pytest.fixture
def fresh(served: Served) -> Served:
    """The server with its brakes and budgets as new (tests fail on purpose from 127.0.0.1)."""
    served.brake.clear()
    served.rates.clear()
    return served


# credentials in the query string -------------------------------------------------------------
def test_a_credential_like_query_parameter_is_refused_whatever_its_case(fresh: Served) -> None:
    token = fresh.key(scopes=(Scope.RUNS_READ,))
    names = [
        "Authorization",
        "AUTHORIZATION",
        "authorization",
        "Bearer",
        "access_token",
        "Access-Token",
        "API_KEY",
        "Api-Key",
        "apikey",
        "Key",
        "TOKEN",
        "Secret",
        "PassWord",
    ]
    with fresh.client(token) as http:
        for name in names:
            answer = http.get(f"{API}/runs", params={name: f"Bearer {token}"})
            assert answer.status_code == 400, (name, answer.text)
            assert answer.headers["content-type"].startswith("application/problem+json")
            assert answer.json()["title"] == "BadRequest"
            assert "query string" in answer.json()["detail"] and token not in answer.text
        # a key sent in the query is refused even beside a valid header, and without one
        bare = http.get(f"{API}/runs", params={"Authorization": "x"}, headers={"Authorization": ""})
        assert bare.status_code == 400
        # names that merely contain a credential's name are ordinary parameters
        for ordinary in ({"limit": "5"}, {"monkey": "1"}, {"tokens_total": "1"}):
            assert http.get(f"{API}/runs", params=ordinary).status_code == 200, ordinary


# the dashboard's forms ---------------------------------------------------------------------
TOKEN = re.compile(r'name="csrf" value="([^"]+)"')
SESSION = "laketx_session"


def token_on(http: httpx.Client, path: str) -> str:
    """The CSRF token a page's form carries, as a browser reads it (its cookies kept)."""
    answer = http.get(path)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:200])
    found = TOKEN.search(answer.text)
    assert found is not None, path
    return found.group(1)


def own(served: Served) -> dict[str, str]:
    """What a browser sends with a form of this server's own page."""
    return {"Origin": served.url, "Sec-Fetch-Site": "same-origin"}


def other_port(served: Served) -> str:
    """Another origin on the same host: 127.0.0.1, the next port."""
    return f"http://127.0.0.1:{int(served.url.rsplit(':', 1)[1]) + 1}"


@contextlib.contextmanager
def logged_in(served: Served, token: str) -> Iterator[httpx.Client]:
    """A client logged in through the real form: GET /login, its token, POST."""
    with served.client() as http:
        csrf = token_on(http, "/login")
        answer = http.post("/login", data={"key": token, "csrf": csrf}, headers=own(served))
        assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
        assert SESSION in http.cookies
        yield http


def test_the_login_form_flow_logs_in_and_its_token_cookie_goes(fresh: Served) -> None:
    token = fresh.key(scopes=(Scope.RUNS_READ,))
    with fresh.client() as http:
        form = http.get("/login")
        cookie = form.headers["set-cookie"]
        assert cookie.startswith("laketx_login=") and "HttpOnly" in cookie
        assert "SameSite=strict" in cookie and "Path=/login" in cookie and "Max-Age=" in cookie
        (csrf,) = TOKEN.findall(form.text)
        assert csrf not in cookie  # the field is an HMAC of the cookie, not the cookie
        answer = http.post("/login", data={"key": token, "csrf": csrf}, headers=own(fresh))
        assert answer.status_code == 303 and answer.headers["location"] == "/"
        assert list(http.cookies) == [SESSION]  # the form's cookie is deleted at login
        assert http.get("/").status_code == 200
    with fresh.client() as http:  # a client that sends neither Origin nor Sec-Fetch-Site
        csrf = token_on(http, "/login")
        assert http.post("/login", data={"key": token, "csrf": csrf}).status_code == 303


def test_a_login_without_its_token_or_from_another_origin_starts_no_session(
    fresh: Served,
) -> None:
    victim, attacker = fresh.key(scopes=(Scope.RUNS_READ,)), fresh.key("attacker")
    with logged_in(fresh, victim) as http, fresh.client() as elsewhere:
        session = http.cookies[SESSION]
        not_this_form = "has expired or is not this server's"
        another_site = "sent from another site"
        cases: dict[str, tuple[dict[str, str], dict[str, str], str]] = {
            # name: (form fields besides the key, headers, what the page says)
            "no token": ({}, own(fresh), not_this_form),
            "a wrong token": ({"csrf": "0" * 64}, own(fresh), not_this_form),
            "a token of other characters": ({"csrf": "é" * 8}, own(fresh), not_this_form),
            # a page elsewhere can read a login form of its own, never this browser's cookie
            "another browser's token": (
                {"csrf": token_on(elsewhere, "/login")},
                own(fresh),
                not_this_form,
            ),
            "another port of 127.0.0.1": ({}, {"Origin": other_port(fresh)}, another_site),
            "Sec-Fetch-Site: cross-site": ({}, {"Sec-Fetch-Site": "cross-site"}, another_site),
            "Sec-Fetch-Site: same-site": ({}, {"Sec-Fetch-Site": "same-site"}, another_site),
            "another scheme": ({}, {"Origin": fresh.url.replace("http:", "https:")}, another_site),
            "another host": (
                {},
                {"Origin": fresh.url.replace("127.0.0.1", "localhost")},
                another_site,
            ),
            "Origin: null": ({}, {"Origin": "null"}, another_site),
        }
        for name, (fields, headers, says) in cases.items():
            data = {"key": attacker, "csrf": token_on(http, "/login"), **fields}
            if name == "no token":
                del data["csrf"]
            answer = http.post("/login", data=data, headers=headers)
            assert answer.status_code == 403, (name, answer.text)
            assert answer.headers["content-type"].startswith("text/html")
            assert says in html.unescape(answer.text), name
            assert SESSION not in answer.headers.get("set-cookie", ""), name  # no new session
            assert http.cookies[SESSION] == session, name
            # the victim's own session is as it was: still its tenant, not the attacker's
            assert 'data-testid="tenant">default<' in http.get("/").text, name
    attackers = fresh.tenants.keys.list("attacker")
    assert [k.last_used_at for k in attackers] == [None]  # the key was never looked at


def test_the_dashboard_forms_are_refused_from_another_origin(fresh: Served) -> None:
    token = fresh.key(scopes=(Scope.RUNS_READ, Scope.RUNS_TRIGGER))
    lh = fresh.tenants.get("default")
    with logged_in(fresh, token) as http:
        csrf = token_on(http, "/")  # the session's token, in the page's forms
        session = http.cookies[SESSION]
        for headers in (
            {"Origin": other_port(fresh)},
            {"Sec-Fetch-Site": "cross-site"},
            {"Origin": fresh.url, "Sec-Fetch-Site": "same-site"},
        ):
            run = http.post(f"/jobs/cells_job{S}/runs", data={"csrf": csrf}, headers=headers)
            assert run.status_code == 403 and "sent from another site" in run.text, headers
            out = http.post("/logout", data={"csrf": csrf}, headers=headers)
            assert out.status_code == 403 and "sent from another site" in out.text, headers
            assert "set-cookie" not in out.headers  # the cookie is kept ...
            assert http.cookies[SESSION] == session
            assert http.get("/").status_code == 200  # ... and its session is alive
        assert lh.reader.runs.job_runs(10) == []  # nothing started
        out = http.post("/logout", data={"csrf": csrf}, headers=own(fresh))
        assert out.status_code == 303 and out.headers["location"] == "/login"


def test_a_logout_without_its_token_changes_nothing_and_with_it_ends_the_session(
    fresh: Served,
) -> None:
    token = fresh.key(scopes=(Scope.RUNS_READ,))
    with logged_in(fresh, token) as http:
        session = http.cookies[SESSION]
        csrf = token_on(http, "/")
        for sent in ({}, {"csrf": "guessed"}, {"csrf": "é" * 8}):
            answer = http.post("/logout", data=sent, headers=own(fresh))
            assert answer.status_code == 403, (sent, answer.text)
            assert "still logged in" in answer.text
            assert "set-cookie" not in answer.headers  # the cookie is not deleted ...
            assert http.cookies[SESSION] == session
            assert http.get("/").status_code == 200  # ... and the session still works
        answer = http.post("/logout", data={"csrf": csrf}, headers=own(fresh))
        assert answer.status_code == 303 and answer.headers["location"] == "/login"
        assert SESSION not in http.cookies  # deleted
    # and the session id, replayed, no longer works: the server ended it
    with fresh.client() as replay:
        replay.cookies.set(SESSION, session)
        assert replay.get("/").headers["location"] == "/login"
        # a logout with a cookie that names no live session has nothing to keep: it goes
        gone = replay.post("/logout", data={}, headers=own(fresh))
        assert gone.status_code == 303 and gone.headers["location"] == "/login"
        assert gone.headers["set-cookie"].startswith(f'{SESSION}=""; ')
        assert "Max-Age=0" in gone.headers["set-cookie"]


# the pieces, without a server ------------------------------------------------------------------
def test_a_login_form_token_is_its_cookies_and_expires() -> None:
    now = [1000.0]
    forms = LoginForms(lifetime=60, clock=lambda: now[0])
    form, other = forms.issue(), forms.issue()
    assert forms.matches(form.cookie, form.field)
    assert not forms.matches(form.cookie, other.field)  # another form's field
    assert not forms.matches(other.cookie, form.field)
    assert not forms.matches(None, form.field) and not forms.matches(form.cookie, None)
    assert not forms.matches(form.cookie, "é" * 64)  # any text may be sent: no error
    assert not forms.matches("9" + form.cookie, form.field)  # an issue time moved
    assert not LoginForms().matches(form.cookie, form.field)  # another process's key
    now[0] += 60
    assert forms.matches(form.cookie, form.field)
    now[0] += 1
    assert not forms.matches(form.cookie, form.field)  # expired


@pytest.mark.parametrize(
    ("headers", "scheme", "refused"),
    [
        ({}, "http", False),  # not a browser: the form's token decides
        ({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8765"}, "http", False),
        ({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8766"}, "http", True),
        ({"host": "Example.COM", "origin": "https://example.com:443"}, "https", False),
        ({"host": "example.com:80", "origin": "http://example.com"}, "http", False),
        ({"host": "example.com", "origin": "http://example.com"}, "https", True),  # TLS lost
        ({"host": "[::1]:8765", "origin": "http://[::1]:8765"}, "http", False),
        ({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8765/"}, "http", True),
        ({"host": "127.0.0.1:8765", "origin": "http://u@127.0.0.1:8765"}, "http", True),
        ({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:99999"}, "http", True),
        ({"host": "127.0.0.1:8765", "origin": "null"}, "http", True),
        ({"origin": "http://127.0.0.1:8765"}, "http", True),  # no Host: nothing to match
        ({"sec-fetch-site": "same-origin"}, "http", False),
        ({"sec-fetch-site": "none"}, "http", False),  # typed or bookmarked
        ({"sec-fetch-site": "same-site"}, "http", True),
        ({"sec-fetch-site": "cross-site"}, "http", True),
        (
            {"host": "127.0.0.1:8765", "origin": "http://evil:1", "sec-fetch-site": "same-origin"},
            "http",
            True,
        ),
    ],
)
def test_cross_origin_compares_scheme_host_and_port(
    headers: dict[str, str], scheme: str, refused: bool
) -> None:
    assert (cross_origin(headers, scheme) is not None) is refused
