"""``textcw evaluate``: cross-validate learners on tasks and print the papers' kind of table."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from textcw.atomic import check_output_folder, check_output_path
from textcw.cli.output import JsonFlag, JsonOut, log, print_json, print_table, progress_bar, write_json
from textcw.cli.signals import exit_interrupted
from textcw.cli.signals import interrupted as signal_received  # not `interrupted`: finish_run's parameter
from textcw.cli.usage import DEFAULT_LEARNER, default_learner_note, resolve_typed_corpus
from textcw.errors import ParameterError, TextcwError
from textcw.plugins import current_registries


def parse_floats(text: str | None, option: str) -> list[float]:
    if text is None:
        return [0.0]
    try:
        return [float(item) for item in text.split(",")]
    except ValueError:
        raise ParameterError(f"{option} {text!r} is not a comma-separated list of numbers (e.g. 0,0.1,0.2)") from None


def split_corpora(text: str) -> list[str]:
    """The tasks of ``--corpus``: comma-separated, but a comma inside the path of a task whose
    corpus declares ``takes_path`` (``folder``, ``svmlight``) does not start a new task
    (``svmlight:train.svm,test.svm`` is one task).

    An item that names no registered corpus and follows such a task is the rest of its path.
    """
    # deferred (start-up): loads NumPy
    from textcw.evaluation.specs import split_list

    corpora = current_registries().corpora
    items: list[str] = []
    for item in split_list(text, "--corpus"):
        previous = items[-1].partition(":")[0] if items else None
        if previous in corpora and corpora.get(previous).takes_path and item.partition(":")[0] not in corpora:
            items[-1] = f"{items[-1]},{item}"
        else:
            items.append(item)
    return items


def task_lines():
    """An ``on_task`` callback for logs: one line per finished task when stderr is not a terminal
    (a terminal shows progress bars instead)."""
    from rich.console import Console

    if Console(stderr=True).is_terminal:
        return None

    def on_task(info) -> None:
        typer.echo(f"{info.label}: done ({info.n_docs} documents, {info.seconds:.1f} s)", err=True)

    return on_task


def print_report(report, *, spread: bool = False, caption: str | None = None) -> None:
    """The table of the first metric at every noise rate (with McNemar's marks and the mean
    ranks when compared), the legend, the tables of the other metrics, the comparisons'
    verdicts and the tuned settings. ``caption`` follows the metric's name in the titles
    (default: ``", K-fold CV"`` when a task was cross-validated)."""
    # deferred (start-up): loads SciPy
    from textcw.evaluation.table import error_table, legend, noise_table, per_class_table, tuning_table

    if caption is None:
        caption = f", {report.folds}-fold CV" if any(t.protocol == "cv" for t in report.tasks) else ""
    for k, info in enumerate(report.metrics or [report.metric("error")]):
        name = info["name"]
        for p in report.noise:
            title = info["title"] + caption
            if len(report.noise) > 1 or p:
                title += f", training labels flipped with p={p:g}"
            if info["per_class"]:
                print_table(*per_class_table(report, name, p, markup=True), title=title)
            else:
                columns, rows = error_table(report, p, spread=spread, markup=True, metric=name, marks=k == 0)
                print_table(columns, rows, title=title)
        if k == 0:
            # a report of run_suite (no design named) has the library's default comparisons
            mcnemar = "mcnemar" in report.compared if report.design else True
            ranked = any(r.tasks for r in report.ranks.values()) if report.design else True
            typer.echo(legend(report.baseline if mcnemar else None, ranked=ranked, better=info["better"],
                              metric="error" if name == "error" else name))
            if len(report.noise) > 1 and not info["per_class"]:
                print_table(*noise_table(report, name), title=f"mean {info['title']} over the tasks")
    for verdict in report.verdicts.values():
        print_table(verdict.columns, verdict.rows, title=verdict.title)
    if report.tuning:
        print_table(*tuning_table(report), title="chosen on the tuning run")


def parse_plot_formats(values: list[str] | None) -> list[str]:
    """``--plot-format``'s values (repeated, or comma-separated), checked against the formats a
    figure can be written in; ``[]`` when the option is not given."""
    if not values:
        return []
    # deferred (start-up): loads NumPy
    from textcw.evaluation.plot import FORMATS

    chosen: list[str] = []
    for value in values:
        for item in value.split(","):
            fmt = item.strip().lower()
            if fmt not in FORMATS:
                raise typer.BadParameter(f"{item.strip()!r} is not one of " + ", ".join(map(repr, FORMATS))
                                         + " (repeat the option or separate formats with commas: png,svg)")
            if fmt not in chosen:
                chosen.append(fmt)
    return chosen


PlotFormats = Annotated[list[str] | None, typer.Option(
    "--plot-format", metavar="png|svg", callback=parse_plot_formats,
    help="Format of the --plot figures, png or svg; repeat it or give png,svg for both (default: png)")]


def figure_formats(plot: Path | None, formats: list[str] | None) -> list[str]:
    """The formats to draw the ``--plot`` figures in (PNG unless ``--plot-format`` says otherwise);
    ``--plot-format`` without ``--plot`` is refused rather than ignored."""
    if formats and plot is None:
        raise ParameterError("--plot-format sets the format of the --plot figures; give --plot DIR too")
    return formats or ["png"]


def online_curves(report) -> list:
    """Per finished task, the cumulative online mistakes of one pass of every online learner of
    ``report`` with its tuned settings (:func:`textcw.evaluation.online.online`: a few seeded
    runs of one pass each, far less work than the folds' training)."""
    # deferred (start-up): loads scikit-learn and the numba kernels
    from textcw.evaluation.online import online

    learners = current_registries().learners
    online_learners = [s for s in report.learners if learners.get(s.name).online]
    settings = {(t.learner, t.noise): (t.params, t.passes) for t in report.tuning}
    finished = {info.label for info in report.task_info}
    if not online_learners:
        return []
    run = online(seed=report.seed)
    return [run(task, online_learners, settings) for task in report.tasks if task.label in finished]


def write_figures(report, directory: Path, *, formats=("png",)) -> list[Path]:
    """The suite's figures plus one cumulative-mistakes plot per task (tuned settings), in every
    format of ``formats``."""
    # deferred (start-up): loads NumPy
    from textcw.evaluation.plot import suite_figures

    online_reports = report.online or online_curves(report)
    return suite_figures(report, directory, online_reports=online_reports, formats=formats)


def check_outputs(*, json_out: Path | None, plot: Path | None) -> None:
    """Refuse, before the run, a ``--json-out`` file or ``--plot`` folder that cannot be written
    (and a ``--plot`` without matplotlib): a long run is not lost to a typo."""
    if json_out is not None:
        check_output_path(json_out, "--json-out", example="report.json")
    if plot is not None:
        # deferred (start-up): loads NumPy
        from textcw.evaluation.plot import require_matplotlib

        require_matplotlib()
        check_output_folder(plot, "--plot")


def finish_run(report, *, as_json: bool, json_out, plot, figures, interrupted: str) -> None:
    """After a suite or an experiment: print it (text or ``--json``), write the JSON file, list
    failed tasks, exit 130 if interrupted, draw the figures, and exit 1 if a task failed or (an
    experiment) one of its checks failed; whatever finished was printed first."""
    if signal_received():  # a signal whose exception was lost on the way: the run is cut short
        report.interrupted = True
    if as_json:
        typer.echo(report.to_json())
    if json_out is not None:
        report.to_json(json_out)
        log.info("wrote %s", json_out)
    for failure in report.failures:
        log.error("failed: %s", failure)
    if report.interrupted:
        exit_interrupted(interrupted)
    if plot is not None:
        for path in figures(report, plot):
            log.info("wrote %s", path)
    failed_checks = [check.name for check in getattr(report, "checks", []) if not check.passed]
    if failed_checks:
        log.error("%d of %d checks failed: %s", len(failed_checks), len(report.checks),
                  "; ".join(failed_checks))
    if report.failures or failed_checks:
        raise SystemExit(1)


def evaluation_plan(design: str, options: dict, *, metric: str, compare: str | None, baseline: str | None):
    """``(design name, design, metrics, comparisons)`` built from their specifications; without
    ``--compare``, the papers' table: the mean ranks (of one number per cell), and McNemar's test
    with a ``--baseline``."""
    # deferred (start-up): loads NumPy
    from textcw.evaluation.dispatch import build, build_all

    design_name, chosen = build("evaluators", design, options)
    metrics = build_all("metrics", metric)
    if compare is None:
        default = ["mcnemar"] * (baseline is not None) + ["rank"] * (not next(iter(metrics.values())).per_class)
        comparisons = build_all("comparisons", ",".join(default)) if default else {}
    else:
        comparisons = build_all("comparisons", compare)
    return design_name, chosen, metrics, comparisons


def evaluate(
    corpus: Annotated[str, typer.Option("--corpus", help="Tasks, comma-separated, e.g. newsgroups:comp,newsgroups:sci")],
    learner: Annotated[str | None, typer.Option("--learner", help="Learners, comma-separated; fix parameters with NAME:KEY=VALUE (default: scw1, the safe default)")] = None,
    design: Annotated[str | None, typer.Option("--design", metavar="NAME[:KEY=VALUE...]", help=(
        "Evaluation design (textcw list evaluators): cv (default), holdout, noise, tune, timing, curve, online, "
        "combination, or a plugin's"))] = None,
    metric: Annotated[str, typer.Option("--metric", metavar="NAME[:KEY=VALUE],...", help=(
        "Metrics, comma-separated (textcw list metrics); the first is the main table"))] = "error",
    compare: Annotated[str | None, typer.Option("--compare", metavar="NAME,...", help=(
        "Comparisons, comma-separated (textcw list comparisons); default: rank, plus mcnemar with --baseline"))] = None,
    folds: Annotated[int | None, typer.Option("--folds", help="Cross-validation folds (default 10)")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="Choose parameters and passes (1..10) on a tuning run first")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="With --tune: a smaller grid")] = False,
    noise: Annotated[str | None, typer.Option("--noise", help="Training label-noise rates, comma-separated, e.g. 0,0.1,0.3")] = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="Compare against this learner (McNemar marks; default: the first learner when a comparison needs one)")] = None,
    split: Annotated[bool, typer.Option("--split", help="Use the corpus's train/test split instead of cross-validation (--design holdout)")] = False,
    sample: Annotated[int | None, typer.Option("--sample", help="Cross-validate a class-balanced sample of this many documents")] = None,
    featurizer: Annotated[str | None, typer.Option("--featurizer", help="Featurizer (default: each corpus's own)")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of folds, samples, shuffling and noise (default 0)")] = None,
    spread: Annotated[bool, typer.Option("--spread", help="Show the standard deviation over the folds")] = False,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    plot: Annotated[Path | None, typer.Option("--plot", metavar="DIR", help="Write figures (PNG, or --plot-format) into this folder")] = None,
    plot_format: PlotFormats = None,
) -> None:
    """Evaluate learners on tasks with a registered design, metrics and comparisons; by default
    10-fold cross-validation: error (%) per task and learner, McNemar marks, mean ranks."""
    design_name, chosen, metrics, comparisons = _plan(
        design, split, folds=folds, tune=tune, quick=quick, sample=sample, seed=seed, noise=noise, metric=metric,
        compare=compare, baseline=baseline)
    names = split_corpora(corpus)
    for name in names:  # a misspelt task is said now, as a usage error, not as a failed row
        resolve_typed_corpus(name)
    # deferred (start-up): loads NumPy
    from textcw.corpus.multilabel import multilabel_task

    if any(multilabel_task(name) for name in names):
        return evaluate_multilabel(names, learner, design=design_name if design or split else "holdout",
                                   metric=metric, featurizer=featurizer,
                                   seed=seed, as_json=as_json, json_out=json_out,
                                   refused={"--tune": tune or None, "--noise": noise, "--sample": sample,
                                            "--folds": folds, "--compare": compare, "--baseline": baseline,
                                            "--plot": plot, "--spread": spread or None})
    return _evaluate_single_label(names, learner, design_name, chosen, metrics, comparisons, featurizer=featurizer,
                                  baseline=baseline, spread=spread, as_json=as_json, json_out=json_out, plot=plot,
                                  plot_format=plot_format)


