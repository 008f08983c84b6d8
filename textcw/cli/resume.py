"""``textcw train --init-model M``: continue a saved model with ``partial_fit`` on new data.

As ``vw -i model`` does, the saved model's featurizer and learner (with every parameter and the
learned state) go on learning from every new document, in corpus order, ``--epochs`` passes (one
unless given), chunk by chunk (a corpus with the streaming protocol is never held whole); then
the model is saved with ``--out``. New rows are usually a few hundred corrections, each of which
the user wants learned, so no test split is held back unless one is named (:func:`reading_plan`):
a table's ``test=`` share or test file, a ``vw:``/``svmlight:`` test file, a folder's ``train``
and ``test`` sub-folders, or a corpus with its own test split (``newsgroups``). Only then is the
model scored on it; otherwise the accuracy is ``None`` and ``n_test`` 0.

Refused, with the reason, before any document is learned from: a model without a featurizer,
a learner without ``partial_fit`` (a batch learner is fitted in one go), a model of feature
vectors given text or a text model given vectors, vectors of another width, and labels the model
was never trained with (a model's labels are fixed by its first training). A fitted vocabulary
(``binary-bow``, ``word-counts``) is kept: words it has not seen are ignored, which is said
once, at the start. A calibrated model keeps the temperature fitted when it was first trained.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from textcw.cli.output import log
from textcw.errors import InputError, ParameterError
from textcw.plugins import resolve_corpus
from textcw.untrusted import safe_text

__all__ = ["ContinuedResult", "continue_training", "reading_plan", "refuse_options"]


def refuse_options(**given) -> None:
    """Options that would change what the saved model is: its featurizer and learner stay."""
    for option, value in given.items():
        if value:
            raise ParameterError(f"{option} does not apply with --init-model: the saved model keeps its featurizer, "
                                 f"learner and parameters; drop {option}")


class ContinuedResult(dict):
    """The summary of a continued model (what ``--json`` prints), with the model itself."""

    model: object = None


def _learner_name(model) -> str:
    components = getattr(model, "textcw_components_", None) or {}
    return str((components.get("learner") or {}).get("name") or type(model[-1]).__name__)


def check_resumable(model, path: Path, corpus_entry, learner: str | None) -> str:
    """The learner's registered name, once the model is known to be able to continue (else a
    clear error saying why not)."""
    from sklearn.pipeline import Pipeline

    # deferred: loads scikit-learn, after refuse_options has answered a wrong option
    from textcw.corpus.catalogue import input_kind
    from textcw.features.precomputed import Precomputed

    name = safe_text(path, limit=None)
    if not isinstance(model, Pipeline):
        raise InputError(f"{name} holds a {type(model).__name__}, not a pipeline with a featurizer; "
                         "--init-model continues models saved by `textcw train --out`")
    learned = _learner_name(model)
    if learner is not None and learner != learned:
        raise ParameterError(f"--learner {learner} does not match the model's learner {learned}; drop --learner "
                             "(the saved learner continues)")
    if not hasattr(model[-1], "partial_fit"):
        raise InputError(f"{name}: its learner {learned} has no partial_fit (it is fitted in one batch), so it "
                         "cannot continue; train a new model, or use an online learner (textcw list learners)")
    vectors = isinstance(model.steps[0][1], Precomputed)
    kind = input_kind(corpus_entry)
    if vectors and kind == "text":
        raise InputError(f"{name} was trained on feature vectors and {corpus_entry.name} holds text; continue it "
                         "on vectors of the same features, or train a new model on the text")
    if not vectors and kind == "vectors":
        raise InputError(f"{name} labels text and {corpus_entry.name} holds feature vectors, which its "
                         f"featurizer cannot read; continue it on text")
    vocabulary = getattr(model.steps[0][1], "vocabulary_", None)
    if vocabulary is not None:
        log.warning("%s has a fixed vocabulary of %s words (its featurizer was fitted on its first data): "
                    "words it has not seen are ignored; a model trained with --featurizer hashing learns "
                    "new words", name, f"{len(vocabulary):,}")
    return learned


def reading_plan(corpus: str, entry, task: str | None) -> tuple[str, tuple[str, ...], str | None]:
    """``(corpus as read, splits learned, how to name a test split)``: every document of
    ``corpus`` is learned unless it names a test split (module docstring), and the last is
    ``None`` when it does (the model is then scored on it). A table without one is read with
    ``test=0``; a ``vw:`` or ``svmlight:`` file, or a folder without ``train``/``test``
    sub-folders, has a test split carved out of it by default, which is learned after its
    training split (for ``vw:``, the file's own order)."""
    # deferred: loads NumPy, after refuse_options has answered a wrong option
    from textcw.corpus import folder, svmlight, vw
    from textcw.corpus.base import split_task_name
    from textcw.corpus.tabular import TableCorpus
    from textcw.corpus.tabular.spec import every_row_task

    name = split_task_name(corpus)[0]
    table = getattr(entry.factory, "__self__", None)  # a table format registers its bound load
    if isinstance(table, TableCorpus) and task is not None:
        every = every_row_task(table.fmt, task)
        return (corpus, ("train",), None) if every is None else \
            (f"{name}:{every}", ("train",), f"hold rows out with {name}:{every}.2 or give a test file "
                                            f"({name}:NEW,TEST)")
    if task and entry.factory in (vw.load, svmlight.load) and (os.path.exists(task) or "," not in task):
        return corpus, ("train", "test"), f"give a test file ({name}:NEW,TEST)"
    if task and entry.factory is folder.load and not _has_split_folders(Path(task).expanduser()):
        return corpus, ("train", "test"), "give the folder train and test sub-folders"
    return corpus, ("train",), None


def _has_split_folders(root: Path) -> bool:
    """Whether ``folder:ROOT`` has its own split: exactly the visible sub-folders ``train`` and
    ``test`` (:mod:`textcw.corpus.folder`; a folder that cannot be read is reported by it)."""
    try:
        with os.scandir(root) as entries:
            return {e.name for e in entries if not e.name.startswith(".") and e.is_dir()} == {"train", "test"}
    except OSError:
        return True


def continue_training(model, path: Path, corpus: str, *, learner: str | None, epochs: int | None,
                      chunk_size: int, progress=None) -> ContinuedResult:
    """Continue ``model`` (loaded from ``path``) on every new document of ``corpus``, or on its
    training split when it names a test split, and score it there (module docstring)."""
    # deferred: loads scikit-learn and the numba kernels, after refuse_options has answered a wrong option
    from textcw.metrics import untested_metrics
    from textcw.scale.source import CorpusSource
    from textcw.scale.training import score

    entry, task = resolve_corpus(corpus)
    learned = check_resumable(model, path, entry, learner)
    passes = 1 if epochs is None else epochs
    if passes < 1:
        raise ParameterError(f"--epochs {epochs} is invalid; give at least 1 pass")
    report = progress or (lambda stage, done, total: None)
    read, splits, untested = reading_plan(corpus, entry, task)
    source = CorpusSource.resolve(read)
    n_train = sum(source.n_documents(split) for split in splits)
    report("documents", 0, n_train * passes)
    t0 = time.perf_counter()
    chunks = (chunk for _ in range(passes) for split in splits
              for chunk in source.chunks(split, chunk_size=chunk_size))
    seen, featurize_seconds = _learn(model, path, corpus, chunks,
                                     lambda done: report("documents", done, n_train * passes))
    train_seconds = time.perf_counter() - t0
    if untested is None:
        n_test, accuracy, metrics = score(model, source, chunk_size, progress)
    else:  # said, since an earlier textcw held back a fifth of the rows and scored them
        n_test, accuracy, metrics = 0, None, untested_metrics()
        log.info("%s names no test split: all %s new documents were learned and none scored; to measure "
                 "accuracy, %s", corpus, f"{n_train:,}", untested)
    result = ContinuedResult(corpus=corpus, learner=learned, init_model=str(path), epochs=passes,
                             n_train=n_train, n_test=n_test, accuracy=accuracy, metrics=metrics,
                             train_seconds=round(train_seconds, 3), featurize_seconds=round(featurize_seconds, 3),
                             documents_per_second=round(seen / max(train_seconds, 1e-9), 1))
    result.model = model
    return result


def _learn(model, path: Path, corpus: str, chunks, on_chunk) -> tuple[int, float]:
    """``partial_fit`` of ``model``'s learner on each of ``chunks`` (featurized by the model's own
    featurizer); ``(documents learned, seconds spent featurizing)``. New labels (checked on the
    first chunk) and documents of another width are refused before they are learned."""
    featurizer, est = model[:-1], model[-1]
    known = [str(c) for c in est.classes_]
    seen, featurize_seconds = 0, 0.0
    for chunk in chunks:
        if seen == 0:
            new = sorted(set(map(str, chunk.target_names)) - set(known))
            if new:
                shown = ", ".join(map(repr, new[:10])) + (", ..." if len(new) > 10 else "")
                raise InputError(f"{corpus} has labels {safe_text(path, limit=None)} was not trained with: "
                                 f"{shown} (it knows {', '.join(map(repr, known[:10]))}); a model's labels "
                                 "are fixed when it is first trained: train a new model")
        f0 = time.perf_counter()
        try:
            X = featurizer.transform(chunk.data)
        except (ValueError, TypeError) as exc:
            raise InputError(f"the featurizer of {safe_text(path, limit=None)} cannot take {corpus}'s documents: "
                             f"{' '.join(str(exc).split())[:300]}") from None
        width = getattr(est, "n_features_in_", None)
        if width is not None and X.shape[1] != width:
            raise InputError(f"{corpus} has {X.shape[1]} features per document and {safe_text(path, limit=None)} "
                             f"was trained on {width}; continue it on vectors of the same features")
        featurize_seconds += time.perf_counter() - f0
        est.partial_fit(X, np.asarray(chunk.labels))
        seen += len(chunk)
        on_chunk(seen)
    return seen, featurize_seconds
