"""Rebuilding a portable export's values (:mod:`textcw.portable`) through allow-lists.

:func:`decode` turns the file's JSON back into Python values, accepting only the tags allowed at
that place; :func:`set_attributes` sets fitted attributes (``name_``) and fills a nested
scikit-learn estimator only where its parent makes one, built by the parent, never by the file;
:func:`check_state_extent`, :func:`check_widths` and :func:`check_scores` check that the rebuilt
learner's state, width and scores are consistent before the model is handed back.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone

from textcw.errors import ModelFileError, TextcwError
from textcw.portable_format import ARRAY_DTYPES, FITTED_NAME
from textcw.untrusted import check_idf, check_printable, check_vocabulary, safe_text

__all__ = [
    "TAGS_ATTRIBUTES", "TAGS_COMPONENTS", "TAGS_PARAMS", "TAGS_STATE", "check_scores",
    "check_state_extent", "check_vocabulary", "check_widths", "decode", "labels_of", "set_attributes"
]


TAGS_PARAMS = frozenset({"__dict__", "__tuple__", "__set__", "__float__", "__dtype__"})


TAGS_STATE = frozenset({"__dict__", "__tuple__", "__float__", "__array__"})


TAGS_ATTRIBUTES = frozenset({"__dict__", "__tuple__", "__set__", "__float__", "__dtype__", "__array__",
                              "__estimator__"})


TAGS_COMPONENTS = frozenset({"__dict__", "__float__"})



def decode(value, arrays: dict, tags: frozenset = TAGS_STATE, templates: dict | None = None):
    """The Python value ``value`` (JSON written by :mod:`textcw.portable_export`) stands for, allowing only ``tags``.

    A nested estimator (``__estimator__``) is only allowed where ``templates`` gives the
    estimator the parent makes (see :func:`_nested_estimator`)."""
    if isinstance(value, list):
        return [decode(v, arrays, tags, templates) for v in value]
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
        return tuple(decode(v, arrays, tags, templates) for v in _items(value["__tuple__"]))
    if "__set__" in value:
        items = [decode(v, arrays, tags, templates) for v in _items(value["__set__"])]
        if not all(isinstance(v, (str, int, float, bool)) or v is None for v in items):
            raise ModelFileError("a set may hold only strings and numbers")
        return set(items)
    if "__dict__" in value:
        if not isinstance(value["__dict__"], dict):
            raise ModelFileError("a value tagged __dict__ is not a mapping")
        return {str(k): decode(v, arrays, tags, templates) for k, v in value["__dict__"].items()}
    if "__dtype__" in value:
        try:
            dtype = np.dtype(str(value["__dtype__"]))
        except TypeError:
            raise ModelFileError(f"{safe_text(value['__dtype__'], 40)!r} is not a dtype") from None
        if dtype.str not in ARRAY_DTYPES:
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
    set_attributes(obj, attributes, arrays, where)
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
        got = decode(value, {}, TAGS_PARAMS)
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


def set_attributes(obj, attributes, arrays: dict, where: str) -> None:
    """Set the fitted attributes (JSON ``attributes``) on ``obj``; nested estimators only where
    ``obj`` makes them (:func:`_nested_templates`), built by ``obj``, never by the file."""
    if not (isinstance(attributes, dict) and isinstance(attributes.get("__dict__"), dict)):
        raise ModelFileError(f"the fitted attributes of {where} are not a mapping")
    templates = None
    for name, value in attributes["__dict__"].items():
        # Only fitted-attribute names (name_), never methods, properties or class attributes.
        if not (isinstance(name, str) and FITTED_NAME.match(name)) or hasattr(type(obj), name):
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
            decoded = decode(value, arrays, TAGS_ATTRIBUTES)
        check_vocabulary(name, decoded, where)
        if name == "classes_":
            check_printable(labels_of(decoded), f"the labels of {where}")
        setattr(obj, name, decoded)
    if "idf_" in attributes["__dict__"]:  # the tfidf featurizer's weights, one per vocabulary term
        check_idf(getattr(obj, "idf_", None), getattr(obj, "vocabulary_", None), where)


def _holds_estimator(value) -> bool:
    if isinstance(value, dict) and isinstance(value.get("__tuple__"), list):
        value = value["__tuple__"]
    if isinstance(value, list):
        return any(isinstance(v, dict) and "__estimator__" in v for v in value)
    return isinstance(value, dict) and "__estimator__" in value


def labels_of(classes) -> list:
    values = classes.tolist() if isinstance(classes, np.ndarray) else classes
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []



# Two probes per dimension: a state dimension that moves from 11 to 13 rows is the row count,
# from 17 to 19 labels the label count; one that does not move is a constant.
_PROBE_ROWS, _PROBE_LABELS = (11, 13), (17, 19)


def check_state_extent(learner, state, name: str) -> None:
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
            and isinstance(state.get("classes"), np.ndarray) and hasattr(learner, "state_shapes")):
        return
    n_features = state.get("n_features_in")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
        return
    n_classes = state["classes"].size
    binary = n_classes == 2
    n_rows = n_features + int(bool(getattr(learner, "fit_intercept", False)))
    probes = [learner.state_shapes(rows, None if binary else labels)
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


def check_scores(learner) -> None:
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


def check_widths(steps) -> None:
    """The featurizer must make as many features as the learner was fitted with.

    The width is what the featurizer actually makes from a probe document (an empty text, then
    an empty feature mapping), not what an attribute says: a file that renames a step's
    component, or gives a featurizer an attribute it never reads, cannot pass with a width its
    ``transform`` does not have. Only a featurizer that takes neither probe (a matrix
    pass-through) is judged by its attributes.
    """
    featurizer, learner = steps[0][1], steps[1][1]
    expected = getattr(learner, "n_features_in_", None)
    declared = _declared_width(featurizer)
    width = _probed_width(featurizer)
    if width is not None and declared is not None and width != declared:
        raise ModelFileError(f"the featurizer's fitted state describes {declared} features but it makes "
                             f"{width}; its state does not belong to it")
    width = declared if width is None else width
    if width is not None and expected is not None and width != expected:
        raise ModelFileError(f"the featurizer makes {width} features but the learner was fitted with {expected}")


def _declared_width(featurizer) -> int | None:
    if isinstance(getattr(featurizer, "vocabulary_", None), dict):
        return len(featurizer.vocabulary_)
    for name in ("n_features_out_", "n_features"):
        value = getattr(featurizer, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _probed_width(featurizer) -> int | None:
    for probe in ([""], [{}]):
        try:
            shape = getattr(featurizer.transform(probe), "shape", None)
        except Exception:  # noqa: BLE001 - a featurizer that does not take this kind of document
            continue
        if isinstance(shape, tuple) and len(shape) == 2 and isinstance(shape[1], int):
            return int(shape[1])
    return None
