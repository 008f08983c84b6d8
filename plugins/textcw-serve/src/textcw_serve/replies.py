"""The plain ``/predict`` reply written from a prediction's arrays, without a Python dict per row.

The reply FastAPI renders for ``response_model=PredictResponse`` is fixed by the model's classes
except for the numbers: each prediction is ``{"label":…,"probabilities":{"c1":p1,…},
"decision":{"c1":s1,…},"margin":m}`` with the classes' names in the same places every time.
Built as dicts (:func:`textcw_serve.model_ops.prediction_rows`) and rendered by pydantic, a
batch of 32 newsgroup posts scored for 20 classes makes 64 dicts and 1,300 floats, and the two
steps cost a tenth of the request. :class:`ReplyWriter` writes the names, braces and labels of a
row once per model, as a ``bytes`` template, and fills in the numbers rendered by pydantic's
own JSON writer (``pydantic_core.to_json`` of one flat list of floats: the writer FastAPI's
rendering uses, so every number has the same digits), one ``%`` per chunk of rows.

The bytes are those of :func:`textcw_serve.app.render_predict_reply` of the rows, exactly
(tested for every label type, binary and multi-class, nulls, names to escape). The writer
declines (:meth:`ReplyWriter.render` returns ``None``, and the rows are built and rendered as
before) for what it was not written for: a multi-label model, a model whose class names repeat
as text (``1`` and ``"1"``: their dict keeps one of them), a one-column multi-class score, or a
label that is not one of the classes.
"""

from __future__ import annotations

import math

import numpy as np
import pydantic_core
from pydantic import TypeAdapter

from textcw_serve.model_ops import LabelMap, Scored, jsonable_label
from textcw_serve.schemas import PredictResponse

_PREDICT_REPLY = TypeAdapter(PredictResponse)
_VERSION_0 = b'{"model_version":0,'


def _key(name: str) -> bytes:
    """``name`` as pydantic writes it as a JSON object's key (escaped as in any JSON string)."""
    whole = pydantic_core.to_json({name: 0})
    return whole[1:-3]  # {KEY:0}


def _literal(piece: bytes) -> bytes:
    """A piece of the reply inside a ``%`` template: its own ``%`` kept as it is."""
    return piece.replace(b"%", b"%%")


class ReplyWriter:
    """The rows of the plain ``/predict`` reply for a model's classes (module docstring)."""

    def __init__(self, labels: LabelMap):
        names = [str(c) for c in labels.classes]
        self._keys = [_literal(_key(name)) for name in names]
        self._templates: dict = {}
        self._label_json: dict = {}
        self._after_version = None
        self.usable = False
        if labels.multilabel or len(set(names)) != len(names):
            return
        try:
            # each class's JSON, by its value as the learner's predict returns it (type and
            # value: True and 1 are different classes)
            self._label_json = {_value_key(v): pydantic_core.to_json(jsonable_label(v)) for v in labels.values}
            # the reply without predictions, checked against the schema once: only the version changes
            empty = _PREDICT_REPLY.dump_json(_PREDICT_REPLY.validate_python(
                {"model_version": 0, "classes": labels.classes, "predictions": []}), by_alias=True)
        except (TypeError, ValueError):  # classes the rows' rendering answers (or refuses) itself
            return
        if empty.startswith(_VERSION_0):
            self._after_version = empty[len(_VERSION_0) - 1:]
            self.usable = True

    def head(self, version: int) -> bytes:
        """``{"model_version":…,"classes":[…],"predictions":[]}`` as the schema renders it."""
        return b'{"model_version":%d' % version + self._after_version

    def _templates_for(self, probabilities: bool, decision: str) -> dict:
        """Each class's row template, by :func:`_value_key` of the class: its label written in,
        then ``%b`` for each number in the order :meth:`render` lists them (``decision``:
        ``"classes"``, ``"one"`` (binary) or ``"none"``)."""
        found = self._templates.get((probabilities, decision))
        if found is not None:
            return found
        per_class = b"{" + b",".join(key + b":%b" for key in self._keys) + b"}"
        rest = (b',"probabilities":' + (per_class if probabilities else b"null")
                + b',"decision":' + {"classes": per_class, "one": b"%b", "none": b"null"}[decision]
                + b',"margin":' + (b"null" if decision == "none" else b"%b") + b"}")
        found = {key: b'{"label":' + _literal(label) + rest for key, label in self._label_json.items()}
        self._templates[(probabilities, decision)] = found
        return found

    def render(self, version: int, scored: Scored, chunk: int) -> bytes | None:
        """The reply of model version ``version`` with the rows of ``scored``, written ``chunk``
        rows per step; ``None`` when the writer declines (module docstring)."""
        scores, proba = scored.scores, scored.proba
        if not self.usable or scored.predicted.ndim != 1:
            return None
        n = len(scored.predicted)
        if scores is None:
            decision, columns = "none", []
        elif scores.ndim == 1:
            decision, columns = "one", [scores[:, None], np.abs(scores)[:, None]]
        elif scores.ndim == 2 and scores.shape[1] > 1 and scores.shape[1] == len(self._keys):
            top = np.sort(scores, axis=1)
            decision, columns = "classes", [scores, (top[:, -1] - top[:, -2])[:, None]]
        else:
            return None
        if proba is not None:
            if proba.ndim != 2 or proba.shape[1] != len(self._keys):
                return None
            columns.insert(0, proba)
        templates = self._templates_for(proba is not None, decision)
        try:
            rows = [templates[_value_key(v)] for v in scored.predicted.tolist()]
        except (KeyError, TypeError):  # a label that is not a class (or not hashable): the rows' way
            return None
        numbers = np.concatenate(columns, axis=1) if columns else np.zeros((n, 0))
        parts = []
        for start in range(0, n, chunk):
            block = numbers[start:start + chunk]
            # "v1,v2,…": no number has a comma in it
            values = tuple(pydantic_core.to_json(_finite_list(block))[1:-1].split(b",")) if block.size else ()
            parts.append(b",".join(rows[start:start + chunk]) % values)
        return self.head(version)[:-2] + b",".join(parts) + b"]}"


def _value_key(value) -> tuple:
    value = value.item() if isinstance(value, np.generic) else value
    return type(value), value


def _finite_list(values: np.ndarray) -> list:
    """``values`` as one flat list of Python floats, ``None`` for each value that is not finite
    (JSON has no NaN: as :func:`textcw_serve.model_ops.prediction_rows` writes them)."""
    flat = values.ravel()
    if np.isfinite(flat).all():
        return flat.tolist()
    return [v if math.isfinite(v) else None for v in flat.tolist()]
