"""Checks that a plugin's learners, featurizers and registrations meet textcw's contract.

Each public check is a plain function that returns ``None`` when everything holds and raises
:class:`AssertionError` naming the component, the failed property and what to change otherwise,
so it reads well both in a pytest run and in a script::

    from textcw.testing import check_learner, check_plugin
    check_learner(MyLearner)          # a class or any callable returning a fresh estimator
    check_plugin(my_package.plugin)   # registers it in an isolated manager, checks every entry

What the checks hold components to is what the rest of textcw relies on: the CLI trains and
predicts through a scikit-learn ``Pipeline`` (featurizer + learner), models are saved with
joblib, labels are names, and errors a user can cause are :class:`textcw.errors.TextcwError`\\ s
(the CLI prints those on one line instead of a traceback).
"""

from __future__ import annotations

import importlib.metadata
import io
import re
import warnings
from collections.abc import Callable, Sequence

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from textcw.errors import DuplicateNameError, TextcwError
from textcw.hookspecs import PROJECT
from textcw.learners.base import OnlineLinearClassifier
from textcw.pipeline import make_learner
from textcw.plugins import broken_plugins, build_registries, get_plugin_manager
from textcw.registry import KINDS
from textcw.testing.datasets import awkward_documents, make_documents, make_sparse_classification

__all__ = ["SKLEARN_CONTRACT_CHECKS", "check_featurizer", "check_learner", "check_plugin"]

# The scikit-learn estimator checks about the estimator *contract* (parameters, cloning,
# fitting, pickling, sparse input, consistency of the prediction methods). The other checks in
# scikit-learn's suite mostly pin the wording of error messages, which textcw deliberately
# words its own way, so they are not applied. check_decision_proba_consistency is left out
# too: a Gaussian (CW) model's label probability depends on the margin's variance as well as on
# its mean, so it need not rank documents as decision_function does. Names missing from an
# installed scikit-learn version are simply not run.
SKLEARN_CONTRACT_CHECKS = frozenset({
    "check_classifiers_classes",
    "check_classifiers_one_label",
    "check_dict_unchanged",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_dont_overwrite_parameters",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features",
    "check_estimators_pickle",
    "check_estimators_unfitted",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_get_params_invariance",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_mixin_order",
    "check_n_features_in",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_pipeline_consistency",
    "check_readonly_memmap_input",
    "check_set_params",
    "check_supervised_y_no_nan",
    "check_valid_tag_types",
})

# What users type: no whitespace, no ":" (it separates a corpus from its task), no leading "-"
# (it would read as a command-line option).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


# ====================================================================================== helpers
class _Failed(AssertionError):
    """One sub-check's failure; the public check adds which component and which property."""


class _UsageError(ValueError):
    """A check called with arguments that make no sense; passed through unchanged."""


def _fail(message: str) -> None:
    raise _Failed(message)


def _run(component: str, checks: Sequence[Callable[[], None]],
         expected_failures: dict[str, str] | None = None) -> None:
    """Run ``checks`` in order; re-raise the first failure with the component and check named.

    ``expected_failures`` maps check names to the reason they are known to fail: those must
    fail (a check that starts passing has to be taken off the list), like a strict xfail.
    """
    expected = dict(expected_failures or {})
    names = [getattr(check, "__name__", "check").lstrip("_") for check in checks]
    unknown = sorted(set(expected) - set(names))
    if unknown:
        raise _UsageError(f"expected_failures names unknown checks {unknown}; the checks of "
                         f"{component} are: {', '.join(names)}")
    for name, check in zip(names, checks):
        try:
            with warnings.catch_warnings():
                # A component's own warnings (convergence, deprecation) are not failures here.
                warnings.simplefilter("ignore")
                check()
        except _Failed as exc:
            if name in expected:
                continue
            raise AssertionError(f"{component} fails {name}: {exc}") from None
        except _UsageError:
            raise
        except AssertionError as exc:  # e.g. a nested check_learner from check_plugin
            if name in expected:
                continue
            raise AssertionError(f"{component} fails {name}: {exc}") from exc
        except Exception as exc:
            if name in expected:
                continue
            raise AssertionError(
                f"{component} fails {name}: it raised {type(exc).__name__}: {exc}"
            ) from exc
        else:
            if name in expected:
                raise AssertionError(
                    f"{component} now passes {name}, listed as an expected failure "
                    f"({expected[name]}); remove it from expected_failures"
                )


def _describe(factory) -> str:
    return getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or repr(factory)


def _is_estimator_instance(obj) -> bool:
    return not isinstance(obj, type) and hasattr(obj, "get_params")


def _maker(factory, kind: str) -> Callable[[], object]:
    """A no-argument callable returning a fresh, seeded component.

    ``factory`` is a class, a factory function, or an unfitted instance (which is cloned).
    A ``random_state`` left at ``None`` is set to 0, so two fits must agree.
    """
    if not (callable(factory) or _is_estimator_instance(factory)):
        raise TypeError(f"check_{kind} needs a class, a factory function or an instance; got {factory!r}")

    def make():
        obj = clone(factory) if _is_estimator_instance(factory) else factory()
        params = obj.get_params(deep=False) if hasattr(obj, "get_params") else {}
        if "random_state" in params and params["random_state"] is None:
            obj.set_params(random_state=0)
        return obj

    return make


