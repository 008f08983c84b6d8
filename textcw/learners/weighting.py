"""Example weights: ``sample_weight`` and ``class_weight`` turned into one weight per document.

A weight ``s`` multiplies the document's term of the learner's objective; docs/algorithms.md
"Weighted examples" derives what that does to each update rule (the perceptron's step and SGD's
gradient scale by ``s``, PA-I/PA-II and SCW take ``C -> s C``, AROW ``r -> r / s``) and which
rules have no weighted form (plain PA and CW, whose hard constraints have no term to weight).
"""

from __future__ import annotations

import numbers

import numpy as np

from textcw.errors import InputError, ParameterError

# The largest example weight: weights scale C (PA-I, SCW), divide r (AROW) and scale steps, and
# these stay finite for parameters within their own bounds (params.SCALE: 1e-100..1e100).
SAMPLE_WEIGHT_MAX = 1e100


def example_weights(learner, sample_weight, y, labels, *, partial: bool):
    """``sample_weight`` times the ``class_weight`` of each document's label, as a float64
    array of ``len(y)``; ``None`` when neither is given. Bad weights are an
    :class:`~textcw.errors.InputError`, a bad ``class_weight`` a
    :class:`~textcw.errors.ParameterError`."""
    n = len(y)
    weights = None
    if sample_weight is not None:
        try:
            weights = np.array(sample_weight, dtype=np.float64, copy=True)
        except (TypeError, ValueError):
            raise InputError("sample_weight must be an array of numbers, one per document") from None
        if weights.ndim != 1 or weights.shape[0] != n:
            raise InputError(f"sample_weight has shape {weights.shape}; it needs one weight per "
                             f"document, shape ({n},)")
        if not (np.all(np.isfinite(weights)) and np.all(weights >= 0)
                and np.all(weights <= SAMPLE_WEIGHT_MAX)):
            raise InputError(f"sample_weight must hold finite numbers in [0, {SAMPLE_WEIGHT_MAX:g}] "
                             "(a weight of 0 skips the document)")
    class_weight = getattr(learner, "class_weight", None)
    if class_weight is not None:
        per_label = class_weight_values(type(learner).__name__, class_weight, y, labels, partial)
        factors = per_label[np.searchsorted(labels, y)]
        weights = factors if weights is None else weights * factors
    if weights is not None and n:
        kept = np.unique(np.asarray(y)[weights > 0])
        if kept.size == 0:
            raise InputError("every sample weight is zero: give at least one document a positive weight")
        if kept.size < 2 and not partial:
            raise InputError(f"the documents with a positive weight all have the class {kept[0]!r}; "
                             "fit needs positive weights on documents of at least two classes")
    return weights


def class_weight_values(name, class_weight, y, labels, partial: bool) -> np.ndarray:
    """The weight of each label of ``labels`` (sorted): scikit-learn's ``"balanced"``
    (``n_samples / (n_classes * count(label))``, from ``y``) or a ``{label: weight}`` dict
    (labels it leaves out weigh 1)."""
    if isinstance(class_weight, str) and class_weight == "balanced":
        if partial:
            raise ParameterError(
                f"{name}: class_weight='balanced' needs the class counts of the whole training "
                "set, which partial_fit does not see; pass class_weight as a dict {label: weight} "
                "(e.g. n_samples / (n_classes * count(label)) from your own counts), or use fit")
        counts = np.array([np.count_nonzero(y == label) for label in labels], dtype=np.float64)
        with np.errstate(divide="ignore"):
            # a declared class absent from y gets weight inf but no document carries it
            return np.where(counts > 0, len(y) / (len(labels) * np.maximum(counts, 1.0)), 1.0)
    if isinstance(class_weight, dict):
        values = np.ones(len(labels))
        for label, value in class_weight.items():
            where = [k for k, known in enumerate(labels.tolist()) if known == label]
            if not where:
                raise ParameterError(f"{name}: class_weight names the label {label!r}, which is not "
                                     f"among the classes {labels.tolist()}")
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not (0.0 <= float(value) <= SAMPLE_WEIGHT_MAX)):
                raise ParameterError(f"{name}: class_weight[{label!r}] = {value!r}; it must be a "
                                     f"number in [0, {SAMPLE_WEIGHT_MAX:g}]")
            values[where] = float(value)
        return values
    raise ParameterError(f"{name}: class_weight={class_weight!r}; use None, 'balanced' or a dict "
                         "{label: weight}")


class _ClassWeight:
    """The ``class_weight`` constraint: ``None``, ``"balanced"`` or a ``{label: weight}`` dict
    (its entries are checked against the classes at fit time)."""

    def contains(self, value) -> bool:
        return value is None or (isinstance(value, str) and value == "balanced") or isinstance(value, dict)

    def describe(self) -> str:
        return "None, 'balanced' or a dict {label: weight}"


CLASS_WEIGHT = _ClassWeight()
# The class_weight parameter's constraint.
CONSTRAINTS = {"class_weight": CLASS_WEIGHT}
