"""Pickle-free model exchange: a model as numpy arrays plus JSON (``textcw export`` / ``import``).

A saved model (:mod:`textcw.persist`) is a pickle, and unpickling a file runs whatever code its
author put in it. To share a model with someone who should not have to trust you, export it::

    textcw.export_model(pipeline, "model.textcw")      # textcw export model.joblib model.textcw
    pipeline = textcw.import_model("model.textcw")     # textcw import model.textcw model.joblib

The exported file is a ZIP archive holding ``model.json`` and ``arrays/<n>.npy``. The JSON names
each pipeline step's registered component (``binary-bow``, ``cw-stdev`` ...), its parameters and
its fitted state; the arrays are read with ``allow_pickle=False``. Importing never unpickles and
never imports code named by the file: every step is built through the registries of the
installed textcw and plugins, exactly as ``textcw train`` builds it, with its parameters
validated as ``textcw train`` validates them (for text featurizers
:func:`textcw.features.params.check_text_params`: no callables, no file input, a known
``token_pattern``, a bounded ``ngram_range``). A scikit-learn estimator nested inside a step (e.g.
a baseline's fitted ``LinearSVC``) is never built from the file: it is made by its parent, as
fitting makes it, and the file must name that class and those parameters exactly (so a file
cannot ask for ``n_jobs=10000`` or another class); only its fitted attributes come from the
file. Then every value is checked before it is used: sizes are bounded before anything is
decompressed (the unpacked total, each member, the JSON, every array's element count and
dtype), the learner state's shapes must follow from its declared feature and label counts and
match the arrays actually present before the learner allocates anything
(:meth:`~textcw.learners.base.OnlineLinearClassifier.load_state_dict` then checks finite values
and positive variances), labels and names may not hold control characters or line breaks,
vocabularies must map terms to distinct column numbers ``0..n-1``, the featurizer's width must
match the learner's, and the rebuilt learner must score an empty document. The worst a
malicious file can do is describe a model that predicts badly.

Fitted state travels as follows: textcw learners through ``state_dict()`` /
``load_state_dict()``; any other step through its public fitted attributes (scikit-learn's
``name_`` convention) holding numbers, strings, lists, tuples, sets, string-keyed dicts, numpy
arrays and nested scikit-learn estimators. A step with other kinds of state cannot be exported,
and the error names the attribute.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import numbers
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.pipeline import Pipeline

from textcw._atomic import atomic_output
from textcw.errors import InputError, ModelFileError, TextcwError, UnknownNameError
from textcw.model_card import card
from textcw.persist import check_destination, zip_member
from textcw.untrusted import check_printable, parse_json, read_member, safe_text

FORMAT = "textcw-portable"
FORMAT_VERSION = 1
JSON_MEMBER = "model.json"
DEFAULT_MAX_BYTES = 4 << 30
_KINDS = {"featurizer": "featurizers", "learner": "learners"}
_FITTED_NAME = re.compile(r"^[a-z][a-z0-9_]*_$")
_NESTED_MODULES = ("sklearn.", "textcw.")
_ARRAY_KINDS = "biufU"
# The dtypes an export holds (state and coefficients, counts, labels) and nothing else: a
# zero-size dtype such as <U0 would let a header declare 10^12 elements in no bytes.
_ARRAY_DTYPES = frozenset(np.dtype(t).str for t in ("?", "<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4",
                                                      "<u8", "<f4", "<f8"))
_MAX_LABEL_CHARS = 1024  # a label (a <U array's item) longer than this is no label
_MAX_ARRAY_DIMS = 3  # (labels, rows, rows): a multi-class full covariance
# JSON takes up to ~25 times its size once parsed ("[{},{},...]"): model.json gets a share of the
# unpacked-size bound, not all of it (a vocabulary of a million words is about 20 MB of JSON).
_JSON_SHARE = 32
_MIN_JSON_LIMIT = 1 << 20
_TAGS_PARAMS = frozenset({"__dict__", "__tuple__", "__set__", "__float__", "__dtype__"})
_TAGS_STATE = frozenset({"__dict__", "__tuple__", "__float__", "__array__"})
_TAGS_ATTRIBUTES = frozenset({"__dict__", "__tuple__", "__set__", "__float__", "__dtype__", "__array__",
                              "__estimator__"})
_TAGS_COMPONENTS = frozenset({"__dict__", "__float__"})


# ---------------------------------------------------------------------------- export
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
        kind = name if name in _KINDS else None
        info = components.get(kind) if kind else None
        if not (isinstance(info, dict) and isinstance(info.get("name"), str)):
            raise InputError(
                f"pipeline step {name!r} is not a registered featurizer or learner, so it cannot be "
                "rebuilt without pickle; export pipelines made by textcw"
            )
        if hasattr(step, "state_dict"):
            state = {"state_dict": _encode(step.state_dict(), arrays, f"{name}.state")}
        else:
            state = {"attributes": _encode(_fitted_attributes(step), arrays, name)}
        steps.append({"step": name, "kind": _KINDS[kind], "name": info["name"], "provider": info.get("provider"),
                      "params": _encode(info.get("params") or {}, arrays, f"{name}.params"), **state})
    from textcw import __version__

    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "textcw_version": __version__,
        "steps": steps,
        "components": _encode(_plain_components(components), arrays, "components"),
    }
    text = json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n"
    try:
        with atomic_output(path) as fh, zipfile.ZipFile(fh, "w") as archive:
            archive.writestr(zip_member(JSON_MEMBER, compress=True), text.encode("utf-8"))
            for number, array in enumerate(arrays):
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, allow_pickle=False)
                archive.writestr(zip_member(f"arrays/{number}.npy", compress=True), buffer.getvalue())
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    return path


def _plain_components(components: dict) -> dict:
    """The pipeline's registry facts, minus anything that is not plain data."""
    return json.loads(json.dumps(components, default=lambda v: None))


