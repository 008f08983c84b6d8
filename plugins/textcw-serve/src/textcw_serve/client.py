"""A small Python client of ``textcw serve`` (standard library only)::

    from textcw_serve.client import Client
    service = Client("http://127.0.0.1:8000", token=None)
    service.predict(["win a free cruise now"])["predictions"][0]["label"]
    service.predict(["win a free cruise now"], top=2, explain=5)   # best labels and why
    service.suggest(unlabelled, n=10, strategy="margin")           # what to label next
    service.learn(["win a free cruise now"], ["spam"])   # returns after the update is durable
    service.learn(["app charged me twice"], [["billing", "mobile"]])   # a multi-label model: its tags
    service.status()["update_count"]

Errors the service reports come back as :class:`ServiceError` (a
:class:`textcw.errors.TextcwError`) carrying the HTTP status and the service's message; a
service that cannot be reached raises :class:`ServiceUnavailableError`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from textcw.errors import TextcwError

# A reply is at most a few MB (MAX_BATCH predictions); more is not a textcw service.
_MAX_REPLY_BYTES = 64 << 20
# The service's bounds (textcw_serve.schemas), repeated so that the client imports nothing else.
MAX_BATCH = 512
_BATCH_BYTES = 3 << 20


class ServiceError(TextcwError):
    """The service answered with an error (``status``: the HTTP status code)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"the service answered {status}: {message}")
        self.status = status
        self.message = message


class ServiceUnavailableError(TextcwError):
    """The service could not be reached (not running, wrong address, timed out)."""


class Client:
    """The API of one service at ``url`` (``http://host:port``; ``https`` behind a proxy)."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise TextcwError(f"--url {url!r} is not an http:// or https:// address of a textcw service")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def predict(self, documents: list[str], *, top: int | None = None, explain: int | None = None) -> dict:
        """``{"model_version", "classes", "predictions": [{"label", "probabilities", "decision", "margin"}]}``;
        with ``top``, each prediction also has its ``top`` best labels (``[{"label", "probability",
        "score"}]``, best first), with ``explain``, an ``explanation``: its ``explain`` strongest
        words (at most 16 documents per request then)."""
        payload = {"documents": list(documents)}
        if top is not None:
            payload["top"] = top
        if explain is not None:
            payload["explain"] = explain
        return self._call("POST", "/predict", payload)

    def predict_all(self, documents: list[str]) -> list[dict]:
        """The predictions of any number of documents, asked in requests within the service's
        bounds (512 documents, a body well under 4 MiB); one dict per document, in order."""
        rows, batch, size = [], [], 0
        for document in documents:
            cost = len(json.dumps(document)) + 2
            if batch and (len(batch) == MAX_BATCH or size + cost > _BATCH_BYTES):
                rows += self.predict(batch)["predictions"]
                batch, size = [], 0
            batch.append(document)
            size += cost
        if batch:
            rows += self.predict(batch)["predictions"]
        return rows

    def suggest(self, documents: list[str], *, n: int = 10, strategy: str = "mistake", seed: int = 0) -> dict:
        """The ``n`` documents most worth labelling next: ``{"model_version", "strategy",
        "suggestions": [{"index", "score", "label"}]}``, most informative first (``strategy``:
        ``mistake``, ``margin`` or ``random``; ``seed`` seeds ``random``)."""
        return self._call("POST", "/suggest", {"documents": list(documents), "n": n, "strategy": strategy,
                                               "seed": seed})

    def learn(self, documents: list[str], labels: list) -> dict:
        """Learn ``documents`` with their correct ``labels``; returns once the update is durable.
        For a multi-label model each label is the document's tags: a list, tuple or set (``[]``
        for none; a set is sent sorted, so that the same call sends the same bytes)."""
        return self._call("POST", "/learn", {"documents": list(documents), "labels": [_label(v) for v in labels]})

    def checkpoint(self) -> dict:
        return self._call("POST", "/checkpoint", None)

    def status(self) -> dict:
        return self._call("GET", "/status", None)

    def health(self) -> dict:
        return self._call("GET", "/health", None)

    def metrics(self) -> str:
        return self._call("GET", "/metrics", None, raw=True).decode("utf-8")

    def _call(self, method: str, path: str, payload, *, raw: bool = False):
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token is not None:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                body = reply.read(_MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            with exc:
                body = exc.read(_MAX_REPLY_BYTES)
            raise ServiceError(exc.code, _message(body, exc.reason)) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ServiceUnavailableError(f"cannot reach the textcw service at {self.url}: {reason}") from None
        if len(body) > _MAX_REPLY_BYTES:
            raise ServiceError(200, f"the reply is over {_MAX_REPLY_BYTES:,} bytes; {self.url} is not a textcw service")
        if raw:
            return body
        try:
            return json.loads(body)
        except ValueError:
            raise ServiceError(200, f"the reply is not JSON; {self.url} is not a textcw service") from None


def _message(body: bytes, reason) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return str(reason)


def _label(value):
    """A label as JSON takes it: a tag set (tuple, set) as a list."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda tag: (type(tag).__name__, tag))
    return list(value) if isinstance(value, tuple) else value
