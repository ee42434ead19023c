"""What a tenant's metadata may reach (pure): storage roots, network destinations, secrets.

Whoever writes metadata commands the engine. A tenant's definitions name paths (a system's
`root`, a locator, an `archive` folder), secrets (`credential_ref`, `webhook_secret_ref`) and
destinations (an `http` system's `base_url`, a `jdbc` url), so each is checked against the
`Reach` the operator gave the tenant, never one the tenant declares:

- `read`: the storage roots its sources may read (local folders, `s3://bucket/prefix`);
- `write`: the roots its archives may move files into (a moved file leaves its folder, so
  that folder must be writable too);
- `network`: the destinations its `http` and `jdbc` systems may connect to, each a host name
  (`api.example.com`, `*.example.com`) or an address or network (`10.0.0.0/8`), with ports;
  loopback, link-local and private addresses are reached only through a listed address or
  network, never through a listed name (a name can be made to resolve anywhere);
- `secrets`: the environment variables (by prefix) and the folder of files its references may
  name.

`denied` holds what no tenant may ever name as a source or archive, confined or not: the
metadata stores and the warehouses (its own included), and other tenants' homes. A reach that
is not `confined` (the single-user home's own tenant) allows everything else, as before
tenants existed.

The checks of `Reach` are lexical (`..` folded, no file system and no DNS);
`resolved_refusal` also follows the symlinks of a local path as this machine has them now. The
engine checks again where a path is opened and where a connection is made (after name
resolution, to the address checked).
"""

from __future__ import annotations

import os
import posixpath
import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

_GLOB = re.compile(r"[*?\[{]")
_PORTS = re.compile(r"^(\d{1,5})(?:-(\d{1,5}))?$")
_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
_HOST = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")


def normalized(location: str) -> str | None:
    """`location` with `.` and `..` folded: an absolute local path, or `s3://bucket/key`
    (`s3a://` is the same store); None when it is neither (relative, or another scheme)."""
    for scheme in ("s3://", "s3a://"):
        if location.startswith(scheme):
            bucket, _, key = location.removeprefix(scheme).partition("/")
            if not bucket or bucket in (".", ".."):
                return None
            folded = posixpath.normpath("/" + key).lstrip("/")
            return f"s3://{bucket}/{folded}".rstrip("/") if folded else f"s3://{bucket}"
    if location.startswith("file:"):
        rest = location.removeprefix("file:")
        location = "/" + rest.lstrip("/") if rest.startswith("/") else rest
    if "://" in location or not location.startswith("/"):
        return None
    return posixpath.normpath(location).replace("//", "/")


def fixed_part(pattern: str) -> str:
    """The part of a path before its first glob character's segment (what a listing opens)."""
    parts = pattern.split("/")
    first = next((i for i, part in enumerate(parts) if _GLOB.search(part)), len(parts))
    return "/".join(parts[:first]) or "/"


def within(location: str, root: str) -> bool:
    """Whether normalized `location` is `root` or under it."""
    return location == root or location.startswith(root.rstrip("/") + "/")


class Destination(BaseModel):
    """One network destination a tenant may reach: a host name or an address/network, and
    its ports (none: every port)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str | None = None  # lower-case; `*.example.com` matches its subdomains
    network: Network | None = None
    ports: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Self:
        """`host`, `host:443`, `10.0.0.0/8:5432`, `[::1]:8000-8999`, `127.0.0.1:*`."""
        spec = text.strip()
        ports_text = "*"
        if spec.startswith("["):
            inner, _, rest = spec[1:].partition("]")
            spec, ports_text = inner, rest.removeprefix(":") or "*"
        elif spec.count(":") == 1:
            spec, ports_text = spec.split(":")
        if not spec:
            raise ValueError(f"{text!r}: no host or network")
        ports = cls._ports(ports_text, text)
        try:
            return cls(network=ip_network(spec, strict=False), ports=ports)
        except ValueError:
            pass
        name = spec.lower().rstrip(".")
        if not _HOST.fullmatch(name):
            raise ValueError(f"{text!r}: not a host name, an address or a network")
        return cls(host=name, ports=ports)

    @staticmethod
    def _ports(text: str, whole: str) -> tuple[tuple[int, int], ...]:
        if text == "*":
            return ()
        found = _PORTS.match(text)
        if found is None:
            raise ValueError(f"{whole!r}: ports are N, N-M or *")
        low = int(found.group(1))
        high = int(found.group(2) or low)
        if not 1 <= low <= high <= 65535:
            raise ValueError(f"{whole!r}: ports are between 1 and 65535")
        return ((low, high),)

    def port_ok(self, port: int) -> bool:
        return not self.ports or any(low <= port <= high for low, high in self.ports)

    def names(self, host: str, port: int) -> bool:
        """Whether this destination lists the host name `host` at `port`."""
        if self.host is None or not self.port_ok(port):
            return False
        host = host.lower().rstrip(".")
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and host != self.host[2:]
        return host == self.host

    def holds(self, address: Address, port: int) -> bool:
        """Whether this destination lists `address` (by address or network) at `port`."""
        return (
            self.network is not None
            and address.version == self.network.version
            and address in self.network
            and self.port_ok(port)
        )

    def __str__(self) -> str:
        network = self.network
        where = str(self.host if network is None else network)
        if network is not None and network.num_addresses == 1:
            where = str(network.network_address)
        if not self.ports:
            return f"{where}:*"
        low, high = self.ports[0]
        return f"{where}:{low}" if low == high else f"{where}:{low}-{high}"


def literal_address(host: str) -> Address | None:
    """`host` as an IP address when it is one (brackets of IPv6 URLs removed)."""
    try:
        return ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_public(address: Address) -> bool:
    """Whether an address is on the public internet (not loopback, link-local, private,
    reserved, multicast or unspecified; an IPv4-mapped IPv6 address as its IPv4 one)."""
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


class SecretScope(BaseModel):
    """Where a tenant's secret references may point (operator settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env_prefix: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variables whose names start with it (default "
        "LAKETX_SECRET_<TENANT>_)",
    )
    folder: str | None = Field(
        default=None,
        description="Files under this folder (default: `secrets` in the tenant's home)",
    )


