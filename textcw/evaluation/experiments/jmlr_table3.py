"""JMLR 2012 Table 3: diagonal CW (var/stdev x KL/L2) against perceptron, PA, SOP and SGD.

Paper rows and the tasks that stand for them here:

- Sentiment Books, DVD, Electronics, Kitchen -> ``amazon:<domain>`` (all 2,000 reviews, the
  paper's sample size); Apparel, Music and Video are not in the staged archive (4 domains).
- ECML Spam A, B, C -> ``spam:u00``, ``u01``, ``u02`` (task A's three users, in order; the
  loader's balanced 2,000-email sample, the paper's size).
- 20 News Comp, Sci, Talk -> ``newsgroups:<pair>``, a balanced sample of 1,800 of the bydate
  messages (section 7.1).
- Reuters Retail, Business, Insurance -> ``rcv1:<task>`` (run only if the RCV1 files are there).
- USPS pairs -> ``usps:<pair>`` with pixel and pixel-pair features (section 7.6), on the ESL
  train/test split: the paper's USPS errors are multiples of one test-split document (0.56% is
  3 of the 536 test images of 0 and 9; 1.73% is 8 of 462 for 1 and 2), so those rows were
  measured on the standard split, not by cross-validation.
- Pascal Webspam is not available in textcw.

PA is PA-I with ``C`` tuned (EMNLP 2009 tunes "C for PA"; the grid's largest ``C`` behaves as
plain PA on these data). SGD uses the modified Huber loss of Blitzer et al. (2007), whom the
paper cites for it, with its L2 strength ``alpha`` tuned.
"""

from __future__ import annotations

from textcw.evaluation.experiments.base import PAPERS_TEXT, Check
from textcw.evaluation.experiments.table import Row, TableExperiment
from textcw.evaluation.mcnemar import mcnemar_test
from textcw.evaluation.specs import SPLIT, LearnerSpec, TaskSpec

CW = ("var-KL", "var-L2", "stdev-KL", "stdev-L2")
BASELINES = ("Per", "PA", "SOP", "SGD")
NOT_STAGED = "the staged Amazon archive has only the books, dvd, electronics and kitchen domains"


def amazon(domain):
    return TaskSpec(f"amazon:{domain}", label=f"amazon:{domain}")


def usps(pair):
    return TaskSpec(f"usps:{pair}", protocol=SPLIT, featurizer="pixel-pairs", label=f"usps:{pair}")


ROWS = [
    Row("Apparel", None, NOT_STAGED),
    Row("Books", amazon("books")),
    Row("DVD", amazon("dvd")),
    Row("Electronics", amazon("electronics")),
    Row("Kitchen", amazon("kitchen")),
    Row("Music", None, NOT_STAGED),
    Row("Video", None, NOT_STAGED),
    Row("Spam A", TaskSpec("spam:u00")),
    Row("Spam B", TaskSpec("spam:u01")),
    Row("Spam C", TaskSpec("spam:u02")),
    Row("Retail", TaskSpec("rcv1:retail", featurizer=PAPERS_TEXT)),
    Row("Business", TaskSpec("rcv1:business", featurizer=PAPERS_TEXT)),
    Row("Insurance", TaskSpec("rcv1:insurance", featurizer=PAPERS_TEXT)),
    Row("Comp", TaskSpec("newsgroups:comp", sample=1800, featurizer=PAPERS_TEXT)),
    Row("Sci", TaskSpec("newsgroups:sci", sample=1800, featurizer=PAPERS_TEXT)),
    Row("Talk", TaskSpec("newsgroups:talk", sample=1800, featurizer=PAPERS_TEXT)),
    Row("Webspam", None, "the Pascal large-scale challenge data is not in textcw"),
    Row("0 vs 9", usps("0v9")),
    Row("1 vs 2", usps("1v2")),
    Row("3 vs 4", usps("3v4")),
    Row("5 vs 6", usps("5v6")),
    Row("7 vs 8", usps("7v8")),
]

COLUMNS = [
    ("var-KL", LearnerSpec("cw-var", {"covariance": "diag-kl"}, "var-KL")),
    ("var-L2", LearnerSpec("cw-var", {"covariance": "diag-l2"}, "var-L2")),
    ("stdev-KL", LearnerSpec("cw-stdev", {"covariance": "diag-kl"}, "stdev-KL")),
    ("stdev-L2", LearnerSpec("cw-stdev", {"covariance": "diag-l2"}, "stdev-L2")),
    ("Per", LearnerSpec("perceptron", {}, "Per")),
    ("PA", LearnerSpec("pa1", {}, "PA")),
    ("SOP", LearnerSpec("sop", {}, "SOP")),
    ("SGD", LearnerSpec("sgd", {"loss": "modified_huber"}, "SGD")),
]

