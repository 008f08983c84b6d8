"""Multi-label models (:class:`~textcw.learners.multilabel.MultiLabel`) in a portable export.

The learner step of a multi-label pipeline is written as any learner step is (the binary
learner's registered name and parameters) plus a ``multilabel`` entry: the wrapper's own
parameters, one ``state_dict`` per label (each label's model is that learner fitted label against
the rest, so its state is checked and loaded exactly as a single learner's is), and the wrapper's
fitted attributes (labels, thresholds, per-label temperatures, and the honest scores it keeps to
refit them after ``partial_fit``). Each label's weights travel as arrays: the generic encoding of
a nested estimator (its ``name_`` attributes) would leave them out, so :mod:`textcw.portable_export`
refuses a nested textcw learner anywhere else.

An import builds the wrapper around the learner the registries make, never around anything the
file names, and checks every value against what ``fit`` can produce before the model is handed
back: label count, shapes, dtypes, the range of every threshold and temperature, 0/1 targets.
The weight lengths the probabilities divide by (``weight_norms_``) are recomputed from the
weights, not read.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn.base import clone

from textcw.errors import ModelFileError, ParameterError
from textcw.learners.multilabel import INDICATOR, RECORDED, SETS, MultiLabel
from textcw.learners.temperature import weight_norm
from textcw.portable_rebuild import TAGS_ATTRIBUTES, TAGS_PARAMS, decode, labels_of
from textcw.untrusted import check_printable, safe_text

__all__ = ["ATTRIBUTES", "export_entry", "rebuild"]

# What a fitted MultiLabel holds besides its models; weight_norms_ is recomputed on import.
ATTRIBUTES = ("classes_", "label_format_", "n_features_in_", "record_", "record_f1_", "calibration_", "thresholds_",
              "n_honest_scores_", "recorded_", "unlabelled_documents_")
_RECORDED_FLOATS = ("scores", "norms", "variances")


def export_entry(model: MultiLabel, encode: Callable, arrays: list, where: str) -> dict:
    """The ``multilabel`` entry of a learner step for the fitted ``model``; ``encode`` is the
    export's value encoder (arrays are appended to ``arrays``)."""
    params = {k: v for k, v in model.get_params(deep=False).items() if k != "learner"}
    return {
        "params": encode(params, arrays, f"{where}.params"),
        "labels": [encode(m.state_dict(), arrays, f"{where}.label[{i}]") for i, m in enumerate(model.estimators_)],
        "attributes": encode({k: getattr(model, k) for k in ATTRIBUTES if hasattr(model, k)}, arrays,
                             f"{where}.attributes"),
    }


def rebuild(learner, entry, arrays: dict, name: str, *, load_state: Callable, calibration: Callable) -> MultiLabel:
    """A fitted ``MultiLabel`` around ``learner`` (an unfitted learner the registries made) from
    the file's ``entry``. ``load_state(obj, state_json, name)`` loads one label's model with the
    checks of a single learner's state; ``calibration(data)`` checks one recorded temperature."""
    if not (isinstance(entry, dict) and isinstance(entry.get("labels"), list)):
        raise ModelFileError(f"the multi-label entry of {name!r} must hold a list of label models")
    params = decode(entry.get("params", {"__dict__": {}}), arrays, TAGS_PARAMS)
    if not isinstance(params, dict) or "learner" in params:
        raise ModelFileError(f"the multi-label parameters of {name!r} are not a mapping of its options")
    unknown = sorted(set(params) - set(MultiLabel(learner).get_params(deep=False)), key=str)
    if unknown:
        raise ModelFileError(f"the multi-label parameters of {name!r} include unknown options "
                             f"{[safe_text(k, 40) for k in unknown[:3]]}")
    model = MultiLabel(learner, **params)
    try:
        model._check_setup()  # the options and the learner as fit checks them
    except ParameterError as exc:
        raise ModelFileError(f"the multi-label parameters of {name!r} are invalid: {exc}") from None
    attributes = decode(entry.get("attributes", {"__dict__": {}}), arrays, TAGS_ATTRIBUTES)
    if not isinstance(attributes, dict) or set(attributes) - set(ATTRIBUTES):
        raise ModelFileError(f"the multi-label attributes of {name!r} must be some of {', '.join(ATTRIBUTES)}")
    n_labels = len(entry["labels"])
    classes = _classes(attributes.get("classes_"), n_labels, name)
    n_features = attributes.get("n_features_in_")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
        raise ModelFileError(f"the feature count of {name!r} must be a positive integer")
    models = []
    for i, state in enumerate(entry["labels"]):
        where = f"{name} (label {safe_text(str(classes[i]), 40)})"
        obj = clone(learner)
        load_state(obj, state, where)
        if not np.array_equal(obj.classes_, [0, 1]) or obj.n_features_in_ != n_features:
            raise ModelFileError(f"the model of {where} must be a binary model (classes 0 and 1) of "
                                 f"{n_features} features")
        models.append(obj)
    model.classes_ = classes
    model.estimators_ = models
    model.n_features_in_ = n_features
    model.label_format_ = _one_of(attributes.get("label_format_"), (SETS, INDICATOR), "label format", name)
    model.record_ = _one_of(attributes.get("record_"), RECORDED, "record", name)
    model.record_f1_ = _record_f1(attributes.get("record_f1_", {}), name)  # absent from older files
    scalings = attributes.get("calibration_")
    if not (isinstance(scalings, list) and len(scalings) == n_labels):
        raise ModelFileError(f"{name!r} must hold one probability calibration per label ({n_labels})")
    model.calibration_ = [calibration(data).to_dict() for data in scalings]
    if not model._gaussian and any(s["margin"] == "standardized" for s in model.calibration_):
        raise ModelFileError(f"a calibration of {name!r} scales standardized margins, which its learner has not")
    model.thresholds_ = _thresholds(attributes.get("thresholds_"), n_labels, name)
    honest = attributes.get("n_honest_scores_")
    if isinstance(honest, bool) or not isinstance(honest, int) or honest < 0:
        raise ModelFileError(f"the honest-score count of {name!r} must be an integer >= 0")
    model.n_honest_scores_ = honest
    unlabelled = attributes.get("unlabelled_documents_")  # absent from files written before it was kept
    if unlabelled is not None and (isinstance(unlabelled, bool) or not isinstance(unlabelled, int) or unlabelled < 0):
        raise ModelFileError(f"the unlabelled-document count of {name!r} must be an integer >= 0")
    model.unlabelled_documents_ = unlabelled
    if "recorded_" in attributes:
        model.recorded_ = _recorded(attributes["recorded_"], n_labels, model, name)
    model.weight_norms_ = np.array([weight_norm(m) for m in models], dtype=float)
    return model


