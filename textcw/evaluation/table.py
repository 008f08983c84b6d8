"""Tables of a :class:`~textcw.evaluation.suite.SuiteReport`, laid out like the papers' tables.

Rows are tasks, columns learners, cells the mean test error (%) over the folds. The best cell
of each row is marked ``•`` (bold on a terminal), McNemar's test against the baseline adds
``⋆`` (p < 0.05), ``∗`` (p < 0.01) or ``†`` (p < 0.001) as in JMLR 2012 Tables 3-4, and the
last row is each learner's mean rank over the tasks every learner finished (JMLR 2012 Table 2).
"""

from __future__ import annotations

from textcw.evaluation.mcnemar import significance_mark

BEST = "•"
MISSING = "–"
DECIMALS = 2


def legend(baseline: str | None) -> str:
    text = f"{BEST} lowest error in the row"
    if baseline:
        text += f"; McNemar vs {baseline}: ⋆ p<0.05, ∗ p<0.01, † p<0.001"
    return text + "; mean rank: 1 = lowest error"


def error_table(report, noise: float = 0.0, *, spread: bool = False, markup: bool = False):
    """``(columns, rows)`` of the error table at one noise rate.

    ``markup`` wraps the best cells in rich's bold tags (for the terminal); ``spread`` adds the
    standard deviation over the folds.
    """
    learners = [s.label for s in report.learners]
    columns = ["task", *learners]
    rows = []
    for task in report.tasks:
        cells = [report.cell(task.label, name, noise) for name in learners]
        if all(c is None or c.mean_error is None for c in cells):
            continue  # nothing finished on this task (e.g. interrupted before its first fold)
        done = [round(c.mean_error, DECIMALS) for c in cells if c is not None and c.complete and c.mean_error is not None]
        best = min(done) if done else None
        row = [task.label]
        for name, cell in zip(learners, cells):
            row.append(_cell_text(report, task.label, name, cell, noise, best, spread, markup))
        rows.append(row)
    ranking = report.ranks.get(str(noise))
    if ranking is not None and ranking.tasks:
        rows.append(["mean rank", *[_fmt(ranking.mean_rank.get(name)) for name in learners]])
    return columns, rows


def _cell_text(report, task, learner, cell, noise, best, spread, markup) -> str:
    if cell is None or cell.mean_error is None:
        return MISSING
    value = round(cell.mean_error, DECIMALS)
    text = f"{value:.{DECIMALS}f}"
    if spread and cell.std_error is not None:
        text += f" ±{cell.std_error:.1f}"
    comparison = report.comparison(task, learner, noise)
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


def noise_table(report):
    """``(columns, rows)``: mean error over the tasks at each noise rate (AROW 2013 Figure 9)."""
    learners = [s.label for s in report.learners]
    rows = []
    for p in report.noise:
        errors = report.errors(p)
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
