"""The HTTP API (FastAPI): ``/predict``, ``/learn``, ``/suggest``, ``/status``, ``/checkpoint``,
``/health``, ``/metrics``, the page at ``/`` and the generated ``/openapi.json``.

Errors are JSON ``{"error": "..."}`` with a 4xx status for anything a client can get wrong
(422 for a body that does not match the schema or names an unknown label, 400 for a header the
service decides on sent twice, 401 for a missing or wrong token, 409 for learning on a service
that does not learn, 413/408 for a body too large or too slow); 503 when the service cannot take
the update now (the queue is full, or the log cannot be written), or for a prediction not yet
started when the service shuts down. No endpoint takes a file name: the service writes only its
own state folder.

A well-formed ``/predict`` or ``/learn`` request is answered by :mod:`textcw_serve.fastpath`
without FastAPI's request machinery, by the same functions the routes below call; every other
request, and every request whose body or token is wrong, is answered by FastAPI.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import importlib.resources
import logging
import time

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import TypeAdapter
import pydantic_core
from starlette.exceptions import HTTPException as StarletteHTTPException

from textcw.errors import InputError, TextcwError
from textcw.untrusted import safe_text

from textcw_serve import __version__
from textcw_serve.answers import predict_answers, suggest
from textcw_serve.connections import QUEUED
from textcw_serve.fastpath import FastEndpoints, Route
from textcw_serve.guards import BoundedBody, LoopbackHosts, RequestMetrics, SameOrigin, SingleHeaders, token_matches
from textcw_serve.metrics import ServiceMetrics
from textcw_serve.model_ops import prediction_rows
from textcw_serve.replies import ReplyWriter
from textcw_serve.schemas import (
    MAX_BATCH,
    MAX_BODY_BYTES,
    MAX_DOCUMENT_CHARS,
    MAX_EXPLAIN_CHARS,
    MAX_EXPLAIN_DOCUMENTS,
    MAX_EXPLAIN_WORDS,
    AnsweredPredictResponse,
    CheckpointInfo,
    ErrorResponse,
    Health,
    LearnRequest,
    LearnResponse,
    PredictRequest,
    PredictResponse,
    StatusResponse,
    SuggestRequest,
    SuggestResponse,
)
from textcw_serve.service import BusyError, DurabilityError, ModelService, NotLearningError

LOG = logging.getLogger("textcw.serve")
BODY_SECONDS = 10.0
# Predictions computed at once (each with its reply rendered to JSON, in a worker thread); the
# others wait their turn, holding only their request. The work holds Python's lock for most of
# its time, so more at once would not answer sooner: it would hold one reply's worth of memory
# per request in flight (12 MiB for 512 documents and 100 classes), and starve the event loop
# that answers /health of the lock.
PREDICT_SLOTS = 2
# A reply is rendered this many predictions at a time: each step holds Python's lock in
# pydantic's compiled code, a fraction of a millisecond, not the whole reply's time, so the
# event loop gets its turn in between.
RENDER_CHUNK = 32
_PREDICT_REPLY = TypeAdapter(PredictResponse)
_SUGGEST_REPLY = TypeAdapter(SuggestResponse)
# The page loads its script and style from this service only and nothing else, so a label or a
# probability shown on it can never run as code even if a model held hostile text.
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
               "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/page.js": ("page.js", "text/javascript; charset=utf-8"),
           "/page.css": ("page.css", "text/css; charset=utf-8"), "/favicon.svg": ("favicon.svg", "image/svg+xml")}
_ERRORS = {400: "bad request", 401: "needs the token", 409: "not learning", 422: "invalid input",
           503: "cannot take the update now"}


def _error_responses(*codes: int) -> dict:
    return {code: {"model": ErrorResponse, "description": _ERRORS.get(code, "error")} for code in codes}


_LABEL_SHAPE = ("not a label: give one of the model's classes (a string, a number, true or false) or, for a "
                "multi-label model, the list of the document's tags")


def describe_validation_error(exc: RequestValidationError) -> str:
    """One line per problem, e.g. ``documents[2]: Input should be a valid string``, without
    echoing the client's input (it may be huge or unprintable)."""
    problems = []
    errors, labels = [], set()
    for error in exc.errors():
        loc = [part for part in error.get("loc", ()) if part != "body"]
        if len(loc) > 2 and loc[0] == "labels" and isinstance(loc[1], int):  # the union's every branch, once
            if loc[1] not in labels:
                labels.add(loc[1])
                errors.append({"loc": loc[:2], "msg": _LABEL_SHAPE, "type": "value_error"})
        else:
            errors.append(error)
    for error in errors[:5]:
        loc = [part for part in error.get("loc", ()) if part != "body"]
        if error.get("type") == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "")
            problems.append(f"the body is not valid JSON ({safe_text(reason, 80)})")
            continue
        where = ""
        for part in loc:
            if isinstance(part, int):
                where += f"[{part}]"
            elif part not in ("str", "int", "constrained-str", "function-after[_same_length(), LearnRequest]"):
                where += ("." if where else "") + safe_text(str(part), 40)
        message = str(error.get("msg", "invalid"))
        if error.get("type") == "value_error":  # a check of the schema's own: its sentence, without pydantic's prefix
            message = message.removeprefix("Value error, ")
        message = safe_text(message, 200)
        problems.append(f"{where}: {message}" if where else message)
    more = len(errors) - 5
    return "; ".join(problems) + (f"; and {more} more problems" if more > 0 else "")


