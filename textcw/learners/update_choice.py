"""The multi-class update chosen by the training documents: top-1, or the k-best parallel update
where top-1 gets most first-pass documents wrong.

The parallel update (Crammer, Dredze and Kulesza, "Multi-class confidence weighted algorithms",
EMNLP 2009, section 5.2: ``k`` single-pair updates from the same start, averaged with weights
``1/k``; ``multiclass="par"``) against the top-1 update (section 5.1) on many classes of short
text (docs/quality.md "Which multi-class update"):

- Where top-1 gets most first-pass documents wrong (python-docstrings, wordnet-glosses,
  wordnet-examples, synthetic text), ``k = 5`` gained 0.1-2.6 points in 14 of 16 rows (four
  Gaussian learners on each; the two losses: -0.2 and -0.7, on python-docstrings). Many labels
  violate the margin there, and the parallel update corrects several of them together.
- Where top-1 is right on most documents (five tasks of 19-38 classes), it lost in 14 of 20
  rows, up to 1.5 points. Usually only the top competitor matters there.
- Neither self-tuning's online error nor held-out halves chose between the two reliably. So the
  rule reads the difficulty, not the comparison.

**The rule** (:func:`with_chosen_update`), applied by ``textcw train`` and
``make_pipeline(..., train_defaults=True)`` where neither ``multiclass`` nor ``k`` is given:

- on short documents (the intercept's gate, ``short_documents``) with at least 3 labels,
- one probe, AROW with ``r = 1`` (the n-gram choice's), makes one seeded pass and counts its
  mistakes before each update (progressive validation);
- if it got more than :data:`HARD_ERROR` of the documents wrong, a Gaussian learner with the
  ``multiclass`` parameter gets ``multiclass="par"`` and ``k = min(PARALLEL_K, K - 1)``.

The threshold was read off those tasks and then tested on two built afterwards: on
locale-domains (probe error above 0.5) the parallel update gained 0.8-1.2 points for all four
learners; on python-stdlib (0.40) the rule keeps top-1, where ``k = 5`` would have gained 0.4-0.8.

Weighted examples, ``average=True``, a 32-bit state and a variant's own step kernels (a
plugin's) need the top-1 update, so a learner with any of them keeps it: the learner's own
checks decide (:func:`_accepts`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from textcw.errors import ParameterError
from textcw.learners.ngram_choice import probe_mistakes

# A first-pass error rate above this marks the documents as hard for top-1 (module docstring).
HARD_ERROR = 0.5
# Competitors of the parallel update: on the study's hard tasks k = 5 was ahead of k = 3 in 10
# of 16 rows (2 ties).
PARALLEL_K = 5


def _accepts(candidate, n_labels: int) -> bool:
    """Whether the learner takes ``candidate``'s update for ``n_labels`` labels, by its own checks:
    weights, ``average=True``, a 32-bit state and a variant's own step kernels need top-1."""
    try:
        candidate.validate_params()
        candidate.check_classes(n_labels)
        if getattr(candidate, "class_weight", None) is not None:
            candidate.check_weight_support(False)
    except ParameterError:
        return False
    return True


def probe_error(X, y) -> float:
    """The share of documents the probe of :mod:`.ngram_choice` gets wrong in its one pass."""
    return probe_mistakes(X, y) / max(X.shape[0], 1)


def with_chosen_update(learner, X, y, short: bool):
    """``learner``, or a copy of it with the parallel update where the rule of the module
    docstring chooses it for training rows ``X`` and labels ``y``."""
    if not short or not hasattr(learner, "margin_variance"):
        return learner
    params = learner.get_params(deep=False)
    if params.get("multiclass") != "top1" or params.get("k") is not None:  # none to choose, or given
        return learner
    labels = np.asarray(y)
    n_labels = len(set(labels.tolist())) if labels.ndim == 1 else 0  # labels of any type, unsorted
    if n_labels < 3:
        return learner
    candidate = clone(learner).set_params(multiclass="par", k=min(PARALLEL_K, n_labels - 1))
    if not _accepts(candidate, n_labels) or probe_error(X, labels) <= HARD_ERROR:
        return learner
    return candidate