def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if hasattr(a, "get_params") and hasattr(b, "get_params"):  # nested estimators
        return type(a) is type(b) and _same_params(a.get_params(deep=False), b.get_params(deep=False))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return a is b


def _same_params(p: dict, q: dict) -> bool:
    return p.keys() == q.keys() and all(_same_value(p[k], q[k]) for k in p)


def _raises(call: Callable[[], object], expected: tuple[type[BaseException], ...]) -> BaseException | None:
    """The exception ``call`` raised if it is one of ``expected``; ``None`` if it returned.

    Any other exception is a failure in itself, reported with its type.
    """
    try:
        call()
    except expected as exc:
        return exc
    except Exception as exc:
        names = " or ".join(e.__name__ for e in expected)
        _fail(f"expected {names}, but it raised {type(exc).__name__}: {exc}")
    return None


def _round_trip(obj):
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


# ====================================================================================== learners
def _learner_problems():
    """(name, X_train, y_train, X_test, y_test) for a binary and a 3-class problem."""
    out = []
    for n_classes, labels in ((2, ("neg", "pos")), (3, ("alpha", "beta", "gamma"))):
        X, y = make_sparse_classification(160, 60, n_classes, random_state=0, label_names=labels)
        Xt, yt = make_sparse_classification(90, 60, n_classes, random_state=1, label_names=labels)
        out.append((f"{n_classes}-class", X, y, Xt, yt))
    return out


def _check_predictions(est, X, y_known, what: str) -> np.ndarray:
    """Predict ``X`` and check shapes, labels, and decision_function/predict_proba agreement."""
    pred = np.asarray(est.predict(X))
    n = X.shape[0]
    if pred.shape != (n,):
        _fail(f"{what}: predict returned shape {pred.shape}; expected ({n},), one label per row")
    classes = np.asarray(est.classes_)
    outside = sorted({str(p) for p in pred} - {str(c) for c in classes})
    if outside or not np.isin(pred, classes).all():
        _fail(f"{what}: predict returned labels {outside or np.unique(pred).tolist()} outside "
              f"classes_={classes.tolist()}; predict must return the training labels themselves")
    k = len(classes)
    if hasattr(est, "decision_function"):
        scores = np.asarray(est.decision_function(X), dtype=float)
        expected = (n,) if k == 2 else (n, k)
        if scores.shape != expected:
            _fail(f"{what}: decision_function returned shape {scores.shape}; expected {expected} "
                  "(scikit-learn's convention: one score per row for two classes)")
        if not np.all(np.isfinite(scores)):
            _fail(f"{what}: decision_function returned NaN or infinite scores")
        implied = classes[(scores > 0).astype(int)] if k == 2 else classes[np.argmax(scores, axis=1)]
        if not np.array_equal(implied, pred):
            rule = "classes_[1] where the score is > 0" if k == 2 else "the argmax of the scores"
            _fail(f"{what}: predict disagrees with decision_function on "
                  f"{int(np.sum(implied != pred))} of {n} rows; predict must return {rule}")
    if hasattr(est, "predict_proba"):
        try:
            proba = np.asarray(est.predict_proba(X), dtype=float)
        except (AttributeError, NotImplementedError):
            proba = None  # a learner may define predict_proba only for some settings
        if proba is not None:
            if proba.shape != (n, k):
                _fail(f"{what}: predict_proba returned shape {proba.shape}; expected ({n}, {k})")
            if not (np.all(proba >= 0) and np.all(proba <= 1)
                    and np.allclose(proba.sum(axis=1), 1.0, atol=1e-8)):
                _fail(f"{what}: predict_proba rows must be probabilities in [0, 1] summing to 1")
    return pred