def disconnected(receive) -> bool:
    """Whether the client has gone: the message ``receive()`` has at once, without waiting for
    one (what Starlette's ``Request.is_disconnected`` asks, by cancelling the wait in an anyio
    cancel scope; run to its first wait by hand here, a fortieth of that scope's cost on the
    event loop, measured). A request whose body was read whole has nothing else to receive: an
    ``http.disconnect`` is the only message it can have."""
    waiting = receive().__await__()  # a coroutine's steps, or a future's
    try:
        waiting.send(None)  # runs until it would wait: nothing has arrived
    except StopIteration as done:
        return (done.value or {}).get("type") == "http.disconnect"
    finally:
        waiting.close()  # the wait is given up, as a cancelled one is
    return False


def render_predict_reply(version: int, classes: list, rows: list[dict]) -> bytes:
    """The ``/predict`` reply as FastAPI renders ``response_model=PredictResponse``, byte for byte
    (tested), :data:`RENDER_CHUNK` rows at a time.

    The head (version and classes) is checked against the schema; the rows are serialized by
    pydantic's own JSON writer without being validated again: they are built by
    :func:`textcw_serve.model_ops.prediction_rows` from Python floats, ``None`` and the model's
    classes (the head's), in the schema's field order. Validating them cost as much as a
    batch's whole prediction.
    """
    empty = {"model_version": version, "classes": classes, "predictions": []}
    head = _PREDICT_REPLY.dump_json(_PREDICT_REPLY.validate_python(empty), by_alias=True)
    parts = [pydantic_core.to_json(rows[i:i + RENDER_CHUNK])[1:-1] for i in range(0, len(rows), RENDER_CHUNK)]
    return head[:-2] + b",".join(parts) + b"]}"


def render_checked(adapter: TypeAdapter, reply: dict) -> bytes:
    """A reply checked against its schema and rendered with the fields it was given (e.g. a
    ``/predict`` row has ``top`` or ``explanation`` only when they were asked for)."""
    return adapter.dump_json(adapter.validate_python(reply), by_alias=True, exclude_unset=True)


