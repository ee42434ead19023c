"""A tenant's metadata is untrusted input: a red team's second tenant (beta) tries to reach
the first (alpha), the metadata store and the server's secrets and network through every field
that names a path, a secret or a destination, through each way definitions arrive (the API,
`apply`, a watched folder, rows written directly). Each attempt is refused with the field and
its line, and leaves nothing behind. No Spark: what a run does with such rows is in
tests/openlaketx/sources/test_tenant_reach_runs.py.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lakeguard.actors.keys import Scope
from lakeguard.records.reach import Destination, Reach, ReachSettings, normalized, within
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.catalog.to_rows import document_rows
from lakeguard.words.errors import OutOfReach, ValidationError
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.settings import ServiceSettings, TenantLimits
from openlaketx.sources.credentials import resolve
from openlaketx.sources.guard import checked_address, pinned_jdbc_url
from tests.support.service import Served, serving

API = "/api/v1"
WRITE = (Scope.DEFINITIONS_WRITE, Scope.RUNS_READ)
ALLOWED = 18_431  # the port beta's operator lets it reach on 127.0.0.1
LISTENER = 18_432  # the attacker's own listener: never listed
ALPHA_SECRET = "alpha-webhook-secret-value"
COLUMNS = "columns: [{name: a, type: string}]"
UP2 = "/".join([".."] * 2)  # two folders up (spelled so: the repository's own paths never climb)


@dataclass(frozen=True)
class Attempt:
    """One hostile document of beta's, and where and why it must be refused."""

    name: str
    system: str
    object: str = ""
    job: str = ""
    path: str = "source_systems[0]"  # the field the refusal names (a prefix of it)
    says: str = ""


