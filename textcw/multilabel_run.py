"""Training and evaluating on a multi-label task: what ``textcw train`` and ``textcw evaluate`` run
when a corpus gives each document a set of labels.

A multi-label task is ``reuters:modapte`` or a table read with ``label_sep=`` or
``multilabel=yes`` (:func:`textcw.corpus.multilabel.multilabel_task`). :func:`train_multilabel`
featurizes the training split once, trains :class:`textcw.learners.multilabel.MultiLabel` around
the named learner (one model per label, one pass over the data per epoch, per-label calibrated
probabilities and thresholds chosen on honest scores) and scores the test split with
:func:`textcw.metrics.multilabel_metrics`. :func:`evaluate_holdout` runs the ``holdout`` design
(the corpus's own train/test split) for several learners and tasks with the registered
multi-label metrics; the other designs stratify, tune or flip single labels and are refused by
:func:`check_design` in one line.
"""

from __future__ import annotations

import time

import numpy as np

from textcw.corpus.multilabel import is_multilabel, multilabel_task
from textcw.errors import InputError, ParameterError
from textcw.evaluation.contract import Fold
from textcw.evaluation.multilabel_measures import MultiLabelMetric
from textcw.learners.multilabel import MultiLabel, split_settings
from textcw.metrics import multilabel_metrics
from textcw.pipeline import assemble, build_learner, default_featurizer, load_corpus, make_featurizer
from textcw.plugins import current_registries
from textcw.train_result import TrainResult, jsonable_params

__all__ = ["MULTILABEL_DESIGNS", "MULTILABEL_METRICS", "check_design", "check_metrics", "evaluate_holdout",
           "multilabel_task", "train_multilabel"]

MULTILABEL_DESIGNS = ("holdout",)
MULTILABEL_METRICS = ("micro-f1", "macro-f1", "hamming-loss", "subset-accuracy")


def check_design(design: str, corpus: str) -> None:
    """Refuse, in one line, a design that does not apply to a multi-label task."""
    if design not in MULTILABEL_DESIGNS:
        raise ParameterError(
            f"design {design!r} does not apply to the multi-label task {corpus} (it stratifies, tunes or "
            "flips one label per document); use --design holdout (or --split): the corpus's train/test split")


def check_metrics(names, corpus: str) -> None:
    """Refuse, in one line, a metric that does not score label sets."""
    known = set(MULTILABEL_METRICS) | {e.name for e in current_registries().metrics
                                       if _multilabel_metric(e.factory)}
    wrong = [name for name in names if name not in known]
    if wrong:
        raise ParameterError(
            f"metric {wrong[0]!r} does not apply to the multi-label task {corpus}; use "
            f"{', '.join(MULTILABEL_METRICS)} (e.g. --metric micro-f1,macro-f1)")


def _multilabel_metric(factory) -> bool:
    return isinstance(factory, type) and issubclass(factory, MultiLabelMetric)


def _featurize(corpus: str, featurizer: str | None, featurizer_params: dict | None):
    featurizer = featurizer or default_featurizer(corpus)
    train_set, test_set = load_corpus(corpus, "train"), load_corpus(corpus, "test")
    for data in (train_set, test_set):
        if not is_multilabel(data):
            raise InputError(f"corpus {corpus} does not give its documents label sets; train it without "
                             "the multi-label options")
    if len(train_set) == 0:
        raise InputError(f"corpus {corpus} has an empty training split")
    feat = make_featurizer(featurizer, **dict(featurizer_params or {}))
    t0 = time.perf_counter()
    Xtr = feat.fit_transform(train_set.data)
    Xte = feat.transform(test_set.data) if len(test_set) else None
    return featurizer, feat, train_set, test_set, Xtr, Xte, time.perf_counter() - t0