def create_app(service: ModelService, *, token: str | None = None, loopback_only: bool = True,
               metrics: ServiceMetrics | None = None, body_seconds: float = BODY_SECONDS):
    """The ASGI application serving ``service``.

    ``token``: required (``Authorization: Bearer``) by ``/learn`` and ``/checkpoint``.
    ``loopback_only``: answer only requests addressed to a loopback host name.
    """
    metrics = metrics or service.metrics or ServiceMetrics()
    service.metrics = metrics  # the committer counts updates into the same registry
    app = FastAPI(title="textcw serve", version=__version__, docs_url=None, redoc_url=None,
                  description="Predict with a textcw model and let it learn from corrections; every "
                              "acknowledged update is durable. See docs/serve.md.")
    static = {path: (importlib.resources.files("textcw_serve.static").joinpath(name).read_bytes(), kind)
              for path, (name, kind) in _STATIC.items()}

    def require_token(authorization: str | None = Header(default=None, include_in_schema=False)) -> None:
        if token is not None and not token_matches(token, authorization):
            raise HTTPException(401, "this endpoint needs the service's token: send 'Authorization: Bearer "
                                     "<token>' with the token from the service's --token-file",
                                headers={"WWW-Authenticate": "Bearer"})

    def error_response(exc: Exception) -> JSONResponse:
        """The response to an error raised while answering a request (every route's, and the
        fast endpoints')."""
        if isinstance(exc, StarletteHTTPException):  # FastAPI's own and Starlette's (404, 405)
            return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
        if not isinstance(exc, TextcwError):
            LOG.error("unexpected error", exc_info=exc)
            return JSONResponse({"error": f"internal error ({type(exc).__name__}); see the service's log"},
                                status_code=500)
        if isinstance(exc, InputError):
            status = 422
        elif isinstance(exc, NotLearningError):
            status = 503 if service.degraded else 409
        elif isinstance(exc, (BusyError, DurabilityError)):
            status = 503
        else:
            status = 500
            LOG.error("request failed: %s", exc)
        headers = {"Retry-After": "1"} if isinstance(exc, BusyError) else None
        return JSONResponse({"error": str(exc)}, status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request, exc: RequestValidationError):
        return JSONResponse({"error": describe_validation_error(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, exc: StarletteHTTPException):
        return error_response(exc)

    @app.exception_handler(TextcwError)
    async def textcw_error(request, exc: TextcwError):
        return error_response(exc)

    @app.exception_handler(Exception)
    async def unexpected(request, exc: Exception):
        return error_response(exc)

    replies = ReplyWriter(service.labels)
    predict_slots = asyncio.Semaphore(PREDICT_SLOTS)
    predict_threads = concurrent.futures.ThreadPoolExecutor(PREDICT_SLOTS, thread_name_prefix="textcw-serve-predict")
    stopping = []  # not empty once the server shuts down: predictions not yet started are refused

    def render_predictions(documents: list[str]) -> bytes:
        version, scored = service.scored(documents)
        metrics.predicted.inc(len(documents))
        written = replies.render(version, scored, RENDER_CHUNK)  # the same bytes, from the arrays
        if written is not None:
            return written
        return render_predict_reply(version, service.labels.classes, prediction_rows(scored, service.labels))

    def render_answers(body: PredictRequest) -> bytes:
        # the rows are built as prediction_rows builds them (answers.predict_answers: Python floats,
        # None, ints, the documents' words and the model's classes, in AnsweredPrediction's field
        # order), so they are rendered as the plain ones are, without being validated again (tested
        # equal to the validated rendering)
        version, rows = predict_answers(service, body.documents, body.top, body.explain)
        metrics.predicted.inc(len(rows))
        return render_predict_reply(version, service.labels.classes, rows)

    def render_suggestions(body: SuggestRequest) -> bytes:
        version, rows = suggest(service, body.documents, body.strategy, body.n, body.seed)
        return render_checked(_SUGGEST_REPLY, {"model_version": version, "strategy": body.strategy,
                                               "suggestions": rows})

    def refuse_if_stopping() -> None:
        if stopping:
            raise HTTPException(503, "the service is shutting down; send the request again once it is back")

    async def answer_predict(body: PredictRequest, request: Request) -> Response:
        # the plain reply's own path, unless top or explain is asked for
        if body.top is None and body.explain is None:
            return await answer_in_slot(functools.partial(render_predictions, body.documents), request)
        return await answer_in_slot(functools.partial(render_answers, body), request)

    async def answer_in_slot(work, request: Request) -> Response:
        """``work()``'s reply (JSON bytes), computed in a prediction slot."""
        refuse_if_stopping()
        request.scope[QUEUED] = time.monotonic()  # at the connection limit, this one may make room
        try:
            waits = predict_slots.locked()
            async with predict_slots:
                request.scope.pop(QUEUED, None)
                refuse_if_stopping()
                # closed while it waited for its turn: nobody to answer (asked only after a wait)
                if waits and disconnected(request.receive):
                    return Response(status_code=204)
                # a thread of its own per slot (not the shared pool: anyio's hand-over costs the
                # event loop a fifth of a millisecond per request); the pool, like the slots, runs
                # at most PREDICT_SLOTS predictions, also if this request is cancelled
                content = await asyncio.get_running_loop().run_in_executor(predict_threads, work)
        finally:
            request.scope.pop(QUEUED, None)
        return Response(content, media_type="application/json")

    async def answer_learn(documents: list[str], labels: list) -> dict:
        if service.queues_at_once(documents):  # featurized by the preparer: microseconds here
            future = service.submit_update(documents, labels)
        else:
            future = await run_in_threadpool(service.submit_update, documents, labels)
        return await asyncio.wrap_future(future)

    @app.post("/predict", response_model=AnsweredPredictResponse,
              responses={**_error_responses(422), 503: {"model": ErrorResponse, "description": "shutting down"}})
    async def predict(body: PredictRequest, request: Request):
        """Label a batch of documents: label, probabilities, decision values and margin of each;
        with ``top``, each one's best labels; with ``explain``, the words that chose its label
        (``top`` and ``explanation`` are in a prediction only when asked for)."""
        return await answer_predict(body, request)

    @app.post("/suggest", response_model=SuggestResponse,
              responses={**_error_responses(422), 503: {"model": ErrorResponse, "description": "shutting down"}})
    async def suggest_next(body: SuggestRequest, request: Request):
        """The documents most worth labelling next, most informative first (read-only)."""
        return await answer_in_slot(functools.partial(render_suggestions, body), request)

    @app.post("/learn", response_model=LearnResponse, dependencies=[Depends(require_token)],
              responses=_error_responses(401, 409, 422, 503))
    async def learn(body: LearnRequest):
        """One online update per document, in order (what one ``partial_fit`` call does).
        Answered once the update is fsynced to the update log and applied."""
        return await answer_learn(body.documents, body.labels)

    async def fast_predict(body: PredictRequest, scope, receive) -> Response:
        return await answer_predict(body, Request(scope, receive))

    async def fast_learn(body: LearnRequest, scope, receive) -> Response:
        # the bytes FastAPI writes for response_model=LearnResponse with pydantic's JSON writer, as
        # this environment's FastAPI does (the reply is built in the schema's field order, of its
        # types); FastAPI before that renders with json.dumps: the same JSON value
        reply = await answer_learn(body.documents, body.labels)
        return Response(pydantic_core.to_json(reply), media_type="application/json")

    def token_sent(scope) -> bool:
        if token is None:
            return True
        sent = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        return len(sent) == 1 and token_matches(token, sent[0].decode("latin-1"))

    @app.post("/checkpoint", response_model=CheckpointInfo, dependencies=[Depends(require_token)],
              responses=_error_responses(401, 409, 503))
    async def checkpoint():
        """Write the model to a new checkpoint in the state folder and empty the update log."""
        future = await run_in_threadpool(service.submit_checkpoint)
        return await asyncio.wrap_future(future)

    @app.get("/status", response_model=StatusResponse)
    def status():
        """The learner, its parameters and classes, what it has learned, the last checkpoint,
        the model's digest, uptime and versions."""
        return {**service.status(), "token_required": token is not None,
                "limits": {"max_body_bytes": MAX_BODY_BYTES, "max_batch": MAX_BATCH,
                           "max_document_chars": MAX_DOCUMENT_CHARS, "body_seconds": body_seconds,
                           "max_explain_documents": MAX_EXPLAIN_DOCUMENTS, "max_explain_chars": MAX_EXPLAIN_CHARS,
                           "max_explain_words": MAX_EXPLAIN_WORDS}}

    @app.get("/health", response_model=Health)
    async def health():  # on the event loop: answered even while every worker thread predicts
        """``ok`` while the service answers; ``degraded`` if learning stopped (see /status)."""
        return {"status": "degraded" if service.degraded else "ok", "learning": service.learning}

    @app.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
    def prometheus_metrics():
        """Prometheus metrics: requests and latencies by endpoint, documents, updates, online error."""
        return Response(metrics.render(), media_type=metrics.content_type)

    def page(path: str):
        content, kind = static[path]
        return Response(content, media_type=kind, headers={"Content-Security-Policy": PAGE_POLICY,
                                                           "Cache-Control": "no-cache"})

    app.get("/", response_class=HTMLResponse, include_in_schema=False)(lambda: page("/"))
    app.get("/page.js", include_in_schema=False)(lambda: page("/page.js"))
    app.get("/page.css", include_in_schema=False)(lambda: page("/page.css"))
    app.get("/favicon.svg", include_in_schema=False)(lambda: page("/favicon.svg"))

    fast = FastEndpoints(app, {"/predict": Route(PredictRequest, fast_predict),
                               "/learn": Route(LearnRequest, fast_learn, token_sent)}, error_response)
    asgi = BoundedBody(fast, max_bytes=MAX_BODY_BYTES, seconds=body_seconds)
    asgi = SameOrigin(asgi)
    if loopback_only:
        asgi = LoopbackHosts(asgi)
    asgi = SingleHeaders(asgi)
    asgi = RequestMetrics(asgi, metrics)
    asgi.fastapi = app  # for tests and the OpenAPI document
    # called by the server's protocol (textcw_serve.connections) when it starts shutting down
    asgi.begin_shutdown = lambda: stopping.append(True)
    return asgi
