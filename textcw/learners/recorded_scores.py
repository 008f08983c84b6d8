"""Where :class:`textcw.learners.calibrated.Calibrated` takes the honest scores a calibration is
fitted to (``record=``): a pass learned chunk by chunk (progressive validation) or cross-fitted
halves; the module docstring of :mod:`textcw.learners.calibrated` says when each is used."""

from __future__ import annotations

import numpy as np

from textcw.errors import ParameterError
from textcw.learners.autotune import auto_names

RECORDS = ("auto", "first", "last", "cross-fit")
CROSS_FIT_FOLDS = 2


def resolve_record(record: str, learner, y: np.ndarray, labels: np.ndarray) -> str:
    """``"first"``, ``"last"`` or ``"cross-fit"``: what ``record`` means for this learner and
    data (module docstring)."""
    params = learner.get_params(deep=False)
    online = hasattr(learner, "partial_fit") and "n_epochs" in params
    splittable = _every_label_twice(y, labels)
    if record == "cross-fit" and not splittable:
        raise ParameterError(
            f"Calibrated: record='cross-fit' splits the training data in {CROSS_FIT_FOLDS} stratified "
            f"halves, so every label needs at least {CROSS_FIT_FOLDS} documents; add documents or use "
            "record='first'"
        )
    if record != "auto":
        return record
    if online and params["n_epochs"] == 1 and not auto_names(learner):
        return "first"
    if splittable:
        return "cross-fit"
    if online:
        return "first"
    raise ParameterError(
        f"Calibrated: {type(learner).__name__} learns in one batch, so its scores can only be "
        f"calibrated by cross-fitting, which needs at least {CROSS_FIT_FOLDS} documents of every "
        "label; add documents or use the learner's own probabilities"
    )


def recorded_chunks(n: int, chunk_size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of the chunks a recorded pass over ``n`` documents learns: 1, 1, 2, 4,
    ... documents, doubling up to ``chunk_size``, then ``chunk_size`` at a time.

    Why the doubling start: a chunk is scored by the model before it, and the model before the
    first chunk has learned nothing (every score 0, no information for the temperature). With
    chunks of ``chunk_size`` from the start, a pass over fewer documents than that would
    record nothing at all; growing chunks lose only the first document, for a few more
    ``partial_fit`` calls (the model is the same: the online learners learn one document at a
    time within a chunk)."""
    chunks, start, size = [], 0, 1
    while start < n or not chunks:
        stop = min(n, start + size)
        chunks.append((start, stop))
        start = stop
        if len(chunks) > 1:
            size = min(2 * size, chunk_size)
    return chunks


def _every_label_twice(y, labels) -> bool:
    counts = np.bincount(np.searchsorted(labels, y), minlength=len(labels))
    return bool(counts.min() >= CROSS_FIT_FOLDS)
