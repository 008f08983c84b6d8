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
arrays and nested scikit-learn estimators. A multi-label learner travels as its binary learner
plus one ``state_dict`` per label (:mod:`textcw.portable_multilabel`). A step with other kinds of
state cannot be exported, and the error names the attribute.

Why not skops or safetensors, the two pickle-free formats in use for such models:

- ``skops.io`` saves a scikit-learn object graph and, on load, constructs each object whose type
  is on its default list of trusted types or on the list the user passes; textcw's learners and
  featurizers are not on the default list, so a user would trust them by class name and skops
  would restore their attributes directly. That skips what makes an import safe here: building
  each step through the registries with validated parameters, and
  :meth:`~textcw.learners.base.OnlineLinearClassifier.load_state_dict`'s checks of shapes, values
  and widths. Its trust check has also had bypasses (CVE-2025-54412, fixed in skops 0.12).
- safetensors stores named numeric tensors (a JSON header of dtype, shape and byte offsets, then
  the raw data) with string-to-string metadata: it covers this format's ``arrays/<n>.npy``
  members, which are numeric too and read with ``allow_pickle=False`` and bounded headers, but
  not the pipeline's description (registered names, parameters, vocabularies, labels). Using it
  for the arrays would add a compiled dependency and a format change for no new guarantee.

The work is split in rooms: :mod:`textcw.portable_export` writes the file,
:mod:`textcw.portable_format` holds the format and reads the archive within its bounds, and
:mod:`textcw.portable_rebuild` turns the JSON back into values through allow-lists,
:mod:`textcw.portable_multilabel` writes and rebuilds multi-label learners; this module
rebuilds the pipeline from them.
"""

from __future__ import annotations

import os
from pathlib import Path

from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.pipeline import Pipeline

from textcw.errors import ModelFileError, ParameterError, TextcwError, UnknownNameError
from textcw.features.params import check_text_params
from textcw.learners.calibrated_pipeline import CalibratedPipeline
from textcw.learners.temperature import BETA_MAX, TemperatureScaling
from textcw.model_card import export_card
from textcw.pipeline import make_featurizer, make_learner
from textcw.plugins import current_registries, deprecated_registries, use_registries
from textcw.portable_export import export_model
from textcw.portable_format import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    FORMAT_VERSION,
    JSON_MEMBER,
    KINDS,
    is_export,
    json_limit,
    read_document,
    read_export,
)
from textcw.portable_multilabel import rebuild as rebuild_multilabel
from textcw.portable_rebuild import (
    TAGS_COMPONENTS,
    TAGS_PARAMS,
    TAGS_STATE,
    check_scores,
    check_state_extent,
    check_widths,
    decode,
    labels_of,
    set_attributes,
)
from textcw.untrusted import check_printable, check_text_sizes, install_advice, safe_text

__all__ = [
    "DEFAULT_MAX_BYTES", "FORMAT", "FORMAT_VERSION", "JSON_MEMBER", "export_card", "export_model",
    "import_model", "is_export", "json_limit", "read_document",
]


def import_model(path: str | os.PathLike, *, registries=None, max_bytes: int = DEFAULT_MAX_BYTES):
    """Rebuild the pipeline exported to ``path``, checking everything (see the module docstring).

    ``max_bytes`` bounds the unpacked size of the file; a larger one is refused before anything
    is decompressed (``model.json`` may take a 32nd of it, at least 1 MiB). Raises
    :class:`~textcw.errors.ModelFileError` for a file that is not a valid export, naming what is
    wrong. The components are looked up in the registries in use
    (:func:`textcw.plugins.use_registries`; ``registries=`` is deprecated).
    """
    registries = deprecated_registries(registries, "textcw.import_model")
    path = Path(path)
    document, arrays = read_export(path, max_bytes)
    try:
        with use_registries(registries):
            return _build(document, arrays)
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


# One entry per epoch or partial_fit call: the most a learner state's counter lists may hold. A
# longer list is refused before it is decoded or checked element by element.
MAX_RECORDED_PASSES = 1_000_000
_COUNTER_KEYS = ("mistakes", "n_updates")


def _build(document: dict, arrays: dict) -> Pipeline:
    """The model an exported ``document`` describes: its steps checked, built by name, then assembled."""
    regs = current_registries()
    steps = _checked_steps(document)
    built = [(step["step"], _build_step(step, arrays, regs)) for step in steps]
    check_widths(built)
    check_scores(built[1][1])
    components = decode(document.get("components", {"__dict__": {}}), arrays, TAGS_COMPONENTS)
    check_printable(components, "its component names")
    components = components if isinstance(components, dict) else {}
    _check_components(components, steps, arrays)
    calibration = components.get("probability")
    if calibration is None:
        model = Pipeline(built)
    else:  # a calibrated model: its temperature travels as plain data in the components

        model = CalibratedPipeline(built)
        model.probability_calibration_ = _calibration(calibration, len(built[-1][1].classes_))
        components["probability"] = model.probability_calibration_.to_dict()  # only checked values
    model.textcw_components_ = components
    return model


def _checked_steps(document: dict) -> list:
    """The document's steps (featurizer, then learner), their printed text bounded."""
    steps = document.get("steps")
    if not (isinstance(steps, list) and [s.get("step") if isinstance(s, dict) else None for s in steps]
            == ["featurizer", "learner"]):
        raise ModelFileError("an exported model has the steps featurizer and learner, in that order")
    check_printable(document.get("textcw_version"), "its textcw version")
    # Everything that is copied into the saved model's manifest or printed is bounded first, so
    # that `import` never writes a model that `load` refuses (its manifest is bounded too).
    check_text_sizes([document.get("textcw_version"), document.get("components")], "its description")
    for step in steps:
        check_text_sizes([step.get(k) for k in ("kind", "name", "provider", "params")],
                         f"its {safe_text(step['step'])} step")
    return steps


