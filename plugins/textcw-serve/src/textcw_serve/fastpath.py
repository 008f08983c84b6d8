"""``POST /predict`` and ``POST /learn`` answered without FastAPI's request machinery, when the
request is well-formed.

FastAPI's routing, dependency solving, body decoding and validation, and its thread hop cost
about 0.9 ms of the event loop's time per request (measured with a service that answers at
once), more than a single prediction or an update costs. :class:`FastEndpoints` answers these
two endpoints itself, and only when everything FastAPI would check passes:

- the body was read whole by :class:`~textcw_serve.guards.BoundedBody` (size, time, rate,
  duplicate keys), which parsed it once with Python's own JSON decoder, the one FastAPI uses
  (:data:`PARSED_BODY`), and it was sent as ``Content-Type: application/json``;
- the endpoint's token, if the service has one, is the one sent;
- the parsed body validates against the endpoint's schema (the pydantic model FastAPI
  validates it with, on the same Python value).

Anything else (no body, another content type, a wrong token, an invalid body) is passed on to
the FastAPI application untouched, which answers it as it always did: every error a client
can cause (400, 401, 422) comes from one place. The checks above have no side effects, so
declining after them is safe. Once a request is taken, it is answered by the same functions
the FastAPI routes call (:func:`textcw_serve.app.create_app`), and an error raised while
answering it becomes the response the application's exception handlers make.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ValidationError

LOG = logging.getLogger("textcw.serve")
# The ASGI scope key under which BoundedBody leaves a JSON body it parsed (and found no
# duplicate key in): the value json.loads gives, as FastAPI's own decoding would.
PARSED_BODY = "textcw.json"
_NOT_PARSED = object()


@dataclass(frozen=True)
class Route:
    schema: type[BaseModel]
    # (the validated body, the scope, the receive channel) -> the response to send
    answer: Callable[[Any, dict, Callable], Awaitable[Callable]]
    authorized: Callable[[dict], bool] = lambda scope: True


class FastEndpoints:
    """ASGI middleware in front of the FastAPI application ``app``; ``routes`` maps a path to
    its :class:`Route`; ``error_response(exc)`` is the response the application's exception
    handlers give for ``exc``."""

    def __init__(self, app, routes: dict[str, Route], error_response: Callable[[Exception], Callable]):
        self.app = app
        self.routes = routes
        self.error_response = error_response

    async def __call__(self, scope, receive, send):
        route = self.routes.get(scope.get("path")) if scope["type"] == "http" and scope["method"] == "POST" else None
        parsed = scope.get(PARSED_BODY, _NOT_PARSED) if route is not None else _NOT_PARSED
        if parsed is _NOT_PARSED or not _plain_json(scope) or not route.authorized(scope):
            return await self.app(scope, receive, send)
        try:
            body = route.schema.model_validate(parsed)
        except ValidationError:
            return await self.app(scope, receive, send)  # FastAPI says what is wrong (422)
        message = await receive()  # the body (parsed already): a later receive() sees a disconnect
        assert message["type"] == "http.request" and not message.get("more_body"), message["type"]
        try:
            response = await route.answer(body, scope, receive)
        except Exception as exc:  # noqa: BLE001 - answered as the application's handlers answer it
            response = self.error_response(exc)
        await response(scope, receive, send)


def _plain_json(scope) -> bool:
    """``Content-Type: application/json`` (with parameters, in any case), sent once."""
    found = [value for key, value in scope.get("headers", ()) if key == b"content-type"]
    return len(found) == 1 and found[0].split(b";")[0].strip().lower() == b"application/json"
