"""The featurizer checks: documents in, a fixed-width numeric matrix out, robustly.

Each check is a :class:`~textcw.testing.runner.Check` named after the property it holds a
featurizer to; :data:`FEATURIZER_CHECKS` lists them in the order :func:`check_featurizer` runs
them.

Tolerance. Where two feature matrices must agree (``fit_transform`` against ``transform`` in
``fits_and_transforms``, two fits in ``is_deterministic``, before and after a joblib round trip
in ``survives_joblib``), they must have the same shape and hold the same numbers: their dense
forms are compared with ``numpy.array_equal``, that is exact floating-point equality with no
tolerance, not bit equality. The storage (a sparse matrix or an array, CSR or CSC, explicit
zeros, the order of the stored indices), the dtype (an integer 1 equals a float 1.0) and the
sign of zero (``0.0 == -0.0``) do not matter; NaN never reaches the comparison, since
``fits_and_transforms`` refuses non-finite output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from textcw.pipeline import make_learner
from textcw.plugins import build_registries, get_plugin_manager, use_registries
from textcw.testing.datasets import awkward_documents, make_documents
from textcw.testing.runner import (
    Check,
    Component,
    describe,
    fail,
    maker,
    round_trip,
    same_features,
    same_params,
)

__all__ = ["FEATURIZER_CHECKS", "check_featurizer", "featurizer_under_test"]


class FeaturizerSubject:
    """What each featurizer check receives: the factory, the documents and the labels."""

    def __init__(self, make: Callable[[], object] | None, documents: Sequence | None,
                 labels: Sequence | None, min_accuracy: float):
        self.make, self.min_accuracy = make, min_accuracy
        if documents is None:
            self.train_docs, self.train_labels = make_documents(20, random_state=0)
            self.test_docs, self.test_labels = make_documents(10, random_state=1)
            self.unseen = ["zebra quokka xylophone", *awkward_documents(), *self.test_docs[:3]]
            self.text_mode = True
            return
        documents = list(documents)
        if len(documents) < 6:
            raise ValueError("check_featurizer needs at least 6 documents")
        cut = (2 * len(documents)) // 3
        self.train_docs, self.test_docs = documents[:cut], documents[cut:]
        if labels is not None:
            labels = np.asarray(labels)
            self.train_labels, self.test_labels = labels[:cut], labels[cut:]
        else:
            self.train_labels = self.test_labels = None
        self.unseen = self.test_docs
        self.text_mode = False


def output_ok(X, n_rows: int, what: str, width: int | None = None) -> None:
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        fail(f"{what}: transform returned {type(X).__name__}; return a scipy.sparse matrix "
             "(CSR preferred) or a 2-d numpy array")
    if len(X.shape) != 2:
        fail(f"{what}: transform returned a {len(X.shape)}-d result; expected 2-d")
    if X.shape[0] != n_rows:
        fail(f"{what}: transform returned {X.shape[0]} rows for {n_rows} documents")
    if X.dtype.kind not in "biuf":
        fail(f"{what}: transform returned dtype {X.dtype}; features must be numeric")
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        fail(f"{what}: transform returned NaN or infinite values")
    if width is not None and X.shape[1] != width:
        fail(f"{what}: transform returned {X.shape[1]} columns, but {width} after fit; the "
             "width must be fixed by fit (a learner needs the same columns at predict time)")
    if X.shape[1] < 1:
        fail(f"{what}: transform returned no columns")


def builds_unfitted(s: FeaturizerSubject) -> None:
    feat = s.make()
    for attr in ("fit", "transform", "get_params", "set_params"):
        if not callable(getattr(feat, attr, None)):
            fail(f"the object built has no {attr}() method; a featurizer is a scikit-learn "
                 "transformer (e.g. a CountVectorizer, or a TransformerMixin + BaseEstimator)")
    copy = clone(feat)
    if not same_params(copy.get_params(deep=False), feat.get_params(deep=False)):
        fail("clone() changed the parameters; __init__ must store each argument unchanged")


def fits_and_transforms(s: FeaturizerSubject) -> None:
    fit_docs = list(s.train_docs) + (awkward_documents() if s.text_mode else [])
    feat = s.make()
    if feat.fit(fit_docs) is not feat:
        fail("fit must return the featurizer itself")
    X = feat.transform(fit_docs)
    what = "training documents" + (" (incl. empty, whitespace-only and non-UTF-8 ones)"
                                   if s.text_mode else "")
    output_ok(X, len(fit_docs), what)
    if hasattr(feat, "fit_transform"):
        other = s.make()
        X2 = other.fit_transform(fit_docs)
        output_ok(X2, len(fit_docs), "fit_transform")
        X3 = other.transform(fit_docs)
        if not same_features(X2, X3):
            fail("fit_transform(docs) differs from transform(docs) of the featurizer it "
                 "fitted; the pipeline uses the first to train and the second to predict")


def transforms_unseen_documents(s: FeaturizerSubject) -> None:
    feat = s.make().fit(list(s.train_docs))
    width = feat.transform(list(s.train_docs[:2])).shape[1]
    output_ok(feat.transform(list(s.unseen)), len(s.unseen), "unseen documents", width)
    output_ok(feat.transform(list(s.unseen[:1])), 1, "a single unseen document", width)


def is_deterministic(s: FeaturizerSubject) -> None:
    a = s.make().fit(list(s.train_docs)).transform(list(s.test_docs))
    b = s.make().fit(list(s.train_docs)).transform(list(s.test_docs))
    if not same_features(a, b):
        fail("two fits on the same documents give different features; seed any randomness")


def leaves_input_alone(s: FeaturizerSubject) -> None:
    docs = list(s.train_docs)
    before = [d.copy() if hasattr(d, "copy") else d for d in docs]
    feat = s.make().fit(docs)
    feat.transform(docs)
    if len(docs) != len(before) or any(
            not np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
            for a, b in zip(docs, before)):
        fail("fit/transform modified the documents passed in")


def survives_joblib(s: FeaturizerSubject) -> None:
    feat = s.make().fit(list(s.train_docs))
    loaded = round_trip(feat)
    a, b = feat.transform(list(s.test_docs)), loaded.transform(list(s.test_docs))
    if not same_features(a, b):
        fail("transform changes after a joblib dump/load round trip")


def feeds_a_learner(s: FeaturizerSubject) -> None:
    if s.train_labels is None:
        return
    # Train textcw's perceptron from an isolated registry (whatever else is installed).
    with use_registries(build_registries(get_plugin_manager(entry_points=False))):
        learner = make_learner("perceptron", random_state=0)
    feat = s.make().fit(list(s.train_docs))
    learner.fit(feat.transform(list(s.train_docs)), np.asarray(s.train_labels))
    pred = learner.predict(feat.transform(list(s.test_docs)))
    accuracy = float(np.mean(pred == np.asarray(s.test_labels)))
    if accuracy < s.min_accuracy:
        fail(f"a perceptron on these features reaches only {accuracy:.2f} held-out accuracy "
             f"(< {s.min_accuracy}) on {'two topics with disjoint vocabularies' if s.text_mode else 'the given documents'}; "
             "the features lose what distinguishes the documents")



FEATURIZER_CHECKS: tuple[Check, ...] = tuple(Check(f.__name__, f) for f in (
    builds_unfitted, fits_and_transforms, transforms_unseen_documents, is_deterministic,
    leaves_input_alone, survives_joblib, feeds_a_learner,
))


def featurizer_under_test(factory, documents: Sequence | None = None, labels: Sequence | None = None,
                          *, name: str | None = None, min_accuracy: float = 0.8,
                          expected_failures: dict[str, str] | None = None) -> Component:
    """A featurizer as the checks take it, for :func:`~textcw.testing.parametrize_with_checks`
    (one pytest item per check); the parameters are those of :func:`check_featurizer`.

    A factory that is neither callable nor an estimator instance is a ``TypeError``;
    fewer than 6 ``documents``, or an ``expected_failures`` key naming no check, a ``ValueError``.
    """
    subject = FeaturizerSubject(None, documents, labels, min_accuracy)  # documents checked first
    subject.make = maker(factory, "featurizer")
    return Component("featurizer", name or describe(factory), subject, FEATURIZER_CHECKS,
                     expected_failures)


def check_featurizer(factory, documents: Sequence | None = None, labels: Sequence | None = None,
                     *, name: str | None = None, min_accuracy: float = 0.8,
                     expected_failures: dict[str, str] | None = None) -> None:
    """Check that a featurizer turns documents into a fixed-width numeric matrix, robustly,
    stopping at the first failure (:func:`~textcw.testing.parametrize_with_checks` runs each
    check as its own test).

    By default the documents are text: 40 short documents on two topics from
    :func:`~textcw.testing.make_documents` to train on, 20 others to test on, and
    :func:`~textcw.testing.awkward_documents` (empty, whitespace-only, non-UTF-8 bytes,
    non-ASCII, long). The checks, in order (:data:`FEATURIZER_CHECKS`):

    ``builds_unfitted``
        It has ``fit``, ``transform``, ``get_params`` and ``set_params``; ``clone`` keeps its
        parameters.
    ``fits_and_transforms``
        ``fit`` returns itself on all the training documents, the awkward ones included, and
        ``transform`` turns them into a 2-d scipy.sparse matrix or numpy array, numeric and
        finite, with one row per document and at least one column; ``fit_transform`` gives the
        same features as ``transform`` (see the module docstring for what "same" means).
    ``transforms_unseen_documents``
        Documents it never saw (awkward ones too), and a single one, get the width fit fixed.
    ``is_deterministic``
        Two fits on the same documents give the same features.
    ``leaves_input_alone``
        ``fit`` and ``transform`` do not modify the documents passed in.
    ``survives_joblib``
        It transforms identically after a joblib round trip.
    ``feeds_a_learner``
        A perceptron trained on its features of the training documents reaches
        ``min_accuracy`` on the test documents (skipped when ``documents`` come without
        ``labels``).

    Parameters
    ----------
    factory : class, callable or transformer
        Builds the featurizer with no arguments; an unfitted instance is cloned.
    documents : sequence, optional
        For featurizers of non-text documents (e.g. pixel rows): the documents to use instead
        of the text defaults, at least 6. The first two thirds train, the rest are "unseen".
    labels : sequence, optional
        Labels of ``documents``; without them ``feeds_a_learner`` is skipped.
    name : str, optional
        How to name the featurizer in failure messages (default: the factory's qualified name).
    min_accuracy : float, default 0.8
        Held-out accuracy (fraction of test documents) ``feeds_a_learner`` requires.
    expected_failures : dict, optional
        ``{check name: reason}`` for known deviations; the keys are names from the list above
        (an unknown name is a ``ValueError``). Strict, as for :func:`~textcw.testing.check_learner`:
        a listed check must fail, and one that passes is reported.

    Raises
    ------
    AssertionError
        ``"featurizer <name> fails <check>: <what failed and how to fix it>"``.
    ValueError
        Fewer than 6 ``documents``.
    """
    featurizer_under_test(factory, documents, labels, name=name, min_accuracy=min_accuracy,
                          expected_failures=expected_failures).check_all()
