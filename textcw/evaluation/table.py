"""Tables of a :class:`~textcw.evaluation.suite.SuiteReport`, laid out like the papers' tables.

Rows are tasks, columns learners, cells the mean test error (%) over the folds. The best cell
of each row is marked ``•`` (bold on a terminal), McNemar's test against the baseline adds
``⋆`` (p < 0.05), ``∗`` (p < 0.01) or ``†`` (p < 0.001) as in JMLR 2012 Tables 3-4, and the
last row is each learner's mean rank over the tasks every learner finished (JMLR 2012 Table 2).
A cell shows ``–`` where the learner lacks what the metric reads (scores, probabilities) and
``n/a`` where the metric does not apply to the task (a top-k metric on a binary task).
"""

from __future__ import annotations

import statistics

from textcw.evaluation.folds import NOT_APPLICABLE
from textcw.evaluation.mcnemar import significance_mark
from textcw.evaluation.rank import cell_mean, metric_means

BEST = "•"
MISSING = "–"
DECIMALS = 2


def legend(baseline: str | None, *, ranked: bool = True, better: str = "lower", metric: str = "error") -> str:
    """The line under the tables: the best mark, McNemar's marks (with a baseline) and the ranks."""
    best = "lowest" if better == "lower" else "highest"
    text = f"{BEST} {best} {metric} in the row"
    if baseline:
        text += f"; McNemar vs {baseline}: ⋆ p<0.05, ∗ p<0.01, † p<0.001"
    return text + (f"; mean rank: 1 = {best} {metric}" if ranked else "")


def error_table(report, noise: float = 0.0, *, spread: bool = False, markup: bool = False, metric: str = "error",
                marks: bool = True):
    """``(columns, rows)`` of the table of a scalar metric (the error by default) at one noise rate.

    ``markup`` wraps the best cells in rich's bold tags (for the terminal); ``spread`` adds the
    standard deviation over the folds; ``marks`` adds McNemar's marks and the mean-rank row
    (those of the report's comparisons, computed on its first metric).
    """
    better = report.metric(metric)["better"]
    pick = min if better == "lower" else max
    learners = [s.label for s in report.learners]
    heads = _row_heads(report)
    columns = [*heads, *learners]
    rows = []
    for task, sub in _task_rows(report):
        cells = [report.cell(task, name, noise, sub) for name in learners]
        means = [None if c is None else cell_mean(c, metric) for c in cells]
        if all(m is None for m in means) and not any(not_applicable(c, metric) for c in cells):
            continue  # nothing finished on this task (e.g. interrupted before its first fold)
        done = [round(m, DECIMALS) for c, m in zip(cells, means) if c is not None and c.complete and m is not None]
        best = pick(done) if done else None
        row = [task, sub][:len(heads)]
        for name, cell, mean in zip(learners, cells, means):
            row.append(_cell_text(report, task, name, cell, mean, metric, noise, best, spread, markup, marks, sub))
        rows.append(row)
    ranking = report.ranks.get(str(noise)) if marks else None
    if ranking is not None and ranking.tasks:
        rows.append(["mean rank", *[""] * (len(heads) - 1), *[_fmt(ranking.mean_rank.get(name)) for name in learners]])
    return columns, rows


def not_applicable(cell, metric: str) -> bool:
    """Every finished fold of ``cell`` records ``metric`` as not applicable to its task
    (:meth:`textcw.evaluation.contract.Metric.applies`): the table shows ``n/a``."""
    values = [] if cell is None else cell.metrics.get(metric) or []
    return bool(values) and all(isinstance(v, str) and v == NOT_APPLICABLE for v in values)


def _row_heads(report) -> list[str]:
    """The headings of the columns that name a row: the task, and the design's row when it has one."""
    return ["task", report.row_title] if getattr(report, "row_title", "") else ["task"]


def _task_rows(report):
    """``(task label, row)`` of every row of the tables, task by task."""
    return [(task.label, sub) for task in report.tasks for sub in report.rows(task.label)]


