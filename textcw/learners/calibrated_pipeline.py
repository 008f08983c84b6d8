"""``Pipeline(featurizer, learner)`` whose ``predict_proba`` is calibrated.

The learner stays the pipeline's last step, so everything that reads or updates it (its
parameters, ``state_dict``, ``partial_fit`` in a running service, the model file's description)
sees the learner itself; the pipeline adds a fitted temperature
(:class:`textcw.learners.temperature.TemperatureScaling`, attribute
``probability_calibration_``) that its ``predict_proba`` applies to the learner's scores.
``predict`` is the learner's (but for a document with no known feature, which gets the
calibration's label), and the most probable label is always ``predict``'s label.
The learner's own probabilities stay available as ``pipeline[-1].predict_proba(X_features)``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from textcw.errors import ParameterError
from textcw.learners.calibrated import RECORDS, UNSEEN, Calibrated
from textcw.learners.ngram_choice import BIGRAMS, SHORT_TEXT_WORDS, UNIGRAMS, can_choose, chosen_params, fit_chosen
from textcw.learners.temperature import METHODS
from textcw.learners.update_choice import with_chosen_update

# What a pipeline's predict_proba returns: "calibrated", a temperature fitted to honest scores of
# the learner (the default for online learners), or "raw", the learner's own probabilities (the
# Gaussian learners'; none for the first-order ones).
PROBABILITIES = ("calibrated", "raw")
# "auto": short training documents choose unigrams or uni+bigrams (textcw.learners.ngram_choice);
# "fixed": the featurizer as given.
NGRAMS = ("fixed", "auto")
# "auto": a Gaussian learner fits an intercept on short training documents (with_chosen_intercept);
# "given": the learner's fit_intercept as given.
INTERCEPTS = ("given", "auto")
# "auto": hard short documents give a Gaussian learner the parallel multi-class update
# (textcw.learners.update_choice); "given": its multiclass and k as given.
UPDATES = ("given", "auto")


def resolve_probability(probability: str | None, learner: str, est, *, online: bool) -> str:
    """``"calibrated"`` or ``"raw"``: ``probability`` checked, or by default ``"calibrated"`` for
    an ``online`` learner with ``decision_function`` and ``"raw"`` for the others (the batch
    baselines keep their own probabilities). ``learner`` is its name, for the messages."""
    if probability is None:
        return "calibrated" if online and hasattr(est, "decision_function") else "raw"
    if probability not in PROBABILITIES:
        raise ParameterError(
            f"probability {probability!r} is invalid; give 'calibrated' (a temperature fitted to "
            "honest scores of the learner) or 'raw' (the learner's own probabilities)"
        )
    if probability == "calibrated" and not hasattr(est, "decision_function"):
        raise ParameterError(f"learner {learner!r} has no decision_function, so its probabilities cannot "
                             "be calibrated; use probability 'raw'")
    return probability


def short_documents(X, ngram_range) -> bool:
    """Whether training rows ``X``, whose documents chose the n-grams ``ngram_range`` (``None``:
    the featurizer was fitted as given, and nothing is judged), are short documents: uni+bigrams
    chosen (only short documents can choose them) or a median of at most ``SHORT_TEXT_WORDS``
    distinct words a row, the n-gram choice's own gate (:mod:`textcw.learners.ngram_choice`)."""
    return ngram_range is not None and (tuple(ngram_range) == BIGRAMS or (
        X.shape[0] > 0 and float(np.median(np.diff(X.indptr))) <= SHORT_TEXT_WORDS))


def with_chosen_intercept(learner, short: bool):
    """``learner``, or a copy of it with ``fit_intercept=True`` where short documents make the
    choice: a Gaussian learner (cw-var, cw-stdev, arow, scw1, scw2: ``margin_variance``) with a
    ``fit_intercept`` parameter, given ``short`` (:func:`short_documents`).

    Why: a short test document often shares no word, or one, with the training documents; its
    scores are then zero, or one word's, and only a bias can say which labels are likely a
    priori. The batch models the online passes were measured against fit one: without its
    intercept LinearSVC at its defaults lost 1.0-6.9 points on three of seven short-text tasks,
    its lead over the online learners there; the Gaussian learners with one gained up to 7.7.
    On longer documents the words carry that evidence, and a bias did not help (``scw1`` on
    synthetic text lost 2.4 points). Measured in docs/quality.md "An intercept for short
    documents"; the first-order learners (``sgd``, ``pa1``) lost with one on most of those tasks
    and keep none."""
    if not short or not hasattr(learner, "margin_variance") or \
            learner.get_params(deep=False).get("fit_intercept", True) is not False:
        return learner
    return clone(learner).set_params(fit_intercept=True)


