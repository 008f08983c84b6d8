"""Build, train and evaluate: plain library functions (the CLI only calls these).

``make_learner`` / ``make_featurizer`` / ``load_corpus`` turn registered names into objects;
:func:`train` runs corpus -> featurizer -> learner and returns the fitted scikit-learn
``Pipeline`` with its test accuracy.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np
from sklearn.pipeline import Pipeline

from textcw._sklearn_compat import has_declared_constraints, validate_declared_params
from textcw.corpus import cache as corpus_cache
from textcw.corpus import feature_cache
from textcw.corpus.base import Dataset, split_task_name
from textcw.errors import InputError, ParameterError, did_you_mean
from textcw.features.text import NotTextError
from textcw.learners.calibrated import Calibrated
from textcw.learners.calibrated_pipeline import (PROBABILITIES, CalibratedPipeline, calibrate_on_fit,
                                                 chosen_calibration, short_documents, with_chosen_intercept)
from textcw.learners.calibrated_pipeline import resolve_probability as calibrated_probability
from textcw.learners.ngram_choice import BIGRAMS, UNIGRAMS, can_choose, chosen_params, fit_chosen
from textcw.learners.online_curve import first_pass_curve
from textcw.learners.selftune import train_defaults
from textcw.learners.update_choice import with_chosen_update
from textcw.metrics import classification_metrics, untested_metrics
from textcw.plugins import current_registries, deprecated_registries, resolve_corpus, use_registries
from textcw.train_result import TrainResult, jsonable_params
from textcw.registry import DEFAULT_FEATURIZER, Entry, Registries

__all__ = ["DEFAULT_FEATURIZER", "PROBABILITIES", "TrainResult", "assemble", "build_learner", "check_labels",
           "default_featurizer", "jsonable_params", "learner_train_defaults", "load_corpus", "make_featurizer",
           "make_learner", "make_pipeline", "resolve_probability", "score_metrics", "train"]



def _instantiate(kind: str, entry: Entry, params: dict, *, validate: bool = True):
    """``entry.factory(**params)``, built once, with its parameter names checked and (when
    ``validate``) their values validated once."""
    try:
        obj = entry.factory(**params)
    except TypeError as exc:
        _check_names(kind, entry, params, entry.factory())  # the usual reason: a misspelled name
        raise ParameterError(f"bad parameters for {kind} {entry.name!r}: {exc}") from None
    _check_names(kind, entry, params, obj)
    if validate:
        validate_object(kind, entry.name, obj)
    return obj


def _check_names(kind: str, entry: Entry, params: dict, obj) -> None:
    if hasattr(obj, "get_params"):
        valid = sorted(obj.get_params(deep=False))
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ParameterError(
                f"unknown parameter {unknown[0]!r} for {kind} {entry.name!r}; valid parameters: "
                f"{', '.join(valid)}{did_you_mean(unknown[0], valid)}"
            )


def validate_object(kind: str, name: str, obj) -> None:
    """Check the parameter values of ``obj`` (``validate_params()``, or scikit-learn's declared
    constraints), as a :class:`ParameterError` naming the component."""
    validate = getattr(obj, "validate_params", None)
    if validate is None and has_declared_constraints(obj):
        validate = functools.partial(validate_declared_params, obj)  # a scikit-learn estimator
    if validate is not None:
        try:
            validate()
        except ParameterError:
            raise
        except (ValueError, TypeError) as exc:  # scikit-learn's InvalidParameterError
            raise ParameterError(f"{kind} {name!r}: {exc}") from None


# ``registries=`` on the functions below is deprecated (textcw.plugins.deprecated_registries):
# the registries in use are chosen with a textcw.plugins.use_registries block around the call.

def make_learner(name: str, /, *, registries: Registries | None = None, **params):
    """An unfitted learner by registered name, e.g. ``make_learner("cw-stdev", eta=0.95)``."""
    with use_registries(deprecated_registries(registries, "textcw.make_learner")):
        return _instantiate("learner", current_registries().learners.get(name), params)


def make_featurizer(name: str, /, *, registries: Registries | None = None, **params):
    """An unfitted featurizer by registered name, e.g. ``make_featurizer("binary-bow")``."""
    with use_registries(deprecated_registries(registries, "textcw.make_featurizer")):
        return _instantiate("featurizer", current_registries().featurizers.get(name), params)


def load_corpus(spec: str, split: str = "train", *, registries: Registries | None = None,
                **options) -> Dataset:
    """Load ``corpus[:task]`` (e.g. ``"newsgroups:comp"``) for ``split``."""
    with use_registries(deprecated_registries(registries, "textcw.load_corpus")):
        entry, task = resolve_corpus(spec)
    dataset = entry.factory(task=task, split=split, **options)
    if isinstance(dataset, Dataset) and "description" not in dataset.info:
        task_summary = entry.tasks.get(task) if task is not None else None
        dataset.info["description"] = entry.summary + (f"; {task}: {task_summary}" if task_summary else "")
    return dataset


def default_featurizer(spec: str, registries: Registries | None = None) -> str:
    """The featurizer the corpus of ``corpus[:task]`` names for its documents."""
    corpus, _ = split_task_name(spec)
    with use_registries(deprecated_registries(registries, "textcw.pipeline.default_featurizer")):
        return current_registries().corpora.get(corpus).featurizer


def _component(kind: str, name: str, params: dict) -> dict:
    entry = current_registries()[kind].get(name)
    return {"name": name, "params": params, "provider": entry.provider}


def build_learner(name: str, params: dict | None = None, *, epochs: int | None = None,
                  seed: int | None = None, no_epochs: str | None = None):
    """The unfitted learner as ``textcw train`` and the evaluators configure it: built once
    from ``params``, then ``n_epochs`` and ``random_state`` set, then validated once.

    ``epochs`` sets ``n_epochs`` (for a learner without epochs, an error saying ``no_epochs``);
    ``seed`` sets ``random_state`` unless ``params`` names one.
    """
    params = dict(params or {})
    est = _instantiate("learner", current_registries().learners.get(name), params, validate=False)
    own = est.get_params(deep=False)
    if epochs is not None:
        if "n_epochs" not in own:
            raise ParameterError(no_epochs or f"learner {name!r} has no epochs; drop --epochs")
        est.set_params(n_epochs=epochs)
    if seed is not None and "random_state" in own and "random_state" not in params:
        est.set_params(random_state=seed)
    validate_object("learner", name, est)
    return est


def assemble(featurizer, learner_model, *, learner: str, featurizer_name: str,
             featurizer_params: dict | None, corpus: str, calibration=None, **facts) -> Pipeline:
    """The fitted ``Pipeline(featurizer, learner)`` with the registry facts :func:`save` records;
    with a ``calibration`` (:class:`~textcw.learners.temperature.TemperatureScaling`) a
    :class:`~textcw.learners.calibrated_pipeline.CalibratedPipeline` whose ``predict_proba``
    applies it."""
    steps = [("featurizer", featurizer), ("learner", learner_model)]
    model = Pipeline(steps) if calibration is None else CalibratedPipeline(steps)
    if calibration is not None:
        model.probability_calibration_ = calibration
    model.textcw_components_ = {
        "learner": _component("learners", learner, learner_model.get_params(deep=False)),
        "featurizer": _component("featurizers", featurizer_name, dict(featurizer_params or {})),
        "corpus": corpus,
        **facts,
    }
    if calibration is not None:  # plain data, so that an export can carry it
        model.textcw_components_["probability"] = calibration.to_dict()
    return model


def make_pipeline(featurizer: str, learner: str, /, *, featurizer_params: dict | None = None,
                  registries: Registries | None = None, probability: str | None = None,
                  train_defaults: bool = False, **learner_params) -> Pipeline:
    """An unfitted ``Pipeline(featurizer, learner)`` of registered components by name.

    ``train_defaults=True`` builds the learner as ``textcw train`` does: the parameters its
    class self-tunes in training (:func:`learner_train_defaults`, e.g. ``eta="auto"``) under
    ``learner_params``. With the
    default featurizer of text corpora, ``make_pipeline("tfidf", name, train_defaults=True)``
    is the model ``textcw train --learner NAME`` fits on a text corpus.

    ``probability`` (:func:`resolve_probability`): ``"calibrated"``, the default for online
    learners, gives a :class:`~textcw.learners.calibrated_pipeline.CalibratedPipeline`, whose
    ``fit`` also fits a temperature to honest scores of the learner (with several epochs by
    2-fold cross-fitting: about twice the training time); ``"raw"`` a plain ``Pipeline`` whose
    probabilities are the learner's own. With ``train_defaults`` a calibrated pipeline of the
    ``tfidf`` featurizer without an ``ngram_range`` also lets short training documents choose
    unigrams or uni+bigrams (``ngrams="auto"``, :mod:`textcw.learners.ngram_choice`), as
    ``textcw train`` does; a plain ``Pipeline`` fits the featurizer as given.

    Unlike scikit-learn's ``make_pipeline`` of the same objects, it records which registered
    featurizer and learner each step is, so that once fitted it can be saved, exported
    (:func:`textcw.export_model`) and inspected like a model from ``textcw train``::

        model = textcw.make_pipeline("binary-bow", "cw-stdev", eta=0.9).fit(docs, labels)
        textcw.save(model, "m.joblib"); textcw.export_model(model, "m.textcw")
    """
    featurizer_params = dict(featurizer_params or {})
    with use_registries(deprecated_registries(registries, "textcw.make_pipeline")):
        if train_defaults:
            learner_params = {**learner_train_defaults(learner), **learner_params}
        est = make_learner(learner, **learner_params)
        calibrated = resolve_probability(probability, learner, est) == "calibrated"
        model = assemble(make_featurizer(featurizer, **featurizer_params), est,
                         learner=learner, featurizer_name=featurizer, featurizer_params=featurizer_params,
                         corpus=None)
    if not calibrated:
        return model
    # as textcw train: short documents choose their n-grams unless the featurizer was given some,
    # and a Gaussian learner's intercept unless it was given
    choose = train_defaults and "ngram_range" not in featurizer_params
    intercept = "auto" if train_defaults and "fit_intercept" not in learner_params else "given"
    update = "auto" if train_defaults and not {"multiclass", "k"} & set(learner_params) else "given"
    return calibrate_on_fit(model, ngrams="auto" if choose else "fixed", intercept=intercept, multiclass=update)


def learner_train_defaults(learner: str) -> dict[str, str]:
    """``{parameter: "auto"}``: what ``textcw train`` self-tunes for the registered ``learner``
    unless the user gives the parameter, as its class declares it
    (:func:`textcw.learners.selftune.train_defaults`; ``{}`` for a class that declares none)."""
    return train_defaults(make_learner(learner))


def resolve_probability(probability: str | None, learner: str, est) -> str:
    """``"calibrated"`` or ``"raw"`` (:func:`textcw.learners.calibrated_pipeline.resolve_probability`;
    by default calibrated for the learners the registry declares online)."""
    return calibrated_probability(probability, learner, est, online=current_registries().learners.get(learner).online)


def train(
    corpus: str,
    learner: str,
    *,
    featurizer: str | None = None,
    params: dict | None = None,
    featurizer_params: dict | None = None,
    epochs: int | None = None,
    seed: int | None = 0,
    registries: Registries | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    cache: bool = True,
    probability_metrics: bool = True,
    probability: str | None = None,
    mistake_curve: bool = True,
) -> TrainResult:
    """Train ``learner`` on the training split of ``corpus`` and score it on the test split.

    ``epochs`` and ``seed`` set the learner's ``n_epochs`` and ``random_state`` when it has them.
    ``progress(stage, done, total)`` is called as work advances. ``probability_metrics=False``
    skips log-loss, Brier score and calibration error (``None`` in the result), which need
    ``predict_proba`` on every test document: for the Gaussian learners' exact multi-class
    probabilities that can take longer than training.

    ``probability`` (:func:`resolve_probability`): ``"calibrated"`` (the default for online
    learners) fits a temperature to honest scores of the learner: progressive validation for
    one epoch, else 2-fold cross-fitting, about twice the training time; the learner itself is
    fitted exactly as with ``"raw"``, so ``predict`` and the accuracy are the same.
    ``mistake_curve`` adds the cumulative online mistakes of the first pass
    (:func:`textcw.learners.online_curve.first_pass_curve`; one more pass of one model).

    ``cache`` (unless ``TEXTCW_NO_CACHE=1``) reads the parsed corpus, and for a corpus read
    from pinned files the featurized matrices with the fitted featurizer, from the cache of
    :mod:`textcw.corpus.cache`, and fills it on a miss. The result, the saved model file
    included, is the same with or without it.
    """
    with corpus_cache.disabled(not cache), use_registries(deprecated_registries(registries, "textcw.pipeline.train")):
        return _train(corpus, learner, featurizer=featurizer, params=params,
                      featurizer_params=featurizer_params, epochs=epochs, seed=seed, progress=progress,
                      probability_metrics=probability_metrics, probability=probability,
                      mistake_curve=mistake_curve)


def _train(corpus, learner, *, featurizer, params, featurizer_params, epochs, seed, progress,
           probability_metrics, probability, mistake_curve) -> TrainResult:
    """:func:`train`'s work: featurize (or read the features from the cache), fit, then test."""
    featurizer = featurizer or default_featurizer(corpus)
    chooses_intercept = "fit_intercept" not in (params or {})
    chooses_update = not {"multiclass", "k"} & set(params or {})
    params = {**learner_train_defaults(learner), **(params or {})}
    featurizer_params = dict(featurizer_params or {})
    est = build_learner(learner, params, epochs=epochs, seed=seed)
    calibrated = resolve_probability(probability, learner, est) == "calibrated"
    feat = make_featurizer(featurizer, **featurizer_params)

    report = progress or (lambda stage, done, total: None)
    chose = _chooses_ngrams(featurizer_params, feat)
    feat, Xtr, train_labels, Xte, test_labels, test_set, featurize_seconds, featurizer_params = \
        _train_features(corpus, featurizer, featurizer_params, feat, report)

    check_labels(train_labels, corpus)
    ngram_range = featurizer_params.get("ngram_range", UNIGRAMS) if chose else None
    if chooses_intercept:  # as CalibratedPipeline(intercept="auto")
        est = with_chosen_intercept(est, short_documents(Xtr, ngram_range))
    if chooses_update:  # as CalibratedPipeline(multiclass="auto")
        est = with_chosen_update(est, Xtr, train_labels, short_documents(Xtr, ngram_range))
    configured = est
    settings = chosen_calibration(Xtr, ngram_range)
    est, calibration, train_seconds = _fit_learner(est, Xtr, train_labels, learner, calibrated, progress, report,
                                                   settings)

    if mistake_curve:
        mistake_curve = first_pass_curve(configured, est, Xtr, train_labels)
    model = assemble(feat, est, learner=learner, featurizer_name=featurizer,
                     featurizer_params=featurizer_params, corpus=corpus, calibration=calibration)
    report("evaluating", 0, 1)
    accuracy, metrics = _test_model(model, est, calibration, Xte, test_set, test_labels, probability_metrics)
    report("evaluating", 1, 1)
    return TrainResult.of(model, corpus=corpus, learner=learner, featurizer=featurizer,
                          featurizer_params=featurizer_params, n_train=len(train_labels), n_test=len(test_labels),
                          n_features=Xtr.shape[1], accuracy=accuracy, train_seconds=train_seconds,
                          featurize_seconds=featurize_seconds, metrics=metrics, mistake_curve=mistake_curve or None)


