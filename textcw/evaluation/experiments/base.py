"""What every reproduction shares: the published numbers, availability checks, side-by-side tables.

A reproduction maps the rows of a published table to textcw tasks and its columns to learner
specs, runs the papers' protocol (:func:`textcw.evaluation.suite.run_suite`) on the tasks whose
data is here, and prints each cell as ``ours (paper)``. Tasks whose archive is missing are
skipped with a note (the papers' RCV1, Pascal, Enron and NYT data are not redistributable);
a learner or corpus that is not registered is an error naming it, unless ``available=True``
asks to run what is there.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from importlib import resources

from textcw.errors import DataError, ParameterError, TextcwError, UnknownNameError
from textcw.evaluation.rank import mean_ranks
from textcw.evaluation.report import Report
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.suite import SuiteReport

# The papers' text representation (JMLR 2012 section 7: a binary bag of words): the text rows of
# the reproductions name it, so that they do not follow textcw's default featurizer for text.
PAPERS_TEXT = "binary-bow"

# Where a corpus comes from when it is not built in: named in the error for a missing corpus.
PLUGINS = {"usps": "textcw-pixels (pip install -e plugins/textcw-pixels)"}


def published(filename: str) -> dict:
    """A published table stored with the package (``experiments/published/<filename>``)."""
    return json.loads(resources.files(__package__).joinpath("published", filename).read_text("utf-8"))


@dataclass
class Check(Report):
    """One claim checked against our numbers."""

    name: str
    passed: bool
    detail: str


@dataclass
class SideBySide(Report):
    """A rendered table: cells are ``ours (paper)`` strings."""

    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass
class ExperimentResult(Report):
    """The outcome of one reproduction.

    Attributes
    ----------
    name, title : str
    paper, table, source : str
        The publication, the table or figure, and the section of the paper that prints them.
    quick : bool
    suite : SuiteReport or None
        The full evaluation (cells, tuning, McNemar tests, ranks).
    tables : list of SideBySide
    checks : list of Check
    notes : list of str
        Differences from the paper's setting that matter for reading the numbers.
    skipped : list of str
        Rows of the paper that could not be run here, and why.
    failures : list of str
        Tasks that failed with an error while running (the others finished).
    extra : dict
        Experiment-specific data (e.g. online mistake curves).
    seconds : float
    """

    name: str
    title: str
    paper: str
    table: str
    source: str
    quick: bool
    suite: SuiteReport | None = None
    tables: list[SideBySide] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)


def check_learners(name: str, learners: list[LearnerSpec], *, available: bool):
    """The learners that can be built; the others are an error (or dropped, with ``available``)."""
    from textcw.pipeline import make_learner

    ok, missing = [], []
    for spec in learners:
        try:
            make_learner(spec.name, **spec.params)
            ok.append(spec)
        except (UnknownNameError, ParameterError) as exc:
            missing.append(f"{spec.label} ({exc})")
    if missing and not available:
        raise TextcwError(
            f"experiment {name} needs learners that are not available here: {'; '.join(missing)}. "
            "Run the rest with --available"
        )
    return ok, [f"learner {m}: not available, column left out" for m in missing]


def check_tasks(name: str, rows: list[tuple[str, TaskSpec]], *, available: bool):
    """``(runnable rows, skipped notes)``: rows whose corpus is registered and whose data is here.

    A corpus that is not registered is an error naming it (and the plugin that provides it),
    unless ``available``; a missing data file skips the row with the loader's explanation.
    """
    from textcw.pipeline import load_corpus

    ok, skipped, missing = [], [], []
    for paper_row, spec in rows:
        try:
            load_corpus(spec.corpus, "train")
            ok.append((paper_row, spec))
        except UnknownNameError as exc:
            corpus = spec.corpus.partition(":")[0]
            hint = f"; it comes from the plugin {PLUGINS[corpus]}" if corpus in PLUGINS else ""
            missing.append(f"{spec.corpus} for {paper_row!r} ({exc}{hint})")
            skipped.append(f"{paper_row}: {spec.corpus} is not registered{hint}")
        except DataError as exc:
            skipped.append(f"{paper_row}: no data here ({exc})")
    if missing and not available:
        raise TextcwError(f"experiment {name} needs corpora that are not registered: {'; '.join(missing)}. "
                          "Run the rest with --available")
    return ok, skipped


def side_by_side(suite: SuiteReport, rows: list[tuple[str, TaskSpec]], columns: list[tuple[str, LearnerSpec]],
                 paper: dict, *, noise: float = 0.0, accuracy: bool = False, title: str = "",
                 marks: dict | None = None) -> SideBySide:
    """Each cell ``ours (paper)``; ``accuracy`` prints 100 - error (EMNLP 2009 reports accuracy).

    ``marks`` maps ``(task label, paper column)`` to our significance mark; the paper's marks
    are printed with its numbers, so the two can be compared.

    The last rows are the mean ranks over the tasks run here: ours, and the paper's recomputed
    from its numbers on the same tasks (so the two are comparable).
    """
    published_rows = {r["row"]: r for r in paper["rows"]}
    index = {c: k for k, c in enumerate(paper["columns"])}
    out = []
    ours_by_task, theirs_by_task = {}, {}
    for paper_row, task in rows:
        pub = published_rows.get(paper_row)
        line = [paper_row if pub else f"{paper_row} (not in the paper)", task.label]
        for paper_col, spec in columns:
            cell = suite.cell(task.label, spec.label, noise)
            ours = None if cell is None or cell.mean_error is None else cell.mean_error
            theirs = pub["values"][index[paper_col]] if pub and paper_col in index else None
            if ours is not None and cell.complete:
                ours_by_task.setdefault(task.label, {})[paper_col] = ours
            if theirs is not None:
                theirs_by_task.setdefault(task.label, {})[paper_col] = 100.0 - theirs if accuracy else theirs
            shown = None if ours is None else (100.0 - ours if accuracy else ours)
            mark = (marks or {}).get((task.label, paper_col), "")
            their_mark = pub["marks"][index[paper_col]] if theirs is not None else ""
            line.append(_pair(shown, theirs, complete=cell is not None and cell.complete,
                              marks=(mark, their_mark)))
        out.append(line)
    names = [c for c, _ in columns]
    ours_rank = mean_ranks(ours_by_task, names)
    common = {t: theirs_by_task[t] for t in ours_rank.tasks if t in theirs_by_task
              and all(n in theirs_by_task[t] for n in names)}
    theirs_rank = mean_ranks(common, names)
    out.append(["mean rank (ours)", _tasks(len(ours_rank.tasks)),
                *[_num(ours_rank.mean_rank.get(n)) for n in names]])
    out.append(["mean rank (paper, same tasks)", _tasks(len(theirs_rank.tasks)),
                *[_num(theirs_rank.mean_rank.get(n)) for n in names]])
    if "mean_rank" in paper:
        out.append(["mean rank (paper, all its tasks)", _tasks(len(paper["rows"])),
                    *[_num(paper["mean_rank"][index[n]]) if n in index else "–" for n in names]])
    measure = "accuracy (%)" if accuracy else "error (%)"
    return SideBySide(title or f"{paper['table']}: test {measure}, ours (paper)",
                      ["paper row", "task", *names], out)


def _pair(ours, theirs, *, complete: bool, marks=("", "")) -> str:
    left = "–" if ours is None else marks[0] + f"{ours:.2f}" + ("" if complete else "~")
    right = "–" if theirs is None else marks[1] + f"{theirs:.2f}"
    return f"{left} ({right})"


def _tasks(n: int) -> str:
    return f"{n} task" + ("" if n == 1 else "s")


def _num(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def new_result(name: str, title: str, paper: dict, quick: bool) -> ExperimentResult:
    return ExperimentResult(name, title, paper["paper"], paper["table"], paper["source"], quick)


class Timer:
    def __init__(self):
        self.t0 = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.t0
