"""The tenant's reach, enforced where a source takes effect: a path opened, a folder listed, a
file archived, a host connected to (`lakeguard.records.reach` says what is allowed).

The definitions were checked when they arrived and again when the run loaded them; this is
the last check, against what the file system and DNS say now. Paths are checked with their
symlinks resolved, so a link planted in a tenant's folder leads nowhere else. A connection is
made to the very address that was checked (resolved once, then pinned), so a name that
resolves elsewhere the second time (DNS rebinding) reaches nothing. Every refusal is a
terminal `OutOfReach` naming the field: nothing was read, moved or sent.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from lakeguard.records.reach import Address, Reach, literal_address, resolved_refusal
from lakeguard.records.sources.kinds.jdbc import url_destinations
from lakeguard.words.errors import OutOfReach, SourceUnavailable


def check_path(
    reach: Reach, location: str, where: str, *, write: bool = False, opened: bool = True
) -> None:
    """Refuse `location` (a folder, a file or a glob) unless the tenant may read it (or
    write it), as written and, on a local disk, with its symlinks resolved."""
    why = resolved_refusal(reach, location, write=write, opened=opened)
    if why is not None:
        raise OutOfReach(why, where=where, fix=reach.storage_fix(write=write))


def check_files(reach: Reach, paths: Iterable[str], where: str, *, write: bool = False) -> None:
    """Refuse unless every listed file, its symlinks resolved, is one the tenant may read."""
    for path in paths:
        check_path(reach, path, where, write=write)


# -- network ----------------------------------------------------------------------------
def _addresses(host: str, port: int, where: str) -> list[Address]:
    literal = literal_address(host)
    if literal is not None:
        return [literal]
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise SourceUnavailable(
            f"cannot resolve {host}: {exc}",
            where=where,
            fix="check the host name and this machine's DNS; the run can be retried",
        ) from None
    unique: dict[str, Address] = {}
    for *_, sockaddr in found:
        address = literal_address(str(sockaddr[0]))
        if address is not None:
            unique.setdefault(str(address), address)
    return list(unique.values())


def checked_address(reach: Reach, host: str, port: int, where: str) -> str:
    """The address to connect to for `host:port`: every address the name resolves to must be
    allowed, and the first is the one connected to. Not confined: `host` itself."""
    if not reach.confined:
        return host
    addresses = _addresses(host, port, where)
    why = reach.address_refusal(host, port, addresses)
    if why is not None:
        raise OutOfReach(why, where=where, fix=reach.network_fix())
    return str(addresses[0])


class _CheckedBackend(httpcore.SyncBackend):
    """Connections only to checked addresses (TLS still verifies the name asked for)."""

    def __init__(self, reach: Reach, where: str) -> None:
        self.reach, self.where = reach, where

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        address = checked_address(self.reach, host, port, self.where)
        return super().connect_tcp(address, port, timeout, local_address, socket_options)


def http_client(
    reach: Reach, where: str, *, headers: dict[str, str], timeout: float
) -> httpx.Client:
    """An httpx client whose every connection, redirects included, goes to an address the
    tenant may reach. A confined tenant's client ignores the environment's proxies (a proxy
    would carry the request past the check)."""
    if not reach.confined:
        return httpx.Client(headers=headers, timeout=timeout, follow_redirects=True)
    transport = httpx.HTTPTransport()
    # httpx takes no network backend of its own; its pool is rebuilt with one that checks
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        network_backend=_CheckedBackend(reach, where),
    )

    def redirected(response: httpx.Response) -> None:
        # said before httpx follows it (the connection would be refused anyway, less clearly)
        if not response.has_redirect_location:
            return
        url = response.url.join(response.headers["location"])
        port = url.port or (443 if url.scheme == "https" else 80)
        why = reach.name_refusal(url.host, port)
        if why is not None:
            response.close()
            raise OutOfReach(
                f"the server redirected to {url.host}:{port}: {why}",
                where=where,
                fix=reach.network_fix(),
            )

    return httpx.Client(
        headers=headers,
        timeout=timeout,
        follow_redirects=True,
        transport=transport,
        trust_env=False,
        event_hooks={"response": [redirected]},
    )


def pinned_jdbc_url(reach: Reach, url: str, where: str) -> str:
    """The url with each host replaced by the address checked for it (a confined tenant's
    database is reached at that address; a certificate is then checked against it)."""
    if not reach.confined:
        return url
    found = url_destinations(url)
    if found is None:
        raise OutOfReach(
            f"the jdbc url {url.split('?')[0]} does not say which host it connects to",
            where=where,
            fix="write jdbc:<subprotocol>://host:port/database",
        )
    _, hosts = found
    prefix, _, rest = url.partition("//")
    authority, cut, tail = _split_authority(rest)
    pinned = []
    for (host, port), part in zip(hosts, authority.split(","), strict=True):
        address = checked_address(reach, host, port, where)
        shown = f"[{address}]" if ":" in address else address
        user = part.rsplit("@", 1)[0] + "@" if "@" in part else ""
        pinned.append(f"{user}{shown}:{port}")
    return f"{prefix}//{','.join(pinned)}{cut}{tail}"


def _split_authority(rest: str) -> tuple[str, str, str]:
    for i, char in enumerate(rest):
        if char in "/;?":
            return rest[:i], char, rest[i + 1 :]
    return rest, "", ""