def attempts(home: Path) -> list[Attempt]:
    alpha = home / "tenants" / "alpha"
    files = "{id: s, options: {root: %s}}"
    return [
        Attempt(
            "a delta source in alpha's warehouse",
            "{id: s, kind: delta, options: {root: ../alpha/warehouse}}",
            "locator: silver/orders",
            path="source_systems[0].options.root (line 2)",
            says="another tenant's home",
        ),
        Attempt(
            "the same by an absolute path",
            f"{{id: s, kind: delta, options: {{root: '{alpha}/warehouse'}}}}",
            "locator: silver/orders",
            path="source_systems[0].options.root",
            says="another tenant's home",
        ),
        Attempt(
            "the metadata store's api_keys table, from a root at the home",
            f"{{id: s, kind: delta, options: {{root: {UP2}}}}}",
            "locator: metadata/lakeguard/api_keys",
            path="source_objects[0].locator",
            says="metadata store or a warehouse",
        ),
        Attempt(
            "alpha's feed, archived",
            files % "../alpha/feed",
            "locator: 'incoming/*.csv'\n    archive: done",
            path="source_systems[0].options.root",
            says="another tenant's home",
        ),
        Attempt(
            "an archive out of its own feed",
            files % "feed",
            f"locator: 'orders/*.csv'\n    archive: {UP2}/alpha/feed",
            path="source_objects[0].archive",
            says="another tenant's home",
        ),
        Attempt(
            "its own warehouse",
            files % "warehouse",
            "locator: 'bronze/*.parquet'\n    format: parquet",
            path="source_systems[0].options.root",
            says="metadata store or a warehouse",
        ),
        Attempt(
            "a symlink root in its own feed leading to alpha's",
            files % "feed/alpha_link",
            "locator: 'incoming/*.csv'",
            path="source_systems[0].options.root",
            says="another tenant's home",
        ),
        Attempt(
            "a locator through a symlink in its own feed",
            files % "feed",
            "locator: 'alpha_link/incoming/*.csv'",
            path="source_objects[0].locator",
            says="symbolic link",
        ),
        Attempt(
            "a registered table name",
            "{id: s, kind: delta, options: {root: feed}}",
            "locator: lakeguard.api_keys",
            path="source_objects[0].locator",
            says="registered table name",
        ),
        Attempt(
            "a reader option naming a path",
            files % "feed",
            "locator: 'orders/*.csv'\n    options: {path: '/etc'}",
            path="source_objects[0].options.path",
            says="names a file or folder",
        ),
        Attempt(
            "an object store prefix it was not given",
            files % "'s3://lake/tenants/alpha/feed'",
            "locator: 'incoming/*.csv'",
            path="source_systems[0].options.root",
            says="outside the folders tenant beta may have read",
        ),
        Attempt(
            "alpha's secret by environment variable",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}'}}, "
            "credential_ref: ALPHA_HOOK_SECRET}",
            "locator: orders.csv",
            path="source_systems[0].credential_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "alpha's secret under alpha's prefix",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}'}}, "
            "credential_ref: 'env:LAKETX_SECRET_ALPHA_HOOK'}",
            "locator: orders.csv",
            path="source_systems[0].credential_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "alpha's secret file by a relative path",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}'}}, "
            "credential_ref: 'file:../alpha/secrets/hook'}",
            "locator: orders.csv",
            path="source_systems[0].credential_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "alpha's secret file through a symlink in its own secrets",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}'}}, "
            "credential_ref: 'file:secrets/stolen'}",
            "locator: orders.csv",
            path="source_systems[0].credential_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "the server's own variable",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}'}}, "
            "credential_ref: AWS_SECRET_ACCESS_KEY}",
            "locator: orders.csv",
            path="source_systems[0].credential_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "an OAuth2 token endpoint on the attacker's listener",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}', "
            "auth: {type: oauth2_client_credentials, client_id: c, "
            f"token_url: 'http://127.0.0.1:{LISTENER}/token', "
            "client_secret_ref: LAKETX_SECRET_BETA_CLIENT}}}",
            "locator: orders.csv",
            path="source_systems[0].options.auth.token_url",
            says="may reach",
        ),
        Attempt(
            "alpha's secret as a basic auth password",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}', "
            "auth: {type: basic, user: u, password_ref: ALPHA_HOOK_SECRET}}}",
            "locator: orders.csv",
            path="source_systems[0].options.auth.password_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "alpha's secret file, through a symlink, as a refresh token",
            f"{{id: s, kind: http, options: {{base_url: 'http://127.0.0.1:{ALLOWED}', "
            "auth: {type: oauth2_refresh_token, "
            f"token_url: 'http://127.0.0.1:{ALLOWED}/token', "
            "refresh_token_ref: 'file:secrets/stolen'}}}",
            "locator: orders.csv",
            path="source_systems[0].options.auth.refresh_token_ref",
            says="outside the tenant's secrets",
        ),
        Attempt(
            "a webhook secret of alpha's",
            files % "feed",
            "locator: 'orders/*.csv'",
            job="jobs:\n  - id: j\n    triggers: [webhook]\n    webhook_secret_ref: "
            "ALPHA_HOOK_SECRET\n    tasks: [{id: t, dataset: bronze_b}]",
            path="jobs[0].webhook_secret_ref",
            says="outside the tenant's secrets",
        ),
        *[
            Attempt(
                f"http to {url}",
                f"{{id: s, kind: http, options: {{base_url: '{url}'}}}}",
                "locator: orders.csv",
                path="source_systems[0].options.base_url",
                says="may reach",
            )
            for url in (
                f"http://127.0.0.1:{LISTENER}",
                f"http://localhost:{LISTENER}",
                f"http://[::1]:{ALLOWED}",
                f"http://[::ffff:127.0.0.1]:{LISTENER}",
                f"http://127.0.0.2:{ALLOWED}",
                f"http://2130706433:{LISTENER}",
                "http://169.254.169.254/latest/meta-data",
                "http://10.0.0.1:8080",
                "https://example.com",
            )
        ],
        Attempt(
            "jdbc to the attacker's listener",
            f"{{id: s, kind: jdbc, options: {{url: 'jdbc:postgresql://127.0.0.1:{LISTENER}/x'}}}}",
            "locator: public.orders\n    format: jdbc",
            path="source_systems[0].options.url",
            says="may reach",
        ),
        Attempt(
            "jdbc with a socket factory in the url",
            "{id: s, kind: jdbc, options: {url: 'jdbc:postgresql://127.0.0.1:"
            f"{ALLOWED}/x?socketFactory=org.example.Evil'}}}}",
            "locator: public.orders\n    format: jdbc",
            path="source_systems[0].options.url",
            says="socketFactory",
        ),
        Attempt(
            "jdbc with a file-reading property",
            "{id: s, kind: jdbc, options: {url: 'jdbc:postgresql://127.0.0.1:"
            f"{ALLOWED}/x', sslrootcert: /etc/shadow}}}}",
            "locator: public.orders\n    format: jdbc",
            path="source_systems[0].options.sslrootcert",
            says="may name files",
        ),
        Attempt(
            "jdbc to a file database",
            "{id: s, kind: jdbc, options: {url: 'jdbc:sqlite:/etc/passwd'}}",
            "locator: users\n    format: jdbc",
            path="source_systems[0].options.url",
            says="does not say which host",
        ),
        Attempt(
            "jdbc with another driver",
            "{id: s, kind: jdbc, options: {url: 'jdbc:postgresql://127.0.0.1:"
            f"{ALLOWED}/x', driver: org.h2.Driver}}}}",
            "locator: public.orders\n    format: jdbc",
            path="source_systems[0].options.driver",
            says="org.postgresql.Driver only",
        ),
    ]