def _record_f1(value, name: str) -> dict:
    """The held-out micro-F1 of each source of honest scores that ``record="best"`` compared."""
    if not (isinstance(value, dict) and set(value) <= set(RECORDED)
            and all(isinstance(f, float) and 0.0 <= f <= 1.0 for f in value.values())):
        raise ModelFileError(f"the compared record sources of {name!r} must map some of {', '.join(RECORDED)} "
                             "to an F1 between 0 and 1")
    return dict(value)


def _classes(value, n_labels: int, name: str) -> np.ndarray:
    if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.size == n_labels >= 1):
        raise ModelFileError(f"the labels of {name!r} must be a list of {n_labels} (one per label model)")
    if np.unique(value).size != value.size:
        raise ModelFileError(f"the labels of {name!r} must be distinct")
    check_printable(labels_of(value), f"the labels of {name!r}")
    return value


def _one_of(value, allowed: tuple, what: str, name: str) -> str:
    if value not in allowed:
        raise ModelFileError(f"the {what} of {name!r} must be one of {', '.join(allowed)}; got "
                             f"{safe_text(repr(value), 40)}")
    return value


def _thresholds(value, n_labels: int, name: str) -> np.ndarray:
    if not (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.shape == (n_labels,)):
        raise ModelFileError(f"the thresholds of {name!r} must be {n_labels} probabilities")
    value = value.astype(np.float64)
    if not np.all((value >= 0.0) & (value <= 1.0)):  # also refuses NaN
        raise ModelFileError(f"the thresholds of {name!r} must be probabilities in [0, 1]")
    return value


def _recorded(value, n_labels: int, model: MultiLabel, name: str) -> dict:
    """The honest scores kept for refitting: 0/1 targets and finite float32 scores, one column
    per label, at most ``max_recorded`` rows, the variances present exactly for a Gaussian learner."""
    expected = {"Y", "scores", "norms"} | ({"variances"} if model._gaussian else set())
    if not (isinstance(value, dict) and set(value) == expected):
        raise ModelFileError(f"the recorded scores of {name!r} must hold {', '.join(sorted(expected))}")
    rows = value["Y"].shape[0] if isinstance(value["Y"], np.ndarray) else -1
    if not 0 <= rows <= model.max_recorded:
        raise ModelFileError(f"the recorded scores of {name!r} must hold at most {model.max_recorded} rows")
    for key, array in value.items():
        dtype = np.uint8 if key == "Y" else np.float32
        if not (isinstance(array, np.ndarray) and array.dtype == dtype and array.shape == (rows, n_labels)):
            raise ModelFileError(f"the recorded {key} of {name!r} must be a {np.dtype(dtype).name} array of "
                                 f"shape ({rows}, {n_labels})")
    if np.any(value["Y"] > 1):
        raise ModelFileError(f"the recorded targets of {name!r} must be 0 or 1")
    if not all(np.isfinite(value[k]).all() for k in _RECORDED_FLOATS if k in value):
        raise ModelFileError(f"the recorded scores of {name!r} must be finite")
    if np.any(value["norms"] < 0) or np.any(value.get("variances", np.zeros(1)) < 0):
        raise ModelFileError(f"the recorded weight lengths and variances of {name!r} must be >= 0")
    return {k: np.ascontiguousarray(v) for k, v in value.items()}