def chosen_calibration(X, ngram_range, *, unseen: str = "auto", method: str | None = None) -> dict[str, str]:
    """Calibrated's ``unseen`` and ``method`` for training rows ``X`` whose documents chose the
    n-grams ``ngram_range`` (``None``: the featurizer was fitted as given), with ``unseen`` and
    ``method`` as :class:`CalibratedPipeline` takes them.

    ``unseen="auto"``: short documents (:func:`short_documents`) have their held-out rows scored
    as unseen ones (``drop``), other documents as given (``keep``). ``method=None``: ``auto`` (the
    offset where it lowers the held-out log-loss) for rows scored as unseen, else
    ``temperature``. Measured in docs/quality.md "Short documents scored as unseen ones"."""
    if unseen == "auto":
        unseen = "drop" if short_documents(X, ngram_range) else "keep"
    if method is None:
        method = "auto" if unseen == "drop" else "temperature"
    return {"unseen": unseen, "method": method}


def calibrate_on_fit(model: Pipeline, *, ngrams: str = "fixed", intercept: str = "given",
                     multiclass: str = "given") -> CalibratedPipeline:
    """The unfitted ``model`` as a :class:`CalibratedPipeline` (same steps and registry facts)."""
    calibrated = CalibratedPipeline(model.steps, ngrams=ngrams, intercept=intercept, multiclass=multiclass)
    if hasattr(model, "textcw_components_"):
        calibrated.textcw_components_ = model.textcw_components_
    return calibrated


def probability_facts(model) -> dict:
    """``{"probability": "calibrated" | "raw", "calibration": plain data or None}`` of a fitted
    pipeline, for reports."""
    scaling = getattr(model, "probability_calibration_", None)
    if scaling is None:
        return {"probability": "raw", "calibration": None}
    return {"probability": "calibrated", "calibration": scaling.to_dict()}


def _scores_available(pipeline) -> bool:
    return hasattr(pipeline.steps[-1][1], "decision_function")