def _learner_checks(make, min_accuracy: float, sklearn_checks: bool) -> list[Callable[[], None]]:
    problems = _learner_problems()

    def builds_unfitted():
        est = make()
        for attr in ("fit", "predict", "get_params", "set_params"):
            if not callable(getattr(est, attr, None)):
                _fail(f"the object built has no {attr}() method; a learner is a scikit-learn "
                      "classifier (subclass textcw.learners.base.OnlineLinearClassifier, or "
                      "sklearn.base.ClassifierMixin and BaseEstimator)")
        if hasattr(est, "classes_"):
            _fail("a freshly built learner already has classes_; fitted attributes belong in fit")

    def params_round_trip():
        est = make()
        params = est.get_params(deep=False)
        try:
            copy = clone(est)
        except RuntimeError as exc:  # scikit-learn's own verdict on a mangled parameter
            _fail(f"clone() failed: {exc}; __init__ must store each argument unchanged under "
                  "its own name and do nothing else")
        if copy is est or not _same_params(copy.get_params(deep=False), params):
            _fail(f"clone() changed the parameters: {params} became {copy.get_params(deep=False)}; "
                  "__init__ must store each argument unchanged under its own name")
        if est.set_params(**params) is not est:
            _fail("set_params must return the estimator itself")
        rebuilt = type(est)(**params)
        if not _same_params(rebuilt.get_params(deep=False), params):
            _fail("building the class from its own get_params() gives different parameters")

    def fits_and_predicts():
        for what, X, y, Xt, yt in problems:
            est = make()
            if est.fit(X, y) is not est:
                _fail(f"{what}: fit must return the estimator itself (so fit(...).predict works)")
            if not np.array_equal(np.asarray(est.classes_), np.unique(y)):
                _fail(f"{what}: classes_={np.asarray(est.classes_).tolist()}; expected the sorted "
                      f"training labels {np.unique(y).tolist()}")
            if getattr(est, "n_features_in_", None) != X.shape[1]:
                _fail(f"{what}: n_features_in_={getattr(est, 'n_features_in_', None)!r}; expected "
                      f"{X.shape[1]}, the number of training columns")
            pred = _check_predictions(est, Xt, y, what)
            accuracy = float(np.mean(pred == yt))
            if accuracy < min_accuracy:
                _fail(f"{what}: held-out accuracy {accuracy:.2f} < {min_accuracy} on a separable "
                      "problem (make_sparse_classification); check the sign of the update and "
                      "which label is +1 (classes_[1] in binary problems)")

    def sparse_and_dense_agree():
        for what, X, y, Xt, _ in problems:
            a = make().fit(X, y)
            b = make().fit(X.toarray(), y)
            pa, pa_dense, pb = a.predict(Xt), a.predict(Xt.toarray()), b.predict(Xt)
            if not (np.array_equal(pa, pa_dense) and np.array_equal(pa, pb)):
                _fail(f"{what}: predictions differ between CSR and dense input "
                      f"(fit CSR/predict CSR vs predict dense: {int(np.sum(pa != pa_dense))} rows; "
                      f"fit CSR vs fit dense: {int(np.sum(pa != pb))} rows)")
            if hasattr(a, "decision_function"):
                sa, sb = a.decision_function(Xt), b.decision_function(Xt.toarray())
                if not np.allclose(sa, sb, rtol=1e-9, atol=1e-12):
                    _fail(f"{what}: decision_function differs between CSR and dense input "
                          f"(max difference {np.max(np.abs(np.asarray(sa) - sb)):.3g})")

    def is_deterministic():
        for what, X, y, Xt, _ in problems:
            a, b = make().fit(X, y), make().fit(X, y)
            same = np.array_equal(a.predict(Xt), b.predict(Xt))
            if same and hasattr(a, "decision_function"):
                same = np.array_equal(a.decision_function(Xt), b.decision_function(Xt))
            if not same:
                _fail(f"{what}: two fits with the same parameters and data differ; seed every "
                      "random choice from random_state")

    def handles_empty_rows():
        for what, X, y, Xt, _ in problems:
            zeros = sp.csr_matrix((3, X.shape[1]))
            Xe = sp.vstack([X[:40], zeros, X[40:]], format="csr")
            ye = np.concatenate([y[:40], y[:3], y[40:]])
            est = make().fit(Xe, ye)
            _check_predictions(est, sp.vstack([zeros, Xt[:5]], format="csr"), ye,
                               f"{what} (documents without features)")

    def refuses_bad_input():
        what, X, y, Xt, _ = problems[0]
        for bad in (np.nan, np.inf):
            Xbad = X.copy()
            Xbad.data[3] = bad
            if _raises(lambda: make().fit(Xbad, y), (TextcwError,)) is None:
                _fail(f"fit accepted a matrix containing {bad}; raise textcw.errors.InputError "
                      "(OnlineLinearClassifier subclasses get this for free)")
        est = make().fit(X, y)
        Xbad = Xt.copy()
        Xbad.data[0] = np.nan
        if _raises(lambda: est.predict(Xbad), (TextcwError,)) is None:
            _fail("predict accepted a matrix containing NaN; raise textcw.errors.InputError")
        wider = sp.hstack([Xt, sp.csr_matrix((Xt.shape[0], 2))], format="csr")
        if _raises(lambda: est.predict(wider), (TextcwError, ValueError)) is None:
            _fail(f"predict accepted {wider.shape[1]} columns after fitting on {X.shape[1]}; "
                  "a different width means a different featurizer and must be an error")
        if _raises(lambda: make().fit(X, y[:-1]), (TextcwError, ValueError)) is None:
            _fail("fit accepted X and y of different lengths")
        if _raises(lambda: make().predict(Xt), (NotFittedError, TextcwError)) is None:
            _fail("predict worked before fit; raise sklearn.exceptions.NotFittedError")

    def survives_joblib():
        for what, X, y, Xt, _ in problems:
            est = make().fit(X, y)
            loaded = _round_trip(est)
            if not np.array_equal(loaded.predict(Xt), est.predict(Xt)):
                _fail(f"{what}: predictions change after a joblib dump/load round trip")
            if hasattr(est, "decision_function") and not np.array_equal(
                    loaded.decision_function(Xt), est.decision_function(Xt)):
                _fail(f"{what}: decision_function changes after a joblib dump/load round trip")
            if hasattr(est, "partial_fit"):
                # Training must resume from the loaded state exactly: all state is pickled.
                more = _cycle_labels(est.classes_, 30)
                a = est.partial_fit(Xt[:30], more)
                b = loaded.partial_fit(Xt[:30], more)
                same = np.array_equal(a.predict(Xt), b.predict(Xt))
                if same and hasattr(a, "decision_function"):
                    same = np.array_equal(a.decision_function(Xt), b.decision_function(Xt))
                if not same:
                    _fail(f"{what}: partial_fit after a joblib round trip continues differently "
                          "from the original model; some training state is not pickled")

    def clone_after_fit_is_unfitted():
        what, X, y, _, _ = problems[0]
        est = make().fit(X, y)
        copy = clone(est)
        if hasattr(copy, "classes_"):
            _fail("clone() of a fitted learner kept classes_; fitted state must live in "
                  "attributes ending in '_' that __init__ does not set")
        if not _same_params(copy.get_params(deep=False), est.get_params(deep=False)):
            _fail("clone() of a fitted learner has different parameters")

    def reports_mistakes():
        what, X, y, _, _ = problems[0]
        est = make().fit(X, y)
        if not hasattr(est, "mistakes_"):
            return
        mistakes = est.mistakes_
        if not (isinstance(mistakes, list) and all(isinstance(m, (int, np.integer)) for m in mistakes)):
            _fail(f"mistakes_ must be a list of ints (online mistakes per epoch); got {mistakes!r}")
        epochs = est.get_params(deep=False).get("n_epochs")
        if epochs is not None and len(mistakes) != epochs:
            _fail(f"mistakes_ has {len(mistakes)} entries after fit with n_epochs={epochs}")
        if any(m < 0 or m > X.shape[0] for m in mistakes):
            _fail(f"mistakes_={mistakes}: each epoch's count must lie in [0, {X.shape[0]}]")

    def partial_fit_streams():
        if not hasattr(make(), "partial_fit"):
            return
        for what, X, y, Xt, yt in problems:
            classes = np.unique(y)
            if _raises(lambda: make().partial_fit(X[:10], y[:10]), (TextcwError, ValueError)) is None:
                _fail(f"{what}: the first partial_fit call accepted no classes=; it must require "
                      "every label up front, since a later chunk may bring a new one")
            # The first chunk holds a single label: classes_ must still come from classes=.
            first = np.flatnonzero(y == y[0])[:5]
            rest = np.setdiff1d(np.arange(X.shape[0]), first)
            est = make()
            est.partial_fit(X[first], y[first], classes=classes)
            if not np.array_equal(np.asarray(est.classes_), classes):
                _fail(f"{what}: after partial_fit(..., classes={classes.tolist()}) on a one-label "
                      f"chunk, classes_={np.asarray(est.classes_).tolist()}")
            for start in range(0, rest.size, 40):
                chunk = rest[start:start + 40]
                est.partial_fit(X[chunk], y[chunk])
            pred = _check_predictions(est, Xt, y, f"{what} after partial_fit")
            accuracy = float(np.mean(pred == yt))
            if accuracy < min_accuracy:
                _fail(f"{what}: held-out accuracy {accuracy:.2f} < {min_accuracy} after one "
                      "partial_fit pass over a separable problem")
            # One undeclared label among declared ones: it must not be dropped silently.
            mixed = np.array([classes[0], "never-declared", classes[-1]], dtype=object)
            if _raises(lambda: est.partial_fit(X[:3], mixed), (TextcwError, ValueError)) is None:
                _fail(f"{what}: partial_fit accepted a label missing from classes= (it must raise "
                      "rather than skip or invent a class)")
            if isinstance(est, OnlineLinearClassifier):
                # textcw's online learners process a stream in order: chunking must not matter.
                # Up to rounding: a learner may legitimately renormalise its state at the end of
                # a call (e.g. SGD folding its lazy weight scale back into the weights).
                whole = make()
                whole.partial_fit(X[np.concatenate([first, rest])],
                                  y[np.concatenate([first, rest])], classes=classes)
                if not np.allclose(whole.decision_function(Xt), est.decision_function(Xt),
                                   rtol=1e-9, atol=1e-12):
                    _fail(f"{what}: partial_fit over chunks differs from one partial_fit call over "
                          "the same rows in the same order; carry all state between calls")

    def passes_sklearn_contract():
        if not sklearn_checks:
            return
        from sklearn.utils.estimator_checks import check_estimator

        try:
            results = check_estimator(make(), on_fail=None, on_skip=None)
        except Exception as exc:
            _fail(f"scikit-learn's check_estimator could not run: {type(exc).__name__}: {exc}")
        failed = [r for r in results
                  if r["check_name"] in SKLEARN_CONTRACT_CHECKS and r["status"] == "failed"]
        if failed:
            lines = "; ".join(f"{r['check_name']}: {str(r['exception']).strip().splitlines()[0]}"
                              for r in failed)
            _fail(f"scikit-learn estimator checks failed: {lines}")

    # Determinism comes before the CSR/dense comparison, which assumes two fits can agree.
    return [builds_unfitted, params_round_trip, fits_and_predicts, is_deterministic,
            sparse_and_dense_agree, handles_empty_rows, refuses_bad_input, survives_joblib,
            clone_after_fit_is_unfitted, reports_mistakes, partial_fit_streams,
            passes_sklearn_contract]