def train_multilabel(corpus: str, learner: str, *, featurizer: str | None = None, params: dict | None = None,
                     featurizer_params: dict | None = None, epochs: int | None = None, seed: int = 0,
                     threshold="auto", progress=None, n_jobs: int | None = -1) -> TrainResult:
    """Train ``MultiLabel(learner)`` on ``corpus``'s training split and score its test split.

    The result's ``accuracy`` is the subset accuracy; its ``metrics`` hold ``micro_f1``,
    ``macro_f1``, ``hamming_loss``, ``subset_accuracy`` and ``per_class`` (``None`` each when
    the corpus has no test split). ``progress(stage, done, total)`` as for
    :func:`textcw.pipeline.train`; ``n_jobs``: the threads training the labels' models
    (``MultiLabel``'s; -1, one per core), which change no weight. ``params`` holds the learner's
    parameters and, by name, ``MultiLabel``'s own settings (``MultiLabel``'s ``SETTINGS``, e.g.
    ``{"record": "best"}``)."""
    report = progress or (lambda stage, done, total: None)
    # train's "auto" defaults (learner_train_defaults) tune one model on its online mistakes; one
    # value per label is not chosen that way here, so the learner's own defaults stand (an explicit
    # "auto" is refused)
    params, options = split_settings(params)
    binary = build_learner(learner, params, epochs=epochs, seed=seed)
    est = MultiLabel(binary, **{"threshold": threshold, **options}, n_jobs=n_jobs)
    est._check_setup()  # a wrong setting fails before the corpus is read
    report("featurizing", 0, 1)
    featurizer, feat, train_set, test_set, Xtr, Xte, featurize_seconds = _featurize(corpus, featurizer,
                                                                                 featurizer_params)
    report("featurizing", 1, 1)
    t0 = time.perf_counter()
    est.fit(Xtr, train_set.labels, progress=lambda done, total: report("training", done, total))
    # the threads were this run's: the saved model learns on in its caller's thread (a service's
    # updates of a few documents would otherwise start a pool for each)
    est.set_params(n_jobs=None)
    train_seconds = time.perf_counter() - t0
    model = assemble(feat, est, learner=learner, featurizer_name=featurizer, featurizer_params=featurizer_params,
                     corpus=corpus)
    # the learner's own parameters (the wrapper's are its multi-label settings)
    model.textcw_components_["learner"]["params"] = jsonable_params(binary.get_params(deep=False))
    model.textcw_components_["multilabel"] = {"threshold": est.threshold, "record": est.record_}
    report("evaluating", 0, 1)
    if Xte is None:
        metrics = {k: None for k in ("accuracy", "micro_f1", "macro_f1", "hamming_loss", "subset_accuracy",
                                     "per_class")}
    else:
        truth = _indicator(test_set, est.classes_)
        metrics = multilabel_metrics(truth, est.predict_indicator(Xte), est.classes_)
    report("evaluating", 1, 1)
    mistakes = [int(sum(m.mistakes_[e] for m in est.estimators_)) for e in range(len(est.estimators_[0].mistakes_))]
    return TrainResult.of(model, corpus=corpus, learner=learner, featurizer=featurizer,
                          featurizer_params=featurizer_params, n_train=len(train_set), n_test=len(test_set),
                          n_features=Xtr.shape[1], accuracy=metrics["accuracy"], train_seconds=train_seconds,
                          featurize_seconds=featurize_seconds, metrics=metrics, mistakes=mistakes)


def _indicator(data, classes) -> np.ndarray:
    """The 0/1 rows of ``data``'s label sets over ``classes`` (a label the model never saw in
    training is a wrong answer no model could give: it counts as a missed label)."""
    column = {name: k for k, name in enumerate(np.asarray(classes).tolist())}
    truth = np.zeros((len(data), len(column)), dtype=np.int8)
    unseen = np.zeros(len(data), dtype=np.int64)
    for row, labels in enumerate(data.labels):
        for label in labels:
            if label in column:
                truth[row, column[label]] = 1
            else:
                unseen[row] += 1
    if unseen.any():
        raise InputError(f"{int((unseen > 0).sum())} test documents carry labels the training split never has; "
                         "give every label training documents (or drop it from the test file)")
    return truth


def evaluate_holdout(corpora: list[str], learners: list, metrics: dict, *, featurizer: str | None = None,
                     seed: int = 0) -> dict:
    """The ``holdout`` design on multi-label tasks: every learner (a
    :class:`~textcw.evaluation.specs.LearnerSpec`) trained on each corpus's training split and
    scored on its test split with ``metrics`` (``{name: Metric}``). Returns ``{"tasks": [...],
    "learners": [...], "metrics": [...], "rows": [{task, learner, <metric>: value, ...,
    train_seconds}]}``."""
    rows = []
    for corpus in corpora:
        check_metrics(list(metrics), corpus)
        for spec in learners:
            result = train_multilabel(corpus, spec.name, featurizer=featurizer, params=dict(spec.params), seed=seed)
            est = result.model[-1]
            if result.n_test == 0:
                raise InputError(f"corpus {corpus} has no test split; the holdout design scores its test split")
            test_set = load_corpus(corpus, "test")
            fold = Fold(y_true=_indicator(test_set, est.classes_),
                        y_pred=est.predict_indicator(result.model[0].transform(test_set.data)), classes=est.classes_)
            row = {"task": corpus, "learner": spec.label}
            for name, metric in metrics.items():
                row[name] = float(metric(fold)) if metric.applies(fold) else "n/a"
            row["train_seconds"] = result.train_seconds
            rows.append(row)
    return {"design": "holdout", "tasks": list(corpora), "learners": [s.label for s in learners],
            "metrics": list(metrics), "rows": rows}
