"""Errors of the OCT client. Each carries a message meant for the user (never a token)."""

from __future__ import annotations


class OctError(Exception):
    """Something the user should read; `code` is the server's Info code when it sent one."""

    code: str = "OctError"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code

    @property
    def message(self) -> str:
        return str(self)


class ServerUnreachable(OctError):
    code = "ServerUnreachable"


class IncompatibleVersion(OctError):
    code = "IncompatibleProtocolVersions"


class LoginFailed(OctError):
    code = "LoginFailed"


class RoomNotFound(OctError):
    code = "RoomNotFound"


class JoinRejected(OctError):
    code = "JoinRejected"


class JoinTimeout(OctError):
    code = "JoinTimeout"


class ConnectionLost(OctError):
    code = "ConnectionLost"


class RequestFailed(OctError):
    """A peer answered a request with `response-error`."""

    code = "RequestFailed"


class RequestTimeout(RequestFailed):
    code = "RequestTimeout"


_BY_CODE: dict[str, type[OctError]] = {
    "RoomNotFound": RoomNotFound,
    "JoinRejected": JoinRejected,
    "JoinTimeout": JoinTimeout,
    "JoinRequestNotFound": JoinTimeout,
    "AuthTimeout": LoginFailed,
    "AuthInternalError": LoginFailed,
    "IncompatibleProtocolVersions": IncompatibleVersion,
    "InvalidServerVersion": IncompatibleVersion,
}


def from_info(code: str, message: str) -> OctError:
    """The error class for a server Info code (OctError for codes we do not single out)."""
    return _BY_CODE.get(code, OctError)(message, code)