def document(attempt: Attempt, n: str = "") -> str:
    """The attempt as a document; `n` suffixes every id (many attempts in one store)."""
    load = ", load_type: full" if "kind: jdbc" in attempt.system else ""
    job = attempt.job.replace("id: j", f"id: j{n}").replace("bronze_b", f"bronze_b{n}")
    return (
        f"source_systems:\n  - {attempt.system.replace('{id: s,', f'{{id: s{n},')}\n"
        f"source_objects:\n  - id: o{n}\n    system: s{n}\n    dataset: bronze_b{n}\n"
        f"    {attempt.object}\n    {COLUMNS}\n"
        f"datasets:\n  - {{id: bronze_b{n}, layer: bronze{load}}}\n"
        f"{job}\n"
    )


def _home(root: Path) -> Path:
    """A home with alpha's delivered file, warehouse and secrets, and beta's planted links."""
    home = root / "lakehouse"
    alpha = home / "tenants" / "alpha"
    (alpha / "feed" / "incoming").mkdir(parents=True)
    (alpha / "feed" / "incoming" / "orders_1.csv").write_text("a\nalpha-row\n")
    (alpha / "warehouse" / "silver" / "orders" / "_delta_log").mkdir(parents=True)
    (alpha / "secrets").mkdir()
    (alpha / "secrets" / "hook").write_text(ALPHA_SECRET)
    beta = home / "tenants" / "beta"
    (beta / "feed" / "orders").mkdir(parents=True)
    (beta / "feed" / "alpha_link").symlink_to(alpha / "feed")
    (beta / "secrets").mkdir()
    (beta / "secrets" / "stolen").symlink_to(alpha / "secrets" / "hook")
    return home


def _settings() -> ServiceSettings:
    beta = TenantLimits(reach=ReachSettings(network=(f"127.0.0.1:{ALLOWED}",)))
    return ServiceSettings(body_limit=4096, tenants={"beta": beta})


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, template_home: Path) -> Path:
    found = _home(tmp_path_factory.mktemp("reach"))
    shutil.copytree(template_home / "metadata", found / "metadata")
    return found


@pytest.fixture(scope="module")
def served(home: Path) -> Iterator[Served]:
    with serving(home, settings=_settings()) as found:
        yield found


@pytest.fixture
def beta(home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Lakehouse:
    """Beta's lakehouse as the CLI opens it: its reach from the settings file
    LAKETX_SETTINGS names."""
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        yaml.safe_dump({"tenants": {"beta": {"reach": {"network": [f"127.0.0.1:{ALLOWED}"]}}}})
    )
    monkeypatch.setenv("LAKETX_SETTINGS", str(settings))
    return Lakehouse.open(LakehouseConfig.from_env(home=home, tenant="beta"))


