"""A reproduction of one published error table: rows -> tasks, columns -> learners.

The protocol is the papers' (JMLR 2012 section 7.6): parameters and passes tuned on one
randomised run, then 10-fold cross-validation (``quick``: 3 folds and the small grids), McNemar's
test for the significance marks, mean ranks over the tasks. The tuning runs and cells are shared
with the other tables through :data:`textcw.evaluation.experiments.cells.CELLS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from textcw.errors import TextcwError
from textcw.evaluation.experiments.base import (
    ExperimentResult, Timer, check_learners, check_tasks, new_result, published, side_by_side,
)
from textcw.evaluation.experiments.cells import CELLS
from textcw.evaluation.mcnemar import mcnemar_test, significance_mark
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.suite import SuiteReport, run_suite


@dataclass
class Row:
    """A row of the paper: the task that stands for it here, or why there is none."""

    paper: str
    task: TaskSpec | None
    absent: str = ""


@dataclass
class TableExperiment:
    name: str
    title: str
    paper_file: str
    rows: list[Row]
    columns: list[tuple[str, LearnerSpec]]
    notes: list[str] = field(default_factory=list)
    folds: int = 10
    quick_folds: int = 3
    quick_rows: tuple[str, ...] | None = None
    quick_specs: dict = field(default_factory=dict)
    accuracy: bool = False
    marked: tuple[str, ...] = ()
    against: tuple[str, ...] = ()
    checks: Callable[[ExperimentResult, SuiteReport, dict], None] | None = None
    marks: Callable | None = None
    grids: dict = field(default_factory=dict)
    quick_grids: dict = field(default_factory=dict)
    specialise: Callable | None = None

    def run(self, *, quick: bool = False, available: bool = False, progress=None,
            on_task=None, figures: bool = False) -> ExperimentResult:
        """Run on the tasks that are here; ``figures`` also records learning curves and probabilities."""
        timer = Timer()
        paper = published(self.paper_file)
        result = new_result(self.name, self.title, paper, quick)
        result.notes.extend(self.notes)
        learners, dropped = check_learners(self.name, [s for _, s in self.columns], available=available)
        result.skipped.extend(dropped)
        columns = [(c, s) for c, s in self.columns if s in learners]
        rows = []
        for row in self.rows:
            if row.task is None:
                result.skipped.append(f"{row.paper}: {row.absent}")
            elif quick and self.quick_rows is not None and row.paper not in self.quick_rows:
                continue
            else:
                rows.append((row.paper, self.quick_specs.get(row.paper, row.task) if quick else row.task))
        if quick and self.quick_rows is not None:
            result.notes.append(f"quick run: only the rows {', '.join(self.quick_rows)}, "
                                f"{self.quick_folds} folds, small grids")
        rows, skipped = check_tasks(self.name, rows, available=available)
        result.skipped.extend(skipped)
        if not rows or not columns:
            raise TextcwError(f"experiment {self.name}: none of its tasks can run here ({'; '.join(result.skipped)})")
        grids = {dict(self.columns)[c].label: g for c, g in (self.quick_grids if quick else self.grids).items()}
        suite = run_suite([t for _, t in rows], [s for _, s in columns], folds=self.quick_folds if quick else self.folds,
                          tune=True, quick=quick, grids=grids, curves=figures, probabilities=figures, progress=progress,
                          on_task=on_task, specialise=self.specialise, cache=CELLS)
        result.suite = suite
        result.interrupted = suite.interrupted
        result.failures = list(suite.failures)
        marks = (self.marks or significance_marks)(suite, rows, columns, self.marked, self.against)
        result.tables.append(side_by_side(suite, rows, columns, paper, accuracy=self.accuracy, marks=marks))
        if self.checks is not None and not suite.interrupted:
            self.checks(result, suite, {"rows": rows, "columns": columns, "paper": paper})
        result.seconds = timer.seconds
        return result


def worst_p_values(suite, rows, columns, marked, against) -> dict:
    """``(task, column) -> p``: the largest McNemar p-value of ``column`` against the ``against``
    columns (1.0 when one of them has no finished result).

    JMLR 2012 Tables 3-4 mark "when a CW algorithm is statistically significant from each of
    the baselines", so a mark needs significance against all of them: the largest p-value.
    """
    labels = dict(columns)
    bases = [labels[c] for c in against if c in labels]
    out = {}
    if not bases:
        return out
    for _, task in rows:
        for col in marked:
            if col not in labels:
                continue
            cell = suite.cell(task.label, labels[col].label)
            if cell is None or not cell.complete:
                continue
            worst = 0.0
            for base in bases:
                other = suite.cell(task.label, base.label)
                if other is None or not other.complete:
                    worst = 1.0
                    break
                worst = max(worst, mcnemar_test([o == "1" for o in cell.outcomes],
                                                [o == "1" for o in other.outcomes]).p_value)
            out[task.label, col] = worst
    return out


def significance_marks(suite, rows, columns, marked, against) -> dict:
    """``(task, column) -> mark`` (``⋆`` p<0.05, ``∗`` p<0.01, ``†`` p<0.001) against every baseline."""
    return {key: significance_mark(p) for key, p in worst_p_values(suite, rows, columns, marked, against).items()}