class CalibratedPipeline(Pipeline):
    """A scikit-learn ``Pipeline`` whose probabilities are temperature-scaled learner scores.

    Parameters
    ----------
    steps : list of (name, estimator)
        As for ``Pipeline``: transformers, then a learner with ``decision_function``.
    record : {"auto", "first", "last", "cross-fit"}, default "auto"
        Where the scores the temperature is fitted to come from
        (:class:`textcw.learners.calibrated.Calibrated`); ``auto``: progressive validation for a
        one-pass online learner, else 2-fold cross-fitting (about twice the training time).
    method : {"temperature", "top-bias", "auto"} or None, default None
        How the scores become probabilities (:class:`textcw.learners.calibrated.Calibrated`);
        ``None``: ``auto`` where the held-out rows are scored as unseen ones (``unseen``), else
        ``temperature``.
    folds : int, default 2
        Folds of the cross-fitting (:class:`textcw.learners.calibrated.Calibrated`).
    unseen : {"auto", "keep", "drop"}, default "auto"
        How the cross-fitted halves score the other half's rows
        (:class:`textcw.learners.calibrated.Calibrated`); ``auto``: ``drop`` (without the
        features the scoring half never saw, as a test document is featurized) when the
        documents chose their n-grams (``ngrams="auto"``) and are short (a median of at most
        ``SHORT_TEXT_WORDS`` distinct words), else ``keep``. Measured in docs/quality.md "Short
        documents scored as unseen ones": on short documents the kept words made the
        probabilities 2-5 points over-confident.
    ngrams : {"fixed", "auto"}, default "fixed"
        ``auto``: a first featurizer that takes the choice (``tfidf`` without an
        ``ngram_range``) is fitted with unigrams or with unigrams and bigrams, as short training
        documents choose by progressive validation (:mod:`textcw.learners.ngram_choice`);
        ``make_pipeline(..., train_defaults=True)`` sets it, as ``textcw train`` chooses.
    intercept : {"given", "auto"}, default "given"
        ``auto``: on short documents (as for ``unseen``) a Gaussian learner whose
        ``fit_intercept`` is ``False`` fits an intercept (:func:`with_chosen_intercept`);
        ``make_pipeline(..., train_defaults=True)`` sets it unless ``fit_intercept`` is given, as
        ``textcw train`` chooses unless ``--param fit_intercept=...`` is given.
    multiclass : {"given", "auto"}, default "given"
        ``auto``: on short documents (as for ``unseen``) that a one-pass probe mostly gets wrong,
        a Gaussian learner with the top-1 update gets the k-best parallel update
        (:func:`textcw.learners.update_choice.with_chosen_update`); ``make_pipeline(...,
        train_defaults=True)`` sets it unless ``multiclass`` or ``k`` is given, as ``textcw
        train`` chooses.

    Fitted attributes
    -----------------
    probability_calibration_ : TemperatureScaling
        The temperature, the margin it scales and the scores it was fitted to.
    ngram_choice_ : NgramChoice
        With ``ngrams="auto"`` and a featurizer that takes the choice: what was chosen and why.
    intercept_chosen_ : bool
        With ``intercept="auto"``: whether the short documents gave the learner its intercept.
    multiclass_chosen_ : bool
        With ``multiclass="auto"``: whether the documents gave the learner the parallel update.
    """

    # a pipeline pickled before ``ngrams`` (``unseen``) existed has none: its featurizer was fitted
    # as given (its held-out rows were scored as given)
    ngrams = "fixed"
    unseen = "keep"
    intercept = "given"
    multiclass = "given"

    def __init__(self, steps, *, record="auto", method=None, folds=2, ngrams="fixed", unseen="auto",
                 intercept="given", multiclass="given", transform_input=None, memory=None, verbose=False):
        super().__init__(steps, transform_input=transform_input, memory=memory, verbose=verbose)
        self.record = record
        self.method = method
        self.folds = folds
        self.ngrams = ngrams
        self.unseen = unseen
        self.intercept = intercept
        self.multiclass = multiclass

    def fit(self, X, y=None, progress=None, **params):
        """Fit the transformers, then the learner and its temperature on the transformed
        ``X``. The fitted learner replaces the last step (a fitted copy of it: the calibration
        fits copies of the learner too). ``progress(done, total)`` as for the learner's fit."""
        if params:
            raise ParameterError(
                f"a calibrated pipeline takes no fit parameters (got {', '.join(sorted(params))}); "
                "sample weights are not part of the calibration: use probability='raw'"
            )
        if self.record not in RECORDS:
            raise ParameterError(f"record={self.record!r} is invalid; record must be one of "
                                 f"{', '.join(repr(r) for r in RECORDS)}")
        if self.method is not None and self.method not in METHODS:
            raise ParameterError(f"method={self.method!r} is invalid; method must be None or one of "
                                 f"{', '.join(repr(m) for m in METHODS)}")
        if self.unseen not in ("auto", *UNSEEN):
            raise ParameterError(f"unseen={self.unseen!r} is invalid; unseen must be 'auto', 'keep' or 'drop'")
        if self.ngrams not in NGRAMS:
            raise ParameterError(f"ngrams={self.ngrams!r} is invalid; ngrams must be 'fixed' or 'auto'")
        if self.intercept not in INTERCEPTS:
            raise ParameterError(f"intercept={self.intercept!r} is invalid; intercept must be 'given' or 'auto'")
        if self.multiclass not in UPDATES:
            raise ParameterError(f"multiclass={self.multiclass!r} is invalid; multiclass must be 'given' or 'auto'")
        Xt = X
        for i, (name, step) in enumerate(self.steps[:-1]):
            if step is None or step == "passthrough":
                continue
            if i == 0 and self.ngrams == "auto" and can_choose(step := self._unchosen(step)):
                step, Xt, self.ngram_choice_ = fit_chosen(step, Xt, y)
                self.steps = [*self.steps[:i], (name, step), *self.steps[i + 1:]]
                self._record_ngrams(self.ngram_choice_.ngram_range)
            else:
                Xt = step.fit_transform(Xt, y)
        self.fit_calibrated(Xt, y, progress=progress)
        return self

    def _unchosen(self, featurizer):
        """The featurizer to choose from: on a refit, the bigrams an earlier fit chose (which
        replaced the first step) go back to unigrams, so the new documents choose again."""
        if getattr(self, "ngram_choice_", None) is not None and \
                tuple(featurizer.get_params(deep=False).get("ngram_range", ())) == BIGRAMS:
            return clone(featurizer).set_params(ngram_range=UNIGRAMS)
        return featurizer

    def _record_ngrams(self, ngram_range) -> None:
        # the registry facts of textcw.make_pipeline describe the fitted featurizer (an export
        # rebuilds it from them)
        components = getattr(self, "textcw_components_", None)
        featurizer = components.get("featurizer") if isinstance(components, dict) else None
        if isinstance(featurizer, dict):
            featurizer["params"] = chosen_params(featurizer.get("params") or {}, ngram_range)

    def fit_calibrated(self, Xt, y, *, progress=None):
        """Fit the learner and its temperature on ``Xt``, the output of the fitted transformers."""
        name, learner = self.steps[-1]
        choice = getattr(self, "ngram_choice_", None) if self.ngrams == "auto" else None
        ngram_range = None if choice is None else choice.ngram_range
        settings = chosen_calibration(Xt, ngram_range, unseen=self.unseen, method=self.method)
        if self.intercept == "auto":
            if getattr(self, "intercept_chosen_", False):  # a refit: the new documents choose again
                learner = clone(learner).set_params(fit_intercept=False)
            given = learner
            learner = with_chosen_intercept(learner, short_documents(Xt, ngram_range))
            self.intercept_chosen_ = learner is not given
        if self.multiclass == "auto":
            if getattr(self, "multiclass_chosen_", False):  # a refit: the new documents choose again
                learner = clone(learner).set_params(multiclass="top1", k=None)
            given = learner
            learner = with_chosen_update(learner, Xt, y, short_documents(Xt, ngram_range))
            self.multiclass_chosen_ = learner is not given
        self.unseen_ = settings["unseen"]
        calibrated = Calibrated(learner, record=self.record, folds=self.folds, **settings).fit(Xt, y, progress=progress)
        self.steps = [*self.steps[:-1], (name, calibrated.estimator_)]
        self.probability_calibration_ = calibrated.scaling_
        components = getattr(self, "textcw_components_", None)
        if isinstance(components, dict):  # the registry facts of textcw.make_pipeline
            components["probability"] = calibrated.scaling_.to_dict()
            facts = components.get("learner")
            if self.intercept == "auto" and isinstance(facts, dict) and isinstance(facts.get("params"), dict):
                facts["params"]["fit_intercept"] = bool(calibrated.estimator_.fit_intercept)  # as fitted
            if self.multiclass == "auto" and isinstance(facts, dict) and isinstance(facts.get("params"), dict) \
                    and "multiclass" in facts["params"]:
                facts["params"].update(multiclass=calibrated.estimator_.multiclass, k=calibrated.estimator_.k)
        return self

    def _features(self, X):
        for _, step in self.steps[:-1]:
            if step is not None and step != "passthrough":
                X = step.transform(X)
        return X

    def predict(self, X, **params):
        """The learner's labels, but the calibration's for a document with no known feature
        (:mod:`textcw.learners.unknown_documents`): always the most probable label."""
        scaling = getattr(self, "probability_calibration_", None)
        if scaling is None or getattr(scaling, "unknown", None) is None:
            return super().predict(X, **params)
        return scaling.predict(self.steps[-1][1], self._features(X))

    @available_if(_scores_available)
    def predict_proba(self, X, **params):
        """Temperature-scaled probabilities; columns follow ``classes_``."""
        check_is_fitted(self, "probability_calibration_")
        return self.probability_calibration_.predict_proba(self.steps[-1][1], self._features(X))

    @available_if(_scores_available)
    def predict_log_proba(self, X, **params):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
