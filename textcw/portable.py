"""Pickle-free model exchange: a model as numpy arrays plus JSON (``textcw export`` / ``import``).

A saved model (:mod:`textcw.persist`) is a pickle, and unpickling a file runs whatever code its
author put in it. To share a model with someone who should not have to trust you, export it::

    textcw.export_model(pipeline, "model.textcw")      # textcw export model.joblib model.textcw
    pipeline = textcw.import_model("model.textcw")     # textcw import model.textcw model.joblib

The exported file is a ZIP archive holding ``model.json`` and ``arrays/<n>.npy``. The JSON names
each pipeline step's registered component (``binary-bow``, ``cw-stdev`` ...), its parameters and
its fitted state; the arrays are read with ``allow_pickle=False``. Importing never unpickles and
never imports code named by the file: every step is built through the registries of the
installed textcw and plugins, exactly as ``textcw train`` builds it; scikit-learn estimators
nested inside a step (e.g. a baseline's fitted ``LinearSVC``) must be classes of ``sklearn`` or
``textcw``. Then every value is checked before it is used: learners check their state
(:meth:`~textcw.learners.base.OnlineLinearClassifier.load_state_dict`: shapes, finite values,
positive variances), vocabularies must map terms to distinct column numbers ``0..n-1``, the
featurizer's width must match the learner's, and sizes are bounded before anything is
decompressed. The worst a malicious file can do is describe a model that predicts badly.

Fitted state travels as follows: textcw learners through ``state_dict()`` /
``load_state_dict()``; any other step through its public fitted attributes (scikit-learn's
``name_`` convention) holding numbers, strings, lists, tuples, sets, string-keyed dicts, numpy
arrays and nested scikit-learn estimators. A step with other kinds of state cannot be exported,
and the error names the attribute.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import re
import zipfile
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

from textcw._atomic import atomic_output
from textcw.errors import InputError, ModelFileError, TextcwError, UnknownNameError
from textcw.persist import check_destination, zip_member

FORMAT = "textcw-portable"
FORMAT_VERSION = 1
JSON_MEMBER = "model.json"
DEFAULT_MAX_BYTES = 4 << 30
_KINDS = {"featurizer": "featurizers", "learner": "learners"}
_FITTED_NAME = re.compile(r"^[a-z][a-z0-9_]*_$")
_NESTED_MODULES = ("sklearn.", "textcw.")
_ARRAY_KINDS = "biufU"


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
    is decompressed. Raises :class:`~textcw.errors.ModelFileError` for a file that is not a valid
    export, naming what is wrong.
    """
    from textcw.plugins import default_registries

    path = Path(path)
    regs = registries if registries is not None else default_registries()
    document, arrays = _read(path, max_bytes)
    try:
        return _build(document, arrays, regs)
    except ModelFileError as exc:
        raise ModelFileError(f"{path} holds an invalid model: {exc}") from None
    except UnknownNameError as exc:
        raise ModelFileError(f"{path} needs a component that is not installed: {exc}") from None
    except TextcwError as exc:
        raise ModelFileError(f"{path} holds an invalid model: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ModelFileError(f"{path} holds an invalid model ({type(exc).__name__}: {exc})") from None


def _read(path: Path, max_bytes: int) -> tuple[dict, dict[int, np.ndarray]]:
    if not path.is_file():
        raise ModelFileError(f"{path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ModelFileError(f"{path} is not an exported textcw model (a ZIP archive made by `textcw export`), "
                             "or it is truncated") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    with archive:
        infos = archive.infolist()
        total = sum(i.file_size for i in infos)
        if total > max_bytes:
            raise ModelFileError(
                f"{path} unpacks to {total:,} bytes, more than the limit of {max_bytes:,}; if you trust "
                "its size, raise max_bytes"
            )
        names = [i.filename for i in infos]
        expected = [JSON_MEMBER] + [f"arrays/{n}.npy" for n in range(len(names) - 1)]
        if names != expected:
            raise ModelFileError(f"{path} is an archive but not an exported textcw model (members {names[:4]})")
        try:
            document = json.loads(archive.read(JSON_MEMBER).decode("utf-8"))
            if not isinstance(document, dict) or document.get("format") != FORMAT:
                raise ModelFileError(f"{path} is not an exported textcw model (its model.json has another format)")
            version = document.get("format_version")
            if not isinstance(version, int) or version > FORMAT_VERSION:
                raise ModelFileError(f"{path} uses export format {version!r}; this textcw reads format "
                                     f"{FORMAT_VERSION}; upgrade textcw to import it")
            arrays = {number: _read_array(archive, infos[number + 1]) for number in range(len(names) - 1)}
        except ModelFileError:
            raise
        except (zipfile.BadZipFile, EOFError, OSError, UnicodeDecodeError, ValueError) as exc:
            # damaged members (CRC), bad JSON, arrays of Python objects (allow_pickle=False)
            raise ModelFileError(f"{path} is damaged or not an exported textcw model ({exc})") from None
    return document, arrays


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One ``.npy`` member, without pickle, after checking its header against the member's size
    (numpy allocates the declared shape before reading, so a lying header must not get there)."""
    with archive.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(fh)
    if dtype.hasobject or dtype.kind not in _ARRAY_KINDS:
        raise ModelFileError(f"{info.filename} holds an array of dtype {dtype}, which an export never has")
    if math.prod(shape) * dtype.itemsize > info.file_size:
        raise ModelFileError(f"{info.filename} declares a {shape} array, more data than it holds")
    with archive.open(info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _decode(value, arrays: dict):
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        array = arrays[value["__array__"]]
        return array.astype(object) if value.get("as_object") is True else array
    if "__float__" in value:
        text = value["__float__"]
        if text not in ("nan", "inf", "-inf"):
            raise ModelFileError(f"bad float {text!r}")
        return float(text)
    if "__tuple__" in value:
        return tuple(_decode(v, arrays) for v in value["__tuple__"])
    if "__set__" in value:
        return set(_decode(v, arrays) for v in value["__set__"])
    if "__dict__" in value:
        return {str(k): _decode(v, arrays) for k, v in value["__dict__"].items()}
    if "__dtype__" in value:
        dtype = np.dtype(str(value["__dtype__"]))
        if dtype.kind not in _ARRAY_KINDS:
            raise ModelFileError(f"dtype {dtype} is not allowed")
        return dtype.type
    if "__estimator__" in value:
        return _nested_estimator(value, arrays)
    raise ModelFileError(f"unknown value tags {sorted(value)[:3]}")


def _nested_estimator(value: dict, arrays: dict):
    module_name, _, qualname = str(value["__estimator__"]).partition(":")
    # Importing a module runs it: only scikit-learn's and textcw's own modules, never a __main__.
    if not (module_name.startswith(_NESTED_MODULES) and re.fullmatch(r"[a-z_][a-z0-9_.]*", module_name)
            and "__main__" not in module_name and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", qualname)):
        raise ModelFileError(
            f"the model names the class {value['__estimator__']!r}; only scikit-learn and textcw classes may "
            "be nested in an exported model"
        )
    cls = getattr(importlib.import_module(module_name), qualname, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator) and cls.__module__ == module_name):
        raise ModelFileError(f"{value['__estimator__']!r} is not an estimator class")
    params = _decode(value.get("params", {}), arrays)
    obj = cls(**params)
    _set_attributes(obj, _decode(value.get("attributes", {}), arrays), value["__estimator__"])
    return obj


def _set_attributes(obj, attributes: dict, where: str) -> None:
    if not isinstance(attributes, dict):
        raise ModelFileError(f"the fitted attributes of {where} are not a mapping")
    for name, value in attributes.items():
        # Only fitted-attribute names (name_), never methods, properties or class attributes.
        if not _FITTED_NAME.match(name) or hasattr(type(obj), name):
            raise ModelFileError(f"{where} cannot take an attribute named {name!r}")
        _check_vocabulary(name, value, where)
        setattr(obj, name, value)


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
    built = []
    for step in steps:
        kind, name = step["kind"], step["name"]
        if kind != _KINDS[step["step"]] or not isinstance(name, str):
            raise ModelFileError(f"step {step['step']!r} names a {kind!r}")
        params = _decode(step.get("params", {}), arrays)
        if not isinstance(params, dict):
            raise ModelFileError(f"the parameters of {name!r} are not a mapping")
        make = make_learner if kind == "learners" else make_featurizer
        provider = step.get("provider")
        if name not in regs[kind] and isinstance(provider, str) and provider != "textcw":
            raise ModelFileError(
                f"it needs the plugin {provider!r}, which provides the {kind[:-1]} {name!r} and is not "
                f"installed; install it (pip install {provider}) and try again"
            )
        obj = make(name, registries=regs, **params)
        if "state_dict" in step:
            if not hasattr(obj, "load_state_dict"):
                raise ModelFileError(f"{name!r} keeps no state_dict; the file was written for another version")
            obj.load_state_dict(_decode(step["state_dict"], arrays))
        else:
            _set_attributes(obj, _decode(step.get("attributes", {}), arrays), name)
        built.append((step["step"], obj))
    _check_widths(built)
    model = Pipeline(built)
    components = _decode(document.get("components", {}), arrays)
    model.textcw_components_ = components if isinstance(components, dict) else {}
    return model


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
