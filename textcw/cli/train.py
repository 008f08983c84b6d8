"""``textcw train``: corpus -> featurizer -> learner, accuracy on the test split.

``--shards N`` trains on ``N`` disjoint shards in parallel and combines the models
(:func:`textcw.scale.train_sharded`); ``--stream`` reads the training data in chunks into
``partial_fit`` (:func:`textcw.scale.train_stream`). Both can be used together.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from textcw.atomic import check_output_path
from textcw.cli.output import JsonFlag, JsonOut, log, print_json, progress_bar, write_json
from textcw.cli.signals import raise_if_interrupted
from textcw.cli.usage import DEFAULT_LEARNER, resolve_typed_corpus
from textcw.errors import ParameterError
from textcw.plugins import current_registries


def parse_params(items: list[str] | None, option: str = "--param") -> dict:
    """``["eta=0.9", "covariance=diag-l2"]`` -> ``{"eta": 0.9, "covariance": "diag-l2"}``.

    Values are read as JSON when they parse (numbers, true/false, null, lists), else kept as text.
    """
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParameterError(f"{option} {item!r} is not KEY=VALUE (e.g. {option} eta=0.9)")
        if key in params:
            raise ParameterError(f"{option} {key} is given twice; give each parameter once")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
        except RecursionError:
            raise ParameterError(f"{option} {key}: the value is nested too deeply; give a number, "
                                 "a word or a flat list") from None
    return params


def train(
    corpus: Annotated[str, typer.Option("--corpus", help="Corpus and task, e.g. newsgroups or newsgroups:comp")],
    learner: Annotated[str | None, typer.Option("--learner", help="Learner name (see `textcw list learners`; default: scw1, the safe default; with --init-model, the model's)")] = None,
    featurizer: Annotated[str | None, typer.Option("--featurizer", help="Featurizer name (default: the corpus's; hashing with --stream)")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="Learner parameter KEY=VALUE (repeatable); a multi-label task also takes threshold, record, margin, min_labels and max_recorded (e.g. record=best)")] = None,
    featurizer_param: Annotated[list[str] | None, typer.Option("--featurizer-param", help="Featurizer parameter KEY=VALUE (repeatable)")] = None,
    epochs: Annotated[int | None, typer.Option("--epochs", help="Passes over the training data (with --stream: 1 unless given)")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shuffling (and of every shard's seed)")] = 0,
    shards: Annotated[int | None, typer.Option("--shards", help="Train one model per disjoint shard, in parallel, and combine them")] = None,
    combine: Annotated[str | None, typer.Option("--combine", help="With --shards: kl (precision-weighted, default) or uniform")] = None,
    precision: Annotated[str | None, typer.Option("--precision", help="With --combine kl: sum of the shards' precisions (the papers', default) or mean (as confident as one shard)")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="With --shards: local (processes, default) or dask")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="With --backend dask: scheduler HOST:PORT (default: start a local cluster)")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="With --shards: local processes or local Dask workers; with --stream alone: workers featurizing chunks ahead (threads where the kernels featurize, else processes); a multi-label task in memory: threads training the labels' models (default: one per core; 1 = this process)")] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Read the training data in chunks into partial_fit (out of core)")] = False,
    chunk_size: Annotated[int, typer.Option("--chunk-size", help="Documents per chunk with --stream (and when scoring)")] = 10_000,
    probability: Annotated[str | None, typer.Option("--probability", metavar="calibrated|raw", help="What the model's predict_proba gives: calibrated (a temperature fitted to honest scores of the learner; about twice the training time with several epochs; with --stream, the scores of each chunk before it is learned) or raw (the learner's own probabilities); default: calibrated for online learners, raw with --shards")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor fill the cache of parsed corpora and featurized matrices (see textcw cache info)")] = False,
    init_model: Annotated[Path | None, typer.Option("--init-model", help="Continue this saved model (from `textcw train --out`) with partial_fit on the corpus's training split, its featurizer, learner and parameters kept (--epochs passes, 1 by default); then score it and save it with --out")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Save the fitted pipeline to this file, e.g. model.textcw-model (one archive: manifest + payload; see textcw inspect)")] = None,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
) -> None:
    """Train a learner on a corpus's training split and report test accuracy."""
    # The names first, before scikit-learn and numba are imported: a typo is answered at once.
    corpus_entry, _ = resolve_typed_corpus(corpus)
    # deferred (start-up): loads NumPy
    from textcw.corpus.multilabel import multilabel_task

    if multilabel_task(corpus):
        return train_multilabel_task(corpus, learner, featurizer=featurizer, param=param,
                                     featurizer_param=featurizer_param, epochs=epochs, seed=seed, out=out,
                                     as_json=as_json, json_out=json_out, no_cache=no_cache,
                                     refused={"--init-model": init_model, "--probability": probability},
                                     scale=dict(shards=shards, combine=combine, precision=precision, backend=backend,
                                                scheduler=scheduler, workers=workers, chunk_size=chunk_size,
                                                stream=stream))
    if init_model is not None:
        return continue_model(init_model, corpus, learner=learner, epochs=epochs, chunk_size=chunk_size,
                              out=out, as_json=as_json, json_out=json_out, no_cache=no_cache,
                              refused={"--featurizer": featurizer, "--param": param,
                                       "--featurizer-param": featurizer_param, "--shards": shards,
                                       "--probability": probability, "--workers": workers,
                                       "--combine": combine, "--backend": backend})
    return _train_single_label(
        corpus, corpus_entry.featurizer, learner, featurizer=featurizer, param=param,
        featurizer_param=featurizer_param, epochs=epochs, seed=seed, shards=shards, combine=combine,
        precision=precision, backend=backend, scheduler=scheduler, workers=workers, stream=stream,
        chunk_size=chunk_size, probability=probability, no_cache=no_cache, out=out, as_json=as_json,
        json_out=json_out)


