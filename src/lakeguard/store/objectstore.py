"""Where a metadata table lives: a local folder or an S3-compatible object store (the edge).

A location with an `s3://` scheme is on an object store; delta-rs reaches it with
the options built here. The object store is set by configuration, read from the environment
when a table is opened:

| variable | meaning |
|---|---|
| `LAKETX_S3_ENDPOINT` | the server's URL (`http://127.0.0.1:8333`); unset: AWS itself |
| `LAKETX_S3_REGION` | the region (default `us-east-1`) |
| `LAKETX_S3_PATH_STYLE` | `true` for path-style requests (most S3-compatible servers) |
| `LAKETX_S3_CREDENTIALS_FILE` | an AWS-style credentials file (INI) to read the keys from |
| `LAKETX_S3_PROFILE` | its section (default `default`) |

Credentials come by reference only: from that file, or else from the standard `AWS_*`
variables, which the S3 client reads itself. They are never stored in metadata, never put in
an error and never logged. A commit creates its log entry with a conditional put
(`If-None-Match`), so two processes appending to one table at once cannot both win.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass

from lakeguard.errors import ConfigError

REMOTE_SCHEMES = ("s3://",)
DEFAULT_REGION = "us-east-1"


def is_remote(location: str) -> bool:
    """True when the location is on an object store, not a local folder."""
    return location.startswith(REMOTE_SCHEMES)


def _truthy(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class ObjectStoreSettings:
    """How to reach the object store (no secrets: the credentials file is a reference)."""

    endpoint: str | None = None
    region: str = DEFAULT_REGION
    path_style: bool = False
    credentials_file: str | None = None
    profile: str = "default"

    @classmethod
    def from_env(cls) -> ObjectStoreSettings:
        env = os.environ
        return cls(
            endpoint=env.get("LAKETX_S3_ENDPOINT") or None,
            region=env.get("LAKETX_S3_REGION") or DEFAULT_REGION,
            path_style=_truthy(env.get("LAKETX_S3_PATH_STYLE", "")),
            credentials_file=env.get("LAKETX_S3_CREDENTIALS_FILE") or None,
            profile=env.get("LAKETX_S3_PROFILE") or "default",
        )

    def _keys(self) -> dict[str, str]:
        """The access key pair from the credentials file (read at each use, never kept)."""
        if self.credentials_file is None:
            return {}  # the S3 client reads AWS_ACCESS_KEY_ID and friends from the environment
        parser = configparser.ConfigParser()
        try:
            with open(self.credentials_file, encoding="utf-8") as handle:
                parser.read_file(handle)
            section = parser[self.profile]
            keys = {
                "AWS_ACCESS_KEY_ID": section["aws_access_key_id"],
                "AWS_SECRET_ACCESS_KEY": section["aws_secret_access_key"],
            }
        except (OSError, KeyError, configparser.Error) as exc:
            # the message names the file and the section, never a value read from it
            raise ConfigError(
                f"cannot read S3 credentials from section [{self.profile}] of the credentials "
                f"file ({type(exc).__name__})",
                where=self.credentials_file,
                fix="give LAKETX_S3_CREDENTIALS_FILE an AWS-style INI file whose section "
                "(LAKETX_S3_PROFILE, default `default`) has aws_access_key_id and "
                "aws_secret_access_key",
            ) from None
        token = section.get("aws_session_token")
        if token:
            keys["AWS_SESSION_TOKEN"] = token
        return keys

    def storage_options(self) -> dict[str, str]:
        """delta-rs storage options for a table on this object store."""
        options = {
            "AWS_REGION": self.region,
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": str(not self.path_style).lower(),
            # a commit's log entry is created only if it does not exist yet (If-None-Match);
            # the client's default today, pinned so a change of default cannot drop it
            "conditional_put": "etag",
        }
        if self.endpoint:
            options["AWS_ENDPOINT_URL"] = self.endpoint
            if self.endpoint.startswith("http://"):
                options["AWS_ALLOW_HTTP"] = "true"
        options.update(self._keys())
        return options


def storage_options(location: str) -> dict[str, str] | None:
    """The options delta-rs needs to reach `location`; None for a local folder."""
    if not is_remote(location):
        return None
    return ObjectStoreSettings.from_env().storage_options()