def _chooses_ngrams(featurizer_params: dict, feat) -> bool:
    """Whether the training documents choose ``feat``'s n-grams: it takes the choice and the user
    gave no ``ngram_range`` (:mod:`textcw.learners.ngram_choice`)."""
    return "ngram_range" not in featurizer_params and can_choose(feat)


def _train_features(corpus, featurizer: str, featurizer_params: dict, feat, report):
    """``(featurizer, X_train, train labels, X_test, test labels, test split, seconds,
    featurizer parameters)``: from the feature cache on a hit (no test split), else the
    featurizer fitted on the training split (``X_test`` only when it is cached, else None).

    A ``tfidf`` featurizer given no ``ngram_range`` is fitted with what the training documents
    choose (:mod:`textcw.learners.ngram_choice`); the parameters returned then hold
    ``ngram_range=(1, 2)`` where they chose bigrams. Such a run keeps its own cache entries, one
    per outcome, so the entry it finds says what its documents chose."""
    choose = _chooses_ngrams(featurizer_params, feat)
    outcomes = [dict(featurizer_params)] if not choose else \
        [chosen_params(featurizer_params, r) for r in (UNIGRAMS, BIGRAMS)]

    def key_of(params, fitted):  # a choosing run's entries carry a marker of their own
        return _features_key(corpus, featurizer, {**params, "ngram_choice": "auto"} if choose else params, fitted)

    t0 = time.perf_counter()
    for params in outcomes:
        fresh = make_featurizer(featurizer, **params) if choose else feat
        key = key_of(params, fresh)
        hit = feature_cache.load_features(key, fresh) if key is not None else None
        if hit is not None:
            report("featurizing", 0, 1)
            feat, Xtr, train_labels, Xte, test_labels = hit
            report("featurizing", 1, 1)
            return feat, Xtr, train_labels, Xte, test_labels, None, time.perf_counter() - t0, params
    train_set = load_corpus(corpus, "train")
    test_set = load_corpus(corpus, "test")
    if len(train_set) == 0:  # an empty test split (a table's test=0) trains, unmeasured
        raise InputError(f"corpus {corpus} has an empty training split")
    train_labels, test_labels, Xte = train_set.labels, test_set.labels, None
    t0 = time.perf_counter()
    report("featurizing", 0, 1)
    feat, Xtr, chosen = _fit_featurizer(feat, train_set.data, featurizer, corpus,
                                        train_labels if choose else None)
    params = chosen_params(featurizer_params, chosen) if choose else dict(featurizer_params)
    key = key_of(params, feat)
    if key is not None:  # featurize the test split now, to cache it with the training split
        Xte = feat.transform(test_set.data)
        feature_cache.save_features(key, feat, lambda: make_featurizer(featurizer, **params),
                                    Xtr, Xte, train_set, test_set)
    featurize_seconds = time.perf_counter() - t0
    report("featurizing", 1, 1)
    return feat, Xtr, train_labels, Xte, test_labels, test_set, featurize_seconds, params