@pytest.fixture(autouse=True)
def _alpha_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALPHA_HOOK_SECRET", ALPHA_SECRET)
    monkeypatch.setenv("LAKETX_SECRET_ALPHA_HOOK", ALPHA_SECRET)


def _nothing_written(lh: Lakehouse) -> None:
    registry = lh.reader.definitions.registry()
    assert registry.systems == {} and registry.objects == () and registry.jobs == {}


def _alpha_untouched(home: Path) -> None:
    alpha = home / "tenants" / "alpha"
    assert (alpha / "feed" / "incoming" / "orders_1.csv").read_text() == "a\nalpha-row\n"
    assert not (alpha / "feed" / "done").exists()


def _refused(errors: list[dict[str, str]], attempt: Attempt) -> None:
    found = [e for e in errors if e["path"].startswith(attempt.path.split(" (")[0])]
    assert found, (attempt.name, errors)
    assert any(attempt.says in e["message"] for e in found), (attempt.name, found)
    if " (line" in attempt.path:
        assert any(e["path"] == attempt.path for e in found), found


# -- the four ways a definition arrives -----------------------------------------------------
def test_every_attempt_through_the_api_is_refused_with_its_field_and_line(
    served: Served, home: Path
) -> None:
    token = served.key("beta", WRITE)
    with served.client(token) as http:
        for attempt in attempts(home):
            for action in ("plan", "apply"):
                answer = http.post(
                    f"{API}/definitions/{action}",
                    content=document(attempt),
                    headers={"Content-Type": "application/yaml"},
                )
                assert answer.status_code == 422, (attempt.name, answer.text)
                body = answer.json()
                _refused(body["errors"], attempt)
                assert str(home) not in answer.text, "the server's folders are never shown"
    _nothing_written(served.tenants.get("beta"))
    _alpha_untouched(home)


def test_every_attempt_through_apply_is_refused(
    beta: Lakehouse, home: Path, tmp_path: Path
) -> None:
    for i, attempt in enumerate(attempts(home)):
        file = tmp_path / f"doc{i}.yaml"
        file.write_text(document(attempt))
        for act in (beta.plan, beta.apply):
            with pytest.raises(ValidationError) as info:
                act(file)
            _refused(info.value.errors, attempt)
    _nothing_written(beta)
    _alpha_untouched(home)