def _train_single_label(corpus: str, corpus_featurizer: str, learner: str | None, *, featurizer, param,
                        featurizer_param, epochs, seed, shards, combine, precision, backend, scheduler, workers,
                        stream: bool, chunk_size: int, probability, no_cache: bool, out: Path | None, as_json: bool,
                        json_out: Path | None) -> None:
    """``textcw train`` on a single-label corpus (the command's options, its corpus resolved and
    its own featurizer ``corpus_featurizer``): options checked, trained, saved and reported."""
    defaulted = learner is None
    learner = DEFAULT_LEARNER if defaulted else learner
    registries = current_registries()
    registries.learners.get(learner)
    if featurizer is not None:
        registries.featurizers.get(featurizer)
    if out is not None:
        warn_if_vectors(corpus, featurizer or corpus_featurizer, out)

    # Every destination is checked before the work: an hour of training is not lost to a typo.
    if out is not None:
        check_output_path(out, "--out", example="model.textcw-model")
    if json_out is not None:
        check_output_path(json_out, "--json-out", not_same_as=out, example="result.json")
    check_scale_options(shards=shards, combine=combine, precision=precision, backend=backend, scheduler=scheduler,
                        workers=workers, chunk_size=chunk_size, stream=stream)
    check_probability_option(probability, sharded=shards is not None)
    common = dict(featurizer=featurizer, params=parse_params(param),
                  featurizer_params=parse_params(featurizer_param, "--featurizer-param"),
                  epochs=epochs, seed=seed)
    log.debug("training %s on %s", learner, corpus)
    result = run_training(corpus, learner, shards=shards, stream=stream, combine=combine, precision=precision,
                          backend=backend, scheduler=scheduler, workers=workers, chunk_size=chunk_size,
                          probability=probability, no_cache=no_cache, full_report=as_json or json_out is not None,
                          common=common)
    raise_if_interrupted()  # nothing is written for a run that was told to stop
    summary = result.to_dict()
    if report_result(result.model, summary, {k: summary[k] for k in ("corpus", "accuracy", "n_train", "n_test")},
                     out=out, json_out=json_out, as_json=as_json):
        return
    scores = score_text(result.accuracy, result.metrics)
    # bigrams the training documents chose (textcw.learners.ngram_choice), not ones the user gave
    chosen = "ngram_range" not in common["featurizer_params"] and \
        list(result.featurizer_params.get("ngram_range") or ()) == [1, 2]
    # an intercept short documents gave the learner (textcw.learners.calibrated_pipeline), not one the user did
    biased = "fit_intercept" not in common["params"] and getattr(result.model[-1], "fit_intercept", False) is True
    # the parallel update hard short documents gave it (textcw.learners.update_choice)
    parallel = not {"multiclass", "k"} & set(common["params"]) and getattr(result.model[-1], "multiclass", None) == "par"
    typer.echo(
        f"{result.corpus}  {result.learner}{' (the default)' if defaulted else ''}  {scores}  "
        f"(train {result.n_train} docs, test {result.n_test}, {result.n_features} features"
        f"{' of unigrams and bigrams, chosen for short documents' if chosen else ''}; "
        f"{'an intercept, for short documents; ' if biased else ''}"
        f"{f'the parallel update (k={result.model[-1].k}), for hard short documents; ' if parallel else ''}"
        f"featurize {result.featurize_seconds:.1f} s, train {result.train_seconds:.2f} s)"
    )
    if shards is not None or stream:
        typer.echo(scale_line(result))


