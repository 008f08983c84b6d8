"""``textcw reproduce``: run a named experiment of the papers and print ours beside the published numbers."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from textcw.cli.evaluate import PlotFormats
from textcw.cli.output import JsonFlag, JsonOut, print_table, progress_bar


def print_result(result) -> None:
    typer.echo(f"{result.title}")
    typer.echo(f"published: {result.paper}, {result.table}; {result.source}")
    for table in result.tables:
        print_table(table.columns, table.rows, title=table.title)
    for check in result.checks:
        typer.echo(f"[{'pass' if check.passed else 'FAIL'}] {check.name}: {check.detail}")
    for note in result.notes:
        typer.echo(f"note: {note}")
    for item in result.skipped:
        typer.echo(f"not run: {item}")
    typer.echo(f"{'quick run' if result.quick else 'full run'} in {result.seconds:.0f} s")


def reproduce(
    name: Annotated[str | None, typer.Argument(help="Experiment name (omit to list them)")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer folds, tasks and grid points (what CI runs)")] = False,
    available: Annotated[bool, typer.Option("--available", help="Leave out learners and corpora that are not registered")] = False,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
    plot: Annotated[Path | None, typer.Option("--plot", metavar="DIR", help="Write figures (PNG, or --plot-format) into this folder")] = None,
    plot_format: PlotFormats = None,
) -> None:
    """Reproduce a table of the papers on the data that is here, beside the published numbers.

    Exits with 1 when one of the experiment's checks against the paper fails (the output
    says which), as a test would.
    """
    from textcw.cli.evaluate import check_outputs, figure_formats, finish_run, task_lines
    from textcw.evaluation import experiments

    if name is None:
        print_table(["experiment", "what"], [[n, s] for n, (_, s) in experiments.EXPERIMENTS.items()])
        return
    experiment = experiments.get(name)
    formats = figure_formats(plot, plot_format)
    check_outputs(json_out=json_out, plot=plot)
    with progress_bar() as report:
        result = experiment.run(quick=quick, available=available, figures=plot is not None, progress=report,
                                on_task=task_lines())
    if not as_json:
        print_result(result)
    from textcw.evaluation.experiments.figures import experiment_figures

    finish_run(result, as_json=as_json, json_out=json_out, plot=plot,
               figures=functools.partial(experiment_figures, formats=formats),
               interrupted="the tables show the runs that finished")


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(reproduce)
