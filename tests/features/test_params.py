"""Featurizer parameters: one check (textcw.features.params) for training and imported models."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import textcw
from textcw.errors import ParameterError
from textcw.features.params import MAX_NGRAM, SAFE_TOKEN_PATTERNS


@pytest.mark.parametrize("name", ["binary-bow", "bigram-counts", "hashing", "tfidf"])
@pytest.mark.parametrize("params,message", [
    ({"token_pattern": "(a|aa)+$"}, "token_pattern='\\(a\\|aa\\)\\+\\$' is not allowed"),
    ({"ngram_range": (1, MAX_NGRAM + 1)}, "ngram_range=\\(1, 11\\) is not allowed"),
    ({"input": "filename"}, "input='filename' is not allowed"),
    ({"analyzer": str.split}, "analyzer=.* is not allowed; featurizer parameters are data, not code"),
    ({"tokenizer": str.split}, "tokenizer=.* is not allowed"),
    ({"preprocessor": str.lower}, "preprocessor=.* is not allowed"),
    ({"strip_accents": str.lower}, "strip_accents=.* is not allowed"),
    ({"dtype": "int64"}, "dtype='int64' is not allowed; use float64"),
    ({"encoding": "rot13"}, "encoding='rot13' is not allowed"),
    ({"decode_error": "explode"}, "decode_error"),
])
def test_train_refuses_what_import_refuses(name, params, message):
    with pytest.raises(ParameterError, match=message):
        textcw.make_featurizer(name, **params)


def test_set_params_cannot_sneak_past_the_check():
    feat = textcw.make_featurizer("binary-bow")
    feat.set_params(token_pattern="(x+x+)+y")
    with pytest.raises(ParameterError, match="token_pattern"):
        feat.fit(["some text here"])
    hashed = textcw.make_featurizer("hashing")
    hashed.set_params(input="filename")
    with pytest.raises(ParameterError, match="input='filename'"):
        hashed.fit(["x"])


@pytest.mark.parametrize("pattern", SAFE_TOKEN_PATTERNS)
def test_every_safe_pattern_featurizes(pattern):
    X = textcw.make_featurizer("binary-bow", token_pattern=pattern).fit_transform(["a bb ccc", "bb dd1 e_f"])
    assert X.shape[0] == 2 and X.nnz > 0


@settings(max_examples=40)
@given(st.integers(-3, 14), st.integers(-3, 14))
def test_ngram_ranges_within_bounds_are_accepted_and_the_rest_refused(low, high):
    ok = 1 <= low <= high <= MAX_NGRAM
    if ok:
        feat = textcw.make_featurizer("bigram-counts", ngram_range=[low, high])
        assert feat.get_params()["ngram_range"] == (low, high)
    else:
        with pytest.raises(ParameterError, match=r"ngram_range=\(-?\d+, -?\d+\) is not allowed"):
            textcw.make_featurizer("bigram-counts", ngram_range=[low, high])


@settings(max_examples=60)
@given(st.text(min_size=1, max_size=20))
def test_only_the_listed_patterns_pass(pattern):
    try:
        textcw.make_featurizer("binary-bow", token_pattern=pattern)
    except ParameterError as exc:
        assert pattern not in SAFE_TOKEN_PATTERNS and "token_pattern" in str(exc)
    else:
        assert pattern in SAFE_TOKEN_PATTERNS


@pytest.mark.parametrize("pattern", SAFE_TOKEN_PATTERNS)
def test_safe_patterns_have_one_repetition_of_one_character_class(pattern):
    """The argument for linear time (module docstring): at most two single-character items, one
    repeated, no alternation, no group. Checked on the parsed pattern so a new entry must fit it."""
    import re._parser as parser

    from re._constants import AT, BRANCH, CATEGORY, IN, MAX_REPEAT, NOT_LITERAL, LITERAL, SUBPATTERN

    items = list(parser.parse(pattern))
    repeats = [arg for op, arg in items if op is MAX_REPEAT]
    assert all(op in (AT, IN, CATEGORY, LITERAL, NOT_LITERAL, MAX_REPEAT) for op, _ in items)
    assert not any(op in (BRANCH, SUBPATTERN) for op, _ in items)
    assert len(repeats) == 1 and all(op in (IN, CATEGORY, LITERAL, NOT_LITERAL) for op, _ in repeats[0][2])
    assert re.compile(pattern)
