"""JMLR 2012 Table 4: diagonal CW against the batch learners naive Bayes, maxent and SVM.

Same rows and protocol as Table 3 (:mod:`textcw.evaluation.experiments.jmlr_table3`); maxent's
Gaussian prior and the SVM's ``C`` are tuned like the online learners' parameters (section
7.8). ``nb`` is multinomial naive Bayes (MALLET's default, the paper's), ``maxent`` L2-regularised
logistic regression, ``svm`` a linear hinge-loss SVM (the paper used LibSVM; with a linear kernel
both solve the same problem).
"""

from __future__ import annotations

from textcw.evaluation.experiments.base import Check
from textcw.evaluation.experiments.jmlr_table3 import CW, NOTES, ROWS
from textcw.evaluation.experiments.jmlr_table3 import COLUMNS as TABLE3
from textcw.evaluation.experiments.table import TableExperiment
from textcw.evaluation.specs import LearnerSpec

BATCH = ("NB", "Maxent", "SVM")
COLUMNS = [c for c in TABLE3 if c[0] in CW] + [
    ("NB", LearnerSpec("nb", {}, "NB")),
    ("Maxent", LearnerSpec("maxent", {}, "Maxent")),
    ("SVM", LearnerSpec("svm", {}, "SVM")),
]


def checks(result, suite, ctx) -> None:
    """Section 7.8: "in 13 out of 17 tasks the CW algorithm beats all of the batch methods"."""
    cols = dict(ctx["columns"])
    paper = {r["row"]: dict(zip(ctx["paper"]["columns"], r["values"])) for r in ctx["paper"]["rows"]}
    ours = theirs = tasks = 0
    for paper_row, task in ctx["rows"]:
        cells = {c: suite.cell(task.label, cols[c].label) for c in (*CW, *BATCH) if c in cols}
        if any(cell is None or not cell.complete for cell in cells.values()):
            continue
        tasks += 1
        ours += min(cells[c].mean_error for c in CW if c in cells) < min(cells[c].mean_error for c in BATCH if c in cells)
        theirs += min(paper[paper_row][c] for c in CW) < min(paper[paper_row][c] for c in BATCH)
    if tasks:
        result.checks.append(Check(
            "best CW beats every batch learner on as many tasks as in the paper",
            ours >= theirs, f"ours on {ours} of {tasks} tasks, the paper on {theirs} of the same {tasks}"))


EXPERIMENT = TableExperiment(
    name="jmlr-table4",
    title="JMLR 2012 Table 4: diagonal CW against batch learners (binary tasks)",
    paper_file="jmlr2012_table4.json",
    rows=ROWS,
    columns=COLUMNS,
    notes=[*NOTES[:2], "Marks on our CW cells: McNemar's test against every batch learner (NB, Maxent, SVM)."],
    quick_rows=("Books", "Spam A", "Comp", "0 vs 9"),
    marked=CW,
    against=BATCH,
    checks=checks,
)