NOTES = [
    "Folds: stratified 10-fold CV over each task's sample (the paper's 'randomly divided for 10-fold "
    "cross validation'); USPS rows use the official ESL split, as the paper's USPS numbers do.",
    "Tuning: eta (or C) and passes 1..10 chosen on one seeded 90/10 split of the task sample, then "
    "fixed for all folds (section 7.6).",
    "Marks on our CW cells: McNemar's test against every baseline present (Per, PA, SOP, SGD), "
    "⋆ p<0.05, ∗ p<0.01, † p<0.001, as in the paper.",
]


def _is_text(task: TaskSpec) -> bool:
    """Table 3's caption counts "17 binary text classification tasks": every row but USPS."""
    return not task.corpus.startswith("usps:")


def _best(suite, task, cols, names):
    """``(error, cell)`` of the lowest-error finished cell among ``names`` (None if none)."""
    cells = [suite.cell(task.label, cols[c].label) for c in names if c in cols]
    cells = [c for c in cells if c is not None and c.complete]
    return min(((c.mean_error, c) for c in cells), key=lambda pair: pair[0], default=None)


def checks(result, suite, ctx) -> None:
    """The paper's claims for this table, as the paper states them (see docs/reproduction.md).

    Section 7.8: "In every experiment, a CW method improved over all of the online learning
    baselines" -- said of the table's "17 binary text classification tasks" (its caption); the
    paper's own numbers hold it on all 17 and only there. On the five USPS pairs its best CW is
    behind the perceptron or PA by at most one test image (0 vs 9: 0.56 against 0.37, i.e. 3
    against 2 of 536 images) or tied (5 vs 6), and the paper claims no win there; so the USPS check
    is that the best CW is never significantly worse than the better of the perceptron and PA
    (McNemar's test, the paper's test, p >= 0.05; a tie is no difference).
    """
    cols = dict(ctx["columns"])
    paper = {r["row"]: dict(zip(ctx["paper"]["columns"], r["values"])) for r in ctx["paper"]["rows"]}
    text, beats, failing, paper_beats, paper_failing = 0, 0, [], 0, []
    images, level, worse = 0, 0, []
    close, far, tasks = 0, [], 0
    for paper_row, task in ctx["rows"]:
        cw = _best(suite, task, cols, CW)
        if cw is None:
            continue
        tasks += 1
        best, cw_cell = cw
        theirs = min(paper[paper_row][c] for c in CW)
        if best <= theirs + 1.5:
            close += 1
        else:
            far.append(f"{paper_row} (ours {best:.2f}, paper {theirs:.2f})")
        if _is_text(task):
            text += 1
            rival = _best(suite, task, cols, BASELINES)
            if rival is not None and best < rival[0]:
                beats += 1
            else:
                failing.append(f"{paper_row} (CW {best:.2f} vs {rival[0]:.2f})" if rival else paper_row)
            if theirs < min(paper[paper_row][c] for c in BASELINES):
                paper_beats += 1
            else:
                paper_failing.append(paper_row)
        else:
            rival = _best(suite, task, cols, ("Per", "PA"))
            if rival is None:
                continue
            images += 1
            p = mcnemar_test([o == "1" for o in cw_cell.outcomes], [o == "1" for o in rival[1].outcomes]).p_value
            if best <= rival[0] or p >= 0.05:
                level += 1
            else:
                worse.append(f"{paper_row} (CW {best:.2f} vs {rival[0]:.2f}, p = {p:.3g})")
    result.checks.append(Check(
        "text tasks: best CW beats every online baseline (paper: 'in every experiment')",
        text > 0 and beats == text,
        f"{beats} of {text} text tasks" + (f"; not on: {', '.join(failing)}" if failing else "")
        + f" (the paper's own best CW: {paper_beats} of these {text}"
        + (f", not on {', '.join(paper_failing)})" if paper_failing else ")")))
    if images:
        result.checks.append(Check(
            "USPS pairs: best CW not significantly worse than perceptron and PA (McNemar p >= 0.05)",
            level == images,
            f"{level} of {images} pairs" + (f"; worse on: {', '.join(worse)}" if worse else "")
            + " (the paper's best CW trails them by at most one test image)"))
    result.checks.append(Check(
        "best CW within 1.5 points of the paper's best CW (or lower) on >= 3 of every 4 tasks",
        tasks > 0 and close >= 0.75 * tasks,
        f"{close} of {tasks} tasks" + (f"; further on: {', '.join(far)}" if far else "")))


EXPERIMENT = TableExperiment(
    name="jmlr-table3",
    title="JMLR 2012 Table 3: diagonal CW against online baselines (binary tasks)",
    paper_file="jmlr2012_table3.json",
    rows=ROWS,
    columns=COLUMNS,
    notes=NOTES,
    quick_rows=("Books", "Spam A", "Comp", "0 vs 9"),
    marked=CW,
    against=BASELINES,
    checks=checks,
)
