"""What shard and stream training build before reading any document: the learner, the featurizer,
the saved pipeline, and the result type (:mod:`textcw.scale.training` for single-label tasks,
:mod:`textcw.scale.multilabel` for label sets)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sklearn.pipeline import Pipeline

from textcw.errors import ParameterError
from textcw.pipeline import TrainResult, assemble, build_learner, default_featurizer, make_featurizer
from textcw.scale.shards import needs_fit

__all__ = ["STREAM_FEATURIZER", "ScaleTrainResult"]

STREAM_FEATURIZER = "hashing"


@dataclass
class ScaleTrainResult(TrainResult):
    """A :class:`TrainResult` of shard or stream training.

    ``train_seconds`` is the wall-clock time from the first document read to the final model
    (reading, featurizing, learning and, for shards, combining); ``featurize_seconds`` is the
    featurizing part, summed over shards. ``documents_per_second`` counts training documents
    processed (times passes) per second of ``train_seconds``.
    """

    mode: str = "stream"
    shards: int = 1
    combine: str | None = None
    precision: str | None = None
    backend: str | None = None
    workers: int | None = None
    chunk_size: int | None = None
    passes: int = 1
    shard_documents: list = field(default_factory=list)
    shard_seconds: list = field(default_factory=list)
    shard_cpu_seconds: list = field(default_factory=list)

    @property
    def documents_per_second(self) -> float:
        return self.n_train * self.passes / self.train_seconds if self.train_seconds > 0 else float("nan")

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.update({
            "mode": self.mode, "shards": self.shards, "combine": self.combine, "precision": self.precision,
            "backend": self.backend, "workers": self.workers, "chunk_size": self.chunk_size,
            "passes": self.passes, "shard_documents": self.shard_documents,
            "shard_seconds": self.shard_seconds, "shard_cpu_seconds": self.shard_cpu_seconds,
            "documents_per_second": self.documents_per_second,
        })
        return out


def _learner(name: str, params: dict | None, epochs: int | None, seed: int | None, stream: bool):
    """The unfitted learner, as :func:`textcw.pipeline.train` builds it, and the run's seed.

    A stream is read once unless ``epochs`` says otherwise (the papers' large-scale runs make a
    single pass).
    """
    if epochs is None and stream:
        epochs = 1
    est = build_learner(name, params, epochs=epochs, seed=seed)
    own = est.get_params(deep=False)
    if "n_epochs" not in own or "random_state" not in own or not hasattr(est, "partial_fit"):
        raise ParameterError(
            f"learner {name!r} is not an online learner (no partial_fit, epochs and seed); shard "
            "and stream training need one, e.g. cw-var, arow or pa"
        )
    base_seed = est.random_state
    return est, base_seed


def _featurizer(corpus: str, name: str | None, params: dict | None, stream: bool):
    if name is None:
        name = STREAM_FEATURIZER if stream else default_featurizer(corpus)
    feat = make_featurizer(name, **dict(params or {}))
    if stream and needs_fit(feat):
        raise ParameterError(
            f"--stream featurizes each chunk on its own, so the featurizer must learn nothing from "
            f"the data; {name!r} learns from the data (a vocabulary or idf weights): use --featurizer "
            f"{STREAM_FEATURIZER} (the default with --stream)"
        )
    return name, feat


def _pipeline(featurizer, learner_model, learner: str, feat_name: str, featurizer_params, corpus: str,
              training: dict, calibration=None) -> Pipeline:
    return assemble(featurizer, learner_model, learner=learner, featurizer_name=feat_name,
                    featurizer_params=featurizer_params, corpus=corpus,
                    training=training, calibration=calibration)
