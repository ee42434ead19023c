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

The settings file `LAKETX_SETTINGS` names (YAML, openlaketx.settings) may hold the same in its
`object_store` section (`endpoint`, `region`, `path_style`, `credentials_file`, `profile`); a
variable that is set wins over it.

Credentials come by reference only: from the credentials file, or else from the standard
`AWS_*` variables, which the S3 client reads itself (the settings file refuses a key written in
it). They are never stored in metadata, never put in an error and never logged. A commit
creates its log entry with a conditional put (`If-None-Match`), so two processes appending to
one table at once cannot both win.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from lakeguard.words.errors import ConfigError

REMOTE_SCHEMES = ("s3://",)
DEFAULT_REGION = "us-east-1"
SETTINGS_VARIABLE = "LAKETX_SETTINGS"


def is_remote(location: str) -> bool:
    """True when the location is on an object store, not a local folder."""
    return location.startswith(REMOTE_SCHEMES)


def _truthy(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


class ObjectStoreSection(BaseModel):
    """The settings file's `object_store` section: the `LAKETX_S3_*` settings, each optional.
    No field holds a key: an `aws_secret_access_key` written here is an unknown field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str | None = Field(default=None, description="The server's URL; none: AWS itself")
    region: str | None = Field(default=None, description=f"Default {DEFAULT_REGION}")
    path_style: bool | None = Field(default=None, description="Path-style requests")
    credentials_file: str | None = Field(
        default=None,
        description="An AWS-style credentials file (INI) to read the keys from; a relative "
        "path is taken from the settings file's folder",
    )
    profile: str | None = Field(default=None, description="Its section (default `default`)")

    def resolved(self, folder: Path) -> ObjectStoreSection:
        """The section with its credentials file's path taken from `folder` if relative."""
        if self.credentials_file is None:
            return self
        path = (folder / Path(self.credentials_file).expanduser()).resolve()
        return self.model_copy(update={"credentials_file": str(path)})


# The section of the settings file last read, by the file's identity (path, mtime, size): a
# table opened reads the settings, and parsing the file each time would cost more than that.
_READ: dict[tuple[str, int, int], ObjectStoreSection | None] = {}


def settings_section() -> ObjectStoreSection | None:
    """The `object_store` section of the settings file `LAKETX_SETTINGS` names (None: no
    file, or no such section; openlaketx.settings checks the rest of the file)."""
    name = os.environ.get(SETTINGS_VARIABLE, "").strip()
    if not name:
        return None
    path = Path(name).expanduser().resolve()
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError(f"settings file {path} does not exist", where=str(path)) from None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        _READ.clear()
        _READ[key] = _read_section(path)
    return _READ[key]


def _read_section(path: Path) -> ObjectStoreSection | None:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read the settings file ({type(exc).__name__})", where=str(path)
        ) from None
    section = data.get("object_store") if isinstance(data, dict) else None
    if section is None:
        return None
    try:
        return ObjectStoreSection.model_validate(section).resolved(path.parent)
    except PydanticValidationError as exc:
        # the fields and what is wrong with them, never a value: one may be a key
        problems = "; ".join(
            f"object_store.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            f"{path} is not valid settings: {problems}",
            where=str(path),
            fix="name the keys by reference: object_store.credentials_file and profile",
        ) from None


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
        """The `LAKETX_S3_*` variables, over the settings file's `object_store` section,
        over the defaults."""
        env = os.environ
        file = settings_section() or ObjectStoreSection()
        style = env.get("LAKETX_S3_PATH_STYLE", "").strip()
        return cls(
            endpoint=env.get("LAKETX_S3_ENDPOINT") or file.endpoint,
            region=env.get("LAKETX_S3_REGION") or file.region or DEFAULT_REGION,
            path_style=_truthy(style) if style else bool(file.path_style),
            credentials_file=env.get("LAKETX_S3_CREDENTIALS_FILE") or file.credentials_file,
            profile=env.get("LAKETX_S3_PROFILE") or file.profile or "default",
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
