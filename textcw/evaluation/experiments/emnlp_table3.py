"""EMNLP 2009 Table 3: multi-class CW (k = 1, 5, all; sequential updates) against baselines.

The paper reports test *accuracy* (%), and so does this table. Its CW is the "Variance" method
with a diagonal covariance (section 5.3). Paper rows and the tasks here:

- 20 News -> ``newsgroups`` (20-way; the bydate release, 18,846 messages, where the paper used
  the 18,828-message version without duplicates);
- Amazon 7 and Amazon 3 need the apparel, music and video domains, which are not staged; the
  4-domain ``amazon:domains`` task is run in their place as an extra row without published
  numbers;
- Enron A, B -> ``enron:farmer-d``, ``enron:kaminski-v`` (run only if the archive is there);
- NYTD, NYTO, NYTS: the New York Times corpus (LDC) is not in textcw;
- Reuters -> ``rcv1:topics`` (run only if the RCV1 files are there); Reuters-21578's R8 task is
  run as an extra row without published numbers.

Columns: k-best variants are the learners' ``multiclass="seq"`` with ``k=5`` or ``k="all"``
(every other label); k = 1 is the learners' default top-1 update. SVMs are one-vs-one ("1 vs. 1", LibSVM's
scheme) and Crammer-Singer ("MC").
"""

from __future__ import annotations

from textcw.evaluation.experiments.base import PAPERS_TEXT, Check
from textcw.evaluation.experiments.table import Row, TableExperiment, worst_p_values
from textcw.evaluation.specs import LearnerSpec, TaskSpec

ALL_LABELS = "all"  # k for "every competing label" (k = infinity in the paper)
CW = ("CW K=1", "CW K=5", "CW K=inf")
ONLINE = ("Perceptron", "PA K=1", "PA K=5")
BATCH = ("SVM 1 vs. 1", "SVM MC", "Maxent")

ROWS = [
    Row("20 News", TaskSpec("newsgroups", featurizer=PAPERS_TEXT)),
    Row("Amazon 7", None, "the staged Amazon archive has 4 of the 7 domains (no apparel, music, video)"),
    Row("Amazon 3", None, "needs the music domain, which is not staged"),
    Row("Amazon 4 domains", TaskSpec("amazon:domains")),
    Row("Enron A", TaskSpec("enron:farmer-d", featurizer=PAPERS_TEXT)),
    Row("Enron B", TaskSpec("enron:kaminski-v", featurizer=PAPERS_TEXT)),
    Row("NYTD", None, "the New York Times Annotated Corpus (LDC) is not in textcw"),
    Row("NYTO", None, "the New York Times Annotated Corpus (LDC) is not in textcw"),
    Row("NYTS", None, "the New York Times Annotated Corpus (LDC) is not in textcw"),
    Row("Reuters", TaskSpec("rcv1:topics", featurizer=PAPERS_TEXT)),
    Row("Reuters-21578 R8", TaskSpec("reuters:r8", featurizer=PAPERS_TEXT)),
]

COLUMNS = [
    ("Perceptron", LearnerSpec("perceptron", {}, "Perceptron")),
    ("PA K=1", LearnerSpec("pa1", {}, "PA K=1")),
    ("PA K=5", LearnerSpec("pa1", {"multiclass": "seq", "k": 5}, "PA K=5")),
    ("CW K=1", LearnerSpec("cw-var", {}, "CW K=1")),
    ("CW K=5", LearnerSpec("cw-var", {"multiclass": "seq", "k": 5}, "CW K=5")),
    ("CW K=inf", LearnerSpec("cw-var", {"multiclass": "seq", "k": ALL_LABELS}, "CW K=inf")),
    ("SVM 1 vs. 1", LearnerSpec("svm", {"multi_class": "ovo"}, "SVM 1 vs. 1")),
    ("SVM MC", LearnerSpec("svm", {"multi_class": "crammer_singer"}, "SVM MC")),
    ("Maxent", LearnerSpec("maxent", {}, "Maxent")),
]

# Maxent on the 20-way task takes minutes per fit; two prior variances around MALLET's default.
GRIDS = {"Maxent": {"C": [1.0, 10.0]}, "SVM 1 vs. 1": {"C": [0.1, 1.0]}, "SVM MC": {"C": [0.1, 1.0]}}
QUICK_GRIDS = {"Maxent": {"C": [1.0]}, "SVM 1 vs. 1": {"C": [0.1]}, "SVM MC": {"C": [0.1]}}


def cap_k(task, learners):
    """k = 5 on a task with fewer than 6 labels means every other label (the paper runs k = 5 on
    its 3-label Amazon task); the learners refuse a k beyond K - 1, so it is capped here."""
    others = len(task.target_names) - 1
    return [LearnerSpec(s.name, {**s.params, "k": ALL_LABELS}, s.label)
            if isinstance(s.params.get("k"), int) and s.params["k"] > others else s for s in learners]


def marks(suite, rows, columns, marked, against) -> dict:
    """The paper's marks: ``∗`` p<0.05 / ``∗∗`` p<0.001 against all baselines, else ``†`` / ``††``
    against the online baselines."""
    all_p = worst_p_values(suite, rows, columns, CW, ONLINE + BATCH)
    online_p = worst_p_values(suite, rows, columns, CW, ONLINE)
    out = {}
    for key, p in online_p.items():
        q = all_p.get(key, 1.0)
        out[key] = "∗∗" if q < 0.001 else "∗" if q < 0.05 else "††" if p < 0.001 else "†" if p < 0.05 else ""
    return out


def checks(result, suite, ctx) -> None:
    """Section 6.3: "On eight of the nine datasets, CW improves over all baselines"."""
    cols = dict(ctx["columns"])
    wins, tasks = 0, 0
    for _, task in ctx["rows"]:
        cells = {c: suite.cell(task.label, s.label) for c, s in cols.items()}
        if any(cell is None or not cell.complete for cell in cells.values()):
            continue
        tasks += 1
        best_cw = min(cells[c].mean_error for c in CW if c in cells)
        wins += all(best_cw < cells[c].mean_error for c in ONLINE + BATCH if c in cells)
    if tasks:
        result.checks.append(Check("the best CW beats every baseline on most tasks (paper: 8 of 9)",
                                   wins * 9 >= 8 * tasks, f"{wins} of {tasks} tasks"))


EXPERIMENT = TableExperiment(
    name="emnlp-table3",
    title="EMNLP 2009 Table 3: multi-class CW against online and batch baselines",
    paper_file="emnlp2009_table3.json",
    rows=ROWS,
    columns=COLUMNS,
    notes=["Accuracy (%), 10-fold CV over each task's documents (the splits pooled); eta, C and passes "
           "1..10 tuned on one seeded 90/10 split (section 6.2).",
           "Marks on our CW cells follow the paper: ∗ p<0.05, ∗∗ p<0.001 against all baselines; "
           "† p<0.05, †† p<0.001 against the online baselines only.",
           "--quick runs a class-balanced sample of 2,000 messages of 20 Newsgroups, 3 folds."],
    quick_rows=("20 News",),
    quick_specs={"20 News": TaskSpec("newsgroups", sample=2000, featurizer=PAPERS_TEXT)},
    accuracy=True,
    marks=marks,
    checks=checks,
    grids=GRIDS,
    quick_grids=QUICK_GRIDS,
    specialise=cap_k,
)
