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

The work is split in rooms: :mod:`textcw.portable_export` writes the file,
:mod:`textcw.portable_format` holds the format and reads the archive within its bounds, and
:mod:`textcw.portable_rebuild` turns the JSON back into values through allow-lists; this module
rebuilds the pipeline from them.
"""

from __future__ import annotations

import os
from pathlib import Path

from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.pipeline import Pipeline

from textcw.errors import ModelFileError, ParameterError, TextcwError, UnknownNameError
from textcw.model_card import export_card
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
from textcw.untrusted import check_printable, safe_text

__all__ = [
    "DEFAULT_MAX_BYTES", "FORMAT", "FORMAT_VERSION", "JSON_MEMBER", "export_card", "export_model",
    "import_model", "is_export", "json_limit", "read_document",
]


def import_model(path: str | os.PathLike, *, registries=None, max_bytes: int = DEFAULT_MAX_BYTES):
    """Rebuild the pipeline exported to ``path``, checking everything (see the module docstring).

    ``max_bytes`` bounds the unpacked size of the file; a larger one is refused before anything
    is decompressed (``model.json`` may take a 32nd of it, at least 1 MiB). Raises
    :class:`~textcw.errors.ModelFileError` for a file that is not a valid export, naming what is
    wrong. ``registries`` overrides the registries in use for this call
    (:func:`textcw.plugins.use_registries`).
    """
    from textcw.plugins import use_registries

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


def _build(document: dict, arrays: dict) -> Pipeline:
    from textcw.pipeline import make_featurizer, make_learner
    from textcw.plugins import current_registries

    regs = current_registries()

    steps = document.get("steps")
    if not (isinstance(steps, list) and [s.get("step") if isinstance(s, dict) else None for s in steps]
            == ["featurizer", "learner"]):
        raise ModelFileError("an exported model has the steps featurizer and learner, in that order")
    check_printable(document.get("textcw_version"), "its textcw version")
    built = []
    for step in steps:
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
                f"it needs the plugin {provider!r}, which provides the {kind[:-1]} {name!r} and is not "
                f"installed; install it (pip install {provider}) and try again"
            )
        obj = make(name, **params)  # parameters validated as `textcw train` does
        if isinstance(obj, (CountVectorizer, HashingVectorizer)):
            from textcw.features.params import check_text_params

            check_text_params(obj, name)  # a plugin's vectorizer: the same limits as textcw's own
        if "state_dict" in step:
            if not hasattr(obj, "load_state_dict"):
                raise ModelFileError(f"{name!r} keeps no state_dict; the file was written for another version")
            state = decode(step["state_dict"], arrays, TAGS_STATE)
            check_state_extent(obj, state, name)
            obj.load_state_dict(state)
            check_printable(labels_of(obj.classes_), f"the labels of {name!r}")
        else:
            set_attributes(obj, step.get("attributes", {"__dict__": {}}), arrays, name)
        built.append((step["step"], obj))
    check_widths(built)
    check_scores(built[1][1])
    components = decode(document.get("components", {"__dict__": {}}), arrays, TAGS_COMPONENTS)
    check_printable(components, "its component names")
    components = components if isinstance(components, dict) else {}
    calibration = components.get("probability")
    if calibration is None:
        model = Pipeline(built)
    else:  # a calibrated model: its temperature travels as plain data in the components
        from textcw.learners.calibrated_pipeline import CalibratedPipeline
        from textcw.learners.temperature import TemperatureScaling

        model = CalibratedPipeline(built)
        try:
            model.probability_calibration_ = TemperatureScaling.from_dict(calibration)
        except ParameterError as exc:
            raise ModelFileError(f"its probability calibration is damaged: {exc}") from None
    model.textcw_components_ = components
    return model