def _build_step(step: dict, arrays: dict, regs):
    """One step's featurizer or learner, built by its registered name and given its fitted state."""
    kind, name, provider = step.get("kind"), step.get("name"), step.get("provider")
    if kind != KINDS[step["step"]] or not isinstance(name, str):
        raise ModelFileError(f"step {step['step']!r} names a {safe_text(repr(kind), 40)}")
    check_printable([name, provider], f"the name of its {kind[:-1]}")
    params = decode(step.get("params", {"__dict__": {}}), arrays, TAGS_PARAMS)
    if not isinstance(params, dict):
        raise ModelFileError(f"the parameters of {name!r} are not a mapping")
    check_printable(params, f"the parameters of {name!r}")
    make = make_learner if kind == "learners" else make_featurizer
    if name not in regs[kind] and isinstance(provider, str) and provider != "textcw":
        raise ModelFileError(
            f"it needs the plugin {safe_text(provider, 80)!r}, which provides the {kind[:-1]} {name!r} and "
            f"is not installed; {install_advice(provider)}"
        )
    obj = make(name, **params)  # parameters validated as `textcw train` does
    if isinstance(obj, (CountVectorizer, HashingVectorizer)):
        check_text_params(obj, name)  # a plugin's vectorizer: the same limits as textcw's own
    if "multilabel" in step and kind == "learners":
        obj = rebuild_multilabel(obj, step["multilabel"], arrays, name, calibration=_calibration,
                                 load_state=lambda model, state, where: _load_state(model, state, arrays, where))
    elif "state_dict" in step:
        _load_state(obj, step["state_dict"], arrays, name)
    else:
        set_attributes(obj, step.get("attributes", {"__dict__": {}}), arrays, name)
    return obj


def _load_state(obj, state_json, arrays: dict, name: str) -> None:
    """Make ``obj`` the fitted learner of the file's ``state_json``, checked before anything is
    allocated for it (counter lengths, array extents, self-tuned values)."""
    if not hasattr(obj, "load_state_dict"):
        raise ModelFileError(f"{name!r} keeps no state_dict; the file was written for another version")
    _check_counter_lengths(state_json, name)
    state = decode(state_json, arrays, TAGS_STATE)
    check_state_extent(obj, state, name)
    _check_tuned_values(obj, state, name)
    obj.load_state_dict(state)
    check_printable(labels_of(obj.classes_), f"the labels of {name!r}")


