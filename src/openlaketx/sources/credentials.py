"""Credentials by reference: a source names where its secret is, never the secret itself.

A tenant's references are checked against its reach (`lakeguard.records.reach`) where they are
resolved, whatever wrote them: a confined tenant names only variables with its prefix and
files in its secrets folder (symlinks resolved), so its metadata can never make the server
send another tenant's, or the server's own, secret anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from lakeguard.records.reach import Reach
from lakeguard.words.errors import ConfigError, OutOfReach


def resolve(ref: str | None, *, where: str, reach: Reach) -> str | None:
    """The secret `ref` points at: an environment variable (NAME or env:NAME) or a file
    (file:/path), when the tenant's `reach` allows it (OutOfReach otherwise). A missing one is
    a terminal ConfigError that names the reference only."""
    if ref is None:
        return None
    if ref.startswith("file:"):
        path = Path(reach.secret_file(ref))
        refused = reach.secret_refusal(ref, resolved=os.path.realpath(path))
        if refused is not None:
            raise OutOfReach(refused, where=where, fix=reach.secret_fix())
        if not path.is_file():
            raise ConfigError(
                f"credential_ref {ref} names a file that does not exist",
                where=where,
                fix="create the file (readable by this user) or point credential_ref elsewhere",
            )
        return path.read_text(encoding="utf-8").strip()
    refused = reach.secret_refusal(ref)
    if refused is not None:
        raise OutOfReach(refused, where=where, fix=reach.secret_fix())
    name = ref.removeprefix("env:")
    value = os.environ.get(name)
    if value is None:
        raise ConfigError(
            f"credential_ref {ref}: the environment variable {name} is not set",
            where=where,
            fix=f"export {name} in the environment of the process that runs laketx",
        )
    return value


def scrub(text: str, secret: str | None) -> str:
    """`text` with every occurrence of the secret masked (errors must never echo it)."""
    return text.replace(secret, "****") if secret else text
