"""Writing a portable export (:mod:`textcw.portable`): a trained pipeline as ``model.json`` plus
``arrays/<n>.npy``, with no pickle.

Each step is recorded by its registered name, its parameters and its fitted state: a textcw
learner's ``state_dict()``, any other step's public fitted attributes (``name_``). Values that are
not plain data (numbers, strings, lists, tuples, sets, string-keyed dicts, numpy arrays of
numbers or strings, scikit-learn estimators) cannot be exported, and the error names where they
are.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

from textcw._limits import MAX_LABEL_CHARS
from textcw.atomic import atomic_output
from textcw._version import __version__
from textcw.errors import InputError, ModelFileError
from textcw.learners.multilabel import MultiLabel
from textcw.persist import check_destination, zip_member
from textcw.portable_format import FITTED_NAME, FORMAT, FORMAT_VERSION, JSON_MEMBER, KINDS
from textcw.portable_multilabel import export_entry
from textcw.untrusted import safe_text

__all__ = ["corpus_name", "export_model"]


_NESTED_MODULES = ("sklearn.", "textcw.")


_ARRAY_KINDS = "biufU"



def export_model(model, path: str | os.PathLike) -> Path:
    """Write ``model`` (a pipeline from :func:`textcw.pipeline.train` or :func:`textcw.load`) to
    ``path`` as arrays + JSON; returns the path. The write is atomic."""
    path = Path(path)
    check_destination(path, "model.textcw")
    components = getattr(model, "textcw_components_", None)
    if not isinstance(model, Pipeline) or not isinstance(components, dict):
        raise InputError(
            "only pipelines trained by textcw (textcw.pipeline.train, `textcw train`) can be exported: "
            "they record which registered featurizer and learner each step is"
        )
    arrays: list[np.ndarray] = []
    steps = []
    for name, step in model.steps:
        kind = name if name in KINDS else None
        info = components.get(kind) if kind else None
        if not (isinstance(info, dict) and isinstance(info.get("name"), str)):
            raise InputError(
                f"pipeline step {name!r} is not a registered featurizer or learner, so it cannot be "
                "rebuilt without pickle; export pipelines made by textcw"
            )
        if isinstance(step, MultiLabel):  # one state_dict per label (textcw.portable_multilabel)
            state = {"multilabel": export_entry(step, _encode, arrays, name)}
        elif hasattr(step, "state_dict"):
            state = {"state_dict": _encode(step.state_dict(), arrays, f"{name}.state")}
        else:
            state = {"attributes": _encode(_fitted_attributes(step), arrays, name)}
        steps.append({"step": name, "kind": KINDS[kind], "name": info["name"], "provider": info.get("provider"),
                      "params": _encode(info.get("params") or {}, arrays, f"{name}.params"), **state})
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "textcw_version": __version__,
        "steps": steps,
        "components": _encode(_plain_components(components), arrays, "components"),
    }
    text = json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n"
    try:
        with atomic_output(path, private=True) as fh, zipfile.ZipFile(fh, "w") as archive:
            archive.writestr(zip_member(JSON_MEMBER, compress=True), text.encode("utf-8"))
            for number, array in enumerate(arrays):
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, allow_pickle=False)
                archive.writestr(zip_member(f"arrays/{number}.npy", compress=True), buffer.getvalue())
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    return path


def _plain_components(components: dict) -> dict:
    """The pipeline's registry facts, minus anything that is not plain data, with the corpus
    named as :func:`corpus_name` gives it (an export is for sharing: it records which corpus,
    not where on the author's disk it was)."""
    plain = json.loads(json.dumps(components, default=lambda v: None))
    if isinstance(plain.get("corpus"), str):
        plain["corpus"] = corpus_name(plain["corpus"])
    return plain


def corpus_name(spec: str) -> str:
    """``spec`` (``corpus[:task]``) without local paths: ``folder:/home/me/mail`` becomes
    ``folder:mail``; in a task of comma-separated parts, each part that is a path keeps its last
    component. Specs without paths are unchanged."""
    corpus, sep, task = spec.partition(":")
    return f"{corpus}{sep}{','.join(_last_part(part) for part in task.split(','))}" if sep else spec


def _last_part(text: str) -> str:
    if "/" in text or "\\" in text or os.path.isabs(text) or text.startswith("~"):
        return text.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or "."
    return text


def _fitted_attributes(obj) -> dict:
    # sorted: the order attributes were set in (fit, or an import) must not change the file
    return {k: v for k, v in sorted(vars(obj).items()) if FITTED_NAME.match(k)}


def _label_array(value: np.ndarray, where: str) -> np.ndarray:
    """A text array (labels) at the width of its longest item, which `textcw import` bounds by
    MAX_LABEL_CHARS: refused here, naming the label, so that no export is written that cannot
    be imported (a model trained before labels were bounded, or fitted from Python)."""
    lengths = np.char.str_len(value) if value.size else np.zeros(1, np.int64)
    longest = int(lengths.max())
    if longest > MAX_LABEL_CHARS:
        label = value.ravel()[int(np.argmax(lengths.ravel()))]
        raise InputError(f"{where} holds a label of {longest:,} characters ({safe_text(label, 40)!r}), more "
                         f"than the {MAX_LABEL_CHARS:,} that textcw import accepts; train with shorter labels")
    return value.astype(f"<U{max(1, longest)}")


def _encode(value, arrays: list, where: str):
    """JSON for ``value``; arrays are appended to ``arrays`` and referenced by number."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        as_object = value.dtype.kind == "O"
        if as_object:  # e.g. string labels kept as Python objects: stored as unicode, restored as objects
            if not all(isinstance(v, str) for v in value.ravel().tolist()):
                raise InputError(f"{where} is an array of Python objects, which cannot be exported without "
                                 "pickle; use labels and features of plain numbers or strings")
            value = value.astype(str)
        if value.dtype.kind not in _ARRAY_KINDS:
            raise InputError(f"{where} is an array of dtype {value.dtype}, which cannot be exported")
        if value.dtype.kind == "U":
            value = _label_array(value, where)
        arrays.append(np.ascontiguousarray(value))
        return {"__array__": len(arrays) - 1, **({"as_object": True} if as_object else {})}
    if isinstance(value, list):
        return [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted(_encode(v, arrays, where) for v in value)}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise InputError(f"{where} is a dict with non-string keys, which cannot be exported")
        return {"__dict__": {k: _encode(v, arrays, f"{where}.{k}") for k, v in value.items()}}
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return {"__dtype__": np.dtype(value).str}
    if isinstance(value, BaseEstimator) and type(value).__module__.startswith(_NESTED_MODULES):
        if hasattr(value, "state_dict"):
            # a textcw learner keeps its weights in its state, not in name_ attributes: encoded
            # as a nested estimator it would lose them and import as an untrained model
            raise InputError(f"{where} nests a textcw learner ({type(value).__name__}), which an export "
                             "cannot rebuild there; export a pipeline whose learner step is the learner")
        cls = type(value)
        return {"__estimator__": f"{cls.__module__}:{cls.__qualname__}",
                "params": _encode(value.get_params(deep=False), arrays, f"{where}.params"),
                "attributes": _encode(_fitted_attributes(value), arrays, where)}
    raise InputError(
        f"{where} holds a {type(value).__name__}, which cannot be exported without pickle; only numbers, "
        "strings, lists, dicts, numpy arrays and scikit-learn estimators can"
    )