def run_training(corpus: str, learner: str, *, shards, stream: bool, combine, precision, backend, scheduler,
                 workers, chunk_size: int, probability, no_cache: bool, full_report: bool, common: dict):
    """The training run of ``textcw train`` (options already checked), with its progress shown:
    on shards (:func:`textcw.scale.train_sharded`), from a stream (:func:`textcw.scale.train_stream`)
    or whole (:func:`textcw.pipeline.train`); ``full_report`` when the JSON report is asked for."""
    # deferred (start-up): loads NumPy
    from textcw.corpus.cache import disabled as cache_disabled

    streaming = stream and shards is None
    with (stream_progress() if streaming else _plain_progress()) as (report, monitor), cache_disabled(no_cache):
        if shards is not None:
            # deferred (start-up): loads scikit-learn and the numba kernels
            from textcw.scale import train_sharded

            return train_sharded(corpus, learner, shards=shards, combine=combine or "kl",
                                 precision=precision or "sum",
                                 backend=backend or "local", scheduler=scheduler,
                                 workers=workers, stream=stream, chunk_size=chunk_size,
                                 progress=report, **common)
        if stream:
            # deferred (start-up): loads scikit-learn and the numba kernels
            from textcw.scale import train_stream

            return train_stream(corpus, learner, chunk_size=chunk_size, progress=report, workers=workers,
                                monitor=monitor, probability=probability or "calibrated", **common)
        # deferred (start-up): loads scikit-learn and the numba kernels
        from textcw.pipeline import train as run_train

        # The text output prints the ECE of the model's probabilities beside its accuracy, so
        # every run computes them (calibrated: a softmax of the scores, cheap). With
        # --probability raw, the Gaussian learners' exact multi-class probabilities can cost
        # more than training: then only the JSON report, where they are read, computes them.
        # The online mistake curve replays the first pass: also only for the JSON report.
        return run_train(corpus, learner, progress=report, probability=probability,
                         probability_metrics=full_report or probability != "raw",
                         mistake_curve=full_report, **common)


def train_multilabel_task(corpus: str, learner: str | None, *, featurizer, param, featurizer_param, epochs, seed,
                          out, as_json, json_out, no_cache: bool, refused: dict, scale: dict) -> None:
    """``textcw train`` on a multi-label task: one model per label, tag sets predicted; in memory
    (:func:`textcw.multilabel_run.train_multilabel`), or with ``--stream`` / ``--shards`` through
    :mod:`textcw.scale.multilabel`. ``--init-model`` and ``--probability`` are refused."""
    given = [option for option, value in refused.items() if value is not None]
    if given:
        raise ParameterError(f"{given[0]} does not apply to the multi-label task {corpus} (one model per label, "
                             "calibrated per label); drop it")
    scaled = scale["shards"] is not None or scale["stream"]
    # in memory, --workers is the threads training the labels' models (MultiLabel's n_jobs)
    check_scale_options(**(scale if scaled else {**scale, "workers": None}))
    if not scaled and scale["workers"] is not None and scale["workers"] < 1:
        raise ParameterError(f"--workers {scale['workers']} is invalid; give at least 1 thread")
    if out is not None:
        check_output_path(out, "--out", example="model.textcw-model")
    if json_out is not None:
        check_output_path(json_out, "--json-out", not_same_as=out, example="result.json")
    # deferred (start-up): loads scikit-learn and the numba kernels
    from textcw.corpus.cache import disabled as cache_disabled
    from textcw.multilabel_run import train_multilabel

    defaulted = learner is None
    learner = DEFAULT_LEARNER if defaulted else learner
    common = dict(featurizer=featurizer, params=parse_params(param),
                  featurizer_params=parse_params(featurizer_param, "--featurizer-param"), epochs=epochs, seed=seed)
    if scaled:
        result = run_training(corpus, learner, probability=None, no_cache=no_cache, full_report=True, common=common,
                              **scale)
    else:
        with _plain_progress() as (report, _), cache_disabled(no_cache):
            result = train_multilabel(corpus, learner, progress=report, n_jobs=scale["workers"] or -1, **common)
    raise_if_interrupted()
    summary = result.to_dict()
    m = result.metrics
    if report_result(result.model, summary, {k: summary[k] for k in ("corpus", "accuracy", "n_train", "n_test")},
                     out=out, json_out=json_out, as_json=as_json):
        return
    scores = ("no scores: no test split was given" if m["micro_f1"] is None else
              f"micro-F1 {m['micro_f1']:.3f}  macro-F1 {m['macro_f1']:.3f}  Hamming loss {m['hamming_loss']:.4f}  "
              f"subset accuracy {m['subset_accuracy']:.3f}")
    typer.echo(f"{result.corpus}  {result.learner}{' (the default)' if defaulted else ''}  {scores}  "
               f"(train {result.n_train} docs, test {result.n_test}, {len(result.model[-1].classes_)} labels, "
               f"{result.n_features} features; featurize {result.featurize_seconds:.1f} s, "
               f"train {result.train_seconds:.2f} s)")
    if scaled:
        typer.echo(scale_line(result))


