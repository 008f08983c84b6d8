"""``textcw train --stream`` and ``--shards N`` on a multi-label task: one model per label.

What :func:`textcw.scale.train_stream` and :func:`textcw.scale.train_sharded` run when the corpus
gives each document a set of labels (:func:`textcw.corpus.multilabel.multilabel_task`). The model
is a :class:`textcw.learners.multilabel.MultiLabel` around the named binary learner, saved and
used as the one ``textcw train`` gives in memory; it predicts tag sets.

- **Stream** (:func:`train_stream_multilabel`): the training split is read once, in chunks of
  ``chunk_size`` documents featurized alone (``hashing``), each chunk learned by every label's
  model through ``MultiLabel.partial_fit``, which scores the chunk before learning it
  (progressive validation, Blum, Kalai and Langford, COLT 1999) and refits each label's
  temperature and F1 threshold (SCut, Yang, SIGIR 2001, section 3.2) on the honest scores of the
  last ``max_recorded`` documents. Every label's weights are those of in-memory training in the
  same order (one pass, no shuffling), bit for bit: the updates run document by document,
  whatever the chunks. The honest scores are recorded in chunks of 1, 1, 2, 4, ... documents
  from the start of every stream chunk instead of from the start of the split, so the
  temperatures and thresholds differ slightly unless the stream is one chunk (tested). Only one
  pass: later passes would score documents the model has learned, which are not honest scores
  for the thresholds. Featurizing processes (``workers``) give the same model as one process.
- **Shards** (:func:`train_sharded_multilabel`): shard ``i`` trains a ``MultiLabel`` on its
  contiguous range (JMLR 2012 section 7.10), whole or streamed; the shards' models are combined
  label by label with the single-label rule (:class:`textcw.scale.combine.Combiner`: ``kl`` or
  ``uniform`` of each label's binary model). Then every label's temperature and threshold are
  refitted for the combined weights on the shards' honest scores: each shard's documents as its
  own model scored them before learning them (or, with several epochs, its cross-fit halves),
  the last ``max_recorded // shards`` of each shard. They are honest (no document was scored by
  a model that had learned it) but come from shard models, each of which saw ``1/n`` of the
  data; the margins are taken over the weights' length or standard deviation, which removes the
  scale the combination changes. One shard is plain in-memory training, bit for bit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from textcw.errors import InputError, ParameterError
from textcw.learners.multilabel import MultiLabel, split_settings
from textcw.learners.multilabel_targets import SETS, as_indicator
from textcw.metrics import multilabel_metrics
from textcw.plugins import use_registries
from textcw.scale.backends import Ready, local_workers, open_backend
from textcw.scale.combine import Combiner, check_combinable
from textcw.scale.pipelined import default_stream_workers, featurized_chunks
from textcw.scale.shards import (ShardResult, ShardTask, check_shard_count, featurize_rows, fit_featurizer,
                                 needs_fit, shard_seeds, stack_rows)
from textcw.scale.source import CHUNK_SIZE, CorpusSource, class_labels, shard_bounds
from textcw.scale.setup import ScaleTrainResult, _featurizer, _learner, _pipeline

__all__ = ["score_multilabel", "train_sharded_multilabel", "train_stream_multilabel"]

_SKIP = lambda stage, done, total: None  # noqa: E731 - the silent progress callback


def train_stream_multilabel(corpus: str, learner: str, *, featurizer=None, params=None, featurizer_params=None,
                            epochs=None, seed=0, chunk_size: int = CHUNK_SIZE, workers=None, threshold="auto",
                            registries=None, progress=None) -> ScaleTrainResult:
    """One pass over ``corpus``'s training split in chunks into ``MultiLabel.partial_fit``, then
    the test split scored chunk by chunk with the multi-label metrics (module docstring).

    The learner's own hyperparameters stand (``"auto"`` values are chosen per model, not per
    label, and are refused by ``MultiLabel``), as in in-memory multi-label training; ``params``
    may also hold ``MultiLabel``'s settings but ``record`` (:func:`_settings`).
    ``progress("documents", done, total)`` follows the stream; there is no online-error monitor
    (a label set's mistakes are per label, not the one error rate a single-label stream shows).
    """
    _check_one_pass(epochs)
    params, settings = _settings(params)
    with use_registries(registries):
        template, _ = _learner(learner, params, epochs, seed, True)
        feat_name, feat = _featurizer(corpus, featurizer, featurizer_params, True)
        source = CorpusSource.resolve(corpus)
    report = progress or _SKIP
    n_train = _check_train(source, corpus)
    if workers is None:
        workers = default_stream_workers(source, -(-n_train // chunk_size), n_train, feat, min(chunk_size, n_train))
    est = MultiLabel(template, **{"threshold": threshold, **settings})
    est._check_setup()  # a learner MultiLabel cannot wrap fails before the stream is read
    report("documents", 0, n_train)
    t0, cpu0 = time.perf_counter(), time.process_time()
    featurize, done = 0.0, 0
    for chunk in featurized_chunks(source, feat, "train", 0, n_train, chunk_size, workers=workers):
        featurize += chunk.featurize_seconds
        est.partial_fit(chunk.X, list(chunk.labels), classes=chunk.classes)
        done += len(chunk)
        report("documents", done, n_train)
    seconds = time.perf_counter() - t0
    facts = {"mode": "stream", "chunk_size": chunk_size, "calibrated_on": int(est.n_honest_scores_)}
    with use_registries(registries):
        model = _multilabel_pipeline(feat, est, template, learner, feat_name, featurizer_params, corpus, facts)
    return _scored(model, source, chunk_size, report, corpus=corpus, learner=learner, featurizer=feat_name,
                   featurizer_params=featurizer_params, n_train=n_train, train_seconds=seconds,
                   featurize_seconds=featurize, mode="stream", chunk_size=chunk_size, workers=workers, passes=1,
                   shard_documents=[n_train], shard_seconds=[round(seconds, 3)],
                   shard_cpu_seconds=[round(time.process_time() - cpu0, 3)])


def train_sharded_multilabel(corpus: str, learner: str, *, shards: int, combine: str = "kl", precision: str = "sum",
                             backend: str = "local", scheduler=None, workers=None, featurizer=None, params=None,
                             featurizer_params=None, epochs=None, seed=0, stream: bool = False,
                             chunk_size: int = CHUNK_SIZE, threshold="auto", registries=None,
                             progress=None) -> ScaleTrainResult:
    """One ``MultiLabel`` per shard of ``corpus``'s training split, combined label by label, its
    thresholds refitted on the shards' honest scores (module docstring); then the test split
    scored with the multi-label metrics."""
    check_shard_count(shards)
    Combiner(combine, precision=precision)  # an unknown method fails before any work
    if stream:
        _check_one_pass(epochs)
    params, settings = _settings(params)
    with use_registries(registries):
        template, base_seed = _learner(learner, params, epochs, seed, stream)
        check_combinable(template, combine)
        feat_name, feat = _featurizer(corpus, featurizer, featurizer_params, stream)
        source = CorpusSource.resolve(corpus)
    report = progress or _SKIP
    n_train = _check_train(source, corpus)
    shard_bounds(n_train, shards - 1, shards)  # more shards than documents fails here
    shape = MultiLabel(template, **{"threshold": threshold, **settings})
    shape._check_setup()
    classes = class_labels(next(iter(source.chunks("train", 0, 1, chunk_size=1))))
    t0 = time.perf_counter()
    featurize = 0.0
    if needs_fit(feat):
        report("featurizing", 0, 1)
        t1 = time.perf_counter()
        feat = fit_featurizer(source, feat)
        featurize += time.perf_counter() - t1
    combiners = [Combiner(combine, precision=precision) for _ in classes]
    results: list[ShardResult] = []
    tasks = [ShardTask(i, shards, s) for i, s in enumerate(shard_seeds(base_seed, shards))]
    n_workers = workers if backend != "local" or workers is not None else local_workers(shards, n_train)
    report("shards", 0, shards)
    with open_backend(backend, scheduler=scheduler, n_workers=n_workers, n_tasks=shards) as runner:
        for result in runner.run(_LabelShard(stream, chunk_size), (source, Ready(feat), shape, classes), tasks,
                                 lambda done: report("shards", done, shards)):
            for label, combiner in enumerate(combiners):
                combiner.add(result.model.estimators_[label])
            results.append(result)
            featurize += result.featurize_seconds
        n_workers = runner.n_workers
    est = results[0].model if shards == 1 else _combined(results, combiners)
    seconds = time.perf_counter() - t0
    facts = {"mode": "shards", "shards": shards, "combine": combine, "stream": stream,
             "calibrated_on": int(est.n_honest_scores_)}
    if precision != "sum":
        facts["precision"] = precision
    with use_registries(registries):
        model = _multilabel_pipeline(feat, est, template, learner, feat_name, featurizer_params, corpus, facts)
    return _scored(model, source, chunk_size, report, corpus=corpus, learner=learner, featurizer=feat_name,
                   featurizer_params=featurizer_params, n_train=n_train, train_seconds=seconds,
                   featurize_seconds=featurize, mode="shards", shards=shards, combine=combine,
                   precision=precision if combine == "kl" else None, backend=backend, workers=n_workers,
                   chunk_size=chunk_size if stream else None, passes=int(template.n_epochs),
                   shard_documents=[r.n_documents for r in results],
                   shard_seconds=[round(r.seconds, 3) for r in results],
                   shard_cpu_seconds=[round(r.cpu_seconds, 3) for r in results])


@dataclass(frozen=True)
class _LabelShard:
    """A picklable shard task: :func:`train_label_shard` with the run's ``stream`` and ``chunk_size``."""

    stream: bool
    chunk_size: int

    @property
    def __name__(self) -> str:  # Dask names its task keys after the function
        return "train_label_shard"

    def __call__(self, source, featurizer, template, classes, task):
        return train_label_shard(source, featurizer, template, classes, task, stream=self.stream,
                                 chunk_size=self.chunk_size)


def train_label_shard(source: CorpusSource, featurizer, template: MultiLabel, classes, task: ShardTask, *,
                      stream: bool = False, chunk_size: int = CHUNK_SIZE) -> ShardResult:
    """A copy of ``template`` trained on shard ``task.index`` of the training split, with a model
    for every label of ``classes`` (the task's, so the shards' models line up label by label).

    ``stream=False``: the shard is featurized and trained whole (``fit``: the learner's epochs,
    shuffled with the shard's seed, thresholds on progressive or cross-fit scores);
    ``stream=True``: one pass of ``partial_fit`` on chunks of ``chunk_size`` documents.
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    start, stop = shard_bounds(source.n_documents("train"), task.index, task.n_shards)
    model = clone(template).set_params(learner__random_state=task.seed)
    featurize = 0.0
    if stream:
        for chunk in featurized_chunks(source, featurizer, "train", start, stop, chunk_size):
            featurize += chunk.featurize_seconds
            model.partial_fit(chunk.X, list(chunk.labels), classes=classes)
    else:
        parts, labels, _, featurize = featurize_rows(source, featurizer, start, stop, chunk_size)
        indicator, _, _ = as_indicator(list(labels), len(labels), classes)
        model.fit(stack_rows(parts), indicator)
        # fitted on the indicator so that a label this shard lacks still has its model; the
        # model answers in label sets, as one fitted on the sets would
        model.classes_, model.label_format_ = np.asarray(classes), SETS
    return ShardResult(index=task.index, model=model, start=start, stop=stop, seconds=time.perf_counter() - t0,
                       featurize_seconds=featurize, mistakes_per_pass=_mistakes_per_pass(model),
                       cpu_seconds=time.process_time() - cpu0)


def _combined(results: list[ShardResult], combiners: list[Combiner]) -> MultiLabel:
    """The shards' label models combined, each label's temperature and threshold refitted on the
    last ``max_recorded // n`` honest scores of every shard (module docstring)."""
    est = results[0].model
    est.estimators_ = [combiner.result() for combiner in combiners]
    share = max(1, est.max_recorded // len(results))
    recorded = [r.model.recorded_ for r in results]
    est.recorded_ = {name: np.ascontiguousarray(np.concatenate([part[name][-share:] for part in recorded]))
                     for name in recorded[0]}
    counts = [getattr(r.model, "unlabelled_documents_", None) for r in results]
    est.unlabelled_documents_ = None if None in counts else int(sum(counts))
    est._calibrate()  # MultiLabel's own refit (temperatures, then F1 cuts) on the merged scores
    return est


def _multilabel_pipeline(feat, est: MultiLabel, template, learner: str, feat_name: str, featurizer_params,
                         corpus: str, training: dict):
    """The saved pipeline, with the components ``textcw train`` records for a multi-label model."""
    from textcw.train_result import jsonable_params

    model = _pipeline(feat, est, learner, feat_name, featurizer_params, corpus, training)
    model.textcw_components_["learner"]["params"] = jsonable_params(template.get_params(deep=False))
    model.textcw_components_["multilabel"] = {"threshold": est.threshold, "record": est.record_}
    return model


def _scored(model, source: CorpusSource, chunk_size: int, report, /, **facts) -> ScaleTrainResult:
    n_test, metrics = score_multilabel(model, source, chunk_size, report)
    return ScaleTrainResult.of(model, n_test=n_test, accuracy=metrics["accuracy"], metrics=metrics,
                               mistakes=_mistakes_per_pass(model[-1]), **facts)


def _mistakes_per_pass(est: MultiLabel) -> list[int]:
    """The label models' online mistakes of each pass, summed over the labels."""
    return [int(sum(m.mistakes_[e] for m in est.estimators_)) for e in range(len(est.estimators_[0].mistakes_))]


def score_multilabel(model, source: CorpusSource, chunk_size: int = CHUNK_SIZE, progress=None) -> tuple[int, dict]:
    """``(documents, metrics)`` of a multi-label ``model`` on the test split, read in chunks:
    :func:`textcw.metrics.multilabel_metrics` of the whole split (``None`` each without a test
    split). Only the 0/1 rows of the truth and of the predictions are kept."""
    report = progress or _SKIP
    est = model[-1]
    total = source.n_documents("test")
    if total == 0:
        return 0, {k: None for k in ("accuracy", "micro_f1", "macro_f1", "hamming_loss", "subset_accuracy",
                                     "per_class")}
    report("evaluating", 0, total)
    truth, predicted = [], []
    for chunk in source.chunks("test", chunk_size=chunk_size):
        unseen = {label for labels in chunk.labels for label in labels} - set(est.classes_.tolist())
        if unseen:
            raise InputError(f"test documents carry labels the training split never has ({sorted(unseen)[:5]}); "
                             "give every label training documents (or drop it from the test file)")
        truth.append(as_indicator(chunk.labels, len(chunk), est.classes_)[0])
        predicted.append(est.predict_indicator(model[:-1].transform(chunk.data)))
        report("evaluating", sum(len(t) for t in truth), total)
    return total, multilabel_metrics(np.concatenate(truth), np.concatenate(predicted), est.classes_)


def _settings(params) -> tuple[dict, dict]:
    """``params`` split into the learner's and ``MultiLabel``'s own settings
    (:data:`textcw.learners.multilabel.SETTINGS`), of which ``record`` does not apply here: a
    stream's honest scores are each chunk's before it is learned, and shards' are refitted
    together (:func:`_combined`)."""
    params, settings = split_settings(params)
    if "record" in settings:
        raise ParameterError("record sets where a multi-label model trained in memory takes its honest scores; "
                             "with --stream or --shards they are the stream's chunks' before each is learned, or the "
                             "shards' own: drop it, or train without --stream and --shards")
    return params, settings


def _check_one_pass(epochs) -> None:
    if epochs is not None and epochs != 1:
        raise ParameterError(
            f"--epochs {epochs}: a multi-label stream is read once (its thresholds come from each chunk's "
            "scores before it is learned, which a second pass would not give); drop --epochs, or train "
            "in memory, without --stream, for several passes")


def _check_train(source: CorpusSource, corpus: str) -> int:
    n_train = source.n_documents("train")
    if n_train == 0:
        raise InputError(f"corpus {corpus} has an empty training split")
    return n_train