class ReachSettings(BaseModel):
    """A tenant's reach as the operator writes it (`laketx serve --settings`, `tenants.<t>.
    reach`): paths relative to the tenant's home; `{tenant}`, `{TENANT}` and `{tenant_home}`
    are replaced. A field left out keeps its safe default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    storage: tuple[str, ...] | None = Field(
        default=None,
        description="Folders and s3://bucket/prefix URIs its sources may read (default: "
        "`feed` in the tenant's home)",
    )
    archive: tuple[str, ...] | None = Field(
        default=None,
        description="Folders its archives may write, the folders files are moved out of "
        "included (default: the storage folders)",
    )
    network: tuple[str, ...] = Field(
        default=(),
        description="Destinations its http and jdbc systems may connect to: host, host:port, "
        "address or CIDR with :port, :N-M or :* (default: none)",
    )
    secrets: SecretScope = Field(default_factory=SecretScope)

    def destinations(self) -> tuple[Destination, ...]:
        return tuple(Destination.parse(d) for d in self.network)

    @field_validator("network")
    @classmethod
    def _parsed(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            Destination.parse(text)
        return value


class Reach(BaseModel):
    """What one tenant's metadata may name (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str
    confined: bool = True
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    network: tuple[Destination, ...] = ()
    secret_prefix: str | None = None
    secret_folder: str | None = None
    denied: tuple[str, ...] = ()  # never, confined or not
    # `<home>/tenants` and the tenant's own home under it: every other tenant's home is denied
    tenants_root: str | None = None
    own_home: str | None = None
    # the server's home and the tenant's: a confined tenant is shown paths under the server's
    # home relative to its own (`feed/x`, `../alpha`), never the server's absolute layout
    home: str | None = None
    tenant_home: str | None = None

    def shown(self, location: str) -> str:
        """`location` as the tenant is told of it."""
        path = normalized(location)
        if not self.confined or path is None or self.home is None or self.tenant_home is None:
            return location
        if not within(path, self.home):
            return location
        return posixpath.relpath(path, self.tenant_home)

    # -- storage --------------------------------------------------------------------------
    def storage_refusal(
        self, location: str, *, write: bool = False, opened: bool = True
    ) -> str | None:
        """Why `location` (a path, a glob, or a URI) may not be read (or written); None when
        it may. `opened`: it is what is listed or read, so it may not hold a denied folder
        either (a system's root may, its locators then choose). Lexical: `..` is folded,
        symlinks are the engine's to resolve."""
        path = normalized(fixed_part(location))
        said = repr(self.shown(location))
        if path is None:
            if self.confined:
                return f"{said} is neither an absolute folder nor an s3:// URI after resolution"
            return None
        for never in self.denied:
            if within(path, never) or (opened and within(never, path)):
                return (
                    f"{said} is or holds {self.shown(never)}, a metadata store or a warehouse, "
                    "which no tenant's source may name"
                )
        others = self.tenants_root
        if others is not None:
            own = self.own_home
            if within(path, others) and not (own is not None and within(path, own)):
                return f"{said} is in another tenant's home"
            if opened and within(others, path):
                return f"{said} holds other tenants' homes"
        if not self.confined:
            return None
        roots = self.write if write else self.read
        if not any(within(path, root) for root in roots):
            what = "written (archived into)" if write else "read"
            return f"{said} is outside the folders tenant {self.tenant} may have {what}"
        return None

    def storage_fix(self, *, write: bool = False) -> str:
        roots = self.write if write else self.read
        if not roots:
            return "this tenant may name no storage; ask the operator to grant a folder"
        listed = ", ".join(self.shown(r) for r in roots)
        return (
            f"use a folder under {listed} (relative roots are taken from the tenant's home), "
            "or ask the operator to widen the tenant's reach"
        )

    # -- secrets --------------------------------------------------------------------------
    def secret_file(self, ref: str) -> str:
        """The file a `file:` reference names: a confined tenant's relative path is taken
        from its home (`file:secrets/token`), anyone else's from the working folder."""
        path = ref.removeprefix("file:")
        if self.confined and self.tenant_home is not None and not path.startswith("/"):
            return posixpath.join(self.tenant_home, path)
        return path

    def secret_refusal(self, ref: str, *, resolved: str | None = None) -> str | None:
        """Why the reference `ref` (`NAME`, `env:NAME` or `file:path`) may not be resolved;
        None when it may. `resolved`: a file reference's path with its symlinks resolved."""
        if not self.confined:
            return None
        if ref.startswith("file:"):
            path = normalized(resolved or self.secret_file(ref))
            folder = self.secret_folder
            if path is None or folder is None or not within(path, folder) or path == folder:
                return f"credential reference {ref} names a file outside the tenant's secrets"
            return None
        name = ref.removeprefix("env:")
        prefix = self.secret_prefix
        if prefix is None or not name.startswith(prefix) or name == prefix:
            return f"credential reference {ref} names a variable outside the tenant's secrets"
        return None

    def secret_fix(self) -> str:
        ways = []
        if self.secret_prefix:
            ways.append(f"an environment variable {self.secret_prefix}<NAME>")
        if self.secret_folder:
            ways.append(f"a file file:{self.shown(self.secret_folder)}/<name>")
        if not ways:
            return "this tenant may name no secret; ask the operator to grant a scope"
        return f"name {' or '.join(ways)}"

    # -- network --------------------------------------------------------------------------
    def name_refusal(self, host: str, port: int) -> str | None:
        """Why `host:port` cannot be reached, said before resolving it (None: it may be; the
        addresses it resolves to are checked when connecting)."""
        if not self.confined:
            return None
        address = literal_address(host)
        if address is not None:
            return self.address_refusal(host, port, [address])
        if any(d.names(host, port) for d in self.network):
            return None
        if any(d.network is not None and d.port_ok(port) for d in self.network):
            return None  # it may resolve into a listed network: decided when connecting
        return f"{host}:{port} is not a destination tenant {self.tenant} may reach"

    def address_refusal(self, host: str, port: int, addresses: list[Address]) -> str | None:
        """Why a connection to `host:port`, resolved to `addresses`, may not be made (None:
        every address is allowed). An address is allowed when a listed address or network
        holds it, or when a listed name names the host and the address is public."""
        if not self.confined:
            return None
        if not addresses:
            return f"{host} resolves to no address"
        named = any(d.names(host, port) for d in self.network)
        for address in addresses:
            if any(d.holds(address, port) for d in self.network):
                continue
            if named and is_public(address):
                continue
            if named:
                return (
                    f"{host}:{port} resolves to {address}, a loopback, private or reserved "
                    "address that only a listed address or network may reach"
                )
            return f"{host}:{port} ({address}) is not a destination tenant {self.tenant} may reach"
        return None

    def network_fix(self) -> str:
        if not self.network:
            return "this tenant may reach no network destination; ask the operator to list one"
        return (
            f"use one of {', '.join(str(d) for d in self.network)}, or ask the operator to "
            "widen the tenant's reach"
        )


def resolved_refusal(
    reach: Reach, location: str, *, write: bool = False, opened: bool = True
) -> str | None:
    """`Reach.storage_refusal` of `location` as written and, when it is a local path, with
    the symlinks of its fixed part resolved (a link planted in an allowed folder leads
    nowhere else)."""
    why = reach.storage_refusal(location, write=write, opened=opened)
    if why is not None:
        return why
    fixed = normalized(fixed_part(location))
    if fixed is None or fixed.startswith("s3://"):
        return None
    real = os.path.realpath(fixed)
    if real == fixed:
        return None
    why = reach.storage_refusal(real, write=write, opened=opened)
    if why is None:
        return None
    return f"{reach.shown(location)!r} leads through a symbolic link: {why}"