def _fitted_attributes(obj) -> dict:
    # sorted: the order attributes were set in (fit, or an import) must not change the file
    return {k: v for k, v in sorted(vars(obj).items()) if _FITTED_NAME.match(k)}


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
        cls = type(value)
        return {"__estimator__": f"{cls.__module__}:{cls.__qualname__}",
                "params": _encode(value.get_params(deep=False), arrays, f"{where}.params"),
                "attributes": _encode(_fitted_attributes(value), arrays, where)}
    raise InputError(
        f"{where} holds a {type(value).__name__}, which cannot be exported without pickle; only numbers, "
        "strings, lists, dicts, numpy arrays and scikit-learn estimators can"
    )


# ---------------------------------------------------------------------------- import
def import_model(path: str | os.PathLike, *, registries=None, max_bytes: int = DEFAULT_MAX_BYTES):
    """Rebuild the pipeline exported to ``path``, checking everything (see the module docstring).

    ``max_bytes`` bounds the unpacked size of the file; a larger one is refused before anything
    is decompressed (``model.json`` may take a 32nd of it, at least 1 MiB). Raises
    :class:`~textcw.errors.ModelFileError` for a file that is not a valid export, naming what is
    wrong.
    """
    from textcw.plugins import default_registries

    path = Path(path)
    regs = registries if registries is not None else default_registries()
    document, arrays = _read(path, max_bytes)
    try:
        return _build(document, arrays, regs)
    except RecursionError:  # cannot happen below MAX_JSON_DEPTH; kept as a clear error regardless
        raise ModelFileError(f"{path} nests its values too deeply") from None
    except ModelFileError as exc:
        raise ModelFileError(f"{path} holds an invalid model: {exc}") from None
    except UnknownNameError as exc:
        raise ModelFileError(f"{path} needs a component that is not installed: {exc}") from None
    except TextcwError as exc:
        raise ModelFileError(f"{path} holds an invalid model: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ModelFileError(f"{path} holds an invalid model ({type(exc).__name__}: {exc})") from None


def json_limit(max_bytes: int) -> int:
    """The most bytes of ``model.json`` read for an export bounded by ``max_bytes``."""
    return min(max_bytes, max(_MIN_JSON_LIMIT, max_bytes // _JSON_SHARE))


def is_export(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ZIP archive whose first member is ``model.json`` (nothing is read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return bool(names) and names[0] == JSON_MEMBER


def _open(path: Path, max_bytes: int) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    if not path.is_file():
        raise ModelFileError(f"{path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ModelFileError(f"{path} is not an exported textcw model (a ZIP archive made by `textcw export`), "
                             "or it is truncated") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    infos = archive.infolist()
    total = sum(i.file_size for i in infos)
    names = [i.filename for i in infos]
    expected = [JSON_MEMBER] + [f"arrays/{n}.npy" for n in range(len(names) - 1)]
    if total > max_bytes:
        archive.close()
        raise ModelFileError(
            f"{path} unpacks to {total:,} bytes, more than the limit of {max_bytes:,}; if you trust "
            "its size, raise max_bytes"
        )
    if names != expected:
        archive.close()
        raise ModelFileError(f"{path} is an archive but not an exported textcw model (members "
                             f"{[safe_text(n, 60) for n in names[:4]]})")
    return archive, infos


def _read_document(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, max_bytes: int) -> dict:
    raw = read_member(archive, info, path, json_limit(max_bytes), "the model description")
    document = parse_json(raw, f"the {JSON_MEMBER} of {path}")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not an exported textcw model (its model.json has another format)")
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelFileError(f"{path} uses export format {safe_text(repr(version), 40)}; this textcw reads "
                             f"format {FORMAT_VERSION}; upgrade textcw to import it")
    return document


def _read(path: Path, max_bytes: int) -> tuple[dict, dict[int, np.ndarray]]:
    archive, infos = _open(path, max_bytes)
    with archive:
        document = _read_document(archive, infos[0], path, max_bytes)
        arrays = {number: _read_array(archive, info, path) for number, info in enumerate(infos[1:])}
    return document, arrays


def read_document(path: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The ``model.json`` of the export at ``path``, with each step's fitted state replaced by
    ``"(fitted state)"``: what ``textcw inspect`` shows. Read with the bounds of
    :func:`import_model` (the same ``max_bytes``); no array is read, nothing is built."""
    path = Path(path)
    archive, infos = _open(path, max_bytes)
    with archive:
        document = _read_document(archive, infos[0], path, max_bytes)
    for step in document.get("steps", []) if isinstance(document.get("steps"), list) else []:
        if isinstance(step, dict):
            for key in ("state_dict", "attributes"):
                if key in step:
                    step[key] = "(fitted state)"
    return document


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> np.ndarray:
    """One ``.npy`` member, without pickle, after checking its header: numpy allocates the
    declared shape before reading, so a header that lies about its size, or declares a dtype an
    export never holds (objects, zero-size strings), must not get there."""
    try:
        with archive.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fh, max_header_size=10000)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, SyntaxError) as exc:
        raise ModelFileError(f"{path} is damaged or not an exported textcw model ({info.filename}: {exc})") from None
    allowed = dtype.str in _ARRAY_DTYPES or (dtype.kind == "U" and dtype.byteorder in "<|="
                                             and 1 <= dtype.itemsize // 4 <= _MAX_LABEL_CHARS)
    if dtype.hasobject or not allowed:
        raise ModelFileError(f"{info.filename} holds an array of dtype {safe_text(dtype.str, 40)}, which an "
                             "export never has (numbers, booleans and labels of 1 to "
                             f"{_MAX_LABEL_CHARS} characters)")
    if len(shape) > _MAX_ARRAY_DIMS:
        raise ModelFileError(f"{info.filename} declares a {len(shape)}-dimensional array; an export holds at "
                             f"most {_MAX_ARRAY_DIMS} dimensions")
    count = math.prod(shape)
    if count * dtype.itemsize > info.file_size:
        raise ModelFileError(f"{info.filename} declares a {shape} array, more data than it holds")
    try:
        with archive.open(info) as fh:
            array = np.lib.format.read_array(fh, allow_pickle=False, max_header_size=10000)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise ModelFileError(f"{path} is damaged or not an exported textcw model ({info.filename}: {exc})") from None
    if array.dtype.kind == "U":
        check_printable(array.ravel().tolist(), f"{info.filename}, a list of labels")
    return array


def _decode(value, arrays: dict, tags: frozenset = _TAGS_STATE, templates: dict | None = None):
    """The Python value ``value`` (JSON from :func:`_encode`) stands for, allowing only ``tags``.

    A nested estimator (``__estimator__``) is only allowed where ``templates`` gives the
    estimator the parent makes (see :func:`_nested_estimator`)."""
    if isinstance(value, list):
        return [_decode(v, arrays, tags, templates) for v in value]
    if not isinstance(value, dict):
        return value
    present = [tag for tag in ("__array__", "__float__", "__tuple__", "__set__", "__dict__", "__dtype__",
                               "__estimator__") if tag in value]
    if present and present[0] not in tags:
        raise ModelFileError(f"a value tagged {present[0]} is not allowed here")
    if "__array__" in value:
        if not isinstance(value["__array__"], int) or value["__array__"] not in arrays:
            raise ModelFileError(f"a value names the array {safe_text(repr(value['__array__']), 40)}, which "
                                 "the file does not hold")
        array = arrays[value["__array__"]]
        return array.astype(object) if value.get("as_object") is True else array
    if "__float__" in value:
        text = value["__float__"]
        if text not in ("nan", "inf", "-inf"):
            raise ModelFileError(f"bad float {text!r}")
        return float(text)
    if "__tuple__" in value:
        return tuple(_decode(v, arrays, tags, templates) for v in _items(value["__tuple__"]))
    if "__set__" in value:
        items = [_decode(v, arrays, tags, templates) for v in _items(value["__set__"])]
        if not all(isinstance(v, (str, int, float, bool)) or v is None for v in items):
            raise ModelFileError("a set may hold only strings and numbers")
        return set(items)
    if "__dict__" in value:
        if not isinstance(value["__dict__"], dict):
            raise ModelFileError("a value tagged __dict__ is not a mapping")
        return {str(k): _decode(v, arrays, tags, templates) for k, v in value["__dict__"].items()}
    if "__dtype__" in value:
        try:
            dtype = np.dtype(str(value["__dtype__"]))
        except TypeError:
            raise ModelFileError(f"{safe_text(value['__dtype__'], 40)!r} is not a dtype") from None
        if dtype.str not in _ARRAY_DTYPES:
            raise ModelFileError(f"dtype {safe_text(dtype.str, 40)} is not allowed")
        return dtype.type
    if "__estimator__" in value:
        raise ModelFileError(f"a nested estimator ({safe_text(value['__estimator__'], 80)}) is not allowed here")
    raise ModelFileError(f"unknown value tags {[safe_text(k, 40) for k in sorted(value, key=str)[:3]]}")


def _items(value) -> list:
    if not isinstance(value, list):
        raise ModelFileError("a tuple or set in the file is not a list of values")
    return value


def _nested_templates(parent) -> dict:
    """The nested estimators ``parent`` makes when it is fitted, by attribute: the only ones an
    import may fill with fitted attributes.

    A component says which by ``_nested_estimators`` (attribute name -> name of the method that
    makes it); textcw's batch baselines make ``estimator_`` with ``_make()``; a scikit-learn
    meta-estimator fits clones of its ``estimator`` parameter as ``estimators_``.
    """
    makers = dict(getattr(parent, "_nested_estimators", {}) or {})
    if not makers and callable(getattr(parent, "_make", None)):
        makers = {"estimator_": "_make"}
    templates = {name: getattr(parent, method)() for name, method in makers.items()}
    inner = getattr(parent, "estimator", None)
    if isinstance(inner, BaseEstimator) and "estimator" in parent.get_params(deep=False):
        templates["estimators_"] = inner
    return templates


def _class_name(obj) -> str:
    return f"{type(obj).__module__}:{type(obj).__qualname__}"


def _nested_estimator(value, arrays: dict, template, where: str):
    """The estimator ``template`` (a fresh one, as the parent makes it) with the fitted attributes
    of ``value``, after checking that ``value`` names the same class and the same parameters."""
    if not (isinstance(value, dict) and "__estimator__" in value):
        raise ModelFileError(f"{where} must be a fitted {_class_name(template)}")
    if value["__estimator__"] != _class_name(template):
        raise ModelFileError(
            f"{where} is a {safe_text(value['__estimator__'], 80)}, but its parent makes a "
            f"{_class_name(template)}; a nested estimator is never built from the file"
        )
    _check_same_params(value.get("params", {"__dict__": {}}), template, where)
    obj = clone(template)
    attributes = value.get("attributes", {"__dict__": {}})
    _set_attributes(obj, attributes, arrays, where)
    return obj


def _check_same_params(params, template, where: str) -> None:
    """The file's parameters of a nested estimator must be exactly those its parent gives it."""
    if not (isinstance(params, dict) and isinstance(params.get("__dict__"), dict)):
        raise ModelFileError(f"the parameters of {where} are not a mapping")
    given, expected = params["__dict__"], template.get_params(deep=False)
    if set(given) != set(expected):
        extra = sorted(set(given) ^ set(expected), key=str)[:3]
        raise ModelFileError(f"{where} has the parameters {[safe_text(k, 40) for k in extra]} its parent does not give it")
    for name, value in given.items():
        want = expected[name]
        if isinstance(want, BaseEstimator):
            _check_same_params(value.get("params") if isinstance(value, dict) else None, want, f"{where}.{name}")
            if not isinstance(value, dict) or value.get("__estimator__") != _class_name(want):
                raise ModelFileError(f"{where}.{name} must be a {_class_name(want)}")
            continue
        got = _decode(value, {}, _TAGS_PARAMS)
        if not _same_value(got, want):
            raise ModelFileError(f"{where} has {name}={safe_text(repr(got), 60)}; its parent gives it "
                                 f"{name}={safe_text(repr(want), 60)} (a nested estimator's parameters are not "
                                 "taken from the file)")


def _same_value(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return isinstance(a, (bool, np.bool_)) == isinstance(b, (bool, np.bool_)) and a == b
    return type(a) is type(b) and a == b


def _set_attributes(obj, attributes, arrays: dict, where: str) -> None:
    """Set the fitted attributes (JSON ``attributes``) on ``obj``; nested estimators only where
    ``obj`` makes them (:func:`_nested_templates`), built by ``obj``, never by the file."""
    if not (isinstance(attributes, dict) and isinstance(attributes.get("__dict__"), dict)):
        raise ModelFileError(f"the fitted attributes of {where} are not a mapping")
    templates = None
    for name, value in attributes["__dict__"].items():
        # Only fitted-attribute names (name_), never methods, properties or class attributes.
        if not (isinstance(name, str) and _FITTED_NAME.match(name)) or hasattr(type(obj), name):
            raise ModelFileError(f"{where} cannot take an attribute named {safe_text(repr(name), 60)}")
        if _holds_estimator(value):
            templates = _nested_templates(obj) if templates is None else templates
            if name not in templates:
                raise ModelFileError(f"{where} makes no nested estimator {name!r}; the file cannot add one")
            as_tuple = isinstance(value, dict) and "__tuple__" in value  # e.g. OneVsOneClassifier.estimators_
            items = value["__tuple__"] if as_tuple else value
            if isinstance(items, list):
                decoded = [_nested_estimator(v, arrays, templates[name], f"{where}.{name}[{i}]")
                           for i, v in enumerate(items)]
                decoded = tuple(decoded) if as_tuple else decoded
            else:
                decoded = _nested_estimator(value, arrays, templates[name], f"{where}.{name}")
        else:
            decoded = _decode(value, arrays, _TAGS_ATTRIBUTES)
        _check_vocabulary(name, decoded, where)
        if name == "classes_":
            check_printable(_labels(decoded), f"the labels of {where}")
        setattr(obj, name, decoded)


def _holds_estimator(value) -> bool:
    if isinstance(value, dict) and isinstance(value.get("__tuple__"), list):
        value = value["__tuple__"]
    if isinstance(value, list):
        return any(isinstance(v, dict) and "__estimator__" in v for v in value)
    return isinstance(value, dict) and "__estimator__" in value


def _labels(classes) -> list:
    values = classes.tolist() if isinstance(classes, np.ndarray) else classes
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _check_vocabulary(name: str, value, where: str) -> None:
    if name != "vocabulary_":
        return
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ModelFileError(f"the vocabulary of {where} must map terms to column numbers")
    columns = list(value.values())
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in columns) or \
            sorted(columns) != list(range(len(columns))):
        raise ModelFileError(f"the vocabulary of {where} must map its {len(columns)} terms to the distinct "
                             f"columns 0..{len(columns) - 1}")


def _build(document: dict, arrays: dict, regs) -> Pipeline:
    from textcw.pipeline import make_featurizer, make_learner

    steps = document.get("steps")
    if not (isinstance(steps, list) and [s.get("step") if isinstance(s, dict) else None for s in steps]
            == ["featurizer", "learner"]):
        raise ModelFileError("an exported model has the steps featurizer and learner, in that order")
    check_printable(document.get("textcw_version"), "its textcw version")
    built = []
    for step in steps:
        kind, name, provider = step.get("kind"), step.get("name"), step.get("provider")
        if kind != _KINDS[step["step"]] or not isinstance(name, str):
            raise ModelFileError(f"step {step['step']!r} names a {safe_text(repr(kind), 40)}")
        check_printable([name, provider], f"the name of its {kind[:-1]}")
        params = _decode(step.get("params", {"__dict__": {}}), arrays, _TAGS_PARAMS)
        if not isinstance(params, dict):
            raise ModelFileError(f"the parameters of {name!r} are not a mapping")
        check_printable(params, f"the parameters of {name!r}")
        make = make_learner if kind == "learners" else make_featurizer
        if name not in regs[kind] and isinstance(provider, str) and provider != "textcw":
            raise ModelFileError(
                f"it needs the plugin {provider!r}, which provides the {kind[:-1]} {name!r} and is not "
                f"installed; install it (pip install {provider}) and try again"
            )
        obj = make(name, registries=regs, **params)  # parameters validated as `textcw train` does
        if isinstance(obj, (CountVectorizer, HashingVectorizer)):
            from textcw.features.params import check_text_params

            check_text_params(obj, name)  # a plugin's vectorizer: the same limits as textcw's own
        if "state_dict" in step:
            if not hasattr(obj, "load_state_dict"):
                raise ModelFileError(f"{name!r} keeps no state_dict; the file was written for another version")
            state = _decode(step["state_dict"], arrays, _TAGS_STATE)
            _check_state_extent(obj, state, name)
            obj.load_state_dict(state)
            check_printable(_labels(obj.classes_), f"the labels of {name!r}")
        else:
            _set_attributes(obj, step.get("attributes", {"__dict__": {}}), arrays, name)
        built.append((step["step"], obj))
    _check_widths(built)
    _check_scores(built[1][1])
    model = Pipeline(built)
    components = _decode(document.get("components", {"__dict__": {}}), arrays, _TAGS_COMPONENTS)
    check_printable(components, "its component names")
    model.textcw_components_ = components if isinstance(components, dict) else {}
    return model


# Two probes per dimension: a state dimension that moves from 11 to 13 rows is the row count,
# from 17 to 19 labels the label count; one that does not move is a constant.
_PROBE_ROWS, _PROBE_LABELS = (11, 13), (17, 19)


def _check_state_extent(learner, state, name: str) -> None:
    """Refuse a learner state whose arrays do not have the shapes its declared feature and label
    counts imply, before ``load_state_dict`` allocates anything for those counts.

    ``load_state_dict`` compares the arrays with a freshly allocated state of the declared size;
    a 2 kB file declaring 10^9 features would make it allocate gigabytes first. Here the shapes
    are worked out from two tiny probes of the learner's own state layout, so the allocation that
    follows is never larger than the arrays the file actually holds (and those are bounded by
    ``max_bytes``). What this cannot judge (a malformed state) is left to ``load_state_dict``,
    which refuses it before allocating.
    """
    if not (isinstance(state, dict) and isinstance(state.get("arrays"), dict)
            and isinstance(state.get("classes"), np.ndarray) and hasattr(learner, "_state_shapes")):
        return
    n_features = state.get("n_features_in")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
        return
    n_classes = state["classes"].size
    binary = n_classes == 2
    n_rows = n_features + int(bool(getattr(learner, "fit_intercept", False)))
    probes = [learner._state_shapes(rows, None if binary else labels)
              for rows, labels in zip(_PROBE_ROWS, _PROBE_LABELS)]
    for array_name, value in state["arrays"].items():
        if array_name not in probes[0] or not isinstance(value, np.ndarray):
            continue  # load_state_dict names the missing or extra arrays before allocating
        expected = []
        for a, b in zip(probes[0][array_name], probes[1][array_name]):
            if (a, b) == _PROBE_ROWS:
                expected.append(n_rows)
            elif (a, b) == _PROBE_LABELS and not binary:
                expected.append(n_classes)
            elif a == b:
                expected.append(a)
            else:
                raise ModelFileError(f"the state of {name!r} cannot be checked before it is allocated "
                                     f"(array {array_name!r} grows in another way); it cannot be imported")
        if value.shape != tuple(expected):
            raise ModelFileError(
                f"state array {array_name!r} has shape {value.shape}; with {n_features} features, "
                f"{n_classes} classes and fit_intercept={getattr(learner, 'fit_intercept', False)} it must be "
                f"{tuple(expected)}"
            )


def _check_scores(learner) -> None:
    """The rebuilt learner must score an empty document of its width: fitted attributes whose
    shapes disagree (a nested estimator's coefficients, say) fail here, not at prediction."""
    width = getattr(learner, "n_features_in_", None)
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise ModelFileError(f"the learner's feature count {safe_text(repr(width), 40)} is not a positive integer")
    probe = sp.csr_matrix((1, width), dtype=np.float64)
    try:
        for method in ("predict", "decision_function", "predict_proba"):
            if hasattr(learner, method):
                getattr(learner, method)(probe)
    except TextcwError:
        raise
    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        raise ModelFileError(f"the rebuilt learner cannot score a document ({type(exc).__name__}: "
                             f"{safe_text(str(exc), 200)}); its fitted state is inconsistent") from None


def _check_widths(steps) -> None:
    featurizer, learner = steps[0][1], steps[1][1]
    width = None
    if isinstance(getattr(featurizer, "vocabulary_", None), dict):
        width = len(featurizer.vocabulary_)
    elif isinstance(getattr(featurizer, "n_features_out_", None), int):
        width = featurizer.n_features_out_
    elif isinstance(getattr(featurizer, "n_features", None), int):
        width = featurizer.n_features
    expected = getattr(learner, "n_features_in_", None)
    if width is not None and expected is not None and width != expected:
        raise ModelFileError(f"the featurizer makes {width} features but the learner was fitted with {expected}")


def export_card(path: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The model card (:func:`textcw.model_card.model_card`) of an export, read with the bounds of
    :func:`import_model` and without building anything: only ``model.json`` and the learner's
    label array are read. An export records no training figures; those are ``None``."""
    path = Path(path)
    archive, infos = _open(path, max_bytes)
    with archive:
        document = _read_document(archive, infos[0], path, max_bytes)
        steps = document.get("steps") if isinstance(document.get("steps"), list) else []
        by_kind = {s.get("step"): s for s in steps if isinstance(s, dict)}
        learner, featurizer = by_kind.get("learner", {}), by_kind.get("featurizer", {})
        state = learner.get("state_dict", {}).get("__dict__", {}) if isinstance(learner.get("state_dict"), dict) \
            else learner.get("attributes", {}).get("__dict__", {}) if isinstance(learner.get("attributes"), dict) else {}
        state = state if isinstance(state, dict) else {}
        classes = state.get("classes", state.get("classes_"))
        labels = None
        if isinstance(classes, dict) and isinstance(classes.get("__array__"), int) \
                and 0 <= classes["__array__"] < len(infos) - 1:
            labels = _read_array(archive, infos[classes["__array__"] + 1], path).tolist()
        n_features = state.get("n_features_in", state.get("n_features_in_"))
    components = document.get("components", {})
    components = components.get("__dict__", {}) if isinstance(components, dict) else {}
    components = components if isinstance(components, dict) else {}

    def params(step):
        value = step.get("params", {}).get("__dict__") if isinstance(step.get("params"), dict) else None
        return value if isinstance(value, dict) else None

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return card(
        kind="export", learner=learner.get("name"), learner_params=params(learner),
        featurizer=featurizer.get("name"), featurizer_params=params(featurizer), classes=labels,
        n_features=n_features if isinstance(n_features, int) else None,
        corpus=components.get("corpus") if isinstance(components.get("corpus"), str) else None,
        textcw_version=document.get("textcw_version"), format_version=document.get("format_version"),
        sha256=digest.hexdigest(), signed=False, signature="unsigned",
    )
