"""Refusals in OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}` with an HTTP status."""

from __future__ import annotations

from typing import Any


class APIError(Exception):
    """A request the server refuses; answered with `status` and `body()`."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        """The JSON body OpenAI sends with an error."""
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


def bad_request(param: str | None, message: str, code: str | None = None) -> APIError:
    """A 400 naming the field at fault (`param`) and what is wrong with it."""
    return APIError(400, message, param=param, code=code)


def unsupported(param: str, message: str) -> APIError:
    """A 400 for a parameter this server cannot honour (never silently ignored)."""
    return APIError(400, f"{param}: {message}", param=param, code="unsupported_parameter")