def _cycle_labels(classes, n: int) -> np.ndarray:
    """``n`` labels cycling through ``classes`` (any valid labels do for a resume test)."""
    classes = np.asarray(classes)
    return classes[np.arange(n) % len(classes)]


def check_learner(factory, *, name: str | None = None, min_accuracy: float = 0.8,
                  sklearn_checks: bool = True, expected_failures: dict[str, str] | None = None) -> None:
    """Check that a learner behaves as textcw (and scikit-learn) expect.

    The learner is built with its default parameters (``random_state`` set to 0 if it is
    ``None``) and trained on a small seeded binary and a 3-class sparse problem from
    :func:`~textcw.testing.make_sparse_classification`. It must:

    - build unfitted, with ``get_params``/``set_params``/``clone`` round-tripping its parameters;
    - fit and return itself, with ``classes_`` the sorted training labels (strings) and
      ``n_features_in_``; predict one label per row from ``classes_``, consistently with
      ``decision_function`` (and ``predict_proba`` rows that are probabilities, if defined);
    - reach ``min_accuracy`` on held-out rows of these separable problems;
    - give the same predictions for CSR and dense input, and for two fits of the same data;
    - cope with documents that have no features;
    - refuse NaN and infinite values with a :class:`textcw.errors.TextcwError`, and refuse a
      different number of columns, mismatched ``X``/``y`` lengths and predicting before fitting;
    - predict identically after a joblib round trip (and resume ``partial_fit`` identically);
    - if it has ``mistakes_``: one non-negative count per epoch;
    - if it has ``partial_fit``: require ``classes=`` on the first call, honour it even when the
      first chunk has a single label, refuse undeclared labels, learn from one pass, and (for
      :class:`~textcw.learners.base.OnlineLinearClassifier` subclasses) give the same model
      whatever the chunking;
    - pass scikit-learn's estimator checks about the estimator contract
      (:data:`SKLEARN_CONTRACT_CHECKS`; skip them with ``sklearn_checks=False``).

    Parameters
    ----------
    factory : class, callable or estimator
        Builds the learner with no arguments (e.g. the class, or
        ``lambda: MyLearner(alpha=2)``); an unfitted instance is cloned.
    name : str, optional
        How to name the learner in failure messages.
    min_accuracy : float, default 0.8
        Held-out accuracy required on the separable test problems.
    sklearn_checks : bool, default True
        Also run the scikit-learn contract checks.
    expected_failures : dict, optional
        ``{check name: reason}`` for known deviations (check names as in the failure message,
        e.g. ``"partial_fit_streams"``). Listed checks must fail: one that passes is reported,
        so the list cannot go stale.

    Raises
    ------
    AssertionError
        Naming the learner, the property that failed and how to fix it.
    """
    component = f"learner {name or _describe(factory)}"
    _run(component, _learner_checks(_maker(factory, "learner"), min_accuracy, sklearn_checks),
         expected_failures)


