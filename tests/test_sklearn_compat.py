"""Each shim of :mod:`textcw._sklearn_compat` against the installed scikit-learn: a release that
moves or changes one of the private names textcw relies on fails here, naming the shim."""

from __future__ import annotations

import pickle

import pytest
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.linear_model import LogisticRegression

from textcw import _sklearn_compat as compat


def test_invalid_parameter_error_is_scikit_learns_own():
    # the real class, not the stand-in: scikit-learn raises it for a parameter outside its constraints
    with pytest.raises(compat.InvalidParameterError) as info:
        CountVectorizer(min_df=-1).fit(["a bb", "cc dd"])
    assert type(info.value).__module__.startswith("sklearn.")
    assert "min_df" in str(info.value)
    assert issubclass(compat.InvalidParameterError, ValueError)


@pytest.mark.parametrize("estimator", [CountVectorizer(), HashingVectorizer(), LogisticRegression()])
def test_declared_constraints_are_found_and_checked_without_fitting(estimator):
    assert compat.has_declared_constraints(estimator)
    compat.validate_declared_params(estimator)  # the defaults are valid
    name = {"CountVectorizer": "max_df", "HashingVectorizer": "n_features", "LogisticRegression": "C"}[
        type(estimator).__name__]
    estimator.set_params(**{name: -3})
    with pytest.raises(compat.InvalidParameterError, match=name):
        compat.validate_declared_params(estimator)


def test_an_object_without_declared_constraints_is_recognised():
    class Plain:
        def get_params(self, deep=True):
            return {}

    assert not compat.has_declared_constraints(Plain())


@pytest.mark.parametrize("make", [lambda: CountVectorizer(stop_words=["the"]), lambda: HashingVectorizer(stop_words=["the"])])
def test_the_stop_word_check_is_recorded_under_the_named_attribute(make):
    vectorizer = make()
    vectorizer.fit_transform(["the cat sat", "the dog ran"])
    recorded = getattr(vectorizer, compat.STOP_WORDS_CHECK_ATTRIBUTE)
    assert recorded == id(vectorizer.stop_words)
    # dropping it (as saving a model does) loses nothing: the copy featurizes identically
    copy = pickle.loads(pickle.dumps(vectorizer))
    delattr(copy, compat.STOP_WORDS_CHECK_ATTRIBUTE)
    docs = ["the cat ran", "a dog sat"]
    assert (copy.transform(docs) != vectorizer.transform(docs)).nnz == 0
