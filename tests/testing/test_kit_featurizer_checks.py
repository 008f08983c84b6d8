"""check_featurizer: the built-ins pass, and each kind of broken featurizer fails, saying why."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
import textcw
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.preprocessing import FunctionTransformer
from textcw.plugins import use_registries
from textcw.testing import check_featurizer, make_documents, make_registries, make_sparse_classification


def word_mappings():
    """Documents as ``{feature: value}`` mappings, the input of featurizers of precomputed vectors."""
    docs, labels = make_documents(30, random_state=0)
    return [{w.strip(",.!").lower(): 1.0 for w in doc.split()} for doc in docs], labels


# Built-in featurizers whose documents are not text, with documents they take.
NON_TEXT_DOCUMENTS = {"precomputed": word_mappings}


@pytest.mark.parametrize("name", make_registries().featurizers.names())
def test_builtin_featurizers_pass(name):
    regs = make_registries()
    documents, labels = NON_TEXT_DOCUMENTS[name]() if name in NON_TEXT_DOCUMENTS else (None, None)
    with use_registries(regs):
        check_featurizer(lambda: textcw.make_featurizer(name), documents, labels, name=name)


def test_a_stateless_hashing_featurizer_passes():
    check_featurizer(lambda: HashingVectorizer(n_features=2**10, decode_error="replace"))


def test_non_text_documents_can_be_supplied():
    """E.g. a featurizer of pixel rows: the text-specific documents are not forced on it."""
    X, y = make_sparse_classification(60, 60, 2, random_state=3)
    rows = list(X.toarray())
    check_featurizer(lambda: FunctionTransformer(np.vstack), rows, y)
    with pytest.raises(ValueError, match="at least 6 documents"):
        check_featurizer(lambda: FunctionTransformer(np.vstack), rows[:3], y[:3])


# ---------------------------------------------------------------- deliberately broken featurizers
def strict_utf8():
    return CountVectorizer(decode_error="strict")


class RefitsOnTransform(BaseEstimator, TransformerMixin):
    """Builds a new vocabulary for every call, so the width depends on the documents."""

    def fit(self, docs, y=None):
        return self

    def transform(self, docs):
        return CountVectorizer(decode_error="replace").fit_transform(docs)


class DocumentLengths(BaseEstimator, TransformerMixin):
    """Returns a 1-d array of document lengths."""

    def fit(self, docs, y=None):
        return self

    def transform(self, docs):
        return np.array([float(len(d)) for d in docs])


class ConstantFeatures(BaseEstimator, TransformerMixin):
    """Well-formed output that carries no information."""

    def fit(self, docs, y=None):
        return self

    def transform(self, docs):
        return sp.csr_matrix(np.ones((len(docs), 5)))


class LowercasesInPlace(CountVectorizer):
    """Normalises the caller's list while fitting."""

    def fit(self, raw_documents, y=None):
        for i, doc in enumerate(raw_documents):
            if isinstance(doc, str):
                raw_documents[i] = doc.lower()
        return super().fit(raw_documents, y)


class ProducesNaN(CountVectorizer):
    """Divides by the number of words, which is zero for an empty document."""

    def transform(self, raw_documents):
        X = super().transform(raw_documents).astype(float)
        lengths = np.asarray(X.sum(axis=1)).ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            return sp.csr_matrix(X.toarray() / lengths[:, None])


class ShufflesColumnsUnseeded(BaseEstimator, TransformerMixin):
    """Orders its columns with the global random state."""

    def fit(self, docs, y=None):
        self.vectorizer_ = CountVectorizer(decode_error="replace").fit(docs)
        self.order_ = np.random.permutation(len(self.vectorizer_.vocabulary_))
        return self

    def transform(self, docs):
        return self.vectorizer_.transform(docs)[:, self.order_]


class KeepsALambda(CountVectorizer):
    """Keeps an unpicklable preprocessor as fitted state."""

    def fit(self, raw_documents, y=None):
        self.normalize_ = lambda doc: doc
        return super().fit(raw_documents, y)


class FitTransformDisagrees(CountVectorizer):
    """Counts while fitting, but binary when transforming: trains on different features."""

    def transform(self, raw_documents):
        X = super().transform(raw_documents)
        X.data[:] = 1
        return X


class ReturnsList(BaseEstimator, TransformerMixin):
    def fit(self, docs, y=None):
        return self

    def transform(self, docs):
        return [[1.0] for _ in docs]


@pytest.mark.parametrize("featurizer, check, says", [
    (strict_utf8, "fits_and_transforms", "raised UnicodeDecodeError"),
    (RefitsOnTransform, "transforms_unseen_documents", "the width must be fixed by fit"),
    (DocumentLengths, "fits_and_transforms", "1-d result; expected 2-d"),
    (ConstantFeatures, "feeds_a_learner", r"perceptron on these features reaches only 0\.\d+"),
    (partial(LowercasesInPlace, decode_error="replace"), "leaves_input_alone",
     "modified the documents passed in"),
    (partial(ProducesNaN, decode_error="replace"), "fits_and_transforms", "NaN or infinite values"),
    (ShufflesColumnsUnseeded, "is_deterministic", "two fits on the same documents give different"),
    (partial(KeepsALambda, decode_error="replace"), "survives_joblib", "raised .*Pickl"),
    (partial(FitTransformDisagrees, decode_error="replace"), "fits_and_transforms",
     "fit_transform.docs. differs from transform.docs."),
    (ReturnsList, "fits_and_transforms", "returned list; return a scipy.sparse matrix"),
])
def test_broken_featurizer_fails_with_a_clear_message(featurizer, check, says):
    with pytest.raises(AssertionError, match=f"featurizer broken fails {check}: .*{says}"):
        check_featurizer(featurizer, name="broken")


def test_missing_transform_is_reported():
    class FitOnly(BaseEstimator):
        def fit(self, docs, y=None):
            return self

    with pytest.raises(AssertionError, match="builds_unfitted: the object built has no transform"):
        check_featurizer(FitOnly, name="FitOnly")