# ====================================================================================== featurizers
def _featurizer_checks(make, documents, labels, unseen, text_mode: bool,
                       min_accuracy: float) -> list[Callable[[], None]]:
    train_docs, test_docs = documents
    train_labels, test_labels = labels

    def output_ok(X, n_rows: int, what: str, width: int | None = None) -> None:
        if not (sp.issparse(X) or isinstance(X, np.ndarray)):
            _fail(f"{what}: transform returned {type(X).__name__}; return a scipy.sparse matrix "
                  "(CSR preferred) or a 2-d numpy array")
        if len(X.shape) != 2:
            _fail(f"{what}: transform returned a {len(X.shape)}-d result; expected 2-d")
        if X.shape[0] != n_rows:
            _fail(f"{what}: transform returned {X.shape[0]} rows for {n_rows} documents")
        if X.dtype.kind not in "biuf":
            _fail(f"{what}: transform returned dtype {X.dtype}; features must be numeric")
        values = X.data if sp.issparse(X) else X
        if not np.all(np.isfinite(values)):
            _fail(f"{what}: transform returned NaN or infinite values")
        if width is not None and X.shape[1] != width:
            _fail(f"{what}: transform returned {X.shape[1]} columns, but {width} after fit; the "
                  "width must be fixed by fit (a learner needs the same columns at predict time)")
        if X.shape[1] < 1:
            _fail(f"{what}: transform returned no columns")

    def builds_unfitted():
        feat = make()
        for attr in ("fit", "transform", "get_params", "set_params"):
            if not callable(getattr(feat, attr, None)):
                _fail(f"the object built has no {attr}() method; a featurizer is a scikit-learn "
                      "transformer (e.g. a CountVectorizer, or a TransformerMixin + BaseEstimator)")
        copy = clone(feat)
        if not _same_params(copy.get_params(deep=False), feat.get_params(deep=False)):
            _fail("clone() changed the parameters; __init__ must store each argument unchanged")

    def fits_and_transforms():
        fit_docs = list(train_docs) + (awkward_documents() if text_mode else [])
        feat = make()
        if feat.fit(fit_docs) is not feat:
            _fail("fit must return the featurizer itself")
        X = feat.transform(fit_docs)
        what = "training documents" + (" (incl. empty, whitespace-only and non-UTF-8 ones)"
                                       if text_mode else "")
        output_ok(X, len(fit_docs), what)
        if hasattr(feat, "fit_transform"):
            other = make()
            X2 = other.fit_transform(fit_docs)
            output_ok(X2, len(fit_docs), "fit_transform")
            X3 = other.transform(fit_docs)
            if X2.shape != X3.shape or not np.array_equal(_dense(X2), _dense(X3)):
                _fail("fit_transform(docs) differs from transform(docs) of the featurizer it "
                      "fitted; the pipeline uses the first to train and the second to predict")

    def transforms_unseen_documents():
        feat = make().fit(list(train_docs))
        width = feat.transform(list(train_docs[:2])).shape[1]
        output_ok(feat.transform(list(unseen)), len(unseen), "unseen documents", width)
        output_ok(feat.transform(list(unseen[:1])), 1, "a single unseen document", width)

    def is_deterministic():
        a = make().fit(list(train_docs)).transform(list(test_docs))
        b = make().fit(list(train_docs)).transform(list(test_docs))
        if a.shape != b.shape or not np.array_equal(_dense(a), _dense(b)):
            _fail("two fits on the same documents give different features; seed any randomness")

    def leaves_input_alone():
        docs = list(train_docs)
        before = [d.copy() if hasattr(d, "copy") else d for d in docs]
        feat = make().fit(docs)
        feat.transform(docs)
        if len(docs) != len(before) or any(
                not np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
                for a, b in zip(docs, before)):
            _fail("fit/transform modified the documents passed in")

    def survives_joblib():
        feat = make().fit(list(train_docs))
        loaded = _round_trip(feat)
        a, b = feat.transform(list(test_docs)), loaded.transform(list(test_docs))
        if a.shape != b.shape or not np.array_equal(_dense(a), _dense(b)):
            _fail("transform changes after a joblib dump/load round trip")

    def feeds_a_learner():
        if train_labels is None:
            return
        # Train textcw's perceptron from an isolated registry (whatever else is installed).
        learner = make_learner("perceptron", registries=build_registries(
            get_plugin_manager(entry_points=False)), random_state=0)
        feat = make().fit(list(train_docs))
        learner.fit(feat.transform(list(train_docs)), np.asarray(train_labels))
        pred = learner.predict(feat.transform(list(test_docs)))
        accuracy = float(np.mean(pred == np.asarray(test_labels)))
        if accuracy < min_accuracy:
            _fail(f"a perceptron on these features reaches only {accuracy:.2f} held-out accuracy "
                  f"(< {min_accuracy}) on {'two topics with disjoint vocabularies' if text_mode else 'the given documents'}; "
                  "the features lose what distinguishes the documents")

    return [builds_unfitted, fits_and_transforms, transforms_unseen_documents, is_deterministic,
            leaves_input_alone, survives_joblib, feeds_a_learner]


