"""Why a model chose a label (:func:`explain`) and its best ``k`` labels (:func:`top_k`).

A linear learner scores label ``k`` of a document ``x`` as ``s_k = w_k . x + b_k``, so the
difference between the predicted label ``y`` and the runner-up ``r`` splits exactly into one
term per feature of the document plus the intercepts::

    s_y - s_r = sum_j x_j (w_yj - w_rj) + (b_y - b_r)

With two labels there is one weight vector and the score ``s`` is compared with the threshold
0: the predicted label's margin is ``+s`` (``classes_[1]``) or ``-s`` (``classes_[0]``), and the
terms are ``+-x_j w_j``. A positive term pushed the document towards the predicted label.

The Gaussian learners (CW var and stdev, AROW, SCW) keep a distribution ``w ~ N(mu, Sigma)``
over weight vectors (Dredze, Crammer and Pereira, "Confidence-Weighted Linear Classification",
ICML 2008, section 3: the margin of a document is then Gaussian, with mean ``mu . x`` and
variance ``x' Sigma x``; the constraint of eq. 3, ``Pr[y w.x >= 0] >= eta``, is stated under that
distribution). The explanation uses the mean ``mu`` (``coef_``) as the weights, and gives every
term its standard deviation under the distribution. One term ``x_j w_j`` has variance
``x_j^2 Sigma_jj`` (the marginal of one weight, whatever the covariance form), so

    binary:       sd_j = |x_j| sqrt(Sigma_jj)
    multi-class:  sd_j = |x_j| sqrt(Sigma_jj,y + Sigma_jj,r)

since each label has its own covariance block and the blocks are independent (the label
scores are independent Gaussians: docs/algorithms.md "Label probabilities"), so the variance of
``w_yj - w_rj`` is the sum of the two variances (``sigma_``, the diagonal of each block). The
standard deviation of the whole difference is ``sqrt(x' Sigma_y x + x' Sigma_r x)``
(``margin_variance``; the intercept's variance included); with a diagonal covariance its
square is the sum of the terms' squared deviations, with a full one it also holds the
covariances between weights.

The scores explained are the learner's own ``decision_function``, also for a calibrated model
(:class:`~textcw.learners.calibrated_pipeline.CalibratedPipeline`), whose probabilities are a
temperature-scaled function of those same scores. The terms and the intercept add up to the
score difference to within rounding (checked on every call: a learner whose scores are not
``coef_ . x + intercept_``, such as the second-order perceptron's, is refused).

Features are named by the words of the document: each token of the featurizer's analyzer is
looked up in its vocabulary, or hashed as the ``hashing`` featurizer hashes it, so a hashed
column shows the words of this document that fell into it, never a bucket number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from textcw.errors import InputError, ParameterError
from textcw.learners.unknown_documents import no_known_feature
from textcw.untrusted import safe_text

__all__ = ["Explanation", "Term", "TopK", "class_scores", "explain", "explain_features", "feature_words",
           "format_explanation", "format_top", "linear_weights", "pipeline_parts", "top_k", "transform_docs",
           "with_words"]

WORD_CHARS = 60  # a word (or bucket of words) is shown cut to this many characters


# ----------------------------------------------------------------------------------- top k
@dataclass(frozen=True)
class TopK:
    """The ``k`` best labels of each document, best first.

    ``labels`` and ``scores`` have shape ``(n, k)``: the labels ranked by decision score (so the
    first is ``predict``'s label) and their scores (for two labels, ``s`` for ``classes_[1]``
    and ``-s`` for ``classes_[0]``); ``probabilities`` is ``(n, k)``, each label's
    ``predict_proba``, or ``None`` for a model without probabilities.
    """

    labels: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray | None


def class_scores(scores, n_classes: int) -> np.ndarray:
    """Decision scores as ``(n, n_classes)``: a binary learner's single column ``s`` is the score
    of ``classes_[1]`` and ``-s`` that of ``classes_[0]`` (as :class:`textcw.evaluation.contract.Fold`)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1 or (n_classes == 2 and scores.shape[1] == 1):
        s = scores.reshape(-1)
        return np.column_stack([-s, s])
    return scores