def _plan(design: str | None, split: bool, *, folds, tune: bool, quick: bool, sample, seed, noise: str | None,
          metric: str, compare: str | None, baseline: str | None):
    """:func:`evaluation_plan` of ``textcw evaluate``'s options: ``--split`` is ``--design holdout``,
    and the design's options given as their own flags are passed on."""
    if split and design is not None and design.split(":")[0].strip() != "holdout":
        raise ParameterError(f"--split is --design holdout; give one of --split and --design {design}")
    named = {"folds": folds, "tune": tune or None, "quick": quick or None, "sample": sample, "seed": seed,
             "noise": None if noise is None else parse_floats(noise, "--noise")}
    return evaluation_plan(
        design or ("holdout" if split else "cv"), {k: v for k, v in named.items() if v is not None},
        metric=metric, compare=compare, baseline=baseline)


def _evaluate_single_label(names: list[str], learner: str | None, design_name: str, chosen, metrics: dict,
                           comparisons: dict, *, featurizer, baseline: str | None, spread: bool, as_json: bool,
                           json_out: Path | None, plot: Path | None, plot_format) -> None:
    """``textcw evaluate`` on single-label tasks with the planned design, metrics and comparisons:
    run, then the table, the JSON report and the figures as asked."""
    # deferred (start-up): loads NumPy
    from textcw.evaluation.dispatch import resolve_baseline, run_evaluation
    from textcw.evaluation.specs import LearnerSpec, TaskSpec, split_list

    tasks = [TaskSpec(name, chosen.protocol, None, featurizer) for name in names]
    defaulted = learner is None
    learners = [LearnerSpec.parse(text) for text in split_list(learner or DEFAULT_LEARNER, "--learner")]
    baseline = resolve_baseline(comparisons, baseline, learners)
    if chosen.settings.get("quick") and "tune" in chosen.settings and not chosen.settings["tune"]:
        # (a design without a tune option, such as tune, always tunes)
        raise ParameterError("--quick shrinks the tuning grid; use it with --tune")
    formats = figure_formats(plot, plot_format)
    check_outputs(json_out=json_out, plot=plot)
    on_task = task_lines()
    with progress_bar() as report_progress:
        report = run_evaluation(chosen, tasks, learners, metrics=metrics, comparisons=comparisons, baseline=baseline,
                                design_name=design_name, curves=plot is not None, probabilities=plot is not None,
                                progress=report_progress, on_task=on_task)
    if report.failures and not report.task_info and not report.interrupted:
        # Nothing finished: an empty table would only hide the reason, so the failures are
        # the error (one line, like every other command's).
        reasons = "; ".join(" ".join(f.split()) for f in report.failures)
        message = reasons if len(report.failures) == 1 else f"no task finished: {reasons}"
        if json_out is not None:
            report.to_json(json_out)
            message += f" (the report is in {json_out})"
        raise TextcwError(message)
    if defaulted:  # said once something ran: a refusal stays one line
        log.info("%s", default_learner_note())
    if not as_json:
        print_report(report, spread=spread, caption=chosen.caption(report))
    if (as_json or json_out is not None or plot is not None) and not report.interrupted:
        report.online = online_curves(report)  # the JSON report's online mistake curves
    finish_run(report, as_json=as_json, json_out=json_out, plot=plot,
               figures=functools.partial(write_figures, formats=formats),
               interrupted="the table shows the runs that finished")


