"""The calibration side of ``bench_short_text.py``: the measures of every row (ECE, confidence,
reliability bins) and the ``--study calibration`` and ``--study fit-time`` studies (the
calibrators of :data:`CALIBRATORS`, vector scaling and an extrapolated temperature, each fitted
to honest scores of the final model ``textcw train`` fits and applied to its test scores).
A helper of that script, not run by itself.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import clone

import textcw
from textcw.evaluation.metrics import classification_metrics
from textcw.pipeline import learner_train_defaults

BINS = 10
# What --study calibration compares, on the same honest scores: name -> fit_calibration's method.
CALIBRATORS = ("temperature", "top-bias", "auto")


def reliability(proba: np.ndarray, correct: np.ndarray) -> list[list[float]]:
    """``[documents, mean confidence, accuracy]`` of each non-empty equal-width bin of the
    predicted label's probability."""
    top = proba.max(axis=1)
    which = np.minimum((top * BINS).astype(int), BINS - 1)
    return [[int(np.sum(which == b)), round(float(top[which == b].mean()), 4),
             round(float(correct[which == b].mean()), 4)] for b in range(BINS) if np.any(which == b)]


def score(y, predicted, proba, classes, seconds, **extra) -> dict:
    metrics = classification_metrics(y, predicted, proba, classes)
    out = {k: metrics[k] for k in ("accuracy", "macro_f1", "expected_calibration_error", "log_loss")}
    if proba is not None:
        correct = classes[np.argmax(proba, axis=1)] == np.asarray(y)
        top = proba.max(axis=1)
        out["confidence"] = float(top.mean())
        out["confidence_minus_accuracy"] = out["confidence"] - out["accuracy"]
        # its standard error if every probability were exact (a sum of independent Bernoulli draws)
        out["confidence_standard_error"] = float(np.sqrt(np.sum(top * (1.0 - top))) / len(top))
        out["reliability"] = reliability(proba, correct)
    return {**out, "seconds": seconds, **extra}


def _calibrated(proba, classes, y, seconds, **extra):  # the predicted label: the probabilities' argmax
    return score(y, classes[np.argmax(proba, axis=1)], proba, classes, seconds, **extra)


def _featurize(task):
    """``textcw train``'s features of a text corpus (``tfidf``), or the task's own for numbers."""
    featurizer = textcw.make_featurizer("tfidf") if isinstance(task.X_train[0], str) else task.features()
    return featurizer.fit_transform(task.X_train), featurizer.transform(task.X_test)


