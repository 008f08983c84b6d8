"""The classification metrics ``textcw train`` and ``textcw evaluate`` report.

From the predicted labels: accuracy, macro-averaged F1 and per-class precision, recall, F1 and
support (``sklearn.metrics``); for a multi-label task (0/1 indicator rows), micro- and
macro-averaged F1, Hamming loss and subset accuracy (:func:`multilabel_metrics`). From the label
probabilities of a learner with ``predict_proba``:

- the **log-loss** ``-(1/m) sum_i log P(y_i | x_i)`` (``sklearn.metrics.log_loss``, which clips
  probabilities away from 0 and 1, so a zero on the true label gives a large finite value);
- the **Brier score**: for two classes the usual ``(1/m) sum_i (P(positive | x_i) - [y_i =
  positive])^2``, for more the mean over documents of the squared distance between the
  probability vector and the one-hot label (the convention of ``sklearn.metrics.brier_score_loss``);
- the **expected calibration error** over 10 equal-width bins of the probability of the predicted
  label (:func:`probability_bin_stats`, the bins :mod:`textcw.evaluation.calibration` reports;
  EMNLP 2009, section 7).

Probabilities can be added chunk by chunk (:class:`ProbabilityScores`), so that scoring a test
split read in chunks keeps only a few numbers per document, never the probability matrix.

The module sits below :mod:`textcw.pipeline` (whose ``train`` reports these metrics) and depends
on nothing of textcw but its errors; :mod:`textcw.evaluation.metrics` re-exports it.

Why the single-label counts and the log-loss are computed here rather than by ``sklearn.metrics``
(with its formulas: ``2 TP / (true + predicted)`` for F1, zero where a denominator is zero,
probabilities clipped to ``[eps, 1 - eps]``; the tests hold them equal to scikit-learn's, bit for
bit): importing ``sklearn.metrics`` imports ``scipy.stats`` (its ranking metrics take
``rankdata``), about 0.4 s of a warm ``textcw train`` of 20 Newsgroups (3.8-4.1 s) and a larger
share of a short one, for counts numpy makes in microseconds. The multi-label metrics, used
where that time is small beside the rest, are still ``sklearn.metrics``'.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from textcw.errors import InputError

__all__ = ["BINS", "ProbabilityScores", "classification_metrics", "expected_calibration_error",
           "label_metrics", "multilabel_metrics", "probability_bin_stats", "untested_metrics"]

BINS = 10


def probability_bin_stats(confidence, correct, bins: int = BINS) -> list[dict]:
    """Documents binned by the probability of their predicted label, ``bins`` equal-width bins
    of ``[0, 1]`` (the last one closed): per bin ``low``, ``high``, ``count``, ``mistakes``,
    ``accuracy`` and ``mean_probability`` (None for an empty bin) and ``error_share``
    (``mistakes / n``: the bins' shares add up to the error; EMNLP 2009 Figure 2)."""
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    n = confidence.shape[0]
    which = np.clip(np.floor(confidence * bins).astype(int), 0, bins - 1)
    out = []
    for b in range(bins):
        inside = which == b
        count = int(inside.sum())
        mistakes = int((~correct[inside]).sum())
        out.append({
            "low": b / bins, "high": (b + 1) / bins, "count": count, "mistakes": mistakes,
            "accuracy": None if count == 0 else 1.0 - mistakes / count,
            "mean_probability": None if count == 0 else float(confidence[inside].mean()),
            "error_share": mistakes / n if n else 0.0,
        })
    return out


def expected_calibration_error(confidence, correct, bins: int = BINS) -> float:
    """``sum_b (n_b / m) |accuracy_b - mean probability_b|`` over the equal-width bins of
    :func:`probability_bin_stats`: how far, on average over the documents, the probability of
    the predicted label is from how often it is right."""
    n = len(confidence)
    return float(sum(b["count"] / n * abs(b["accuracy"] - b["mean_probability"])
                     for b in probability_bin_stats(confidence, correct, bins) if b["count"]))


def _plain(label):
    return label.item() if isinstance(label, np.generic) else label


def label_metrics(y_true, y_pred, classes=None) -> dict:
    """Accuracy, macro-F1 and per-class precision/recall/F1/support from predicted labels.

    ``per_class`` lists ``classes`` (default: the labels in ``y_true`` or ``y_pred``) and any
    test label outside them, keyed by the label as text; a class never predicted has precision
    0 and a class absent from the test labels recall 0 (support 0). ``macro_f1`` averages the
    labels that occur in ``y_true`` or ``y_pred``, so a training class absent from the test
    split and never predicted does not count as a zero.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim == 2:  # 0/1 indicator rows: a multi-label task
        return multilabel_metrics(y_true, y_pred, classes)
    if y_true.ndim != 1 or y_true.shape != y_pred.shape:
        raise InputError(f"{y_true.shape[0] if y_true.ndim else 0} true labels and "
                         f"{y_pred.shape[0] if y_pred.ndim else 0} predictions: give one prediction per document")
    if y_true.shape[0] == 0:
        raise InputError("no test documents to score")
    seen = np.unique(np.concatenate([y_true, y_pred]))
    labels = seen if classes is None else np.asarray(classes)
    extra = np.setdiff1d(seen, labels)
    labels = np.concatenate([labels, extra]) if extra.size else labels
    precision, recall, f1, support = _label_scores(y_true, y_pred, labels)
    in_seen = np.isin(labels, seen)
    order = np.argsort(labels[in_seen], kind="stable")  # the seen labels in sorted order
    return {
        "accuracy": float(np.mean(y_true == y_pred)),
        "macro_f1": float(np.mean(f1[in_seen][order])),
        "per_class": {
            str(_plain(label)): {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
            for label, p, r, f, s in zip(labels, precision, recall, f1, support)
        },
    }


def _label_scores(y_true: np.ndarray, y_pred: np.ndarray, labels: np.ndarray):
    """Precision, recall, F1 and support of each of ``labels`` (which hold every label of
    ``y_true`` and ``y_pred``), as ``sklearn.metrics.precision_recall_fscore_support(...,
    labels=labels, zero_division=0)`` computes them: ``TP / predicted``, ``TP / true`` and
    ``2 TP / (true + predicted)``, 0 where the denominator is 0."""
    order = np.argsort(labels, kind="stable")
    true_at = order[np.searchsorted(labels[order], y_true)]
    pred_at = order[np.searchsorted(labels[order], y_pred)]
    n = labels.shape[0]
    tp = np.bincount(true_at[y_true == y_pred], minlength=n).astype(np.float64)
    true_sum = np.bincount(true_at, minlength=n)
    pred_sum = np.bincount(pred_at, minlength=n).astype(np.float64)

    def divide(numerator, denominator):
        return np.divide(numerator, denominator, out=np.zeros(n), where=denominator != 0)

    f1 = divide(2.0 * tp, 1.0 * true_sum + pred_sum)
    return divide(tp, pred_sum), divide(tp, true_sum.astype(np.float64)), f1, true_sum


def multilabel_metrics(y_true, y_pred, classes=None) -> dict:
    """The multi-label metrics of ``(n, K)`` 0/1 indicator matrices (one column per label).

    - ``micro_f1``: F1 of the pooled document-label decisions, ``2 TP / (2 TP + FP + FN)`` summed
      over the labels;
    - ``macro_f1``: the mean of the labels' F1, over the labels that occur in ``y_true`` or
      ``y_pred`` (as :func:`label_metrics`; on Reuters ModApte every one of the 90 does);
    - ``hamming_loss``: the share of document-label decisions that are wrong;
    - ``subset_accuracy`` (also ``accuracy``): the share of documents whose label set is exactly
      right;
    - ``per_class``: precision, recall, F1 and support of each label, keyed by ``classes``
      (default ``0 .. K-1``) as text.

    The definitions of Yang and Liu, "A re-examination of text categorization methods", SIGIR
    1999, section 3 (micro- and macro-averaged F1), computed by ``sklearn.metrics``.
    """
    from sklearn.metrics import f1_score, hamming_loss, precision_recall_fscore_support

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim != 2 or y_true.shape != y_pred.shape:
        raise InputError(f"true label rows of shape {y_true.shape} and predicted rows of shape {y_pred.shape}: "
                         "give one 0/1 row per document, one column per label, for both")
    if y_true.shape[0] == 0:
        raise InputError("no test documents to score")
    if not (np.isin(y_true, (0, 1)).all() and np.isin(y_pred, (0, 1)).all()):
        raise InputError("multi-label rows must be 0/1 indicator rows (1 where a document has the label)")
    y_true, y_pred = y_true.astype(np.int8), y_pred.astype(np.int8)
    names = np.arange(y_true.shape[1]) if classes is None else np.asarray(classes)
    if names.shape != (y_true.shape[1],):
        raise InputError(f"{names.shape[0]} label names for {y_true.shape[1]} columns; give one name per column")
    precision, recall, f1, support = precision_recall_fscore_support(y_true, y_pred, average=None, zero_division=0)
    present = (y_true.sum(axis=0) + y_pred.sum(axis=0)) > 0
    subset = float(np.mean((y_true == y_pred).all(axis=1)))
    return {
        "accuracy": subset,
        "subset_accuracy": subset,
        "micro_f1": float(f1_score(y_true, y_pred, average="micro", zero_division=0)),
        "macro_f1": float(f1[present].mean()) if present.any() else 0.0,
        "hamming_loss": float(hamming_loss(y_true, y_pred)),
        "per_class": {
            str(_plain(label)): {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
            for label, p, r, f, s in zip(names, precision, recall, f1, support)
        },
    }


class ProbabilityScores:
    """Log-loss, Brier score and expected calibration error, accumulated chunk by chunk.

    ``proba`` has one column per entry of ``classes`` (a model's ``classes_``), in that order. A
    true label outside ``classes`` has probability 0 (a clipped log-loss term); a predicted
    label must be one of ``classes``.
    """

    def __init__(self, classes, bins: int = BINS):
        self.classes = np.asarray(classes)
        if self.classes.ndim != 1 or self.classes.shape[0] < 2:
            raise InputError(f"probabilities need at least 2 classes; got {self.classes.shape[0]}")
        self.bins = bins
        self.n = 0
        self._log_loss = 0.0
        self._brier = 0.0
        self._confidence: list[np.ndarray] = []
        self._correct: list[np.ndarray] = []
        self._unseen = False  # a test label outside classes: no longer a two-class problem

    def add(self, y_true, y_pred, proba) -> None:
        y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
        proba = np.asarray(proba, dtype=float)
        k = self.classes.shape[0]
        if proba.ndim != 2 or proba.shape != (y_true.shape[0], k) or y_pred.shape != y_true.shape:
            raise InputError(f"probabilities of shape {proba.shape} do not match {y_true.shape[0]} "
                             f"documents and {k} classes")
        if y_true.shape[0] == 0:
            return
        # Test labels the model never saw get a column of zeros, so their documents count with
        # a (clipped) zero probability instead of making sklearn refuse the whole split.
        extra = np.setdiff1d(y_true, self.classes)
        labels = np.concatenate([self.classes, extra]) if extra.size else self.classes
        self._unseen = self._unseen or bool(extra.size)
        full = np.hstack([proba, np.zeros((proba.shape[0], extra.size))]) if extra.size else proba
        if full.min() < 0 or full.max() > 1:
            raise InputError("probabilities must lie between 0 and 1")
        onehot = (y_true[:, None] == labels[None, :]).astype(float)
        # sklearn.metrics.log_loss's sum of -log P(true label), P clipped to [eps, 1 - eps]
        eps = np.finfo(full.dtype).eps
        self._log_loss += float(np.sum(-xlogy(1.0, np.clip(full[onehot > 0], eps, 1 - eps))))
        squared = ((full - onehot) ** 2).sum(axis=1)
        self._brier += float(squared.sum())
        column = _columns(self.classes, y_pred)
        self._confidence.append(proba[np.arange(proba.shape[0]), column])
        self._correct.append(y_pred == y_true)
        self.n += int(y_true.shape[0])

    def result(self) -> dict:
        """``{"log_loss", "brier_score", "expected_calibration_error"}`` over all documents added."""
        if self.n == 0:
            raise InputError("no test documents to score")
        # sklearn's binary Brier score is half the squared distance of the two-column vectors
        binary = self.classes.shape[0] == 2 and not self._unseen
        brier = self._brier / self.n / (2.0 if binary else 1.0)
        return {
            "log_loss": self._log_loss / self.n,
            "brier_score": brier,
            "expected_calibration_error": expected_calibration_error(
                np.concatenate(self._confidence), np.concatenate(self._correct), self.bins),
        }


def _columns(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    order = np.argsort(classes)
    found = np.clip(np.searchsorted(classes[order], labels), 0, classes.shape[0] - 1)
    index = order[found]
    if not np.array_equal(classes[index], labels):
        raise InputError("predicted labels must be among the model's classes")
    return index


def untested_metrics() -> dict:
    """The keys of :func:`classification_metrics`, each ``None``: a model trained on every row of
    a corpus without a test split (a table's ``test=0``) was measured on nothing."""
    return {"accuracy": None, "macro_f1": None, "per_class": None, "log_loss": None, "brier_score": None,
            "expected_calibration_error": None}


def classification_metrics(y_true, y_pred, proba=None, classes=None) -> dict:
    """Every metric of this module, as JSON-able values.

    Keys: ``accuracy``, ``macro_f1``, ``per_class`` (see :func:`label_metrics`) and
    ``log_loss``, ``brier_score``, ``expected_calibration_error`` (None without ``proba``).
    ``proba`` needs ``classes``, the label of each of its columns.
    """
    out = label_metrics(y_true, y_pred, classes)
    if proba is None:
        out.update(log_loss=None, brier_score=None, expected_calibration_error=None)
        return out
    if classes is None:
        raise InputError("probabilities need classes: the label of each column (the model's classes_)")
    scores = ProbabilityScores(classes)
    scores.add(y_true, y_pred, proba)
    out.update(scores.result())
    return out
