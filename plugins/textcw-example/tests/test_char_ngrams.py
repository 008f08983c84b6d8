"""The ``char-ngrams`` featurizer."""

from __future__ import annotations

import numpy as np
import pytest
import textcw
from numpy.testing import assert_array_equal
from textcw.errors import ParameterError
from textcw.plugins import use_registries
from textcw.testing import featurizer_under_test, parametrize_with_checks

import textcw_example.plugin
from textcw_example.featurizers import char_ngrams

# The kit's fixtures (make_registries, binary_data, topic_corpus, ...).
pytest_plugins = ["textcw.testing.fixtures"]


@pytest.fixture
def registries(make_registries):
    """The built-ins plus this plugin, in use for the test (whatever else is installed)."""
    regs = make_registries(textcw_example.plugin)
    with use_registries(regs):
        yield regs


def settings(**params):
    """The featurizer with ``params``, as the kit's checks take it (named for the test ids)."""
    shown = ", ".join(f"{key}={value!r}" for key, value in params.items())
    return featurizer_under_test(lambda: char_ngrams(**params), name=f"char-ngrams({shown})")


# One test per check and setting, so that every failing check shows at once.
@parametrize_with_checks([settings(), settings(ngram_range=(3, 5)), settings(ngram_range=(1, 1))])
def test_passes_the_featurizer_checks(component, check):
    check(component)


def test_ngrams_stay_inside_words():
    vectorizer = char_ngrams(ngram_range=(2, 2)).fit(["ab cd"])
    # Each word is padded with one space on each side; no n-gram spans "b c".
    assert sorted(vectorizer.get_feature_names_out()) == [" a", " c", "ab", "b ", "cd", "d "]


def test_features_are_binary_and_case_folded():
    vectorizer = char_ngrams(ngram_range=(2, 3))
    X = vectorizer.fit_transform(["aaaa aaaa AAAA", "aaaa"])
    assert X.dtype == np.float64
    assert set(np.unique(X.data)) == {1.0}
    assert_array_equal(X[0].toarray(), X[1].toarray())  # repetition and case do not matter


def test_undecodable_bytes_are_replaced_not_fatal():
    vectorizer = char_ngrams(ngram_range=(2, 2)).fit([b"caf\xe9 au lait", "caf\u00e9"])
    names = set(vectorizer.get_feature_names_out())
    assert "f\ufffd" in names and "f\u00e9" in names


def test_registered_factory_takes_parameters_from_the_command_line(registries):
    # --featurizer-param ngram_range=[3,4] arrives as a JSON list.
    featurizer = textcw.make_featurizer("char-ngrams", ngram_range=[3, 4])
    assert featurizer.get_params()["ngram_range"] == (3, 4)
    assert all(3 <= len(f) <= 4 for f in featurizer.fit(["hello world"]).get_feature_names_out())


def test_unknown_parameter_is_refused(registries):
    with pytest.raises(ParameterError, match="unknown parameter 'n'.*ngram_range"):
        textcw.make_featurizer("char-ngrams", n=3)