def continue_model(init_model: Path, corpus: str, *, learner, epochs, chunk_size, out, as_json, json_out,
                   no_cache: bool, refused: dict) -> None:
    """``textcw train --init-model M``: :func:`textcw.cli.resume.continue_training`, reported and
    saved as ``train`` does."""
    # deferred (start-up): loads NumPy
    from textcw.cli.resume import continue_training, refuse_options

    refuse_options(**refused)
    if chunk_size < 1:
        raise ParameterError(f"--chunk-size {chunk_size} is invalid; give at least 1 document")
    if out is not None:
        check_output_path(out, "--out", example="model.textcw-model")
    if json_out is not None:
        check_output_path(json_out, "--json-out", not_same_as=out, example="result.json")
    # deferred (start-up): loads scikit-learn
    from textcw.corpus.cache import disabled as cache_disabled
    from textcw.persist import load

    model = load(init_model)
    with progress_bar() as report, cache_disabled(no_cache):
        result = continue_training(model, init_model, corpus, learner=learner, epochs=epochs,
                                   chunk_size=chunk_size, progress=report)
    raise_if_interrupted()
    summary = dict(result)
    info = {"corpus": corpus, "accuracy": result["accuracy"], "n_train": result["n_train"],
            "n_test": result["n_test"], "continued_from": str(init_model)}
    if report_result(result.model, summary, info, out=out, json_out=json_out, as_json=as_json):
        return
    scores = score_text(result["accuracy"], result["metrics"])
    typer.echo(f"{corpus}  {result['learner']} continued from {init_model}  {scores}  "
               f"(train {result['n_train']} docs x {result['epochs']} pass{'es' if result['epochs'] != 1 else ''}, "
               f"test {result['n_test']}; train {result['train_seconds']:.2f} s)")


def report_result(model, summary: dict, info: dict, *, out: Path | None, json_out: Path | None,
                  as_json: bool) -> bool:
    """Save ``model`` to ``out`` (its manifest's ``info``) and write or print the JSON ``summary``
    as asked; True when the JSON went to stdout (the text line is then not printed)."""
    # deferred (start-up): loads scikit-learn
    from textcw.persist import save

    if out is not None:
        save(model, out, info=info)
        summary["model"] = str(out)
        log.info("saved %s", out)
    if json_out is not None:
        write_json(summary, json_out)
    if as_json:
        print_json(summary)
    return as_json


def score_text(accuracy: float | None, metrics: dict) -> str:
    """Accuracy, then ECE and macro-F1 where they were computed, as the text line shows them;
    ``None``: no test split was given (a table's ``test=0``), said instead of a number."""
    if accuracy is None:
        return "no accuracy: no test split was given"
    scores = f"accuracy {accuracy:.4f}"
    if metrics.get("expected_calibration_error") is not None:
        scores += f"  ECE {metrics['expected_calibration_error']:.4f}"
    if metrics.get("macro_f1") is not None:
        scores += f"  macro-F1 {metrics['macro_f1']:.4f}"
    return scores


