"""The shape of ``/learn``'s labels, and what learning a multi-label model's tag sets does.

A single-label model takes one class per document; a multi-label model
(:class:`textcw.learners.multilabel.MultiLabel`) takes the list of each document's tags, the
empty list for a document with none (``MultiLabel.partial_fit`` learns it: every label's model
learns it as a negative, and ``min_labels="auto"`` then stops completing predictions to one
tag). A label of the other shape is refused in one line that says which shape this model takes,
over HTTP (422) and when the update log is read back (its records are untrusted input: a record
whose labels do not have this model's shape is damage or another model's log, and is refused
as such, never applied).

Learning a request is one ``MultiLabel.partial_fit(X, tag_sets)`` call, exactly what an
offline ``partial_fit`` over the same requests in the same order does (tested bit for bit with
:func:`multilabel_digest`). A document counts as an online mistake when the tag set the model
predicted for it just before the request (what ``/predict`` answered then) differs from the
given one; every document changes the model (its honest scores are recorded and every label's
temperature and threshold are refitted: the module docstring of
:mod:`textcw.learners.multilabel`).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from textcw.errors import InputError
from textcw.learners.multilabel import MultiLabel
from textcw.learners.multilabel_targets import as_indicator
from textcw.untrusted import safe_text

# A scalar label as JSON gives it (bool is an int in Python: named separately by LabelMap)
SCALARS = (str, bool, int, float)


def _shown(value) -> str:
    try:
        return safe_text(json.dumps(value), 60)
    except (TypeError, ValueError):
        return safe_text(repr(value), 60)


def check_shapes(labels: list, multilabel: bool) -> None:
    """Refuse, in one line, labels that are not this model's shape: one scalar class per
    document (single-label), or a list of scalar tags per document (multi-label)."""
    for i, label in enumerate(labels):
        if multilabel:
            if not isinstance(label, list):
                raise InputError(f"labels[{i}] is {_shown(label)}, one label, but this model is multi-label: give "
                                 "each document the list of its tags (e.g. [\"a\", \"b\"], or [] for none)")
            bad = [tag for tag in label if not isinstance(tag, SCALARS)]
            if bad:
                raise InputError(f"labels[{i}] holds {_shown(bad[0])}, which is not a tag: a tag is a string or a "
                                 "number, as /status lists the model's classes")
        elif isinstance(label, list):
            raise InputError(f"labels[{i}] is a list ({_shown(label)}), but this model takes one label per "
                             "document: give one of its classes, not a list of tags")
        elif not isinstance(label, SCALARS):
            raise InputError(f"labels[{i}] is {_shown(label)}, which is not a label: give one of the model's "
                             "classes, as /status lists them")


def split(flat: list, sets: list[list]) -> list[list]:
    """``flat`` (one value per tag of ``sets``, in order) cut back into one list per set."""
    out, start = [], 0
    for tags in sets:
        out.append(flat[start:start + len(tags)])
        start += len(tags)
    return out


def learn_tags(learner: MultiLabel, X, tag_sets: list[list]) -> int:
    """One ``learner.partial_fit(X, tag_sets)`` call; the documents whose predicted tag set
    (just before the call, :meth:`MultiLabel.predict_indicator`) differs from the given one."""
    predicted = np.asarray(learner.predict_indicator(X), dtype=bool)
    truth, _, _ = as_indicator(tag_sets, X.shape[0], learner.classes_)  # refuses a tag outside classes_
    learner.partial_fit(X, tag_sets)
    return int(np.count_nonzero((predicted != truth.astype(bool)).any(axis=1)))


def multilabel_digest(learner: MultiLabel, digest_state) -> str:
    """sha256 of everything a :class:`MultiLabel` predicts and learns from: its classes, each
    label's model (``digest_state(digest, model)``: its classes, state arrays and counts), the
    temperatures, thresholds, weight norms, the honest scores kept and the counts behind
    ``min_labels``. Equal digests mean models that predict and keep learning alike, bit for bit."""
    digest = hashlib.sha256(b"multilabel\0")
    digest.update(json.dumps([c.item() if isinstance(c, np.generic) else c for c in learner.classes_]).encode())
    for model in learner.estimators_:
        digest_state(digest, model)
        # and its counts per call (what assert_same_learner compares of a single-label learner)
        digest.update(json.dumps([list(map(int, getattr(model, "mistakes_", []))),
                                  list(map(int, getattr(model, "n_updates_", [])))]).encode())
    digest.update(json.dumps({"calibration": learner.calibration_, "format": learner.label_format_,
                              "record": learner.record_, "honest": learner.n_honest_scores_,
                              "unlabelled": getattr(learner, "unlabelled_documents_", None)},
                             sort_keys=True, default=str).encode())
    arrays = {"thresholds": learner.thresholds_, "weight_norms": learner.weight_norms_,
              **{"recorded." + k: v for k, v in getattr(learner, "recorded_", {}).items()}}
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def status_of(learner: MultiLabel) -> dict:
    """What ``/status`` adds for a multi-label model: how its counters are counted."""
    return {"min_labels": int(learner.min_labels_),
            "unlabelled_documents": getattr(learner, "unlabelled_documents_", None),
            "mistakes": "a document is an online mistake when the tag set the model predicted for it just before "
                        "its update differs from the given one",
            "checkpoints": "each checkpoint holds the whole model (no deltas)"}