def evaluate_multilabel(names: list[str], learner: str | None, *, design: str, metric: str, featurizer, seed,
                        as_json: bool, json_out: Path | None, refused: dict) -> None:
    """``textcw evaluate`` on multi-label tasks (:func:`textcw.multilabel_run.evaluate_holdout`):
    the holdout design (the default here) with the multi-label metrics (micro-F1, macro-F1,
    Hamming loss and subset accuracy unless --metric names others); what does not apply is
    refused in one line."""
    # deferred (start-up): loads scikit-learn and the numba kernels
    from textcw.corpus.multilabel import multilabel_task
    from textcw.evaluation.dispatch import build_all
    from textcw.evaluation.specs import LearnerSpec, split_list
    from textcw.multilabel_run import MULTILABEL_METRICS, check_design, evaluate_holdout

    single = [name for name in names if not multilabel_task(name)]
    if single:
        multi = next(name for name in names if multilabel_task(name))
        raise ParameterError(f"{single[0]} has one label per document and {multi} a set of labels; evaluate "
                             "multi-label and single-label tasks in separate runs")
    check_design(design, names[0])
    given = [option for option, value in refused.items() if value is not None]
    if given:
        raise ParameterError(f"{given[0]} does not apply to the multi-label task {names[0]} (the holdout design "
                             "scores one trained model per learner); drop it")
    if json_out is not None:
        check_outputs(json_out=json_out, plot=None)
    metrics = build_all("metrics", ",".join(MULTILABEL_METRICS) if metric == "error" else metric)
    learners = [LearnerSpec.parse(text) for text in split_list(learner or DEFAULT_LEARNER, "--learner")]
    with progress_bar():
        report = evaluate_holdout(names, learners, metrics, featurizer=featurizer, seed=seed or 0)
    if json_out is not None:
        write_json(report, json_out)
    if as_json:
        print_json(report)
        return
    titles = {name: getattr(m, "title", name) for name, m in metrics.items()}
    columns = ["task", "learner", *titles.values(), "train s"]
    rows = [[row["task"], row["learner"], *(_cell(row[name]) for name in metrics), f"{row['train_seconds']:.1f}"]
            for row in report["rows"]]
    print_table(columns, rows, title="multi-label, the corpus's train/test split")


def _cell(value) -> str:
    return value if isinstance(value, str) else f"{value:.4f}"


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(evaluate)