def honest_scores(settings, X, y, labels, k, gaussian, random_state, subsample=False):
    """Out-of-fold ``(scores, variances, norms, seconds)`` of ``k`` clones of ``settings``, each
    fitted on ``k - 1`` of ``k`` stratified folds, as ``Calibrated``'s cross-fitting gives them
    (same folds, same seed). ``subsample``: each clone learns only a stratified half of its
    folds (a younger model scoring the same documents)."""
    from sklearn.model_selection import StratifiedKFold

    from textcw.learners.temperature import weight_norm

    n, target = X.shape[0], np.searchsorted(labels, y)
    shape = (n,) if len(labels) == 2 else (n, len(labels))
    scores, variances, norms = np.zeros(shape), np.zeros(shape), np.zeros(n)
    start = time.perf_counter()
    for fitted_on, scored in StratifiedKFold(k, shuffle=True, random_state=random_state).split(
            np.zeros((n, 1)), target):
        if subsample:
            fitted_on = fitted_on[next(StratifiedKFold(2, shuffle=True, random_state=random_state).split(
                np.zeros((fitted_on.size, 1)), target[fitted_on]))[1]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone_ = clone(settings).fit(X[fitted_on], y[fitted_on])
        scores[scored] = clone_.decision_function(X[scored])
        if gaussian:
            variances[scored] = clone_.margin_variance(X[scored])
        norms[scored] = weight_norm(clone_)
    return scores, variances, norms, time.perf_counter() - start


def margin_logits(scores, variances, norms, margin):
    """``(n, K)`` logits of the recorded scores in ``margin`` (what a fitted temperature scales)."""
    from textcw.learners.temperature import as_logits, normalized_scores, standardized_scores

    z = {"raw": lambda: scores, "normalized": lambda: normalized_scores(scores, norms),
         "standardized": lambda: standardized_scores(scores, variances)}[margin]()
    return as_logits(z)


def fit_vector_scaling(logits, target):
    """``(beta, b)`` minimising the cross-entropy of ``softmax(beta * z + b)`` against Platt's
    targets plus ``||b||^2 / (2 n)`` (a standard normal prior on each class's offset, in logit
    units): temperature scaling with a per-class bias, the "vector scaling" of Guo et al., ICML
    2017, section 4.2, with one shared scale. Convex (a log-sum-exp of linear functions, minus a
    linear one, plus a quadratic); L-BFGS-B from the temperature's fit, ``beta >= 0``."""
    import scipy.optimize
    from scipy.special import logsumexp, softmax

    from textcw.learners.temperature import fit_inverse_temperature, smoothed_targets

    n, K = logits.shape
    weights = smoothed_targets(target, K)

    def loss(theta):
        scaled = theta[0] * logits + theta[1:]
        p = softmax(scaled, axis=1)
        value = np.mean(logsumexp(scaled, axis=1) - (weights * scaled).sum(axis=1)) + theta[1:] @ theta[1:] / (2 * n)
        grad = np.concatenate([[np.mean(((p - weights) * logits).sum(axis=1))],
                               (p - weights).mean(axis=0) + theta[1:] / n])
        return value, grad

    theta0 = np.concatenate([[fit_inverse_temperature(logits, target)], np.zeros(K)])
    found = scipy.optimize.minimize(loss, theta0, jac=True, method="L-BFGS-B",
                                    bounds=[(0.0, None)] + [(None, None)] * K)
    return float(found.x[0]), found.x[1:]


def extrapolated_inverse_temperature(beta_quarter, beta_half):
    """The inverse temperature for the model of all ``n`` documents, from those fitted to the
    scores of models of ``n/4`` and ``n/2`` documents (the same documents scored): ``beta``
    linear in ``log m`` (a learning curve over doublings of the data; Cortes, Jackel, Solla,
    Vapnik and Denker, "Learning curves: asymptotic values and rate of convergence", NIPS 1993),
    one more doubling: ``2 beta_half - beta_quarter``. Capped to ``[beta_half / 2, 2 beta_half]``:
    an online learner's weights, and so its scores, grow at most in proportion to the documents
    it learns (each update's step is bounded), so one doubling of the data moves the scale by at
    most a factor of 2. Either direction: normalized scores need a larger ``beta`` for a larger
    model, standardized ones (whose variances shrink) a smaller one."""
    return float(np.clip(2.0 * beta_half - beta_quarter, beta_half / 2.0, 2.0 * beta_half))


def _self_tuned(name, X, y):
    """``(learner, final model, learner with the final model's self-tuned values)``: the learner as
    ``textcw train`` builds it, fitted to ``X``; honest scores come from clones of the third."""
    learner = textcw.make_learner(name, **learner_train_defaults(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(learner).fit(X, y)
    return learner, model, clone(learner).set_params(**dict(getattr(model, "tuned_params_", {})))


def recorded_gap(scaling, scores, variances, norms, target) -> float:
    """The calibrator's mean probability of the predicted label minus the accuracy on the very
    recorded scores it was fitted to: what it gets wrong before any model-size or test shift."""
    proba = scaling.recorded_proba(scores, variances, norms)
    top = np.argmax(proba, axis=1)
    return float(proba[np.arange(len(top)), top].mean() - np.mean(top == target))


def calibration_rows(task, learners, folds=(2, 3, 5)) -> dict:
    """Each calibrator fitted to honest scores of the learner ``textcw train`` fits and applied
    to that same final model's test scores: :data:`CALIBRATORS` on the scores of ``k``-fold
    cross-fitting for each ``k`` in ``folds``; ``vector`` (:func:`fit_vector_scaling`) and
    ``extrapolated`` (:func:`extrapolated_inverse_temperature`) on the 2-fold ones. A row's
    ``seconds`` is its calibration's: the clones' fits plus the calibrator's own fit."""
    from scipy.special import softmax

    from textcw.learners.temperature import TemperatureScaling, as_logits, fit_inverse_temperature, fit_temperature

    Xtr, Xte = _featurize(task)
    rows = {}
    labels = np.unique(task.y_train)
    target = np.searchsorted(labels, task.y_train)
    for name in learners:
        learner, model, settings = _self_tuned(name, Xtr, task.y_train)
        gaussian = hasattr(learner, "margin_variance")
        seed = learner.get_params().get("random_state", 0)
        recorded = {}
        for k in sorted({*folds, 2}):
            recorded[k] = honest_scores(settings, Xtr, task.y_train, labels, k, gaussian, seed)
        for k in folds:
            scores, variances, norms, fits = recorded[k]
            for method in CALIBRATORS:
                start = time.perf_counter()
                scaling = fit_temperature(scores, variances if gaussian else None, target, margin="auto",
                                          record="cross-fit", norms=norms, method=method)
                seconds = fits + time.perf_counter() - start
                rows[f"{name} {method} k={k}"] = _calibrated(
                    scaling.predict_proba(model, Xte), model.classes_, task.y_test, seconds,
                    calibration=scaling.to_dict(),
                    recorded_confidence_minus_accuracy=recorded_gap(scaling, scores, variances if gaussian else None,
                                                                    norms, target))
        # the 2-fold temperature's margin, for the candidates that rescale its scores
        start = time.perf_counter()
        base = fit_temperature(recorded[2][0], recorded[2][1] if gaussian else None, target, margin="auto",
                               record="cross-fit", norms=recorded[2][2])
        base_seconds = time.perf_counter() - start
        z_test = as_logits(TemperatureScaling(base.margin, 1.0, "cross-fit").scores(model, Xte))
        # the inverse temperature of each model size in that margin (the extrapolation's check)
        betas = {k: fit_inverse_temperature(margin_logits(*recorded[k][:3], base.margin), target)
                 for k in recorded}
        logits = margin_logits(*recorded[2][:3], base.margin)
        start = time.perf_counter()
        beta, bias = fit_vector_scaling(logits, target)
        t = recorded[2][3] + base_seconds + time.perf_counter() - start
        proba = softmax(beta * z_test + bias, axis=1)
        agrees = float(np.mean(np.argmax(proba, axis=1) == np.argmax(z_test, axis=1)))
        rows[f"{name} vector k=2"] = _calibrated(proba, model.classes_, task.y_test, t, argmax_agrees=agrees,
                                                 calibration={"inverse_temperature": beta, "bias": bias.tolist()})
        quarter = honest_scores(settings, Xtr, task.y_train, labels, 2, gaussian, seed, subsample=True)
        start = time.perf_counter()
        beta_q = fit_inverse_temperature(margin_logits(*quarter[:3], base.margin), target)
        beta_n = extrapolated_inverse_temperature(beta_q, base.inverse_temperature)
        t = recorded[2][3] + base_seconds + quarter[3] + time.perf_counter() - start
        proba = softmax(beta_n * z_test, axis=1)
        rows[f"{name} extrapolated k=2"] = _calibrated(
            proba, model.classes_, task.y_test, t,
            calibration={"inverse_temperature": beta_n, "quarter": beta_q, "half": base.inverse_temperature,
                         "by_folds": {str(k): v for k, v in betas.items()}, "margin": base.margin})
    return rows


def fit_time_rows(task, learners, repeat=5) -> dict:
    """Seconds of the calibrator's own fit for each method of :data:`CALIBRATORS` on the same 2-fold
    honest scores, interleaved ``repeat`` times (best, median), and of the half-size fits behind them."""
    from textcw.learners.temperature import fit_temperature

    Xtr, _ = _featurize(task)
    labels = np.unique(task.y_train)
    target = np.searchsorted(labels, task.y_train)
    rows = {}
    for name in learners:
        learner, model, settings = _self_tuned(name, Xtr, task.y_train)
        gaussian = hasattr(learner, "margin_variance")
        scores, variances, norms, halves = honest_scores(settings, Xtr, task.y_train, labels, 2, gaussian,
                                                         learner.get_params().get("random_state", 0))
        seconds = {method: [] for method in CALIBRATORS}
        for _ in range(repeat):
            for method in CALIBRATORS:
                start = time.perf_counter()
                fit_temperature(scores, variances if gaussian else None, target, margin="auto", record="cross-fit",
                                norms=norms, method=method)
                seconds[method].append(time.perf_counter() - start)
        for method, times in seconds.items():
            rows[f"{name} {method}"] = {"best": min(times), "median": float(np.median(times)),
                                        "half_fits": halves, "repeat": repeat}
    return rows
