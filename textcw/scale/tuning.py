"""One-pass self-tuning of a stream: progressive validation over its first chunks, then fixed.

A stream is read once, so its hyperparameters cannot be chosen on a held-out pass. The
learners' ``"auto"`` values (:mod:`textcw.learners.autotune`) choose them by progressive
validation (Blum, Kalai and Langford, COLT 1999): every candidate of the learner's default grid
predicts each document before it learns from it, and the candidate with the fewest such
mistakes is the model. Kept running over a whole stream, that costs every candidate's update on
every document (5 to 9 times the learning); on a stationary stream the choice settles within a
few tens of thousands of documents. So :func:`train_stream <textcw.scale.training.train_stream>`
sets every tunable parameter the user did not give to ``"auto"``, runs the candidates over the
first :data:`TUNE_DOCUMENTS` documents, then keeps the winner alone (:func:`settle`), with the
values it chose recorded as ``tuned_params_`` (and in the model card), exactly as ``fit`` of an
``"auto"`` learner leaves it.

Measured on ``synthetic-text`` (5% label noise), one pass over 100,000 documents: tuned
``eta`` lifts cw-var from 0.733 to 0.791, tuned ``r`` gives AROW 0.807 and tuned ``eta`` and
``C`` give SCW-I 0.805; averaging the means (``average=True``) lost with each of them (0.782,
0.788, 0.786), so it is left to the user (docs/scale.md).
"""

from __future__ import annotations

from textcw.learners.autotune import AUTO
from textcw.learners.selftune import auto_params as self_tuning_params
from textcw.scale.pipelined import featurized_chunks

__all__ = ["TUNE_DOCUMENTS", "auto_params", "settle", "tune_on_first"]

# Documents the candidates are compared on before the choice is fixed: three chunks of the
# default size. Each candidate's online error there has a standard error under 0.003.
TUNE_DOCUMENTS = 30_000


def auto_params(template, given: dict | None) -> dict:
    """``{name: "auto"}`` for each tunable parameter of ``template`` that ``given`` leaves out or
    sets to ``"auto"``."""
    given = given or {}
    return {name: AUTO for name in self_tuning_params(template)
            if name not in given or (isinstance(given[name], str) and given[name] == AUTO)}


def settle(model) -> bool:
    """Stop tuning ``model``: keep its best candidate alone from now on. True if it was tuning.

    An ``"auto"`` learner fed by ``partial_fit`` holds its candidates and is their best; without
    them it is what ``fit`` leaves: the winner, its values in ``tuned_params_``, continued
    alone by later ``partial_fit`` calls.
    """
    return model.__dict__.pop("_tuner", None) is not None


def tune_on_first(source, featurizer, template, auto: dict, chunk_size: int) -> tuple[dict, int]:
    """``(values, documents)``: the values of the ``auto`` parameters that a stream of
    ``source``'s training split would choose (the candidates over its first chunks, up to
    :data:`TUNE_DOCUMENTS` documents, as :func:`train_stream <textcw.scale.training.train_stream>`
    compares them), and how many documents that took.

    Sharded streams (``train_sharded(stream=True)``) choose their values this way once, before
    the shards start, so every shard trains with the same values and the shard models combine.
    """
    from sklearn.base import clone

    model = clone(template).set_params(**auto)
    stop = min(source.n_documents("train"), -(-TUNE_DOCUMENTS // chunk_size) * chunk_size)
    for chunk in featurized_chunks(source, featurizer, "train", 0, stop, chunk_size):
        model.partial_fit(chunk.X, chunk.labels, classes=chunk.classes)
    settle(model)
    return {name: float(value) for name, value in model.tuned_params_.items()}, stop
