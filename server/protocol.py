"""The JSON-RPC side of the server: every request gets an answer.

pygls deserialises a message inside `json.loads` (`structure_message` is its object hook); when
the params do not fit the method's type (a wrong type, null params, a negative position) it
raises there, the message never reaches a handler and the client waits forever. Here such a
request is answered at once with InvalidParams (-32602) and what did not fit; a notification
that does not fit is logged and dropped, as JSON-RPC has no answer for it.

`shutdown` answers null whatever is in flight (pygls cancels the other requests while iterating
the dict their cancellation callbacks shrink), and a request after it gets InvalidRequest
rather than silence.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger("sage_npu.server")


class Unfit:
    """A message whose params did not fit its method's type; already answered, never handled."""

    jsonrpc = ""


class SageProtocol(LanguageServerProtocol):
    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        # cattrs turns 42 into "42": a uri of the wrong type is the client's mistake, to be answered
        # as such, not a document nobody opened. Numbers keep cattrs' own rules (negative positions
        # are still refused by lsprotocol's validators): an exact-int hook also refused messages real
        # clients send, and a refused response or notification is dropped, which hangs the client.
        converter.register_structure_hook(str, _exactly(str))

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except Exception as e:  # noqa: BLE001 - any failure to read a message is the sender's
            cause = e.__cause__ or e
            method = data.get("method", "")
            if "id" not in data or not method:
                log.warning("dropped a malformed %s notification: %s", method or "JSON-RPC", _first_line(cause))
                return Unfit()
            message = f"invalid params for {method}: {_first_line(cause)}"
            self._send_response(data["id"], None, JsonRpcInvalidParams(message).to_response_error())
            return Unfit()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Unfit):
            return
        method = getattr(message, "method", "")
        if self._shutdown and method and method != types.EXIT and getattr(message, "id", None) is not None:
            error = JsonRpcInvalidRequest(f"{method}: the server is shutting down").to_response_error()
            self._send_response(message.id, None, error)
            return
        super().handle_message(message)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' own, except that the requests still running are cancelled from a copy of the
        table: cancelling one runs its callback at once, which removes it from the table."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None


def _exactly(kind: type) -> Any:
    def structure(value: Any, _: Any) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
        return value
    return structure


def _first_line(e: BaseException) -> str:
    """What did not fit and where (`expected int, got str 'top' @ $.params.position`)."""
    if isinstance(e, ClassValidationError):
        return "; ".join(transform_error(e, path="$"))
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]