def per_class_table(report, metric: str, noise: float = 0.0, *, markup: bool = False):
    """``(columns, rows)`` of a per-class metric: one row per task and class, each learner's mean
    over the folds that have a value for the class (``–`` if none), the best marked ``•``."""
    pick = min if report.metric(metric)["better"] == "lower" else max
    learners = [s.label for s in report.learners]
    heads = _row_heads(report)
    rows = []
    for task, sub in _task_rows(report):
        cells = [report.cell(task, name, noise, sub) for name in learners]
        folds = [[v for v in (c.metrics.get(metric) or [])] if c is not None else [] for c in cells]
        classes = sorted({k for values in folds for v in values if isinstance(v, dict) for k in v})
        if not classes and any(not_applicable(c, metric) for c in cells):
            rows.append([*[task, sub][:len(heads)], "", *[NOT_APPLICABLE if not_applicable(c, metric) else MISSING
                                                          for c in cells]])
        for label in classes:
            means = []
            for values in folds:
                got = [v[label] for v in values if isinstance(v, dict) and label in v]
                means.append(round(sum(got) / len(got), DECIMALS) if got else None)
            best = pick([m for m in means if m is not None], default=None)
            rows.append([*[task, sub][:len(heads)], label, *[_marked(m, best, markup) for m in means]])
    return [*heads, "class", *learners], rows


def _marked(value, best, markup) -> str:
    if value is None:
        return MISSING
    text = f"{value:.{DECIMALS}f}"
    if value != best:
        return text
    return f"[bold]{BEST}{text}[/bold]" if markup else f"{BEST}{text}"


def _cell_text(report, task, learner, cell, mean, metric, noise, best, spread, markup, marks, row="") -> str:
    if cell is not None and not_applicable(cell, metric):
        return NOT_APPLICABLE
    if cell is None or mean is None:
        return MISSING
    value = round(mean, DECIMALS)
    text = f"{value:.{DECIMALS}f}"
    values = cell.metrics.get(metric) if metric in cell.metrics else cell.fold_errors
    if spread and len(values) > 1:
        text += f" ±{statistics.stdev(values):.1f}"
    comparison = report.comparison(task, learner, noise, row) if marks else None
    if comparison is not None:
        text += significance_mark(comparison.result.p_value)
    if not cell.complete:
        return f"{text} ({len(cell.fold_errors)}/{cell.n_folds} folds)"
    if best is not None and value == best:
        return f"[bold]{BEST}{text}[/bold]" if markup else f"{BEST}{text}"
    return text


def tuning_table(report):
    """``(columns, rows)``: the chosen parameters and passes of each learner on each task."""
    learners = [s.label for s in report.learners]
    columns = ["task", "noise", *learners]
    rows = []
    chosen = {(t.task, t.learner, t.noise): t for t in report.tuning}
    for task in report.tasks:
        for p in report.noise:
            picks = [chosen.get((task.label, name, p)) for name in learners]
            if all(t is None for t in picks):
                continue
            rows.append([task.label, f"{p:g}", *[describe_choice(t.params, t.passes) if t else MISSING for t in picks]])
    return columns, rows


def describe_choice(params: dict, passes: int | None) -> str:
    parts = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()]
    if passes is not None:
        parts.append(f"{passes} pass" + ("es" if passes != 1 else ""))
    return ", ".join(parts) or "defaults"


def noise_table(report, metric: str = "error"):
    """``(columns, rows)``: mean error (or ``metric``) over the tasks at each noise rate (AROW
    2013 Figure 9)."""
    learners = [s.label for s in report.learners]
    rows = []
    for p in report.noise:
        errors = metric_means(report, metric, p)
        tasks = [t for t, row in errors.items() if all(name in row for name in learners)]
        if not tasks:
            continue
        rows.append([f"{p:g}", *[f"{sum(errors[t][name] for t in tasks) / len(tasks):.2f}" for name in learners]])
    return ["noise", *learners], rows


def markdown(columns: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(value) -> str:
    return MISSING if value is None else f"{value:.2f}"
