"""McNemar's test against hand-computed 2x2 tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, chi2

from textcw.errors import InputError
from textcw.evaluation.mcnemar import mcnemar, mcnemar_from_counts, mcnemar_test, significance_mark


def test_exact_binomial_for_few_discordant_pairs():
    # b=3, c=1: two-sided p = 2 * P(X <= 1), X ~ Bin(4, 1/2) = 2 * (1 + 4) / 16
    r = mcnemar_from_counts(3, 1)
    assert r.method == "exact" and r.statistic is None
    assert r.p_value == pytest.approx(10 / 16)
    # b=10, c=2: 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 * 79 / 4096
    assert mcnemar_from_counts(10, 2).p_value == pytest.approx(158 / 4096)
    assert mcnemar_from_counts(2, 10).p_value == pytest.approx(158 / 4096)


def test_exact_agrees_with_scipy_binomial_tail():
    for b, c in [(0, 7), (5, 9), (12, 12), (1, 23)]:
        n, k = b + c, min(b, c)
        expected = min(1.0, 2 * binom.cdf(k, n, 0.5))
        assert mcnemar_from_counts(b, c).p_value == pytest.approx(expected)


def test_continuity_corrected_chi_square_for_many_pairs():
    # b=15, c=35: (|15 - 35| - 1)^2 / 50 = 361 / 50; chi2(1) tail = erfc(sqrt(x / 2))
    r = mcnemar_from_counts(15, 35)
    assert r.method == "chi2"
    assert r.statistic == pytest.approx(7.22)
    assert r.p_value == pytest.approx(math.erfc(math.sqrt(7.22 / 2)))
    assert r.p_value == pytest.approx(chi2.sf(7.22, 1))
    assert r.p_value == pytest.approx(0.00721, abs=5e-5)


def test_threshold_between_exact_and_chi_square():
    assert mcnemar_from_counts(12, 12).method == "exact"      # 24 discordant
    assert mcnemar_from_counts(13, 12).method == "chi2"       # 25
    assert mcnemar_from_counts(13, 12, exact_below=100).method == "exact"


def test_no_discordant_pair_is_p_one():
    r = mcnemar_from_counts(0, 0, 40)
    assert (r.method, r.p_value, r.n) == ("none", 1.0, 40)


def test_from_predictions_builds_the_table():
    y = np.array(list("aabbaabbab"))
    a = np.array(list("aabbaabbbb"))   # wrong on doc 8
    b = np.array(list("abbbbabbaa"))   # wrong on docs 1, 4, 9
    r = mcnemar()(y, a, b)
    # a right & b wrong: docs 1, 4, 9 -> 3; a wrong & b right: doc 8 -> 1
    assert (r.b, r.c, r.n) == (3, 1, 10)
    assert r.p_value == pytest.approx(10 / 16)


def test_marks_follow_jmlr_tables():
    assert [significance_mark(p) for p in (0.0005, 0.005, 0.03, 0.2)] == ["†", "∗", "⋆", ""]


def test_mismatched_documents_are_an_error():
    with pytest.raises(InputError, match="same documents"):
        mcnemar_test([True, False], [True])
    with pytest.raises(InputError):
        mcnemar_from_counts(-1, 2)


def test_round_trip():
    r = mcnemar_from_counts(15, 35)
    assert type(r).from_json(r.to_json()) == r
