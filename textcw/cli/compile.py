"""``textcw compile``: compile the kernels a training and its predictions use, ahead of a first run.

numba compiles each kernel for this machine's CPU the first time it is used and keeps the code
in its cache (:mod:`textcw._jit`), so a machine's first ``textcw train`` spends most of its time
compiling (about 13 s of 17 s for the README's main job, against about 4 s once the cache is
warm). This command does that work ahead, at install time (``python3 dev.py`` runs it for the
main job's learner when it sets the environment up): for each learner and featurizer named, it
runs the training path of ``textcw train`` (calibration and test scoring included) on two small
generated corpora (``synthetic-text``, one with two labels and one with three), with every
compiled path switched on (small inputs otherwise skip the kernels), so the kernels of binary
and multi-class training, featurizing and scoring are compiled and cached. Nothing is written
but numba's cache (the corpus cache is not used).
"""

from __future__ import annotations

import time
import warnings
from typing import Annotated

import typer

from textcw.cli.output import JsonFlag, print_json
from textcw.cli.usage import DEFAULT_LEARNER
from textcw.plugins import current_registries
from textcw.registry import DEFAULT_FEATURIZER

# binary and multi-class training run different kernels: a seeded generated text corpus of each
# (textcw.corpus.synthetic_text), small, with no download and no file
CORPORA = {2: "synthetic-text:600", 3: "synthetic-text:600:3"}


def compile_(
    learner: Annotated[list[str] | None, typer.Option("--learner", help=f"A learner whose kernels to compile (repeatable; default: {DEFAULT_LEARNER}, the default of `textcw train`)")] = None,
    featurizer: Annotated[list[str] | None, typer.Option("--featurizer", help=f"A text featurizer to compile with (repeatable; default: {DEFAULT_FEATURIZER}, the default for text)")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Compile, ahead of a first run, the kernels training and predicting with these learners use."""
    learners, featurizers = learner or [DEFAULT_LEARNER], featurizer or [DEFAULT_FEATURIZER]
    registries = current_registries()
    for name in learners:  # the names first: a typo is answered before any work
        registries.learners.get(name)
    for name in featurizers:
        registries.featurizers.get(name)
    rows = compile_kernels(learners, featurizers, report=None if as_json else typer.echo)
    if as_json:
        print_json(rows)


def compile_kernels(learners: list[str], featurizers: list[str], *, report=None) -> list[dict]:
    """Train each learner with each featurizer on the generated corpora (module docstring); one
    row per run: the names, the number of labels, the seconds and the kernels compiled."""
    # deferred (start-up): loads scikit-learn and numba
    import textcw._jit_numba  # noqa: F401  (kernels count as loaded: small inputs take the compiled paths)
    from numba.core import event

    from textcw.pipeline import train

    rows = []
    with event.install_recorder("numba:compile") as recorder, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small corpora's calibration and variance notes: not the point here
        for featurizer in featurizers:
            for learner in learners:
                for labels, corpus in CORPORA.items():
                    before, started = _starts(recorder), time.perf_counter()
                    train(corpus, learner, featurizer=featurizer, cache=False)
                    row = {"learner": learner, "featurizer": featurizer, "labels": labels,
                           "seconds": round(time.perf_counter() - started, 2),
                           "kernels_compiled": _starts(recorder) - before}
                    rows.append(row)
                    if report is not None:
                        report(f"{featurizer} + {learner}, {labels} labels: {row['seconds']:.1f} s, "
                               f"{row['kernels_compiled']} kernel versions compiled")
    if report is not None:
        report("compiled: later runs load these kernels from numba's cache" if sum(r["kernels_compiled"] for r in rows)
               else "nothing to compile: every kernel was in numba's cache already")
    return rows


def _starts(recorder) -> int:
    return sum(1 for _, ev in recorder.buffer if ev.is_start)


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command("compile")(compile_)
