"""What a training run reports: :class:`TrainResult` (``textcw.pipeline.train``'s return value,
and the base of the scale-out runs' results) and the JSON form of the parameters it records."""

from __future__ import annotations

from dataclasses import dataclass, field

from sklearn.pipeline import Pipeline

from textcw.learners.calibrated_pipeline import probability_facts

__all__ = ["TrainResult", "jsonable_params"]


@dataclass
class TrainResult:
    """A fitted pipeline and how it did on the test split."""

    model: Pipeline
    corpus: str
    learner: str
    featurizer: str
    params: dict
    featurizer_params: dict
    n_train: int
    n_test: int
    n_features: int
    accuracy: float | None  # None: no test split (a table's test=0)
    train_seconds: float
    featurize_seconds: float
    mistakes: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)  # textcw.metrics.classification_metrics
    tuned_params: dict = field(default_factory=dict)  # the values chosen for "auto" parameters
    probability: str = "raw"  # what the model's predict_proba is (PROBABILITIES)
    calibration: dict | None = None  # TemperatureScaling.to_dict() of a calibrated model
    mistake_curve: dict | None = None  # textcw.learners.online_curve.first_pass_curve

    @classmethod
    def of(cls, model: Pipeline, *, corpus: str, learner: str, featurizer: str, featurizer_params: dict | None,
           n_train: int, n_test: int, accuracy: float, train_seconds: float, featurize_seconds: float,
           metrics: dict, n_features: int | None = None, mistakes: list | None = None, **more):
        """The result for the fitted ``model``: its learner's parameters (as JSON values), its
        number of features (``n_features_in_`` unless given) and online mistakes (``mistakes_``
        unless given) are read from the model; ``more`` are the fields of a subclass."""
        est = model[-1]
        return cls(
            model=model, corpus=corpus, learner=learner, featurizer=featurizer,
            params=jsonable_params(est.get_params(deep=False)),
            featurizer_params=jsonable_params(dict(featurizer_params or {})), n_train=int(n_train),
            n_test=int(n_test), n_features=int(est.n_features_in_ if n_features is None else n_features),
            accuracy=accuracy, train_seconds=train_seconds, featurize_seconds=featurize_seconds,
            mistakes=list(getattr(est, "mistakes_", []) if mistakes is None else mistakes), metrics=metrics,
            tuned_params=dict(getattr(est, "tuned_params_", {})), **probability_facts(model), **more)

    def to_dict(self) -> dict:
        return {
            "corpus": self.corpus,
            "learner": self.learner,
            "featurizer": self.featurizer,
            "params": self.params,
            "tuned_params": self.tuned_params,
            "featurizer_params": self.featurizer_params,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "n_features": self.n_features,
            "accuracy": self.accuracy,
            **{k: v for k, v in self.metrics.items() if k != "accuracy"},
            "train_seconds": self.train_seconds,
            "featurize_seconds": self.featurize_seconds,
            "mistakes": self.mistakes,
            "online_mistake_curve": self.mistake_curve,
            "probability": self.probability,
            "calibration": self.calibration,
        }


def jsonable_params(params: dict) -> dict:
    """``params`` with every value JSON can hold as is (lists for tuples), others as ``repr``:
    the parameters a result or a model file records."""
    out = {}
    for key, value in params.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            out[key] = value
        elif isinstance(value, (list, tuple)):
            out[key] = list(value)
        else:
            out[key] = repr(value)
    return out

