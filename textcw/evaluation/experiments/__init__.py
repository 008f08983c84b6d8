"""Named reproductions of the papers' experiments (``textcw reproduce NAME``).

Each module holds one experiment: which published numbers it compares against (the JSON files
in ``published/``, transcribed from the papers with the table they come from), which tasks and
learners stand for the paper's, and any claims it checks. ``run(name, quick=...)`` returns an
:class:`~textcw.evaluation.experiments.base.ExperimentResult`.

This package is internal: the reproductions are textcw's own record of how close it comes to
the published numbers, not an extension point. The table below is not extended by plugins and
may change between releases; a plugin that reproduces another paper adds its own command
through the ``register_commands`` hook (and can build on
:func:`textcw.evaluation.suite.run_suite`, which every table here uses). They run on the
registries in use (:func:`textcw.plugins.use_registries`).
"""

from __future__ import annotations

import importlib

from textcw.errors import UnknownNameError

__all__ = ["EXPERIMENTS", "get", "names", "run"]

# name -> (module, one-line summary)
EXPERIMENTS = {
    "jmlr-table2": ("jmlr_table2", "JMLR 2012 Table 2: CW var/stdev x KL/L2/exact diagonalisation"),
    "jmlr-table3": ("jmlr_table3", "JMLR 2012 Table 3: diagonal CW against perceptron, PA, SOP, SGD"),
    "jmlr-table4": ("jmlr_table4", "JMLR 2012 Table 4: diagonal CW against naive Bayes, maxent, SVM"),
    "jmlr-table5": ("jmlr_table5", "JMLR 2012 Table 5: training seconds per run"),
    "emnlp-table3": ("emnlp_table3", "EMNLP 2009 Table 3: multi-class CW (k = 1, 5, all) against baselines"),
    "arow-noise": ("arow_noise", "AROW 2013 section 5.3: mean ranks under label noise (binary tasks)"),
    "nips-synthetic": ("nips_synthetic", "NIPS 2008 section 5: online mistakes on 20-d synthetic data"),
}


def names() -> list[str]:
    return list(EXPERIMENTS)


def get(name: str):
    """The experiment object (with ``run(quick=, available=, figures=, progress=, on_task=)``)."""
    if name not in EXPERIMENTS:
        raise UnknownNameError("experiment", name, EXPERIMENTS)
    module = importlib.import_module(f"{__name__}.{EXPERIMENTS[name][0]}")
    return module.EXPERIMENT


def run(name: str, *, quick: bool = False, available: bool = False, figures: bool = False,
        progress=None, on_task=None):
    """Run experiment ``name``; ``figures`` also records what the figures need (curves, probabilities)."""
    return get(name).run(quick=quick, available=available, figures=figures,
                         progress=progress, on_task=on_task)
