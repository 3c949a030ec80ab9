"""The C-NMA's reports through the project's SDK (controller.sdk), over RESTCONF or NETCONF.

report-network-metrics and advertise-forwarding-view (service-metrics-op 8, agent draft MSG-7)
are bulk messages, so they take the SDK's fast path, :meth:`Controller.rpc_members`: the
RFC 7951 members the C-NMA builds go out as they are (over NETCONF libyang writes the XML) and
the C-PS validates them. The session is opened on the first report and opened again after the
C-PS was out of reach, so a C-NMA started before its C-PS, or outliving a restart of it, keeps
reporting. An SdkError of the transport is :class:`UnreachableError` (the agent backs off),
any other is :class:`RefusedError` with the C-PS's items (logged, offered again).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from agents.common.cps import CpsSettings
from agents.common.restconf import RefusedError, UnreachableError
from controller.errors import ErrorType
from controller.sdk import Controller, SdkError
from controller.types import Json


def connect(settings: CpsSettings) -> Controller:
    """RESTCONF at ``settings.url``, or NETCONF when ``settings.netconf`` is set (same user)."""
    if settings.netconf is not None:
        host, port = settings.netconf
        user, password = settings.username or "", settings.password or ""
        return Controller.netconf(host, port, user, password=password, timeout=settings.timeout)
    return Controller.restconf(
        settings.url, settings.username, settings.password, timeout=settings.timeout
    )


class SdkTransport:
    """The C-NMA's :class:`~agents.common.restconf.Transport` on one SDK session."""

    def __init__(
        self, settings: CpsSettings, opener: Callable[[CpsSettings], Controller] = connect
    ) -> None:
        self._settings = settings
        self._opener = opener
        self._cps: Controller | None = None

    def invoke(self, module: str, operation: str, members: Json) -> Json:
        """One RPC; raises :class:`RefusedError` or :class:`UnreachableError`."""
        try:
            if self._cps is None:
                self._cps = self._opener(self._settings)
            return self._cps.rpc_members(module, operation, members)
        except SdkError as exc:
            if exc.items[0].type is ErrorType.TRANSPORT:
                self.close()  # the next report opens a new session
                raise UnreachableError(*exc.items) from exc
            raise RefusedError(exc.status or 0, *exc.items) from exc

    def close(self) -> None:
        """End the session, if one is open."""
        if self._cps is not None:
            with contextlib.suppress(SdkError):
                self._cps.close()
            self._cps = None