def check_featurizer(factory, documents: Sequence | None = None, labels: Sequence | None = None,
                     *, name: str | None = None, min_accuracy: float = 0.8,
                     expected_failures: dict[str, str] | None = None) -> None:
    """Check that a featurizer turns documents into a fixed-width numeric matrix, robustly.

    By default the documents are text: short documents on two topics from
    :func:`~textcw.testing.make_documents` plus :func:`~textcw.testing.awkward_documents`
    (empty, whitespace-only, non-UTF-8 bytes, non-ASCII, long). The featurizer must:

    - build unfitted, with ``clone`` keeping its parameters;
    - fit (returning itself) on all of them, including the awkward ones, and transform them into
      a 2-d scipy.sparse matrix or numpy array, numeric and finite, one row per document, equal
      to ``fit_transform``;
    - transform documents it never saw (awkward ones too) into the same number of columns;
    - be deterministic, leave its input unchanged, and transform identically after a joblib
      round trip;
    - keep what distinguishes documents: a perceptron trained on its features reaches
      ``min_accuracy`` on held-out documents.

    Parameters
    ----------
    factory : class, callable or transformer
        Builds the featurizer with no arguments; an unfitted instance is cloned.
    documents : sequence, optional
        For featurizers of non-text documents (e.g. pixel rows): the documents to use instead
        of the text defaults. The first two thirds train, the rest are "unseen".
    labels : sequence, optional
        Labels of ``documents``; without them the learnability check is skipped.
    name : str, optional
        How to name the featurizer in failure messages.
    min_accuracy : float, default 0.8
    expected_failures : dict, optional
        ``{check name: reason}`` for known deviations; as for :func:`check_learner`.

    Raises
    ------
    AssertionError
        Naming the featurizer, the property that failed and how to fix it.
    """
    if documents is None:
        train_docs, train_labels = make_documents(20, random_state=0)
        test_docs, test_labels = make_documents(10, random_state=1)
        unseen = ["zebra quokka xylophone", *awkward_documents(), *test_docs[:3]]
        text_mode = True
    else:
        documents = list(documents)
        if len(documents) < 6:
            raise ValueError("check_featurizer needs at least 6 documents")
        cut = (2 * len(documents)) // 3
        train_docs, test_docs = documents[:cut], documents[cut:]
        if labels is not None:
            labels = np.asarray(labels)
            train_labels, test_labels = labels[:cut], labels[cut:]
        else:
            train_labels = test_labels = None
        unseen = test_docs
        text_mode = False
    component = f"featurizer {name or _describe(factory)}"
    _run(component, _featurizer_checks(_maker(factory, "featurizer"), (train_docs, test_docs),
                                       (train_labels, test_labels), unseen, text_mode, min_accuracy),
         expected_failures)


