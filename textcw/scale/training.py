"""``textcw train --shards N`` and ``textcw train --stream`` as library functions.

:func:`train_sharded` trains one model per disjoint shard of the training split on a backend
(joblib processes or a Dask cluster) and combines them (:mod:`textcw.scale.combine`);
:func:`train_stream` reads the training split in chunks through a featurizer that learns
nothing (``hashing``) into ``partial_fit``, so memory stays flat however long the stream is.
Both score the model on the test split, read in chunks too, and return a :class:`ScaleTrainResult`
(a :class:`textcw.pipeline.TrainResult` with the scale-out facts added). On a multi-label task
(label sets per document) both train one model per label instead: :mod:`textcw.scale.multilabel`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from textcw.corpus.multilabel import multilabel_task
from textcw.errors import ParameterError
from textcw.metrics import ProbabilityScores, label_metrics, untested_metrics
from textcw.plugins import deprecated_registries, use_registries
from textcw.registry import Registries
from textcw.scale.backends import Ready, local_workers, open_backend
from textcw.scale.calibration import HonestScores
from textcw.scale.combine import Combiner, check_combinable
from textcw.scale.pipelined import StreamStatus, default_stream_workers
from textcw.scale.setup import STREAM_FEATURIZER, ScaleTrainResult, _featurizer, _learner, _pipeline
from textcw.scale.shards import (
    ShardTask, check_shard_count, fit_and_featurize, fit_featurizer, iter_shards, needs_fit, train_shard,
)
from textcw.scale.source import CHUNK_SIZE, CorpusSource
from textcw.scale.tuning import TUNE_DOCUMENTS, auto_params, tune_on_first

__all__ = ["STREAM_FEATURIZER", "ScaleTrainResult", "score", "train_sharded", "train_stream"]

Progress = Callable[[str, int, int], None]


def train_sharded(corpus: str, learner: str, *, shards: int, combine: str = "kl", precision: str = "sum",
                  backend: str = "local",
                  scheduler: str | None = None, workers: int | None = None, featurizer: str | None = None,
                  params: dict | None = None, featurizer_params: dict | None = None,
                  epochs: int | None = None, seed: int | None = 0, stream: bool = False,
                  chunk_size: int = CHUNK_SIZE, registries: Registries | None = None,
                  progress: Progress | None = None, tune: bool = True) -> ScaleTrainResult:
    """Train ``learner`` on ``shards`` disjoint parts of ``corpus``'s training split, then combine.

    Parameters beyond those of :func:`textcw.pipeline.train`:

    shards : int >= 1
        Number of shards (``1`` gives exactly the model of ordinary training).
    combine : {"kl", "uniform"}
        How shard models are combined (:func:`textcw.combine`).
    precision : {"sum", "mean"}
        With ``combine="kl"``: the papers' sum of the shards' precisions, or their mean, which
        keeps the combined model as confident as one shard (:func:`textcw.combine`).
    backend : {"local", "dask"}
        ``local``: joblib processes on this machine; ``dask``: a Dask cluster, at ``scheduler``
        (``HOST:PORT``) or, without an address, a local cluster started for this call.
    workers : int, optional
        Processes of the local backend or of the local Dask cluster (default: one per core, at
        most one per shard; on the local backend also at most one per
        :data:`~textcw.scale.backends.DOCUMENTS_PER_WORKER` training documents, since a worker
        process costs seconds to start: a small corpus is trained in this process).
    stream : bool
        Each shard is read in chunks into ``partial_fit`` (see :func:`train_stream`) instead of
        whole. Every tunable parameter that ``params`` does not give is then chosen first, by
        progressive validation over the split's first :data:`~textcw.scale.tuning.TUNE_DOCUMENTS`
        documents in this process (:func:`textcw.scale.tuning.tune_on_first`), and every shard
        trains with the chosen values, so the shard models share their parameters and combine
        (``tune=False``: the learner's defaults). The values are recorded in the model's
        training facts (``training["tuned_params"]``).

    Shard ``i`` uses documents ``[i N / n, (i + 1) N / n)`` and a seed derived from ``seed``
    (:func:`textcw.scale.shards.shard_seeds`), so results do not depend on the backend, the
    number of workers, or workers dying and tasks being rerun.
    """
    registries = deprecated_registries(registries, "textcw.scale.train_sharded")
    if multilabel_task(corpus):  # label sets: one model per label (textcw.scale.multilabel)
        from textcw.scale.multilabel import train_sharded_multilabel

        return train_sharded_multilabel(
            corpus, learner, shards=shards, combine=combine, precision=precision, backend=backend,
            scheduler=scheduler, workers=workers, featurizer=featurizer, params=params,
            featurizer_params=featurizer_params, epochs=epochs, seed=seed, stream=stream, chunk_size=chunk_size,
            registries=registries, progress=progress)
    check_shard_count(shards)
    Combiner(combine, precision=precision)  # an unknown method fails before any work
    with use_registries(registries):
        template, base_seed = _learner(learner, params, epochs, seed, stream)
        auto = auto_params(template, params) if stream and tune else {}
        check_combinable(template, combine)
        feat_name, feat = _featurizer(corpus, featurizer, featurizer_params, stream)
        source = CorpusSource.resolve(corpus)
    report = progress or (lambda stage, done, total: None)

    t0 = time.perf_counter()
    tuned, tuned_on = _tune_first(source, feat, template, auto, chunk_size, report)
    run = _run_shards(source, feat, template, Combiner(combine, precision=precision), shards=shards,
                      seed=base_seed, backend=backend, scheduler=scheduler, workers=workers, stream=stream,
                      chunk_size=chunk_size, report=report)
    fitted, learner_model, sizes = run.featurizer, run.model, run.sizes
    if shards > 1 and "random_state" in learner_model.get_params(deep=False):
        learner_model.set_params(random_state=base_seed)  # the run's seed; each shard had its own
    train_seconds = time.perf_counter() - t0

    # which parameters were chosen before the shards, on how many documents, and the values
    training = _training_facts({"mode": "shards", "shards": shards, "combine": combine, "stream": stream},
                               auto, tuned_on, tuned)
    if precision != "sum":  # recorded when it differs from the papers' (older files lack the key)
        training["precision"] = precision
    with use_registries(registries):
        model = _pipeline(fitted, learner_model, learner, feat_name, featurizer_params, corpus, training)
    return _scored(
        model, source, chunk_size, report, corpus=corpus, learner=learner, featurizer=feat_name,
        featurizer_params=featurizer_params, n_train=sum(sizes), train_seconds=train_seconds,
        featurize_seconds=run.featurize_seconds, mode="shards", shards=shards,
        combine=combine, precision=precision if combine == "kl" else None, backend=backend, workers=run.n_workers,
        chunk_size=chunk_size if stream else None, passes=int(template.n_epochs),
        shard_documents=sizes, shard_seconds=run.seconds, shard_cpu_seconds=run.cpu_seconds,
    )


@dataclass
class _ShardRun:
    """What the shards of one :func:`train_sharded` run gave: the featurizer they used, their
    models combined, and the facts reported per shard."""

    featurizer: object
    model: object
    sizes: list
    seconds: list
    cpu_seconds: list
    featurize_seconds: float
    n_workers: int


def _run_shards(source: CorpusSource, feat, template, combiner: Combiner, *, shards: int, seed, backend: str,
                scheduler: str | None, workers: int | None, stream: bool, chunk_size: int, report) -> _ShardRun:
    """Fit the featurizer if it learns (here, or on a worker), train every shard on ``backend`` and
    fold each shard model into ``combiner`` in shard order (the shards of :func:`train_sharded`)."""
    sizes, seconds, cpu = [], [], []
    featurize = 0.0
    rows = None
    if backend == "local" and needs_fit(feat):
        # The driver reads the split to learn the vocabulary anyway: featurizing it in the same
        # pass and handing the shards their rows saves every worker reading and featurizing.
        report("featurizing", 0, 1)
        t1 = time.perf_counter()
        fitted_here, rows = fit_and_featurize(source, feat)
        featurize += time.perf_counter() - t1
    if backend == "local" and workers is None:
        workers = local_workers(shards, rows.n_documents if rows is not None else
                                source.n_documents("train") if source.streams else None)
    with open_backend(backend, scheduler=scheduler, n_workers=workers, n_tasks=shards) as runner:
        if rows is not None:
            handle = Ready(fitted_here)
        elif needs_fit(feat):
            report("featurizing", 0, 1)
            handle = runner.submit(fit_featurizer, source, feat)
        else:
            handle = Ready(feat)
        report("shards", 0, shards)
        for result in iter_shards(runner, source, handle, template, shards, seed=seed,
                                  stream=stream, chunk_size=chunk_size, rows=rows,
                                  on_done=lambda done: report("shards", done, shards)):
            combiner.add(result.model)
            sizes.append(result.n_documents)
            seconds.append(round(result.seconds, 3))
            cpu.append(round(result.cpu_seconds, 3))
            featurize += result.featurize_seconds
        fitted = handle.result()
        n_workers = runner.n_workers
    return _ShardRun(fitted, combiner.result(), sizes, seconds, cpu, featurize, n_workers)


def train_stream(corpus: str, learner: str, *, featurizer: str | None = None, params: dict | None = None,
                 featurizer_params: dict | None = None, epochs: int | None = None, seed: int | None = 0,
                 chunk_size: int = CHUNK_SIZE, registries: Registries | None = None,
                 progress: Progress | None = None, workers: int | None = None,
                 monitor: Callable[[StreamStatus], None] | None = None, tune: bool = True,
                 probability: str = "calibrated") -> ScaleTrainResult:
    """Out-of-core training: chunks of ``chunk_size`` documents -> ``transform`` -> ``partial_fit``.

    The featurizer (default ``hashing``) must learn nothing from the data, so every chunk is
    featurized alone; memory is then the chunks in flight plus the model, whatever the length of
    the stream. A stream is read once unless ``epochs`` asks for more passes (each in corpus
    order). ``workers`` processes read and featurize chunks ahead while this process learns
    (:func:`textcw.scale.pipelined.featurized_chunks`; default: one per core for a corpus with
    the streaming protocol and a stream long enough to pay for them, else ``1``, in this process:
    :func:`~textcw.scale.pipelined.default_stream_workers`); the model is the same for any number.
    ``progress("documents", done, total)`` follows the training documents; ``monitor``, if
    given, receives a :class:`~textcw.scale.pipelined.StreamStatus` (documents, throughput,
    running online error) after every chunk.

    Every tunable hyperparameter that ``params`` does not give (CW's and SCW's ``eta``, AROW's
    ``r``, PA's and SCW's ``C``) is chosen from the stream itself: progressive validation of
    the learner's candidates over the first :data:`~textcw.scale.tuning.TUNE_DOCUMENTS`
    documents, then the winner alone (:mod:`textcw.scale.tuning`); ``tune=False`` keeps the
    learner's defaults instead.

    ``probability="calibrated"`` (default): the model's ``predict_proba`` is temperature-scaled,
    the temperature fitted to the progressive-validation scores of the first pass (each chunk
    scored before it is learned, the self-tuning chunks left out: :mod:`textcw.scale.calibration`);
    ``"raw"``: the learner's own probabilities.
    """
    _check_stream_options(probability, workers)
    registries = deprecated_registries(registries, "textcw.scale.train_stream")
    if multilabel_task(corpus):  # label sets: one model per label (textcw.scale.multilabel)
        from textcw.scale.multilabel import train_stream_multilabel

        if probability != "calibrated":
            raise ParameterError(f"probability={probability!r} does not apply to the multi-label task {corpus}: "
                                 "its probabilities are always calibrated per label; leave probability='calibrated'")
        return train_stream_multilabel(corpus, learner, featurizer=featurizer, params=params,
                                       featurizer_params=featurizer_params, epochs=epochs, seed=seed,
                                       chunk_size=chunk_size, workers=workers, registries=registries,
                                       progress=progress)
    with use_registries(registries):
        template, base_seed, auto = _stream_learner(learner, params, epochs, seed, tune)
        feat_name, feat = _featurizer(corpus, featurizer, featurizer_params, True)
        source = CorpusSource.resolve(corpus)
    report = progress or (lambda stage, done, total: None)
    run = _learn_stream(source, feat, template, base_seed, auto=auto, chunk_size=chunk_size, workers=workers,
                        probability=probability, report=report, monitor=monitor)
    with use_registries(registries):
        model = _pipeline(feat, run.result.model, learner, feat_name, featurizer_params, corpus,
                          _stream_facts(run, auto, chunk_size), calibration=run.calibration)
    shard = run.result
    return _scored(
        model, source, chunk_size, report, corpus=corpus, learner=learner, featurizer=feat_name,
        featurizer_params=featurizer_params, n_train=shard.n_documents, train_seconds=run.seconds,
        featurize_seconds=shard.featurize_seconds, mistakes=shard.mistakes_per_pass, mode="stream",
        chunk_size=chunk_size, workers=run.workers, passes=int(template.n_epochs), shard_documents=[shard.n_documents],
        shard_seconds=[round(shard.seconds, 3)], shard_cpu_seconds=[round(shard.cpu_seconds, 3)])


def _check_stream_options(probability: str, workers: int | None) -> None:
    """Refuse (ParameterError) a ``probability`` or ``workers`` of :func:`train_stream` it cannot use."""
    if probability not in ("calibrated", "raw"):
        raise ParameterError(f"probability={probability!r} is invalid; give 'calibrated' or 'raw'")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"workers={workers!r} is invalid; workers must be an integer >= 1")


def _stream_learner(learner: str, params: dict | None, epochs: int | None, seed: int | None, tune: bool):
    """``(template, seed, auto)``: the learner of :func:`train_stream`, its ``"auto"`` parameters set
    to be chosen from the stream (``auto``: those chosen, empty with ``tune=False``)."""
    template, base_seed = _learner(learner, params, epochs, seed, True)
    if not hasattr(template, "partial_fit"):
        raise ParameterError(f"learner {learner!r} has no partial_fit, so it cannot learn from a stream")
    auto = auto_params(template, params) if tune else {}
    template.set_params(**auto)
    return template, base_seed, auto


@dataclass
class _StreamRun:
    """What the learning pass(es) of one :func:`train_stream` run gave: the shard result of the
    whole stream, the temperature scaling fitted (and on how many documents), and its facts."""

    result: object
    calibration: object
    calibrated_on: int | None
    n_train: int
    workers: int
    seconds: float


def _learn_stream(source: CorpusSource, feat, template, base_seed, *, auto: dict, chunk_size: int,
                  workers: int | None, probability: str, report: Progress, monitor) -> _StreamRun:
    """Learn the training split chunk by chunk (the learning phase of :func:`train_stream`)."""
    n_train = source.n_documents("train")
    total = n_train * int(template.n_epochs)
    if workers is None:
        workers = default_stream_workers(source, -(-n_train // chunk_size) * int(template.n_epochs), total, feat,
                                         min(chunk_size, n_train))
    report("documents", 0, total)
    t0 = time.perf_counter()

    def chunk_done(done: int, mistakes: int) -> None:
        report("documents", done, total)
        if monitor is not None:
            monitor(StreamStatus(done, total, mistakes, time.perf_counter() - t0))

    honest = (HonestScores(total=n_train) if probability == "calibrated" and hasattr(template, "decision_function")
              else None)
    result = train_shard(source, feat, template, ShardTask(0, 1, base_seed), stream=True,
                         chunk_size=chunk_size, workers=workers, on_chunk=chunk_done,
                         tune_documents=TUNE_DOCUMENTS if auto else None, honest=honest)
    calibration = honest.fit(result.model) if honest is not None else None
    return _StreamRun(result, calibration, honest.n_documents if calibration is not None else None, n_train,
                      workers, time.perf_counter() - t0)


def _stream_facts(run: _StreamRun, auto: dict, chunk_size: int) -> dict:
    """The training facts of a stream run: which parameters the stream chose and on how many
    documents, and on how many documents the temperature was fitted."""
    facts = _training_facts({"mode": "stream", "chunk_size": chunk_size}, auto,
                            min(run.n_train, -(-TUNE_DOCUMENTS // chunk_size) * chunk_size))
    if run.calibration is not None:
        facts["calibrated_on"] = run.calibrated_on
    return facts


def _tune_first(source: CorpusSource, feat, template, auto: dict, chunk_size: int, report: Progress):
    """``(values, documents)``: the ``auto`` parameters chosen on the split's first documents and
    set on ``template`` (:func:`textcw.scale.tuning.tune_on_first`); ``({}, 0)`` without any."""
    if not auto:
        return {}, 0
    report("tuning", 0, 1)
    tuned, tuned_on = tune_on_first(source, feat, template, auto, chunk_size)
    template.set_params(**tuned)
    report("tuning", 1, 1)
    return tuned, tuned_on


def _training_facts(facts: dict, auto: dict, tuned_on: int, tuned: dict | None = None) -> dict:
    """``facts`` with the tuning keys when parameters were chosen (``auto``): which (``tuned``),
    on how many documents (``tuned_on``) and, when given, the values (``tuned_params``)."""
    if auto:
        facts["tuned"] = sorted(auto)
        facts["tuned_on"] = tuned_on
        if tuned is not None:
            facts["tuned_params"] = tuned
    return facts


def _scored(model, source: CorpusSource, chunk_size: int, report: Progress, /, **facts) -> ScaleTrainResult:
    """The result of a shard or stream run: ``model`` scored on the test split (read in chunks of
    ``chunk_size``), with ``facts`` (the fields of :class:`ScaleTrainResult`, its ``chunk_size`` among them)."""
    n_test, accuracy, metrics = score(model, source, chunk_size, report)
    return ScaleTrainResult.of(model, n_test=n_test, accuracy=accuracy, metrics=metrics, **facts)


def score(model, source: CorpusSource, chunk_size: int = CHUNK_SIZE,
          progress: Progress | None = None) -> tuple[int, float | None, dict]:
    """``(documents, accuracy, metrics)`` of ``model`` on the test split, read chunk by chunk.

    ``metrics`` is :func:`textcw.metrics.classification_metrics` of the whole split;
    the probabilities (of a learner with ``predict_proba``) are reduced chunk by chunk, so only
    the labels and a few numbers per document are kept. A corpus without a test split (a
    table's ``test=0``) gives ``(0, None, untested_metrics())``: nothing was measured.
    """
    report = progress or (lambda stage, done, total: None)
    total = source.n_documents("test")
    if total == 0:
        return 0, None, untested_metrics()
    report("evaluating", 0, total)
    learner = model[-1]
    calibration = getattr(model, "probability_calibration_", None)  # the model's own probabilities
    probabilities = ((lambda X: learner.predict_proba(X)) if calibration is None
                     else (lambda X: calibration.predict_proba(learner, X)))
    scores = ProbabilityScores(learner.classes_) if hasattr(model, "predict_proba") else None
    truth, predictions = [], []
    seen = 0
    for chunk in source.chunks("test", chunk_size=chunk_size):
        X = model[:-1].transform(chunk.data)
        predicted = learner.predict(X) if calibration is None else calibration.predict(learner, X)
        if scores is not None:
            scores.add(chunk.labels, predicted, probabilities(X))
        truth.append(np.asarray(chunk.labels))
        predictions.append(np.asarray(predicted))
        seen += len(chunk)
        report("evaluating", seen, total)
    if seen == 0:
        raise ParameterError(f"corpus {source.spec} has an empty test split")
    metrics = label_metrics(np.concatenate(truth), np.concatenate(predictions), learner.classes_)
    metrics.update(scores.result() if scores is not None
                   else {"log_loss": None, "brier_score": None, "expected_calibration_error": None})
    return seen, metrics["accuracy"], metrics