def test_every_attempt_in_a_watched_folder_is_refused(
    beta: Lakehouse, home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    cases = attempts(home)
    for i, attempt in enumerate(cases):
        (folder / f"doc{i:02d}.yaml").write_text(document(attempt))
    results = {r.file: r for r in beta.watcher(folder).sync()}
    for i, attempt in enumerate(cases):
        result = results[f"doc{i:02d}.yaml"]
        assert result.outcome.value != "APPLIED", attempt.name
        _refused(result.errors, attempt)
    _nothing_written(beta)


def test_rows_written_directly_are_refused_when_a_run_loads_them(
    beta: Lakehouse, home: Path
) -> None:
    """Rows written past apply (`laketx sql UPDATE ...`, or before the tenant was confined):
    the registry a run loads names each field, and blocks the dataset (or the job)."""
    cases = attempts(home)
    written: dict[str, list[DefinitionRow]] = {}
    for n, attempt in enumerate(cases):
        doc = validate_text(document(attempt, f"_{n}"), "direct edit")  # what SQL can write
        for table, rows in document_rows(doc, base_dir=beta.config.tenant_home).tables():
            written.setdefault(table, []).extend(rows)
    for table, rows in written.items():
        if rows:
            beta.store.upsert(table, rows)
    registry = beta.reader.definitions.registry()
    for n, attempt in enumerate(cases):
        wanted = attempt.path.split(" (")[0]
        refused = (
            registry.job_refusal(f"j_{n}")
            if wanted.startswith("jobs")
            else registry.refusal(f"bronze_b_{n}")
        )
        assert refused is not None, attempt.name
        assert attempt.says in refused.message, (attempt.name, refused.message)
        field = wanted.split("].", 1)[1] if "]." in wanted else ""
        assert field in refused.message, (field, refused.message)
    _alpha_untouched(home)


# -- where a definition takes effect --------------------------------------------------------
def test_a_secret_resolves_only_in_the_tenants_scope(home: Path) -> None:
    reach = LakehouseConfig(home=home, tenant="beta").tenant_reach()
    for ref in ("ALPHA_HOOK_SECRET", "env:LAKETX_SECRET_ALPHA_HOOK", "file:secrets/stolen"):
        with pytest.raises(OutOfReach) as info:
            resolve(ref, where="source_systems[s].credential_ref", reach=reach)
        assert ALPHA_SECRET not in str(info.value.to_dict())
        assert info.value.where == "source_systems[s].credential_ref"
    (home / "tenants" / "beta" / "secrets" / "token").write_text("beta-token")
    os.environ["LAKETX_SECRET_BETA_TOKEN"] = "beta-env-token"
    try:
        assert resolve("file:secrets/token", where="x", reach=reach) == "beta-token"
        assert resolve("LAKETX_SECRET_BETA_TOKEN", where="x", reach=reach) == "beta-env-token"
    finally:
        del os.environ["LAKETX_SECRET_BETA_TOKEN"]


def test_a_connection_goes_only_to_a_checked_address() -> None:
    reach = Reach(tenant="beta", network=(Destination.parse(f"127.0.0.1:{ALLOWED}"),))
    assert checked_address(reach, "localhost", ALLOWED, "x") == "127.0.0.1"
    assert checked_address(reach, "127.0.0.1", ALLOWED, "x") == "127.0.0.1"
    for host, port in (("localhost", LISTENER), ("127.0.0.2", ALLOWED), ("::1", ALLOWED)):
        with pytest.raises(OutOfReach):
            checked_address(reach, host, port, "x")
    # a name listed by name reaches only public addresses: it could be made to resolve inward
    named = Reach(tenant="beta", network=(Destination.parse(f"localhost:{ALLOWED}"),))
    with pytest.raises(OutOfReach) as info:
        checked_address(named, "localhost", ALLOWED, "x")
    assert "only a listed address or network" in info.value.what
    pinned = pinned_jdbc_url(reach, f"jdbc:postgresql://localhost:{ALLOWED}/db?ssl=true", "x")
    assert pinned == f"jdbc:postgresql://127.0.0.1:{ALLOWED}/db?ssl=true"


def test_a_single_user_home_keeps_todays_reach_but_never_the_store(tmp_path: Path) -> None:
    """The home's own tenant, with no reach declared, is not confined (any folder, secret or
    host, as before tenants existed), but no tenant ever names the metadata store or a
    warehouse."""
    home = tmp_path / "lakehouse"
    reach = LakehouseConfig(home=home).tenant_reach()
    assert not reach.confined
    assert reach.storage_refusal(str(tmp_path / "anywhere" / "*.csv")) is None
    assert reach.secret_refusal("AWS_SECRET_ACCESS_KEY") is None
    assert reach.name_refusal("example.com", 443) is None
    for place in ("metadata/lakeguard/api_keys", "warehouse/silver", "tenants/beta/feed"):
        assert reach.storage_refusal(str(home / place)) is not None, place
    assert reach.storage_refusal(f"{home}/*/lakeguard/api_keys") is not None  # a glob over it


def test_a_declared_reach_confines_the_default_tenant_too(tmp_path: Path) -> None:
    settings = ReachSettings(storage=("/srv/{tenant}/in", "s3://feeds/{tenant}"))
    reach = LakehouseConfig(home=tmp_path, reach=settings).tenant_reach()
    assert reach.confined and reach.read == (
        os.path.realpath("/srv/default/in"),
        "s3://feeds/default",
    )
    assert reach.storage_refusal("s3a://feeds/default/x/*.csv") is None
    assert reach.storage_refusal("s3://feeds/default/../other/x") is not None
    assert reach.storage_refusal("s3://feeds/defaultish/x") is not None


def test_definitions_show_roots_relative_to_the_tenant(served: Served) -> None:
    token = served.key("gamma", WRITE)
    doc = (
        "source_systems:\n  - {id: s, options: {root: feed}}\n"
        + document(Attempt("fine", "", "locator: 'orders/*.csv'")).split("\n", 2)[2]
    )
    with served.client(token) as http:
        applied = http.post(
            f"{API}/definitions/apply", content=doc, headers={"Content-Type": "application/yaml"}
        )
        assert applied.status_code == 200, applied.text
        exported = http.get(f"{API}/definitions").text
        assert "root: feed" in exported and str(served.home) not in exported
        replanned = http.post(
            f"{API}/definitions/plan",
            content=exported,
            headers={"Content-Type": "application/yaml"},
        ).json()
        assert replanned["changes"] == []  # the export plans back to nothing


# -- the checks themselves ------------------------------------------------------------------
SEGMENT = st.sampled_from(["feed", "..", ".", "alpha", "beta", "tenants", "x", "metadata", ""])


@given(st.lists(SEGMENT, max_size=8))
def test_a_path_is_allowed_only_when_it_folds_into_a_granted_folder(parts: list[str]) -> None:
    reach = Reach(
        tenant="beta",
        read=("/h/tenants/beta/feed",),
        denied=("/h/metadata", "/h/tenants/beta/metadata"),
        tenants_root="/h/tenants",
        own_home="/h/tenants/beta",
    )
    location = "/h/tenants/beta/feed/" + "/".join(parts)
    folded = normalized(location)
    assert folded is not None
    allowed = reach.storage_refusal(location) is None
    assert allowed == within(folded, "/h/tenants/beta/feed")


@pytest.mark.parametrize(
    ("text", "host", "port", "ok"),
    [
        ("api.example.com:443", "api.example.com", 443, True),
        ("api.example.com:443", "api.example.com", 80, False),
        ("*.example.com", "a.b.example.com", 8443, True),
        ("*.example.com", "example.com", 443, False),
        ("api.example.com:8000-8010", "API.EXAMPLE.COM.", 8005, True),
    ],
)
def test_a_destination_names_hosts_and_ports(text: str, host: str, port: int, ok: bool) -> None:
    assert Destination.parse(text).names(host, port) is ok


@pytest.mark.parametrize("text", ["", "api.example.com:0", "a:b", "10.0.0.0/33:1", "-x-:1"])
def test_a_malformed_destination_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Destination.parse(text)


def test_settings_refuse_a_malformed_reach(tmp_path: Path) -> None:
    file = tmp_path / "settings.yaml"
    file.write_text("tenants:\n  beta:\n    reach: {network: ['not a host:1']}\n")
    from openlaketx.settings import load_settings

    with pytest.raises(Exception) as info:
        load_settings(file)
    assert "tenants.beta.reach.network" in str(info.value)


def test_each_tenant_gets_its_reach_and_time_limit_from_the_settings(tmp_path: Path) -> None:
    from openlaketx.service.tenants import Tenants

    settings = ServiceSettings(
        limits=TenantLimits(run_time_limit_seconds=600),
        tenants={"beta": TenantLimits(run_time_limit_seconds=5, reach=ReachSettings())},
    )
    tenants = Tenants(LakehouseConfig(home=tmp_path / "lakehouse"), settings)
    beta, gamma, own = (tenants.get(t).config for t in ("beta", "gamma", "default"))
    assert (beta.run_time_limit_seconds, gamma.run_time_limit_seconds) == (5, 600)
    assert beta.reach == ReachSettings() and gamma.reach is None
    assert not own.tenant_reach().confined and gamma.tenant_reach().confined
    assert TenantLimits().run_time_limit_seconds == 6 * 3600  # every served run has one
