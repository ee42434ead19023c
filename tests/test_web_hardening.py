"""`laketx serve` hardened against what a browser on another origin, or a careless client, can
do: credentials in the query string, login CSRF, cross-origin dashboard forms and a logout
without its token. A real uvicorn on 127.0.0.1 and httpx; no JVM (no run is started)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lakeguard.keys import Scope
from tests.conftest import cells_yaml, write
from tests.service import Served, serving

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
