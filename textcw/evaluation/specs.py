"""What an evaluation runs: learners with fixed parameters, and tasks with their protocol.

A learner is written ``NAME[:KEY=VALUE[:KEY=VALUE...]]`` on the command line, e.g.
``cw-var:covariance=diag-l2``; values are read as JSON when they parse (as ``--param`` does).
The papers' tables compare such variants side by side (JMLR 2012 Table 3: var/stdev x KL/L2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from textcw.errors import ParameterError
from textcw.evaluation.report import Report

CV = "cv"
SPLIT = "split"
PROTOCOLS = (CV, SPLIT)


@dataclass
class LearnerSpec(Report):
    """A registered learner with some parameters fixed (the rest are tuned or left at defaults).

    Attributes
    ----------
    name : str
        The registered learner name.
    params : dict
        Fixed parameters (not tuned).
    label : str
        Column heading in tables (default: the spec as typed).
    """

    name: str
    params: dict = field(default_factory=dict)
    label: str = ""

    def __post_init__(self):
        if not self.label:
            self.label = ":".join([self.name, *(f"{k}={_text(v)}" for k, v in self.params.items())])

    @classmethod
    def parse(cls, text: str) -> LearnerSpec:
        name, *items = [part.strip() for part in text.strip().split(":")]
        if not name:
            raise ParameterError(f"learner {text!r} has no name; write NAME[:KEY=VALUE...]")
        params = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ParameterError(
                    f"learner {text!r}: {item!r} is not KEY=VALUE (e.g. cw-var:covariance=diag-l2)"
                )
            try:
                params[key] = json.loads(value)
            except json.JSONDecodeError:
                params[key] = value
        return cls(name, params, text.strip())


@dataclass
class TaskSpec(Report):
    """A ``corpus:task`` and how it is evaluated.

    Attributes
    ----------
    corpus : str
        ``corpus:task`` as registered, e.g. ``newsgroups:comp``.
    protocol : {"cv", "split"}
        ``cv``: k-fold cross-validation over all the task's documents (its train and test
        splits pooled, as the papers cross-validate a sample of each task; JMLR 2012 section
        7.6). ``split``: train on the corpus's training split, test on its test split (the
        papers' USPS and MNIST results; AROW 2013 section 5.3).
    sample : int or None
        With ``cv``, draw a seeded, class-balanced sample of this many documents from the pool
        first (JMLR 2012 section 7: 1,800 documents per 20 Newsgroups pair, 2,000 elsewhere).
    featurizer : str or None
        Registered featurizer (default: the corpus's own).
    featurizer_params : dict
    label : str
        Row heading in tables.
    """

    corpus: str
    protocol: str = CV
    sample: int | None = None
    featurizer: str | None = None
    featurizer_params: dict = field(default_factory=dict)
    label: str = ""

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise ParameterError(f"protocol {self.protocol!r} is invalid; use one of {', '.join(PROTOCOLS)}")
        if self.sample is not None and (not isinstance(self.sample, int) or self.sample < 2):
            raise ParameterError(f"sample={self.sample!r} is invalid; it must be an integer >= 2")
        if not self.label:
            self.label = self.corpus


def as_task(task) -> TaskSpec:
    return task if isinstance(task, TaskSpec) else TaskSpec(str(task))


def as_learner(learner) -> LearnerSpec:
    return learner if isinstance(learner, LearnerSpec) else LearnerSpec.parse(str(learner))


def check_specs(tasks: list[TaskSpec], learners: list[LearnerSpec], baseline: str | None) -> None:
    """Fail before any work for an unknown learner, corpus or task, or a bad baseline."""
    # Here, not at the top: the evaluation contract imports this module, and defining a metric or
    # a design must not load the pipeline (scikit-learn) or the plugin registries.
    from textcw.pipeline import make_learner
    from textcw.plugins import current_registries, resolve_corpus

    if not tasks or not learners:
        raise ParameterError("an evaluation needs at least one task and one learner")
    for spec in learners:
        make_learner(spec.name, **spec.params)
    labels = [s.label for s in learners]
    if len(set(labels)) != len(labels):
        raise ParameterError(f"a learner is listed twice: {', '.join(labels)}")
    if len({t.label for t in tasks}) != len(tasks):
        raise ParameterError(f"a task is listed twice: {', '.join(t.label for t in tasks)}")
    for task in tasks:
        resolve_corpus(task.corpus)
        if task.featurizer is not None:
            current_registries().featurizers.get(task.featurizer)
    if baseline is not None and baseline not in labels:
        raise ParameterError(f"baseline {baseline!r} is not among the learners ({', '.join(labels)})")


def split_list(text: str, what: str) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]``; an empty item is an error naming ``what``."""
    items = [item.strip() for item in text.split(",")]
    if not items or any(not item for item in items):
        raise ParameterError(f"{what} {text!r} has an empty item; separate names with commas")
    return items


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)
