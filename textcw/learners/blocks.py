"""Several ``partial_fit`` calls in one: :meth:`OnlineLinearClassifier.partial_fit_each`.

An online learner's epoch kernel updates the state arrays in place and visits the rows its
``order`` names, so running it over consecutive stretches of rows is the same pass as running
it over all of them (the update of each example depends only on the state the examples before
it left; ICML 2008 "Confidence-Weighted Linear Classification", Algorithm 1). A stream of small
``partial_fit`` calls, e.g. a service learning one short request at a time, can therefore be
applied as one call over the stacked rows: the input, labels, parameters and state are checked
once, and the learner's own ``_run_epoch`` runs once per block, which appends each block's
mistakes and updates (and a Gaussian learner's per-call counters) exactly as its own call
would have. Per-call cost is then the kernel's binding and a few array views, not the checks.
"""

from __future__ import annotations

import numpy as np

from textcw.errors import InputError
from textcw.learners import autotune
from textcw.learners.inputs import check_features, check_targets, unknown_labels
from textcw.learners.protocol import warn_if_no_updates


def block_bounds(sizes, n_rows: int) -> np.ndarray:
    """``[0, sizes[0], sizes[0] + sizes[1], ..., n_rows]``: where each block starts and the
    last one ends; ``sizes=None`` is one row per block."""
    if sizes is None:
        return np.arange(n_rows + 1, dtype=np.int64)
    array = np.asarray(sizes)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu" or not np.all(array >= 1):
        shown = repr(sizes)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise InputError(f"sizes must be a non-empty list of whole numbers >= 1, the rows of each block "
                         f"in order; got {shown}")
    if int(array.sum()) != n_rows:
        raise InputError(f"sizes add up to {int(array.sum())} rows but X has {n_rows}; give one size per "
                         "block, adding up to the rows of X")
    return np.concatenate(([0], np.cumsum(array, dtype=np.int64)))


def partial_fit_each(learner, X, y, sizes, sample_weight, *, one_call: bool):
    """``learner.partial_fit(X[a:b], y[a:b])`` for each block of ``sizes`` rows, in order, bit
    for bit; the checks once. ``one_call``: the learner's ``partial_fit`` is the base class's,
    so that its blocks can share one call's checks. A learner that is not fitted, tunes
    ``"auto"`` parameters still, or has its own ``partial_fit`` gets one call per block."""
    if ("classes_" not in learner.__dict__ or not one_call
            or (autotune.auto_names(learner) and "_tuner" in learner.__dict__)):
        return _call_per_block(learner, X, y, sizes, sample_weight)
    learner.validate_params()
    learner._check_state_params("continued by partial_fit")
    X, y, labels = learner._check_training_input(X, y, reset=False, min_classes=1)
    bounds = block_bounds(sizes, X.shape[0])
    classes = learner.classes_
    unknown = unknown_labels(labels, classes)
    if unknown.size:
        raise InputError(f"labels {unknown.tolist()} are not among the declared classes {classes.tolist()}; "
                         "declare every label in classes= on the first partial_fit call")
    learner.check_classes(len(classes))
    weights = learner._example_weights(sample_weight, y, classes, partial=True)
    if weights is not None:
        # partial_fit refuses a call whose weights are all zero, so each block is held to that
        empty = np.flatnonzero(np.add.reduceat(weights > 0, bounds[:-1]) == 0)
        if empty.size:
            first = int(empty[0])
            raise InputError(f"every sample weight of block {first} (rows {bounds[first]} to "
                             f"{bounds[first + 1] - 1}) is zero: give each block at least one document "
                             "with a positive weight")
    yk = learner._encode(y)
    learner.__dict__["_epoch_weights"] = weights
    # the state was checked against this X and yk for the first block: LearnerState._kernel_state
    # rechecks only what a block changes (its rows), while the arrays are the ones it checked
    learner.__dict__["_blocks_of"] = (X, yk, [])
    try:
        for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            learner._run_epoch(X, yk, np.arange(start, stop, dtype=np.int64))
            if learner.mistakes_[-1] and not learner.n_updates_[-1]:
                warn_if_no_updates(learner, X[start:stop])  # the warning the block's own call gives
    finally:
        learner.__dict__.pop("_epoch_weights", None)
        learner.__dict__.pop("_blocks_of", None)
    return learner


def _call_per_block(learner, X, y, sizes, sample_weight):
    """One ``partial_fit`` call per block (its first call needs ``classes=``, which
    ``partial_fit`` asks for)."""
    fitted = "classes_" in learner.__dict__
    X = check_features(X, int(learner.n_features_in_) if fitted else None, estimator=type(learner).__name__)
    y = check_targets(y, X.shape[0], estimator=type(learner).__name__)
    bounds = block_bounds(sizes, X.shape[0])
    weights = None if sample_weight is None else np.asarray(sample_weight)
    if weights is not None and weights.shape != (X.shape[0],):
        raise InputError(f"sample_weight has shape {weights.shape}; it needs one weight per document, "
                         f"shape ({X.shape[0]},)")
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        learner.partial_fit(X[start:stop], y[start:stop],
                            sample_weight=None if weights is None else weights[start:stop])
    return learner