def _check_counter_lengths(state, name: str) -> None:
    """Refuse counter lists (one entry per pass) longer than :data:`MAX_RECORDED_PASSES`, on the
    file's JSON, before anything is decoded or allocated for them."""
    fields = state.get("__dict__") if isinstance(state, dict) else None
    if not isinstance(fields, dict):
        return  # decode and load_state_dict say what is wrong
    counters = fields.get("counters")
    counters = counters.get("__dict__") if isinstance(counters, dict) else None
    lists = {key: fields.get(key) for key in _COUNTER_KEYS}
    lists.update({f"counters.{k}": v for k, v in (counters or {}).items()})
    for key, value in lists.items():
        if isinstance(value, list) and len(value) > MAX_RECORDED_PASSES:
            raise ModelFileError(
                f"the state of {name!r} records {len(value):,} passes in {safe_text(key, 60)!r}, more than "
                f"the {MAX_RECORDED_PASSES:,} (one per epoch or partial_fit call) an export may hold")


def _check_tuned_values(learner, state, name: str) -> None:
    """The values a self-tuning learner chose (its state's ``tuned`` entry) must be values its
    own ``fit`` accepts: each is checked by the learner's parameter constraints, as ``fit``
    checks a value given by hand (CW's ``eta`` in (0.5, 1), AROW's ``r`` > 0 ...)."""
    from sklearn.base import clone

    tuned = state.get("tuned") if isinstance(state, dict) else None
    if not isinstance(tuned, dict) or not hasattr(learner, "validate_params"):
        return  # absent, or malformed: load_state_dict refuses the latter
    params = learner.get_params(deep=False)
    for param, value in tuned.items():
        if param not in params or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # load_state_dict names what is wrong
        try:
            clone(learner).set_params(**{param: value}).validate_params()
        except ParameterError as exc:
            raise ModelFileError(f"the self-tuned value {param}={safe_text(repr(value), 40)} of {name!r} is "
                                 f"out of range ({exc}); fit never chooses it") from None


def _check_components(components: dict, steps: list, arrays: dict) -> None:
    """The registry facts recorded beside the steps (copied into a saved model's manifest) must
    describe those steps: the same names, providers and parameters."""
    for step in steps:
        recorded = components.get(step["step"])
        if recorded is None:
            continue
        params = decode(step.get("params", {"__dict__": {}}), arrays, TAGS_PARAMS)
        same = (isinstance(recorded, dict) and recorded.get("name") == step.get("name")
                and recorded.get("provider") == step.get("provider")
                and _plain(recorded.get("params") or {}) == _plain(params))
        if not same:
            raise ModelFileError(f"its components describe the {step['step']} differently from its "
                                 f"{step['step']} step; the file was edited")


def _plain(value):
    """Parameters as JSON would hold them (tuples as lists), for comparing the two records."""
    import json

    return json.loads(json.dumps(value, sort_keys=True, default=lambda v: None))


def _calibration(calibration, n_classes: int | None = None):
    """The recorded temperature, checked as fitting bounds it: a finite inverse temperature in
    ``[0, BETA_MAX]``, finite, non-negative recorded log-losses and, for documents with no known
    feature, one probability per class (of ``n_classes``, when given)."""
    import math


    try:
        scaling = TemperatureScaling.from_dict(calibration)
    except ParameterError as exc:
        raise ModelFileError(f"its probability calibration is damaged: {exc}") from None
    if not scaling.inverse_temperature <= BETA_MAX:
        raise ModelFileError(f"its probability calibration has the inverse temperature "
                             f"{scaling.inverse_temperature!r}, more than the {BETA_MAX:g} fitting can choose")
    if not all(math.isfinite(v) and v >= 0 for v in scaling.recorded_log_loss.values()):
        raise ModelFileError("its probability calibration records a log-loss that is negative or not finite")
    if scaling.unknown is not None and len(scaling.unknown) != (n_classes or 2):  # a tag's is binary
        raise ModelFileError(f"its probability calibration gives {len(scaling.unknown)} probabilities for a document "
                             f"with no known word, for a model of {n_classes} labels")
    return scaling
