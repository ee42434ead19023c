"""Email deliveries over SMTP: the connection made to the address the tenant's reach checked
(resolved once, then pinned; the server's certificate is still checked against its name),
upgraded with STARTTLS (refused when the server offers none) before any credential is sent,
the password resolved by reference, a plain text part and an HTML one. The Message-ID is the
delivery's id, the same on every attempt."""

from __future__ import annotations

import html
import smtplib
import socket
import ssl
from email.message import EmailMessage
from typing import ClassVar

from lakeguard.records.alerts.channels import EmailChannel
from lakeguard.records.reach import Reach
from lakeguard.words.errors import LakeTxError, describe
from lakeguard.words.vocabulary import ChannelKindName
from openlaketx.service.notify.base import Message, Sender, Sent
from openlaketx.sources.credentials import scrub
from openlaketx.sources.guard import checked_address


class _PinnedSMTP(smtplib.SMTP):
    """SMTP whose connection goes to the address checked for its host name."""

    def __init__(self, reach: Reach, where: str, timeout: float) -> None:
        self._reach, self._where = reach, where
        super().__init__(timeout=timeout)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        address = checked_address(self._reach, host, port, self._where)
        return socket.create_connection((address, port), timeout, self.source_address)


def mail(channel: EmailChannel, message: Message) -> EmailMessage:
    """The message: its headers, a plain text part and an HTML one."""
    e = message.event
    text = [message.headline, "", e.explain, ""]
    if message.link:
        text.append(f"dashboard: {message.link}")
    if message.incident_link:
        text.append(f"incident: {message.incident_link}")
    text += [f"incident {e.incident_id}, event {e.event_id}, tenant {message.tenant}"]
    out = EmailMessage()
    out["Subject"] = f"[laketx] {message.headline}"
    out["From"] = channel.sender
    out["To"] = ", ".join(channel.to)
    out["Message-ID"] = f"<{message.delivery_id}@laketx>"
    out["X-LakeTx-Incident"] = e.incident_id
    out.set_content("\n".join(text))
    link = (
        f'<p><a href="{html.escape(message.link, quote=True)}">Open in the dashboard</a></p>'
        if message.link
        else ""
    )
    out.add_alternative(
        f"<html><body><h3>{html.escape(message.headline)}</h3>"
        f"<pre>{html.escape(e.explain)}</pre>{link}"
        f"<p><small>incident {html.escape(e.incident_id)}, tenant "
        f"{html.escape(message.tenant)}</small></p></body></html>",
        subtype="html",
    )
    return out


class EmailSender(Sender[EmailChannel]):
    kind: ClassVar[ChannelKindName] = ChannelKindName.EMAIL

    def send(self, channel: EmailChannel, message: Message, reach: Reach) -> Sent:
        where = f"notification_channels[{channel.id}]"
        password = (
            self.secret(channel, "password_ref", channel.password_ref, reach)
            if channel.password_ref
            else None
        )
        try:
            with _PinnedSMTP(reach, f"{where}.smtp_host", channel.timeout_seconds) as smtp:
                host = channel.smtp_host.strip("[]")
                smtp._host = host  # type: ignore[attr-defined]  # what STARTTLS checks the name of
                smtp.connect(host, channel.smtp_port)
                smtp.ehlo()
                if channel.starttls:
                    if not smtp.has_extn("starttls"):
                        return Sent(
                            ok=False,
                            final=True,
                            error=f"{channel.smtp_host}:{channel.smtp_port} offers no STARTTLS "
                            "(set starttls: false only for a relay on this host)",
                        )
                    smtp.starttls(context=ssl.create_default_context())
                    smtp.ehlo()
                if channel.username and password:
                    smtp.login(channel.username, password)
                refused: dict[str, tuple[int, bytes]] = smtp.send_message(mail(channel, message))
        except LakeTxError as exc:  # out of reach, or the name does not resolve
            return Sent(ok=False, final=not exc.transient, error=scrub(describe(exc), password))
        except smtplib.SMTPResponseException as exc:
            said = (
                exc.smtp_error.decode(errors="replace")
                if isinstance(exc.smtp_error, bytes)
                else str(exc.smtp_error)
            )
            return Sent(
                ok=False,
                status=exc.smtp_code,
                final=exc.smtp_code >= 500,
                error=scrub(f"the mail server answered {exc.smtp_code} {said}", password),
            )
        except smtplib.SMTPRecipientsRefused as exc:
            return Sent(
                ok=False, final=True, error=f"every recipient was refused: {sorted(exc.recipients)}"
            )
        except ssl.SSLCertVerificationError as exc:
            return Sent(
                ok=False, final=True, error=f"the mail server's certificate: {exc.verify_message}"
            )
        except (OSError, smtplib.SMTPException) as exc:  # refused, reset, timed out
            return Sent(ok=False, error=scrub(f"{type(exc).__name__}: {exc}", password))
        if refused:
            return Sent(ok=True, status=250, error=f"refused recipients: {sorted(refused)}")
        return Sent(ok=True, status=250)