def warn_if_vectors(corpus: str, featurizer: str, out: Path) -> None:
    """Say before training, not when the model is first used, that a model of feature vectors
    will not label text (``textcw predict`` and ``textcw serve`` refuse it)."""
    # deferred (start-up): loads NumPy
    from textcw.corpus.catalogue import is_vector_featurizer

    if is_vector_featurizer(featurizer):
        log.warning("%s is a corpus of feature vectors (featurizer %s): the model saved to %s will label "
                    "vectors from Python (textcw.load(path).predict(X)), not text; `textcw predict` and "
                    "`textcw serve` will refuse it. To label text, train on a text corpus (textcw list "
                    "corpora, input column)", corpus, featurizer, out)


def check_probability_option(probability: str | None, *, sharded: bool) -> None:
    """``--probability`` is calibrated or raw; shard training keeps the learner's own
    probabilities (calibrating the combined model would need another pass over the data)."""
    # deferred (start-up): loads scikit-learn and the numba kernels
    from textcw.pipeline import PROBABILITIES

    if probability is not None and probability not in PROBABILITIES:
        raise ParameterError(f"--probability {probability!r} is invalid; give calibrated (the default) or raw "
                             "(the learner's own probabilities)")
    if probability == "calibrated" and sharded:
        raise ParameterError("--probability calibrated applies to ordinary and stream training; models trained "
                             "with --shards keep the learner's own probabilities: drop --probability")


@contextmanager
def _plain_progress():
    with progress_bar() as report:
        yield report, None


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(train)


def check_scale_options(*, shards, combine, precision=None, backend, scheduler, workers, chunk_size,
                        stream: bool = False) -> None:
    """Options that only make sense together fail with one line before any work."""
    if shards is None:
        for name, value in (("--combine", combine), ("--precision", precision), ("--backend", backend),
                            ("--scheduler", scheduler)):
            if value is not None:
                raise ParameterError(f"{name} applies to shard training; add --shards N")
        if workers is not None and not stream:
            raise ParameterError("--workers applies to shard training or streaming; add --shards N or --stream")
    else:
        # deferred (start-up): loads scikit-learn
        from textcw.scale.shards import MAX_SHARDS

        if not 1 <= shards <= MAX_SHARDS:
            raise ParameterError(f"--shards {shards} is invalid; give 1 to {MAX_SHARDS:,} shards")
    if workers is not None and workers < 1:
        raise ParameterError(f"--workers {workers} is invalid; give at least 1 process")
    if scheduler is not None and backend != "dask":
        raise ParameterError("--scheduler is the address of a Dask scheduler; add --backend dask")
    if chunk_size < 1:
        raise ParameterError(f"--chunk-size {chunk_size} is invalid; give at least 1 document")


@contextmanager
def stream_progress(console=None):
    """``(report, monitor)`` for :func:`textcw.scale.train_stream`: on a terminal, a bar per stage
    whose documents line also shows documents per second and the running online error (from
    ``monitor(StreamStatus)``); off a terminal a silent ``report`` and no monitor (``None``)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield (lambda stage, done, total: None), None
        return
    with Progress(TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        tasks: dict[str, TaskID] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total, status="")
            progress.update(tasks[stage], completed=done, total=total)

        def monitor(status) -> None:
            report("documents", status.documents, status.total)
            progress.update(tasks["documents"], status=stream_status_text(status))

        yield report, monitor


def stream_status_text(status) -> str:
    """``"41,230 docs/s  online error 24.81%"``."""
    return f"{status.documents_per_second:,.0f} docs/s  online error {100 * status.online_error:.2f}%"


def scale_line(result) -> str:
    """How the model was trained: shards and backend, or the stream; throughput."""
    rate = f"{result.documents_per_second:,.0f} docs/s"
    if result.mode == "shards":
        where = f"{result.backend}, {result.workers} worker{'s' if result.workers != 1 else ''}"
        read = ", streamed" if result.chunk_size else ""
        how = f"{result.combine}, mean precision" if result.precision == "mean" else result.combine
        return f"{result.shards} shards combined by {how} ({where}{read}); {rate}"
    passes = f"{result.passes} pass{'es' if result.passes != 1 else ''}"
    featurizing = f", featurized by {result.workers} workers" if (result.workers or 1) > 1 else ""
    return f"streamed in chunks of {result.chunk_size}, {passes}{featurizing}; {rate}"
