"""The learner checks: what textcw (and scikit-learn) expect of a classifier.

Each check is a :class:`~textcw.testing.runner.Check` named after the property it holds a
learner to (the names are what failure messages, ``expected_failures`` keys and pytest ids use);
:data:`LEARNER_CHECKS` lists them in the order :func:`check_learner` runs them. The checks of
what a class declares (``overrides_only_hooks``, ``parameters_take_effect``) are in
:mod:`textcw.testing.declaration_checks`, ``learns_from_mistakes`` in
:mod:`textcw.testing.learning_checks`; all of them are importable from here too.

Tolerances. Predicted labels are compared exactly everywhere. ``decision_function`` is compared
exactly between two fits (``is_deterministic``) and across a joblib round trip
(``survives_joblib``); it is compared with ``numpy.allclose(rtol=1e-9, atol=1e-12)`` between
CSR and dense input (``sparse_and_dense_agree``: sparse and dense products may sum in another
order) and between chunked and one-call ``partial_fit`` (``partial_fit_streams``: a learner may
renormalise its state at the end of each call). ``predict_proba`` rows must sum to 1 within
``atol=1e-8``.

Errors. The checks expect the errors a user can cause to be :mod:`textcw.errors` classes (the
command line prints those on one line instead of a traceback); a learner that does not subclass
:class:`~textcw.learners.base.OnlineLinearClassifier` raises them itself:

- NaN or infinite values in ``fit`` or ``predict`` input: a :class:`~textcw.errors.TextcwError`
  (raise :class:`~textcw.errors.InputError`); a ``ValueError`` is not enough here;
- ``predict`` with a different number of columns than ``fit``, ``X`` and ``y`` of different
  lengths, a first ``partial_fit`` without ``classes=``, a label missing from ``classes=``:
  :class:`~textcw.errors.InputError` (any ``TextcwError``, or a plain ``ValueError`` such as
  scikit-learn's ``validate_data`` raises, is accepted);
- ``predict`` before ``fit``: ``sklearn.exceptions.NotFittedError`` (or a ``TextcwError``).

Any other exception type in these places is a failure that names it. Bad parameter values are
not exercised here: :func:`textcw.make_learner` calls the learner's ``validate_params()`` if it
has one, which should raise :class:`~textcw.errors.ParameterError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from textcw.errors import TextcwError
from textcw.learners.base import OnlineLinearClassifier
from textcw.testing.datasets import make_sparse_classification
from textcw.testing.declaration_checks import overrides_only_hooks, parameters_take_effect
from textcw.testing.learning_checks import learns_from_mistakes
from textcw.testing.sklearn_contract import SKLEARN_CONTRACT_CHECKS, passes_sklearn_contract
from textcw.testing.runner import (
    Check,
    Component,
    describe,
    fail,
    maker,
    raises,
    round_trip,
    same_params,
)

__all__ = ["LEARNER_CHECKS", "SKLEARN_CONTRACT_CHECKS", "check_learner", "learner_under_test"]


class LearnerSubject:
    """What each learner check receives: the factory and the two seeded problems."""

    def __init__(self, make: Callable[[], object], min_accuracy: float, sklearn_checks: bool):
        self.make, self.min_accuracy, self.sklearn_checks = make, min_accuracy, sklearn_checks

    @functools.cached_property
    def problems(self) -> list[tuple]:
        """(name, X_train, y_train, X_test, y_test) for a binary and a 3-class problem."""
        out = []
        for n_classes, labels in ((2, ("neg", "pos")), (3, ("alpha", "beta", "gamma"))):
            X, y = make_sparse_classification(160, 60, n_classes, random_state=0, label_names=labels)
            Xt, yt = make_sparse_classification(90, 60, n_classes, random_state=1, label_names=labels)
            out.append((f"{n_classes}-class", X, y, Xt, yt))
        return out


def check_predictions(est, X, y_known, what: str) -> np.ndarray:
    """Predict ``X`` and check shapes, labels, and decision_function/predict_proba agreement."""
    pred = np.asarray(est.predict(X))
    n = X.shape[0]
    if pred.shape != (n,):
        fail(f"{what}: predict returned shape {pred.shape}; expected ({n},), one label per row")
    classes = np.asarray(est.classes_)
    outside = sorted({str(p) for p in pred} - {str(c) for c in classes})
    if outside or not np.isin(pred, classes).all():
        fail(f"{what}: predict returned labels {outside or np.unique(pred).tolist()} outside "
             f"classes_={classes.tolist()}; predict must return the training labels themselves")
    k = len(classes)
    if hasattr(est, "decision_function"):
        scores = np.asarray(est.decision_function(X), dtype=float)
        expected = (n,) if k == 2 else (n, k)
        if scores.shape != expected:
            fail(f"{what}: decision_function returned shape {scores.shape}; expected {expected} "
                 "(scikit-learn's convention: one score per row for two classes)")
        if not np.all(np.isfinite(scores)):
            fail(f"{what}: decision_function returned NaN or infinite scores")
        implied = classes[(scores > 0).astype(int)] if k == 2 else classes[np.argmax(scores, axis=1)]
        if not np.array_equal(implied, pred):
            rule = "classes_[1] where the score is > 0" if k == 2 else "the argmax of the scores"
            fail(f"{what}: predict disagrees with decision_function on "
                 f"{int(np.sum(implied != pred))} of {n} rows; predict must return {rule}")
    if hasattr(est, "predict_proba"):
        try:
            proba = np.asarray(est.predict_proba(X), dtype=float)
        except (AttributeError, NotImplementedError):
            proba = None  # a learner may define predict_proba only for some settings
        if proba is not None:
            if proba.shape != (n, k):
                fail(f"{what}: predict_proba returned shape {proba.shape}; expected ({n}, {k})")
            if not (np.all(proba >= 0) and np.all(proba <= 1)
                    and np.allclose(proba.sum(axis=1), 1.0, atol=1e-8)):
                fail(f"{what}: predict_proba rows must be probabilities in [0, 1] summing to 1")
    return pred


def same_predictions(a, b, X) -> bool:
    """``a`` and ``b`` predict exactly the same labels and scores for ``X``."""
    if not np.array_equal(a.predict(X), b.predict(X)):
        return False
    return not hasattr(a, "decision_function") or np.array_equal(a.decision_function(X),
                                                                 b.decision_function(X))


def builds_unfitted(s: LearnerSubject) -> None:
    est = s.make()
    for attr in ("fit", "predict", "get_params", "set_params"):
        if not callable(getattr(est, attr, None)):
            fail(f"the object built has no {attr}() method; a learner is a scikit-learn "
                 "classifier (subclass textcw.learners.base.OnlineLinearClassifier, or "
                 "sklearn.base.ClassifierMixin and BaseEstimator)")
    if hasattr(est, "classes_"):
        fail("a freshly built learner already has classes_; fitted attributes belong in fit")


def params_round_trip(s: LearnerSubject) -> None:
    est = s.make()
    params = est.get_params(deep=False)
    try:
        copy = clone(est)
    except RuntimeError as exc:  # scikit-learn's own verdict on a mangled parameter
        fail(f"clone() failed: {exc}; __init__ must store each argument unchanged under "
             "its own name and do nothing else")
    if copy is est or not same_params(copy.get_params(deep=False), params):
        fail(f"clone() changed the parameters: {params} became {copy.get_params(deep=False)}; "
             "__init__ must store each argument unchanged under its own name")
    if est.set_params(**params) is not est:
        fail("set_params must return the estimator itself")
    rebuilt = type(est)(**params)
    if not same_params(rebuilt.get_params(deep=False), params):
        fail("building the class from its own get_params() gives different parameters")


def fits_and_predicts(s: LearnerSubject) -> None:
    for what, X, y, Xt, yt in s.problems:
        est = s.make()
        if est.fit(X, y) is not est:
            fail(f"{what}: fit must return the estimator itself (so fit(...).predict works)")
        if not np.array_equal(np.asarray(est.classes_), np.unique(y)):
            fail(f"{what}: classes_={np.asarray(est.classes_).tolist()}; expected the sorted "
                 f"training labels {np.unique(y).tolist()}")
        if getattr(est, "n_features_in_", None) != X.shape[1]:
            fail(f"{what}: n_features_in_={getattr(est, 'n_features_in_', None)!r}; expected "
                 f"{X.shape[1]}, the number of training columns")
        pred = check_predictions(est, Xt, y, what)
        accuracy = float(np.mean(pred == yt))
        if accuracy < s.min_accuracy:
            fail(f"{what}: held-out accuracy {accuracy:.2f} < {s.min_accuracy} on a separable "
                 "problem (make_sparse_classification); check the sign of the update and "
                 "which label is +1 (classes_[1] in binary problems)")


def sparse_and_dense_agree(s: LearnerSubject) -> None:
    for what, X, y, Xt, _ in s.problems:
        a = s.make().fit(X, y)
        b = s.make().fit(X.toarray(), y)
        pa, pa_dense, pb = a.predict(Xt), a.predict(Xt.toarray()), b.predict(Xt)
        if not (np.array_equal(pa, pa_dense) and np.array_equal(pa, pb)):
            fail(f"{what}: predictions differ between CSR and dense input "
                 f"(fit CSR/predict CSR vs predict dense: {int(np.sum(pa != pa_dense))} rows; "
                 f"fit CSR vs fit dense: {int(np.sum(pa != pb))} rows)")
        if hasattr(a, "decision_function"):
            sa, sb = a.decision_function(Xt), b.decision_function(Xt.toarray())
            if not np.allclose(sa, sb, rtol=1e-9, atol=1e-12):
                fail(f"{what}: decision_function differs between CSR and dense input "
                     f"(max difference {np.max(np.abs(np.asarray(sa) - sb)):.3g})")


def is_deterministic(s: LearnerSubject) -> None:
    for what, X, y, Xt, _ in s.problems:
        a, b = s.make().fit(X, y), s.make().fit(X, y)
        if not same_predictions(a, b, Xt):
            fail(f"{what}: two fits with the same parameters and data differ; seed every "
                 "random choice from random_state")


def handles_empty_rows(s: LearnerSubject) -> None:
    for what, X, y, Xt, _ in s.problems:
        zeros = sp.csr_matrix((3, X.shape[1]))
        Xe = sp.vstack([X[:40], zeros, X[40:]], format="csr")
        ye = np.concatenate([y[:40], y[:3], y[40:]])
        est = s.make().fit(Xe, ye)
        check_predictions(est, sp.vstack([zeros, Xt[:5]], format="csr"), ye,
                          f"{what} (documents without features)")


def refuses_bad_input(s: LearnerSubject) -> None:
    what, X, y, Xt, _ = s.problems[0]
    for bad in (np.nan, np.inf):
        Xbad = X.copy()
        Xbad.data[3] = bad
        if raises(lambda: s.make().fit(Xbad, y), (TextcwError,)) is None:
            fail(f"fit accepted a matrix containing {bad}; raise textcw.errors.InputError "
                 "(OnlineLinearClassifier subclasses get this for free)")
    est = s.make().fit(X, y)
    Xbad = Xt.copy()
    Xbad.data[0] = np.nan
    if raises(lambda: est.predict(Xbad), (TextcwError,)) is None:
        fail("predict accepted a matrix containing NaN; raise textcw.errors.InputError")
    wider = sp.hstack([Xt, sp.csr_matrix((Xt.shape[0], 2))], format="csr")
    if raises(lambda: est.predict(wider), (TextcwError, ValueError)) is None:
        fail(f"predict accepted {wider.shape[1]} columns after fitting on {X.shape[1]}; "
             "a different width means a different featurizer and must be an error")
    if raises(lambda: s.make().fit(X, y[:-1]), (TextcwError, ValueError)) is None:
        fail("fit accepted X and y of different lengths")
    if raises(lambda: s.make().predict(Xt), (NotFittedError, TextcwError)) is None:
        fail("predict worked before fit; raise sklearn.exceptions.NotFittedError")


def survives_joblib(s: LearnerSubject) -> None:
    for what, X, y, Xt, _ in s.problems:
        est = s.make().fit(X, y)
        loaded = round_trip(est)
        if not np.array_equal(loaded.predict(Xt), est.predict(Xt)):
            fail(f"{what}: predictions change after a joblib dump/load round trip")
        if hasattr(est, "decision_function") and not np.array_equal(
                loaded.decision_function(Xt), est.decision_function(Xt)):
            fail(f"{what}: decision_function changes after a joblib dump/load round trip")
        if hasattr(est, "partial_fit"):
            # Training must resume from the loaded state exactly: all state is pickled.
            more = cycle_labels(est.classes_, 30)
            a = est.partial_fit(Xt[:30], more)
            b = loaded.partial_fit(Xt[:30], more)
            if not same_predictions(a, b, Xt):
                fail(f"{what}: partial_fit after a joblib round trip continues differently "
                     "from the original model; some training state is not pickled")


def clone_after_fit_is_unfitted(s: LearnerSubject) -> None:
    what, X, y, _, _ = s.problems[0]
    est = s.make().fit(X, y)
    copy = clone(est)
    if hasattr(copy, "classes_"):
        fail("clone() of a fitted learner kept classes_; fitted state must live in "
             "attributes ending in '_' that __init__ does not set")
    if not same_params(copy.get_params(deep=False), est.get_params(deep=False)):
        fail("clone() of a fitted learner has different parameters")


def reports_mistakes(s: LearnerSubject) -> None:
    what, X, y, _, _ = s.problems[0]
    est = s.make().fit(X, y)
    if not hasattr(est, "mistakes_"):
        return
    mistakes = est.mistakes_
    if not (isinstance(mistakes, list) and all(isinstance(m, (int, np.integer)) for m in mistakes)):
        fail(f"mistakes_ must be a list of ints (online mistakes per epoch); got {mistakes!r}")
    epochs = est.get_params(deep=False).get("n_epochs")
    if epochs is not None and len(mistakes) != epochs:
        fail(f"mistakes_ has {len(mistakes)} entries after fit with n_epochs={epochs}")
    if any(m < 0 or m > X.shape[0] for m in mistakes):
        fail(f"mistakes_={mistakes}: each epoch's count must lie in [0, {X.shape[0]}]")


def partial_fit_streams(s: LearnerSubject) -> None:
    if not hasattr(s.make(), "partial_fit"):
        return
    for what, X, y, Xt, yt in s.problems:
        classes = np.unique(y)
        if raises(lambda: s.make().partial_fit(X[:10], y[:10]), (TextcwError, ValueError)) is None:
            fail(f"{what}: the first partial_fit call accepted no classes=; it must require "
                 "every label up front, since a later chunk may bring a new one")
        # The first chunk holds a single label: classes_ must still come from classes=.
        first = np.flatnonzero(y == y[0])[:5]
        rest = np.setdiff1d(np.arange(X.shape[0]), first)
        est = s.make()
        est.partial_fit(X[first], y[first], classes=classes)
        if not np.array_equal(np.asarray(est.classes_), classes):
            fail(f"{what}: after partial_fit(..., classes={classes.tolist()}) on a one-label "
                 f"chunk, classes_={np.asarray(est.classes_).tolist()}")
        for start in range(0, rest.size, 40):
            chunk = rest[start:start + 40]
            est.partial_fit(X[chunk], y[chunk])
        pred = check_predictions(est, Xt, y, f"{what} after partial_fit")
        accuracy = float(np.mean(pred == yt))
        if accuracy < s.min_accuracy:
            fail(f"{what}: held-out accuracy {accuracy:.2f} < {s.min_accuracy} after one "
                 "partial_fit pass over a separable problem")
        # One undeclared label among declared ones: it must not be dropped silently.
        mixed = np.array([classes[0], "never-declared", classes[-1]], dtype=object)
        if raises(lambda: est.partial_fit(X[:3], mixed), (TextcwError, ValueError)) is None:
            fail(f"{what}: partial_fit accepted a label missing from classes= (it must raise "
                 "rather than skip or invent a class)")
        if isinstance(est, OnlineLinearClassifier):
            # textcw's online learners process a stream in order: chunking must not matter.
            # Up to rounding: a learner may legitimately renormalise its state at the end of
            # a call (e.g. SGD folding its lazy weight scale back into the weights).
            whole = s.make()
            whole.partial_fit(X[np.concatenate([first, rest])],
                              y[np.concatenate([first, rest])], classes=classes)
            if not np.allclose(whole.decision_function(Xt), est.decision_function(Xt),
                               rtol=1e-9, atol=1e-12):
                fail(f"{what}: partial_fit over chunks differs from one partial_fit call over "
                     "the same rows in the same order; carry all state between calls")


def cycle_labels(classes, n: int) -> np.ndarray:
    """``n`` labels cycling through ``classes`` (any valid labels do for a resume test)."""
    classes = np.asarray(classes)
    return classes[np.arange(n) % len(classes)]


# Determinism comes before the CSR/dense comparison, which assumes two fits can agree.
LEARNER_CHECKS: tuple[Check, ...] = tuple(Check(f.__name__, f) for f in (
    builds_unfitted, params_round_trip, fits_and_predicts, is_deterministic,
    sparse_and_dense_agree, handles_empty_rows, refuses_bad_input, survives_joblib,
    clone_after_fit_is_unfitted, reports_mistakes, learns_from_mistakes, partial_fit_streams,
    overrides_only_hooks,
    parameters_take_effect, passes_sklearn_contract,
))


def learner_under_test(factory, *, name: str | None = None, min_accuracy: float = 0.8,
                       sklearn_checks: bool = True,
                       expected_failures: dict[str, str] | None = None) -> Component:
    """A learner as the checks take it, for :func:`~textcw.testing.parametrize_with_checks`
    (one pytest item per check); the parameters are those of :func:`check_learner`.

    A factory that is neither callable nor an estimator instance is a ``TypeError``;
    an ``expected_failures`` key naming no check, a ``ValueError``.
    """
    subject = LearnerSubject(maker(factory, "learner"), min_accuracy, sklearn_checks)
    return Component("learner", name or describe(factory), subject, LEARNER_CHECKS,
                     expected_failures)


def check_learner(factory, *, name: str | None = None, min_accuracy: float = 0.8,
                  sklearn_checks: bool = True, expected_failures: dict[str, str] | None = None) -> None:
    """Check that a learner behaves as textcw (and scikit-learn) expect, stopping at the first
    failure (:func:`~textcw.testing.parametrize_with_checks` runs each check as its own test).

    The learner is built with its default parameters (``random_state`` set to 0 if it is
    ``None``) and trained on a small seeded binary and a 3-class sparse problem from
    :func:`~textcw.testing.make_sparse_classification` (160 training and 90 held-out rows, 60
    features). The checks, in order (:data:`LEARNER_CHECKS`):

    ``builds_unfitted``
        It has ``fit``, ``predict``, ``get_params`` and ``set_params``, and no ``classes_`` yet.
    ``params_round_trip``
        ``get_params``/``set_params``/``clone`` and the class itself round-trip its parameters.
    ``fits_and_predicts``
        ``fit`` returns itself, with ``classes_`` the sorted training labels (strings) and
        ``n_features_in_``; ``predict`` gives one label per row from ``classes_``, consistent
        with ``decision_function`` (and ``predict_proba`` rows are probabilities, if defined);
        held-out accuracy reaches ``min_accuracy`` on both separable problems.
    ``is_deterministic``
        Two fits give the same predictions and scores.
    ``sparse_and_dense_agree``
        CSR and dense input give the same predictions (scores within the module's tolerance).
    ``handles_empty_rows``
        Documents without features are trained on and predicted like the others.
    ``refuses_bad_input``
        NaN and infinite values, a different number of columns, mismatched ``X``/``y`` lengths
        and predicting before fitting are errors (which ones: see the module docstring).
    ``survives_joblib``
        It predicts identically after a joblib round trip, and resumes ``partial_fit``
        identically.
    ``clone_after_fit_is_unfitted``
        ``clone`` of a fitted learner has its parameters and no fitted state.
    ``reports_mistakes``
        If it has ``mistakes_``: a list of one count in ``[0, n_rows]`` per epoch.
    ``learns_from_mistakes``
        ``fit`` on both problems raises no
        :class:`~textcw.learners.protocol.LearnerContractWarning` (a kernel default standing in
        for a value, a pass with mistakes and no update), makes some update (``n_updates_``)
        and gives held-out documents scores that are not all the same.
    ``partial_fit_streams``
        If it has ``partial_fit``: ``classes=`` is required on the first call and honoured even
        when the first chunk has a single label, undeclared labels are refused, one pass reaches
        ``min_accuracy``, and (for :class:`~textcw.learners.base.OnlineLinearClassifier`
        subclasses) chunking does not change the model.
    ``overrides_only_hooks``
        For a subclass of :class:`~textcw.learners.base.OnlineLinearClassifier`: every name it
        defines over one of textcw's base classes is a hook of
        :data:`textcw.learners.protocol.LEARNER_HOOKS` (redefining ``floor``, ``fit`` or
        ``_run_epoch`` would let the guards and counters report something else than what was
        computed).
    ``parameters_take_effect``
        Every parameter in ``constraints`` (inherited ones too) changes what the learner
        computes (scores, probabilities, variances) for some other valid value, alone or
        together with another parameter, or is refused with a textcw error for the values it
        cannot honour; parameters in ``inert_params`` are exempt.
    ``passes_sklearn_contract``
        scikit-learn's estimator checks about the estimator contract
        (:data:`SKLEARN_CONTRACT_CHECKS`); off with ``sklearn_checks=False``.

    Parameters
    ----------
    factory : class, callable or estimator
        Builds the learner with no arguments (e.g. the class, or
        ``lambda: MyLearner(alpha=2)``); an unfitted instance is cloned.
    name : str, optional
        How to name the learner in failure messages (default: the factory's qualified name).
    min_accuracy : float, default 0.8
        Held-out accuracy (fraction of rows) that ``fits_and_predicts`` and
        ``partial_fit_streams`` require on each of the two separable problems.
    sklearn_checks : bool, default True
        Also run the scikit-learn contract checks.
    expected_failures : dict, optional
        ``{check name: reason}`` for known deviations; the keys are names from the list above
        (an unknown name is a ``ValueError`` listing the valid ones), the values say why. A
        listed check must fail: its failure is skipped and the remaining checks run, and one
        that passes is reported, so the list cannot go stale (a strict xfail).

    Raises
    ------
    AssertionError
        ``"learner <name> fails <check>: <what failed and how to fix it>"``.
    """
    learner_under_test(factory, name=name, min_accuracy=min_accuracy, sklearn_checks=sklearn_checks,
                       expected_failures=expected_failures).check_all()