# ====================================================================================== plugins
def _command_names(app) -> set[str]:
    names = set()
    for info in app.registered_commands:
        names.add(info.name or info.callback.__name__.lower().replace("_", "-"))
    for info in app.registered_groups:
        name = info.name or getattr(getattr(info.typer_instance, "info", None), "name", None)
        if name:
            names.add(name)
    return names


def _canonical(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def check_plugin(plugin, *, distribution: str | None = None, check_components: bool = True,
                 featurizer_data: dict | None = None, min_accuracy: float = 0.8,
                 expected_failures: dict[str, dict[str, str]] | None = None) -> None:
    """Check a plugin: it registers cleanly beside the built-ins and everything it adds works.

    The plugin is registered into an isolated plugin manager (the built-ins plus this plugin,
    no other installed plugin). Then:

    - registration succeeds, every hook it implements is a textcw hook (a misspelt hook name
      would otherwise be silently ignored), and it implements at least one;
    - building the registries succeeds: no name clashes with a built-in, every factory is
      callable, and building twice gives the same names (registration has no side effects);
    - it adds at least one learner, featurizer, corpus, evaluator or command; every name is
      something a user can type (no whitespace, no ``:``) and has a one-line summary; corpus
      tasks are a ``{task: summary}`` mapping; commands do not clash with textcw's own;
    - every learner it adds passes :func:`check_learner` and every featurizer
      :func:`check_featurizer`, built by name through :func:`textcw.make_learner` /
      :func:`textcw.make_featurizer` as users build them;
    - with ``distribution``: that installed distribution declares the plugin in the entry-point
      group ``textcw``, and with all installed plugins loaded its names show that distribution
      as their provider (what ``textcw list`` prints).

    Parameters
    ----------
    plugin : module or object
        The plugin, as its entry point loads it (e.g. ``my_package.plugin``).
    distribution : str, optional
        The installed distribution that should provide it (e.g. ``"textcw-example"``).
    check_components : bool, default True
        Run :func:`check_learner` / :func:`check_featurizer` on each registered entry.
    featurizer_data : dict, optional
        ``{featurizer name: (documents, labels)}`` for featurizers of non-text documents.
    min_accuracy : float, default 0.8
        Passed on to the component checks.
    expected_failures : dict, optional
        ``{component name: {check name: reason}}``, passed on to the component checks.

    Raises
    ------
    AssertionError
        Naming the plugin, the property that failed and how to fix it.
    """
    import pluggy

    label = f"plugin {getattr(plugin, '__name__', None) or plugin!r}"
    state: dict = {}

    def registers_in_isolation():
        base_pm = get_plugin_manager(entry_points=False)
        if base_pm.is_registered(plugin):  # a built-in module: compare against the others
            base_pm.unregister(plugin)
            pm = get_plugin_manager(entry_points=False)
        else:
            try:
                pm = get_plugin_manager(entry_points=False, extra=[plugin])
            except pluggy.PluginValidationError as exc:
                _fail(f"pluggy refused it: {exc}; a hook function's arguments must be named as "
                      "in textcw.hookspecs (e.g. register_learners(register))")
        if not pm.get_hookcallers(plugin):
            _fail("it implements no textcw hook; decorate its hook functions with "
                  "@textcw.hookimpl and name them after the hooks in textcw.hookspecs")
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            hooks = sorted(n for n in dir(pm.hook) if not n.startswith("_")
                           and getattr(getattr(pm.hook, n), "spec", None) is not None)
            _fail(f"{exc}; textcw's hooks are: {', '.join(hooks)}")
        state.update(pm=pm, base_pm=base_pm)

    def registrations_are_clean():
        pm, base_pm = state["pm"], state["base_pm"]
        try:
            regs = build_registries(pm)
        except DuplicateNameError as exc:
            _fail(f"a name clashes: {exc}")
        try:
            again = build_registries(pm)
        except DuplicateNameError as exc:
            _fail(f"registering a second time fails ({exc}); keep registration free of global state")
        base = build_registries(base_pm)
        own = {}
        for kind in KINDS:
            names = set(regs[kind].names()) - set(base[kind].names())
            if set(again[kind].names()) != set(regs[kind].names()):
                _fail(f"building the registries twice gives different {kind}; registration "
                      "must not depend on global state")
            own[kind] = sorted(names)
        commands = _plugin_commands(pm, plugin)
        if not any(own.values()) and not commands:
            _fail("it registers nothing (no learner, featurizer, corpus, evaluator or command)")
        for kind, names in own.items():
            for n in names:
                entry = regs[kind].get(n)
                if not _NAME.match(n):
                    _fail(f"{regs[kind].singular} name {n!r} is not something users can type: use "
                          "letters, digits, '.', '_', '+' and '-' (no spaces, no ':')")
                if not entry.summary:
                    _fail(f"{regs[kind].singular} {n!r} has no summary; `textcw list {kind}` "
                          "shows it: pass summary='one line' to register")
                tasks = entry.extra.get("tasks")
                if kind == "corpora" and tasks is not None:
                    if not isinstance(tasks, dict) or not all(
                            isinstance(t, str) and _NAME.match(t) and isinstance(s, str)
                            for t, s in tasks.items()):
                        _fail(f"corpus {n!r}: tasks must be a {{task name: one-line summary}} dict "
                              f"with typeable names; got {tasks!r}")
        if commands:
            from textcw.cli import build_app

            builtin = _command_names(build_app(base_pm))
            clash = sorted(builtin & commands)
            if clash:
                _fail(f"its command(s) {clash} clash with textcw's own commands")
        state.update(regs=regs, own=own)

    def components_pass_their_checks():
        if not check_components:
            return
        from textcw.pipeline import make_featurizer

        regs, own = state["regs"], state["own"]
        expected = dict(expected_failures or {})
        stray = sorted(set(expected) - set(own["learners"]) - set(own["featurizers"]))
        if stray:
            raise _UsageError(f"expected_failures names {stray}, which the plugin does not register")
        for n in own["learners"]:
            check_learner(lambda n=n: make_learner(n, registries=regs), name=repr(n),
                          min_accuracy=min_accuracy, expected_failures=expected.get(n))
        for n in own["featurizers"]:
            docs, labels = (featurizer_data or {}).get(n, (None, None))
            check_featurizer(lambda n=n: make_featurizer(n, registries=regs), docs, labels,
                             name=repr(n), min_accuracy=min_accuracy,
                             expected_failures=expected.get(n))

    def is_installed_as_distribution():
        if distribution is None:
            return
        try:
            dist = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            _fail(f"distribution {distribution!r} is not installed (pip install it first)")
        points = [ep for ep in dist.entry_points if ep.group == PROJECT]
        if not points:
            _fail(f"distribution {distribution!r} declares no entry point in group {PROJECT!r}; "
                  f"add [project.entry-points.{PROJECT}] to its pyproject.toml")
        module = getattr(plugin, "__name__", None)
        if module not in {ep.value.split(":")[0].strip() for ep in points}:
            _fail(f"the {PROJECT!r} entry points of {distribution!r} "
                  f"({', '.join(f'{ep.name} = {ep.value}' for ep in points)}) do not point to "
                  f"{module!r}")
        pm = get_plugin_manager(entry_points=True)
        regs = build_registries(pm)
        want = _canonical(dist.metadata["Name"])
        # A plugin textcw skipped as broken has nothing registered: say why, not "unknown name".
        for broken in broken_plugins(pm):
            if _canonical(broken.distribution or "") == want:
                _fail(f"installed, textcw skips it as broken: {broken.reason}")
        for kind, names in state["own"].items():
            for n in names:
                provider = regs[kind].get(n).provider
                if _canonical(provider) != want:
                    _fail(f"with installed plugins loaded, {regs[kind].singular} {n!r} is provided "
                          f"by {provider!r}, not {dist.metadata['Name']!r}")

    _run(label, [registers_in_isolation, registrations_are_clean, components_pass_their_checks,
                 is_installed_as_distribution])


def _plugin_commands(pm, plugin) -> set[str]:
    """The command names ``plugin``'s ``register_commands`` adds to an empty application."""
    impls = [i for i in pm.hook.register_commands.get_hookimpls() if i.plugin is plugin]
    if not impls:
        return set()
    import typer

    app = typer.Typer()
    for impl in impls:
        impl.function(app=app)
    names = _command_names(app)
    if not names:
        _fail("its register_commands hook adds no command")
    return names
