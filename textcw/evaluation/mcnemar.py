"""``mcnemar``: are two classifiers' error rates on the same test documents different?

The papers mark significant differences with McNemar's test (JMLR 2012 Tables 3-4; EMNLP 2009
Table 3). Only the discordant documents count: ``b`` that the first classifier got right and
the second wrong, ``c`` the reverse. Under the null hypothesis each discordant document is a
fair coin, so

- few discordant pairs (``b + c < exact_below``, 25 by default, the usual rule of thumb): the
  exact two-sided binomial test, ``scipy.stats.binomtest(b, b + c, 0.5)``;
- otherwise the chi-square approximation with Edwards' continuity correction,
  ``(|b - c| - 1)^2 / (b + c)`` against ``scipy.stats.chi2(1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, chi2

from textcw.errors import InputError
from textcw.evaluation.folds import RIGHT, UNTESTED
from textcw.evaluation.report import Report

EXACT_BELOW = 25
# Significance marks of JMLR 2012 Tables 3-4: p < 0.05, 0.01, 0.001.
LEVELS = ((0.001, "†"), (0.01, "∗"), (0.05, "⋆"))


@dataclass
class McNemarResult(Report):
    """One comparison.

    Attributes
    ----------
    b : int
        Documents the first classifier got right and the second wrong.
    c : int
        Documents the first got wrong and the second right.
    n : int
        Documents compared.
    method : {"exact", "chi2", "none"}
        ``none`` when there is no discordant document (p = 1).
    statistic : float or None
        The chi-square statistic (``chi2`` only).
    p_value : float
    """

    b: int
    c: int
    n: int
    method: str
    statistic: float | None
    p_value: float

    @property
    def mark(self) -> str:
        return significance_mark(self.p_value)


def significance_mark(p_value: float) -> str:
    """``†`` p < 0.001, ``∗`` p < 0.01, ``⋆`` p < 0.05, else ``""`` (JMLR 2012 Table 3)."""
    for level, mark in LEVELS:
        if p_value < level:
            return mark
    return ""


def mcnemar_from_counts(b: int, c: int, n: int | None = None, *, exact_below: int = EXACT_BELOW) -> McNemarResult:
    """McNemar's test from the two discordant counts."""
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise InputError(f"discordant counts must be >= 0; got b={b}, c={c}")
    n = b + c if n is None else int(n)
    discordant = b + c
    if discordant == 0:
        return McNemarResult(b, c, n, "none", None, 1.0)
    if discordant < exact_below:
        return McNemarResult(b, c, n, "exact", None, float(binomtest(b, discordant, 0.5).pvalue))
    statistic = (abs(b - c) - 1.0) ** 2 / discordant
    return McNemarResult(b, c, n, "chi2", float(statistic), float(chi2.sf(statistic, 1)))


def mcnemar_test(correct_a, correct_b, *, exact_below: int = EXACT_BELOW) -> McNemarResult:
    """McNemar's test from per-document correctness (booleans, same documents in the same order)."""
    a = np.asarray(correct_a, dtype=bool)
    bb = np.asarray(correct_b, dtype=bool)
    if a.shape != bb.shape or a.ndim != 1:
        raise InputError(f"the two classifiers must be scored on the same documents; got {a.shape} and {bb.shape}")
    return mcnemar_from_counts(int(np.sum(a & ~bb)), int(np.sum(~a & bb)), a.size, exact_below=exact_below)


@dataclass
class Comparison(Report):
    """McNemar's test of ``learner`` against ``baseline`` on one task at one noise rate."""

    task: str
    learner: str
    baseline: str
    noise: float
    result: McNemarResult
    row: str = ""


def against_baseline(report, baseline: str) -> list[Comparison]:
    """McNemar's test of every learner's cell of ``report`` (a
    :class:`~textcw.evaluation.suite.SuiteReport`) against ``baseline``'s cell of the same task,
    noise rate and row, on the documents both were tested on (JMLR 2012 Tables 3-4): what the
    table's marks show. A cell without such a baseline cell, or with no document in common, has
    no comparison."""
    compared = []
    for cell in report.cells:
        if cell.learner == baseline:
            continue
        base = report.cell(cell.task, baseline, cell.noise, cell.row)
        if base is None:
            continue
        both = [i for i, (a, b) in enumerate(zip(cell.outcomes, base.outcomes)) if a != UNTESTED and b != UNTESTED]
        if not both:
            continue
        result = mcnemar_test([cell.outcomes[i] == RIGHT for i in both], [base.outcomes[i] == RIGHT for i in both])
        compared.append(Comparison(cell.task, cell.learner, baseline, cell.noise, result, cell.row))
    return compared


def mcnemar(*, exact_below: int = EXACT_BELOW):
    """Evaluator factory: ``run(y_true, predicted_a, predicted_b) -> McNemarResult``."""

    def run(y_true, predicted_a, predicted_b) -> McNemarResult:
        truth = np.asarray(y_true)
        return mcnemar_test(np.asarray(predicted_a) == truth, np.asarray(predicted_b) == truth,
                            exact_below=exact_below)

    return run