def _fit_learner(est, Xtr, train_labels, learner: str, calibrated: bool, progress, report, settings: dict):
    """``(fitted learner, temperature scaling or None, seconds)``; ``settings`` of the calibration
    (:func:`~textcw.learners.calibrated_pipeline.chosen_calibration`); too little memory is an InputError."""
    t0 = time.perf_counter()
    fit_kwargs = {}
    if progress is not None and current_registries().learners.get(learner).online:  # declared: fit takes progress
        fit_kwargs["progress"] = lambda done, total: report("training", done, total)
    calibration = None
    try:
        if calibrated:
            fitted = Calibrated(est, **settings).fit(Xtr, train_labels, progress=fit_kwargs.get("progress"))
            est, calibration = fitted.estimator_, fitted.scaling_
        else:
            est.fit(Xtr, train_labels, **fit_kwargs)
    except MemoryError:
        # The learners keep dense state per feature: an svmlight file with one huge index, or a
        # hashing featurizer with too many columns, asks for more memory than there is.
        raise InputError(
            f"not enough memory to train {learner!r} on {Xtr.shape[1]:,} features; use fewer "
            "features (renumber the indices of an svmlight file, or lower n_features of hashing)"
        ) from None
    return est, calibration, time.perf_counter() - t0


def _test_model(model, est, calibration, Xte, test_set, test_labels, probability_metrics: bool):
    """``(accuracy, metrics)`` on the test split (none measured when it is empty)."""
    if len(test_labels) == 0:
        return None, untested_metrics()
    # the model's own predict() featurizes the test documents; a cached Xte is that same matrix
    predicted = model.predict(test_set.data) if Xte is None else \
        (est.predict(Xte) if calibration is None else calibration.predict(est, Xte))
    accuracy = float(np.mean(predicted == test_labels))
    proba = (lambda: model.predict_proba(test_set.data)) if Xte is None else \
        (lambda: est.predict_proba(Xte) if calibration is None else calibration.predict_proba(est, Xte))
    return accuracy, score_metrics(model, predicted, test_labels, proba, probabilities=probability_metrics)


