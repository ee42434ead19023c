"""The error families: exit codes from one enum, documented in the README, and transience by
type (a retry is decided by the class, never by the raise site)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import lakeguard.words.errors as errors
from lakeguard.words.errors import ExitCode, LakeTxError
from openlaketx.service import refusals

README = Path(__file__).resolve().parents[3] / "README.md"


def _families() -> list[type[LakeTxError]]:
    found: list[type[LakeTxError]] = []
    todo: list[type[LakeTxError]] = [LakeTxError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_readme_lists_every_exit_code_once() -> None:
    text = " ".join(README.read_text().split())
    listed = re.search(r"Exit codes \(`lakeguard\.words\.errors\.ExitCode`\): (.*?)\.(?: |$)", text)
    assert listed, "README.md lost its list of exit codes"
    numbers = [int(n) for n in re.findall(r"(?:^|, )(\d+) ", listed.group(1))]
    assert numbers == [code.value for code in ExitCode]


def test_every_error_class_exits_with_a_member_of_the_enum() -> None:
    # the service's refusals and the families of lakeguard alike
    assert refusals.ServiceStopping in _families()
    for cls in _families():
        assert isinstance(cls.exit_code, ExitCode), cls


@pytest.mark.parametrize(
    ("transient", "family"),
    [
        (errors.SourceUnavailable, errors.SourceError),
        (errors.EngineUnavailable, errors.ConfigError),
        (errors.StoreContended, errors.MetadataStoreError),
    ],
)
def test_a_transient_failure_is_a_subclass_of_its_terminal_family(
    transient: type[LakeTxError], family: type[LakeTxError]
) -> None:
    # caught and shown as its family, retried for its own class
    raised = transient("it did not answer", where="here", fix="run again")
    assert isinstance(raised, family) and raised.exit_code == family.exit_code
    assert raised.transient and not family("x").transient
    assert raised.to_dict()["transient"] is True


def test_no_raise_site_can_make_an_error_transient() -> None:
    with pytest.raises(TypeError):
        errors.SourceError("x", transient=True)  # type: ignore[call-arg]