def check_k(k, n_classes: int, what: str = "k") -> int:
    """``k`` as an int from 1 to ``n_classes``, or a :class:`ParameterError` (a usage error)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n_classes:
        raise ParameterError(f"{what} {k!r} is invalid: this model has {n_classes} labels; give {what} "
                             f"from 1 to {n_classes}")
    return int(k)


def top_k(model, docs, k: int) -> TopK:
    """The ``k`` labels of each of ``docs`` with the highest decision scores, with their
    probabilities (``predict_proba``, when the model has it).

    Labels are ranked by score, ties by the order of ``classes_``, so the first is always
    ``predict``'s label; with a calibrated model (the default of ``textcw train``) by
    probability, which keeps that order but for a document with no known feature, whose label
    is the calibration's. A model with the Gaussian learners' own multi-class
    probabilities (``probability="raw"``) can rank a label higher by probability than by score
    (docs/guide/probabilities.md). ``k`` must be from 1 to the number of labels
    (:class:`~textcw.errors.ParameterError` otherwise).
    """
    classes = np.asarray(model.classes_)
    k = check_k(k, len(classes))
    docs = list(docs)
    proba = np.asarray(model.predict_proba(docs), dtype=np.float64) if hasattr(model, "predict_proba") else None
    if hasattr(model, "decision_function"):
        scores = class_scores(model.decision_function(docs), len(classes))
    elif proba is not None:
        scores = proba
    else:
        raise InputError(f"a {type(model).__name__} has neither decision_function nor predict_proba, so its "
                         "labels cannot be ranked")
    if proba is not None and getattr(model, "probability_calibration_", None) is not None:
        # calibrated: the probabilities keep the scores' order, but for a document with no
        # known feature, whose label is the calibration's (ties by score, then by classes_)
        order = np.lexsort((-scores, -proba), axis=1)[:, :k]
    else:
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    rows = np.arange(scores.shape[0])[:, None]
    return TopK(classes[order], scores[rows, order], None if proba is None else proba[rows, order])


def format_top(top: TopK, i: int) -> list[str]:
    """Document ``i`` of ``top`` as fields: ``label, probability`` per rank (the label alone
    without probabilities)."""
    fields = []
    for rank, label in enumerate(top.labels[i]):
        fields.append(str(label))
        if top.probabilities is not None:
            fields.append(f"{top.probabilities[i, rank]:.6f}")
    return fields


# ------------------------------------------------------------------------------ explanations
@dataclass(frozen=True)
class Term:
    """One feature of the document: its ``column``, the document's ``words`` that map to it
    (several for a hashed column; none for a feature the featurizer names otherwise), its
    value ``x_j``, its ``contribution`` to the margin and that contribution's standard
    deviation ``sd`` (``None`` for a learner without a distribution over weights)."""

    column: int
    words: tuple[str, ...]
    value: float
    contribution: float
    sd: float | None

    @property
    def name(self) -> str:
        return "/".join(self.words) if self.words else f"feature {self.column}"


@dataclass(frozen=True)
class Explanation:
    """Why ``label`` and not ``runner_up``.

    ``margin`` is the score difference ``decision_function`` gives (binary: the predicted
    label's score against the threshold 0, ``binary=True``); it equals ``sum(t.contribution for
    t in terms) + rest + intercept`` to within rounding. ``terms`` are the ``n`` features with
    the largest contributions in absolute value, largest first; ``rest`` is the sum of the
    other ``n_rest`` features' contributions. ``margin_sd`` and ``intercept_sd`` are standard
    deviations under the Gaussian learners' weight distribution (``None`` for other learners).
    ``unknown``: the document has no feature the model knows, and its label and runner-up are
    the calibration's two most probable for such a document, not the weights'
    (:mod:`textcw.learners.unknown_documents`); the margin is then the intercepts' difference.
    """

    label: object
    runner_up: object
    binary: bool
    margin: float
    intercept: float
    terms: tuple[Term, ...]
    rest: float
    n_rest: int
    margin_sd: float | None
    intercept_sd: float | None
    unknown: bool = False


def linear_weights(learner):
    """The estimator whose ``coef_`` and ``intercept_`` give ``learner``'s scores: the learner
    itself, or the model a wrapper holds (``best_estimator_`` of self-tuning, ``estimator_`` of
    ``Calibrated`` and the batch baselines). :class:`InputError` for a learner without weights."""
    seen = learner
    for _ in range(4):
        if hasattr(seen, "coef_") and hasattr(seen, "intercept_"):
            return seen
        inner = getattr(seen, "best_estimator_", None) if hasattr(seen, "best_index_") else None
        seen = inner if inner is not None else getattr(seen, "estimator_", None)
        if seen is None:
            break
    raise InputError(f"the learner {type(learner).__name__} keeps no weight per feature (coef_), so its "
                     "predictions cannot be split into words; explain a model of a linear learner "
                     "(cw-stdev, arow, pa1, maxent, ...)")


def pipeline_parts(model):
    """``(transformers, featurizer or None, learner)`` of a fitted pipeline."""
    from sklearn.pipeline import Pipeline

    if not isinstance(model, Pipeline) or len(model.steps) < 2:
        raise InputError(f"explanations need a fitted pipeline of a featurizer and a learner (textcw.load, "
                         f"textcw.make_pipeline); got a {type(model).__name__}")
    steps = [step for _, step in model.steps[:-1] if step is not None and step != "passthrough"]
    return steps, (steps[0] if len(steps) == 1 else None), model.steps[-1][1]


def transform_docs(steps, docs) -> sp.csr_matrix:
    """``docs`` through the transformers ``steps`` (:func:`pipeline_parts`), as CSR rows."""
    X = docs
    for step in steps:
        X = step.transform(X)
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64):
        X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    return X


def explain(model, doc: str, n: int | None = 10) -> Explanation:
    """The features of ``doc`` that moved ``model``'s prediction most (module docstring).

    ``model`` is a fitted pipeline (featurizer, then a linear learner); ``n`` is how many
    features to list (``None``: all of them). Term ``j`` contributes ``x_j (w_yj - w_rj)`` to
    the score difference of the predicted label ``y`` and the runner-up ``r`` (binary: ``+-x_j
    w_j`` to the margin over the threshold), with standard deviation ``|x_j| sqrt(Sigma_jj,y +
    Sigma_jj,r)`` (binary: ``|x_j| sqrt(Sigma_jj)``) under the Gaussian learners' ``N(mu,
    Sigma)`` (ICML 2008 section 3). The contributions, the ``rest`` and the intercept sum to the
    margin to within rounding; an :class:`InputError` says so for a learner whose scores are
    not linear in its weights.

    In three steps, for a caller that holds the model only while it reads the weights (the
    service): the document's features (the pipeline's transformers), :func:`explain_features`
    (the weights), then :func:`with_words` (the featurizer's tokens).
    """
    if not isinstance(doc, str):
        raise InputError(f"explain takes one document as text (str); got {type(doc).__name__}")
    steps, featurizer, _ = pipeline_parts(model)
    return with_words(explain_features(model, transform_docs(steps, [doc]), n), featurizer, doc)


def explain_features(model, X, n: int | None = 10) -> Explanation:
    """:func:`explain` of one document given as its feature row ``X`` (what the pipeline's
    transformers give; one row), its terms not yet named (:func:`with_words` names them)."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise ParameterError(f"n={n!r} is invalid; give how many words to list (0 or more), or None for all")
    _, _, learner = pipeline_parts(model)
    X = transform_docs([], X)
    if X.shape[0] != 1:
        raise InputError(f"explain_features takes one document's features (one row); got {X.shape[0]} rows")
    est = linear_weights(learner)
    coef = np.asarray(est.coef_, dtype=np.float64)
    intercept = np.asarray(est.intercept_, dtype=np.float64).reshape(-1)
    classes = np.asarray(learner.classes_)
    raw = np.asarray(learner.decision_function(X), dtype=np.float64).reshape(-1)
    cols, vals = X.indices.astype(np.int64), X.data
    binary = raw.shape[0] == 1
    unknown = getattr(getattr(model, "probability_calibration_", None), "unknown", None)
    unknown = unknown if unknown is not None and no_known_feature(X)[0] else None  # its label is the calibration's
    if binary:
        s = float(raw[0])
        positive = s > 0 if unknown is None else unknown[1] > unknown[0]  # predict: classes_[1] when s > 0
        sign = 1.0 if positive else -1.0
        top, other = (1, 0) if positive else (0, 1)
        delta, bias, margin = sign * coef[0, cols], sign * float(intercept[0]), sign * s
    else:
        # predict's argmax first, ties by classes_
        order = np.argsort(-(raw if unknown is None else np.asarray(unknown)), kind="stable")
        top, other = int(order[0]), int(order[1])
        delta = coef[top, cols] - coef[other, cols]
        bias, margin = float(intercept[top] - intercept[other]), float(raw[top] - raw[other])
    contributions = vals * delta
    total = float(contributions.sum()) + bias
    scale = 1.0 + float(np.abs(contributions).sum()) + abs(bias)
    if not abs(total - margin) <= 1e-9 * scale:
        raise InputError(f"the scores of {type(learner).__name__} are not coef_ . x + intercept_ (they differ by "
                         f"{abs(total - margin):.3g}), so they cannot be split into words")
    sds, margin_sd, intercept_sd = _deviations(est, X, cols, vals, None if binary else (top, other))
    ranked = np.lexsort((cols, -np.abs(contributions)))
    shown = ranked if n is None else ranked[:n]
    terms = tuple(Term(int(cols[i]), (), float(vals[i]), float(contributions[i]),
                       None if sds is None else float(sds[i])) for i in shown)
    hidden = ranked[len(shown):]
    return Explanation(classes[top], classes[other], binary, margin, bias, terms,
                       float(contributions[hidden].sum()), int(len(hidden)), margin_sd, intercept_sd,
                       unknown is not None)


def with_words(e: Explanation, featurizer, doc: str) -> Explanation:
    """``e`` with each term's ``words``: the tokens of ``doc`` that ``featurizer`` (the pipeline's
    only transformer; ``None`` names nothing) maps to its column (:func:`feature_words`)."""
    if featurizer is None or not e.terms:
        return e
    words = feature_words(featurizer, doc, [t.column for t in e.terms])
    return replace(e, terms=tuple(replace(t, words=words.get(t.column, ())) for t in e.terms))


def _deviations(est, X, cols, vals, pair):
    """Per-term standard deviations, the margin's and the intercept's (module docstring), or
    ``(None, None, None)`` for a learner without a distribution over weights."""
    if not (hasattr(est, "sigma_") and hasattr(est, "margin_variance")):
        return None, None, None
    sigma = np.asarray(est.sigma_, dtype=np.float64)
    whole = np.asarray(est.margin_variance(X), dtype=np.float64).reshape(-1)
    alone = np.asarray(est.margin_variance(sp.csr_matrix(X.shape, dtype=np.float64)), dtype=np.float64).reshape(-1)
    if pair is None:
        var, margin_var, intercept_var = sigma[0, cols], whole[0], alone[0]
    else:
        y, r = pair
        var = sigma[y, cols] + sigma[r, cols]
        margin_var, intercept_var = whole[y] + whole[r], alone[y] + alone[r]
    return np.abs(vals) * np.sqrt(var), float(np.sqrt(margin_var)), float(np.sqrt(intercept_var))


def feature_words(featurizer, doc: str, columns) -> dict[int, tuple[str, ...]]:
    """``{column: words}``: the tokens of ``doc`` (the featurizer's analyzer, n-grams included)
    that map to each of ``columns``, in the document's order. A vocabulary featurizer looks each
    token up in ``vocabulary_``; a hashing one hashes each token as its ``transform`` does (so a
    column shows every word of the document that fell in it); another featurizer with an
    analyzer featurizes each token alone. A column no token maps to is left out."""
    wanted = {int(c) for c in columns}
    analyzer = getattr(featurizer, "build_analyzer", None)
    if analyzer is None or not wanted:
        return {}
    tokens = list(dict.fromkeys(analyzer()(doc)))
    if not tokens:
        return {}
    found: dict[int, list[str]] = {}
    vocabulary = getattr(featurizer, "vocabulary_", None)
    if isinstance(vocabulary, dict):
        hits = ((token, vocabulary.get(token)) for token in tokens)
        pairs = [(token, int(c)) for token, c in hits if c is not None]
    else:
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.feature_extraction.text import HashingVectorizer

        if isinstance(featurizer, HashingVectorizer):
            hasher = FeatureHasher(n_features=featurizer.n_features, input_type="string",
                                   alternate_sign=featurizer.alternate_sign)
            H = hasher.transform([[token] for token in tokens]).tocsr()
        else:
            H = sp.csr_matrix(featurizer.transform(tokens))
        pairs = [(token, int(c)) for i, token in enumerate(tokens)
                 for c in H.indices[H.indptr[i]:H.indptr[i + 1]]]
    for token, column in pairs:
        if column in wanted:
            found.setdefault(column, []).append(token)
    return {column: tuple(words) for column, words in found.items()}


def format_explanation(e: Explanation, indent: str = "  ") -> list[str]:
    """``e`` as lines of text: a heading with the margin, then one line per term
    (``contribution  sd  words``), the other words together, and the intercept; words are
    escaped and cut for printing (:func:`textcw.untrusted.safe_text`)."""

    def sd(value):
        return "" if value is None else f"  sd {value:.4f}"

    what = "margin over the threshold 0" if e.binary else "score difference"
    lines = [f"{indent}why {safe_text(e.label)}, not {safe_text(e.runner_up)}: {what} {e.margin:+.4f}"
             f"{sd(e.margin_sd)}"]
    for t in e.terms:
        lines.append(f"{indent}  {t.contribution:+9.4f}{sd(t.sd)}  {safe_text(t.name, limit=WORD_CHARS)}")
    if e.n_rest:
        lines.append(f"{indent}  {e.rest:+9.4f}  ({e.n_rest} other word{'s' if e.n_rest != 1 else ''})")
    if e.intercept != 0.0:
        lines.append(f"{indent}  {e.intercept:+9.4f}{sd(e.intercept_sd)}  (intercept)")
    if e.unknown:
        lines.append(f"{indent}  no word the model knows: the label most frequent among held-out documents "
                     "with none, not the scores")
    return lines