def score_metrics(est, predicted, labels, proba: Callable[[], np.ndarray], *, probabilities: bool = True) -> dict:
    """:func:`textcw.metrics.classification_metrics` of the test predictions, with the
    probabilities ``proba()`` when ``est`` (learner or pipeline) has ``predict_proba`` (and
    ``probabilities``)."""
    if not (probabilities and hasattr(est, "predict_proba")):
        return classification_metrics(labels, predicted)
    return classification_metrics(labels, predicted, proba(), classes=est.classes_)


def _features_key(corpus: str, featurizer: str, featurizer_params: dict, feat) -> dict | None:
    """The cache key of ``corpus`` featurized so, or None when it is not cached (the cache is
    off, or the corpus is not read from pinned files alone)."""
    if not corpus_cache.enabled():
        return None
    entry, _ = resolve_corpus(corpus)
    return feature_cache.features_key(corpus, entry.factory, featurizer,
                                     current_registries().featurizers.get(featurizer), featurizer_params, feat)


def _fit_featurizer(feat, documents, featurizer: str, corpus: str, labels=None):
    """``(fitted featurizer, features, ngram_range chosen or None)``: ``feat.fit_transform``
    of ``documents``, or with ``labels`` the n-grams they choose
    (:func:`textcw.learners.ngram_choice.fit_chosen`); a clear error for documents it cannot
    read."""
    try:
        if labels is not None:
            feat, X, choice = fit_chosen(feat, documents, labels)
            return feat, X, choice.ngram_range
        return feat, feat.fit_transform(documents), None
    except (AttributeError, TypeError, NotTextError) as exc:
        # e.g. a text featurizer handed the feature dicts of a vector corpus; the built-in text
        # featurizers say what they found (NotTextError), others fail inside scikit-learn
        reason = f"its documents are {exc.found}" if isinstance(exc, NotTextError) else str(exc)
        raise InputError(
            f"featurizer {featurizer!r} cannot read the documents of {corpus} ({reason}); use the "
            f"corpus's own featurizer ({default_featurizer(corpus)!r}) or another that "
            "accepts its documents"
        ) from None


def check_labels(labels, corpus: str) -> None:
    """A training split with a single label is an error that names the corpus.

    The learners refuse it too, but say only "y has one class"; here the user learns which
    data it is and what to do.
    """
    values = np.unique(np.asarray(labels, dtype=object).astype(str))
    if len(values) == 1:
        raise InputError(
            f"the training split of {corpus} has a single label ({values[0]}); a classifier needs "
            "documents of at least two labels: add documents of another label to the training data"
        )
