"""JMLR 2012 Table 5: seconds to train one model (the online ones with their tuned passes).

"The average training time in seconds for a single experiment (fold) ... The online times
include the multiple iterations selected for each online learning experiment" (section 7.8).
Each learner is tuned as in Table 3, then fitted ``repeats`` times on the training part of the
first fold; the mean is printed beside the paper's. Absolute times depend on the machine (the
paper's were MALLET/LibSVM and its own code in 2012); the comparison that carries over is the
ratio between online and batch learners. The tuning runs are shared with Tables 2-4 through
:data:`textcw.evaluation.experiments.cells.CELLS` (the same learners on the same tasks); the
timed fits are always made afresh.
"""

from __future__ import annotations

from textcw.evaluation.experiments.base import (
    Check, SideBySide, Timer, check_learners, check_tasks, new_result, published,
)
from textcw.evaluation.experiments.cells import CELLS
from textcw.evaluation.experiments.jmlr_table3 import ROWS
from textcw.evaluation.specs import LearnerSpec
from textcw.evaluation.suite import tuning_run
from textcw.evaluation.timing import timing
from textcw.evaluation.training import single_threaded

COLUMNS = [
    ("variance KL", LearnerSpec("cw-var", {"covariance": "diag-kl"}, "var-KL")),
    ("variance Exact", LearnerSpec("cw-var", {"covariance": "exact"}, "var-Exact")),
    ("Perceptron", LearnerSpec("perceptron", {}, "Per")),
    ("PA", LearnerSpec("pa1", {}, "PA")),
    ("Maxent", LearnerSpec("maxent", {}, "Maxent")),
    ("SVM", LearnerSpec("svm", {}, "SVM")),
]
QUICK_ROWS = ("Books", "Spam A", "Comp")


class TimingExperiment:
    name = "jmlr-table5"
    title = "JMLR 2012 Table 5: training seconds per run"

    def run(self, *, quick=False, available=False, progress=None, on_task=None, figures=False):
        with single_threaded():  # see textcw.evaluation.training.single_threaded
            return self._run(quick=quick, available=available, progress=progress)

    def _run(self, *, quick, available, progress):
        timer = Timer()
        paper = published("jmlr2012_table5.json")
        result = new_result(self.name, self.title, paper, quick)
        learners, dropped = check_learners(self.name, [s for _, s in COLUMNS], available=available)
        result.skipped.extend(dropped)
        columns = [(c, s) for c, s in COLUMNS if s in learners]
        published_rows = {r["row"]: r for r in paper["rows"]}
        rows = [(r.paper, r.task) for r in ROWS if r.paper in published_rows and r.task is not None
                and (not quick or r.paper in QUICK_ROWS)]
        result.skipped.extend(f"{r.paper}: {r.absent}" for r in ROWS if r.paper in published_rows and r.task is None)
        rows, skipped = check_tasks(self.name, rows, available=available)
        result.skipped.extend(skipped)
        index = {c: k for k, c in enumerate(paper["columns"])}
        measure = timing(repeats=3 if quick else 10)
        table, faster, total = [], 0, 0
        try:
            for k, (paper_row, task) in enumerate(rows):
                specs = [s for _, s in columns]
                tuned = tuning_run(task, specs, quick=quick, cache=CELLS)  # Tables 2-4 tune the same
                settings = {(t.learner, 0.0): (t.params, t.passes) for t in tuned}
                report = measure(task, specs, settings)
                result.extra.setdefault("timing", []).append(report.to_dict())
                seconds = {r.learner: r.mean_seconds for r in report.results}
                pub = published_rows[paper_row]["values"]
                table.append([paper_row, task.label, *[f"{seconds[s.label]:.3g} ({pub[index[c]]:g})" for c, s in columns]])
                online = [seconds[s.label] for c, s in columns if c == "variance KL"]
                batch = [seconds[s.label] for c, s in columns if c in ("Maxent", "SVM")]
                if online and batch:
                    total += 1
                    faster += online[0] < min(batch)
                if progress is not None:
                    progress(self.name, k + 1, len(rows))
        except KeyboardInterrupt:
            result.interrupted = True
        result.tables.append(SideBySide("Table 5: training seconds, ours (paper)", ["paper row", "task", *[c for c, _ in columns]], table))
        if total:
            result.checks.append(Check("CW (variance KL) trains faster than maxent and the SVM on every task",
                                       faster == total, f"{faster} of {total} tasks"))
        result.notes.append("Times are for this machine and textcw's implementations; the paper's are from 2012 "
                            "hardware with MALLET and LibSVM. Compare ratios, not absolute values.")
        result.seconds = timer.seconds
        return result


EXPERIMENT = TimingExperiment()
