"""Calibrated label probabilities: a temperature fitted to scores of documents the scoring model
did not learn from.

:class:`Calibrated` trains the learner and fits one temperature ``T`` by maximum likelihood to
honest scores of its training documents (temperature scaling, :mod:`textcw.learners.temperature`):
``P(k | x) = softmax_k(z_k / T)``, binary ``P(classes_[1] | x) = 1 / (1 + exp(-z / T))``, where
``z`` is the decision score or, for the Gaussian learners, the score over its standard deviation.

Where the honest scores come from (``record=``):

- ``"first"``: progressive validation (Blum, Kalai and Langford, COLT 1999). The first pass is
  learned in chunks (1, 1, 2, 4, ... documents, then ``chunk_size``); each chunk is scored by
  the model before it learns the chunk, so every score is on an unseen document and no data is
  set aside. Free, and exact for one epoch,
  where the scoring model is the final one; with several epochs the final model is more
  confident than the young model that was scored, and its probabilities come out
  over-confident (docs/quality.md "Which pass to calibrate on").
- ``"last"``: the same on the last pass, by a nearly final model that has already learned every
  document ``n_epochs - 1`` times: over-confident on high-dimensional text.
- ``"cross-fit"``: as scikit-learn's ``CalibratedClassifierCV(ensemble=False)``: the final model
  is the learner's own ``fit`` on all the data; two clones with the same settings are fitted
  on the two halves of a stratified split and each scores the other half (``folds=k``: ``k``
  clones, each fitted on ``k - 1`` of ``k`` stratified folds, scoring the last; at most as many
  folds as the rarest label has documents). The scoring models
  were trained as the final one was (same passes, half the data), on documents they never saw.
  Costs two half-size fits: about twice the training time. A self-tuned learner's halves take
  the values the final fit chose (``tuned_params_``): tuned on half the documents they chose
  others, and the temperature fitted to their scores was off (docs/quality.md "Calibrating
  self-tuned learners").
- ``"auto"`` (default): ``"first"`` for an online learner with one epoch and no ``"auto"``
  hyperparameters (free and honest), else ``"cross-fit"`` (``"first"`` when a label has a
  single document, which a two-fold split cannot place on both sides).

The temperature is fitted to Platt's regularised targets rather than the 0/1 labels, as strong
for many labels as for two (:func:`textcw.learners.temperature.smoothed_targets`), so it stays
finite on small or separable data; ``fit`` warns (``CalibrationWarning``) when fewer than
``MIN_HONEST_SCORES`` honest scores were available.

A document with no known feature gets the labels of the recorded documents that had none, where
they predict those better than the temperature does (:func:`fit_calibration`).

Why one temperature, and an offset only on the predicted label: ``z / T`` with ``T > 0`` keeps
the order of the scores, so the most probable label is exactly the label ``predict`` returns.
Per-class offsets or temperatures could fit the scores more closely but would break that
agreement. ``method="top-bias"`` adds an offset ``b >= 0`` to the predicted label's scaled
score alone, which only widens its lead (``textcw.learners.temperature.fit_top_bias``); ``"auto"``
keeps it where it lowers the held-out log-loss. The one exception: when the recorded scores
carry no information (the log-loss is lowest at ``1/T = 0``), every probability is ``1/K`` and
the argmax is the first class.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from textcw.errors import ParameterError
from textcw.learners.params import Interval, Options, check_params
from textcw.learners.selftune import check_online_learner, check_training_data, epoch_orders, learner_has
from textcw.learners.temperature import (  # noqa: F401  (re-exported: the names this module had)
    BETA_MAX,
    METHODS,
    CalibrationWarning,
    TemperatureScaling,
    as_logits,
    fit_inverse_temperature,
    fit_temperature,
    informative_scores,
    normalized_scores,
    standardized_scores,
    temperature_log_loss,
    weight_norm,
)
from textcw.learners.recorded_scores import (  # noqa: F401  (CROSS_FIT_FOLDS re-exported)
    CROSS_FIT_FOLDS, RECORDS, recorded_chunks, resolve_record)
from textcw.learners.unknown_documents import chosen_unknown, no_known_feature
from textcw.learners.unseen_features import as_unseen, unit_length_rows

MARGINS = ("auto", "raw", "standardized", "normalized")
# How a cross-fit half scores the other half's rows: as given, or without the features it never
# saw (textcw.learners.unseen_features), as the final model sees a test document.
UNSEEN = ("keep", "drop")
# Fewer honest scores than this and the fitted temperature is reported as uncertain
# (CalibrationWarning): a reliability diagram of 10 bins needs about 10 documents a bin.
MIN_HONEST_SCORES = 100


def fit_calibration(scores, variances, norms, target, empty, **settings) -> TemperatureScaling:
    """:func:`~textcw.learners.temperature.fit_temperature` of the recorded scores, and the
    probabilities of a document with no known feature where the recorded rows that had none
    (``empty``) show them better than a temperature fitted without them does
    (:func:`~textcw.learners.unknown_documents.chosen_unknown`).

    The temperature is fitted to the rows it will scale: without the empty ones where the
    estimate is kept, else to every row, exactly as with no empty row. The choice is made with
    a plain temperature (one number, a quick fit), which the kept calibration reuses unless
    ``settings`` ask for an offset on the predicted label."""
    if not np.any(empty) or np.all(empty):
        return fit_temperature(scores, variances, target, norms=norms, **settings)

    def known(**method):  # the temperature of the rows with a known feature
        rows = ~empty
        return fit_temperature(scores[rows], _rows(variances, rows), target[rows], norms=_rows(norms, rows),
                               **{**settings, **method})

    plain = known(method="temperature")
    proba = plain.recorded_proba(scores[empty], _rows(variances, empty), _rows(norms, empty))
    unknown = chosen_unknown(target, empty, proba, 2 if np.ndim(scores) == 1 else np.shape(scores)[1])
    if unknown is None:
        return fit_temperature(scores, variances, target, norms=norms, **settings)
    return replace(plain if settings.get("method", "temperature") == "temperature" else known(), unknown=unknown)


def _rows(values, rows):
    return None if values is None else values[rows]


class Calibrated(ClassifierMixin, BaseEstimator):
    """A learner whose ``predict_proba`` is temperature-scaled on honest scores of its own.

    Parameters
    ----------
    learner : learner
        An online textcw learner (``partial_fit``, ``n_epochs``, ``shuffle``, ``random_state``);
        with ``record="cross-fit"`` any classifier with ``decision_function``.
    margin : {"auto", "raw", "standardized", "normalized"}, default "auto"
        What is scaled (:mod:`textcw.learners.temperature`); ``standardized`` needs a Gaussian
        learner (``margin_variance``), ``normalized`` a linear one (``coef_``); ``auto`` scales
        the normalized scores of a linear learner (else the raw ones), or the standardized ones
        of a Gaussian learner without an intercept when they fit the recorded scores better.
    record : {"auto", "first", "last", "cross-fit"}, default "auto"
        Where the scores the temperature is fitted to come from (module docstring).
    chunk_size : int in [1, 1000000], default 256
        With ``first``/``last``: the recorded pass is learned this many documents at a time
        (after chunks of 1, 1, 2, 4, ... documents: :func:`recorded_chunks`); each chunk is
        scored by the model before the chunk.
    probability : {"calibrated", "raw"}, default "calibrated"
        ``raw`` returns the learner's own ``predict_proba`` (the Gaussian probability).
    folds : int in [2, 10], default 2
        With ``cross-fit``: how many stratified folds (no more than the rarest label has
        documents). A model fitted on ``k - 1`` of ``k`` folds is closer to the final one than a
        half-size model, so its scores are closer to the final model's in confidence; the cost
        is ``k`` fits of ``(k - 1) / k`` of the data instead of two of half. Where the test
        documents differ from the training ones this can turn under-confidence into
        over-confidence (docs/quality.md "A temperature and an offset"), hence the default 2.
    method : {"temperature", "top-bias", "auto"}, default "temperature"
        ``temperature``: one temperature; ``top-bias``: a temperature and an offset ``>= 0`` on
        the predicted label's scaled score (:func:`~textcw.learners.temperature.fit_top_bias`),
        which raises under-confident middle probabilities more than the top ones; ``auto``: the
        offset only where it lowers the held-out log-loss of the recorded scores, on at least
        1,000 of them (``MIN_TOP_BIAS_SCORES``). Every method keeps ``predict``'s label the
        most probable.
    unseen : {"keep", "drop"}, default "keep"
        With ``cross-fit``: ``drop`` scores each held-out row without the features its scoring
        model never saw, rescaled to unit length when the training rows have it, as a test row
        is featurized (:mod:`textcw.learners.unseen_features`); ``margin="auto"`` then chooses
        between the raw and standardized scores, since the normalized ones corrected for the
        length those features took (docs/quality.md "Short documents scored as unseen ones").

    Fitted attributes
    -----------------
    estimator_ : the fitted learner. With ``cross-fit`` it is the learner's own ``fit`` on all
        the data, bit for bit. With ``first``/``last`` it is trained as its own ``fit`` would:
        the same seeded orders, the same model (bit for bit, except SGD, whose scaled weights
        are folded back at the end of every ``partial_fit`` call, which changes the last bits),
        with one entry per pass in its ``mistakes_`` and ``n_updates_``.
    scaling_ : TemperatureScaling
        The fitted temperature and what it scales.
    record_ : str
        ``"first"``, ``"last"`` or ``"cross-fit"``: what ``record`` resolved to.
    folds_ : int
        With ``cross-fit``: the folds used (``folds``, or fewer when the rarest label has fewer
        documents).
    temperature_, inverse_temperature_, margin_, recorded_log_loss_
        As in ``scaling_`` (``temperature_`` is ``inf`` when the scores carried no information).
    n_honest_scores_ : int
        How many training documents were scored by a model that had not learned them, with
        scores that tell the labels apart; below ``MIN_HONEST_SCORES`` (100) ``fit`` warns
        (:class:`~textcw.learners.temperature.CalibrationWarning`).
    mistakes_ : list of int
        Online mistakes per pass of the final model (none for a learner that does not count them).
    classes_, n_features_in_
    """

    _constraints = {
        "margin": Options(MARGINS),
        "record": Options(RECORDS),
        "chunk_size": Interval(1, 1_000_000, closed="both", integer=True),
        "probability": Options(("calibrated", "raw")),
        "method": Options(METHODS),
        "folds": Interval(2, 10, closed="both", integer=True),
        "unseen": Options(UNSEEN),
    }
    # a Calibrated pickled before ``unseen`` existed scored its held-out rows as given
    unseen = "keep"

    def __init__(self, learner, *, margin="auto", record="auto", chunk_size=256,
                 probability="calibrated", method="temperature", folds=2, unseen="keep"):
        self.learner = learner
        self.margin = margin
        self.record = record
        self.chunk_size = chunk_size
        self.probability = probability
        self.method = method
        self.folds = folds
        self.unseen = unseen

    def fit(self, X, y, progress=None):
        """Fit the learner and the temperature. ``progress(done, total)``, if given, is called
        as documents are learned (by every fit the calibration needs, counted together)."""
        check_params(self, self._constraints)
        if self.record in ("first", "last"):
            check_online_learner(self.learner, "Calibrated")
        elif not (hasattr(self.learner, "decision_function") and hasattr(self.learner, "get_params")):
            raise ParameterError(
                f"Calibrated: learner must be a classifier with decision_function and get_params (e.g. "
                f"textcw.make_learner('cw-stdev')); got {type(self.learner).__name__}"
            )
        gaussian = hasattr(self.learner, "margin_variance")
        if self.margin == "standardized" and not gaussian:
            raise ParameterError(
                f"Calibrated: margin='standardized' needs a Gaussian learner (cw-var, cw-stdev, "
                f"arow, scw1, scw2) with margin_variance; {type(self.learner).__name__} has none: "
                "use margin='raw' or 'auto'"
            )
        X, y, labels = check_training_data(X, y, "Calibrated")
        record = resolve_record(self.record, self.learner, y, labels)
        if record != "cross-fit":
            check_online_learner(self.learner, "Calibrated")
        fit = self._cross_fit if record == "cross-fit" else self._pass_fit
        model, scores, variances, norms, empty = fit(X, y, labels, gaussian, record, progress)
        if self.margin == "normalized" and norms is None:
            raise ParameterError(
                f"Calibrated: margin='normalized' needs a linear learner with coef_; "
                f"{type(self.learner).__name__} has none: use margin='raw' or 'auto'"
            )
        self.estimator_ = model
        self.classes_ = model.classes_
        self.n_features_in_ = model.n_features_in_
        self.record_ = record
        target = np.searchsorted(labels, y)
        if record == "cross-fit" and self.unseen == "drop" and self.margin == "auto":
            norms = None  # raw or standardized scores (parameter unseen)
        # An intercept is the weight of a feature every document has, so its variance shrinks
        # like 1/n with the training documents: the standardized scores of the smaller models
        # that recorded the scores come out smaller than the final model's, and a temperature
        # fitted to them over-states its test probabilities (8 points on a short-text task,
        # docs/quality.md "An intercept for short documents"). "auto" leaves them out then.
        standardize = gaussian and not (self.margin == "auto" and getattr(model, "fit_intercept", False) is True)
        self.scaling_ = fit_calibration(scores, variances if standardize else None, norms, target, empty,
                                        margin=self.margin, record=record, method=self.method)
        self.n_honest_scores_ = informative_scores(scores)
        if self.n_honest_scores_ < MIN_HONEST_SCORES:
            warnings.warn(
                f"Calibrated: the temperature rests on {self.n_honest_scores_} honest scores (documents "
                f"scored by a model that had not learned them; fewer than {MIN_HONEST_SCORES}), so the "
                "probabilities are uncertain and held close to the class frequencies where the scores "
                "are small; train on more documents for reliable probabilities",
                CalibrationWarning, stacklevel=2,
            )
        self.margin_ = self.scaling_.margin
        self.recorded_log_loss_ = dict(self.scaling_.recorded_log_loss)
        self.inverse_temperature_ = self.scaling_.inverse_temperature
        self.temperature_ = self.scaling_.temperature
        return self

    # ----------------------------------------------------------------- cross-fitting
    def _cross_fit(self, X, y, labels, gaussian, record, progress):
        """The learner's own fit on everything, then out-of-fold scores of two half-size clones
        (with each clone's weight length, or ``None`` for a learner without ``coef_``)."""
        from sklearn.model_selection import StratifiedKFold

        params = self.learner.get_params(deep=False)
        n = X.shape[0]
        counts = np.bincount(np.searchsorted(labels, y), minlength=len(labels))
        k = self.folds_ = int(min(self.folds, counts.min()))  # a fold needs every label once
        scale = params.get("n_epochs", 1)  # progress counts documents times passes, as fit does
        done = [0]

        def fit_one(estimator, Xs, ys):
            kwargs = {}
            if progress is not None:
                offset = done[0]
                # n for the final model and (k - 1) / k of n for each of the k clones: k n in all
                kwargs["progress"] = lambda j, _total: progress(offset + j, k * scale * n)
            estimator.fit(Xs, ys, **kwargs)
            done[0] += scale * Xs.shape[0]
            return estimator

        model = fit_one(clone(self.learner), X, y)  # first: a shared RandomState is drawn as fit alone would
        self.mistakes_ = list(getattr(model, "mistakes_", []))
        # the halves are trained with the values the final fit chose ("auto" ones included)
        settings = clone(self.learner).set_params(**dict(getattr(model, "tuned_params_", {})))
        shape = (n,) if len(labels) == 2 else (n, len(labels))
        scores, variances, norms, empty = np.zeros(shape), np.zeros(shape), np.zeros(n), np.zeros(n, dtype=bool)
        linear = True
        folds = StratifiedKFold(k, shuffle=True, random_state=params.get("random_state", 0))
        unit_length = self.unseen == "drop" and unit_length_rows(X)
        for fitted_on, scored in folds.split(np.zeros((n, 1)), np.searchsorted(labels, y)):
            with warnings.catch_warnings():
                # the final model's fit has reported the pass warnings; its halves would repeat them
                warnings.simplefilter("ignore")
                half = fit_one(clone(settings), X[fitted_on], y[fitted_on])
            held_out = (as_unseen(X[scored], X[fitted_on], unit_length=unit_length) if self.unseen == "drop"
                        else X[scored])
            scores[scored] = half.decision_function(held_out)
            empty[scored] = no_known_feature(held_out)
            if gaussian:
                variances[scored] = half.margin_variance(held_out)
            length = weight_norm(half)
            linear = linear and length is not None
            norms[scored] = length if length is not None else 0.0
        return model, scores, variances, (norms if linear else None), empty

    # ----------------------------------------------------------------- progressive validation
    def _pass_fit(self, X, y, labels, gaussian, record, progress):
        """Train as the learner's fit would, recording the pre-update scores of one pass."""
        params = self.learner.get_params(deep=False)
        model = clone(self.learner)
        n_epochs = params["n_epochs"]
        recorded = 0 if record == "first" else n_epochs - 1
        self.mistakes_ = []
        for epoch, order in enumerate(epoch_orders(X.shape[0], n_epochs, params["shuffle"],
                                                   params["random_state"])):
            Xe, ye = X[order], y[order]
            if epoch != recorded:
                model.partial_fit(Xe, ye, classes=labels)
                self.mistakes_.append(int(model.mistakes_[-1]))
            else:
                in_order = self._recorded_pass(model, Xe, ye, labels, gaussian)
                scores, variances, norms = (None if a is None else np.empty_like(a) for a in in_order)
                scores[order], variances[order] = in_order[:2]  # back to the rows of X, as y is
                if norms is not None:
                    norms[order] = in_order[2]
                self.mistakes_.append(int(sum(model.mistakes_[-self._n_chunks(Xe.shape[0]):])))
            if progress is not None:
                progress((epoch + 1) * X.shape[0], n_epochs * X.shape[0])
        # the recorded pass added one count per chunk: one per pass, as the learner's fit keeps
        model.mistakes_ = list(self.mistakes_)
        if len(getattr(model, "n_updates_", ())) == len(model.mistakes_) + self._n_chunks(X.shape[0]) - 1:
            chunks = slice(recorded, recorded + self._n_chunks(X.shape[0]))
            model.n_updates_[chunks] = [int(sum(model.n_updates_[chunks]))]
        return model, scores, variances, norms, no_known_feature(X)

    def _n_chunks(self, n: int) -> int:
        return len(recorded_chunks(n, self.chunk_size))

    def _recorded_pass(self, model, X, y, labels, gaussian):
        """Learn ``(X, y)`` chunk by chunk, scoring each chunk with the model before it."""
        n = X.shape[0]
        binary = labels.shape[0] == 2
        shape = (n,) if binary else (n, labels.shape[0])
        scores = np.zeros(shape)
        variances = np.zeros(shape)
        norms = np.zeros(n)  # the scoring model's weight length, per document
        linear = True
        for start, stop in recorded_chunks(n, self.chunk_size):
            chunk = X[start:stop]
            # before the first update the model is all zeros: every score is 0 (left as is)
            if hasattr(model, "classes_"):
                scores[start:stop] = model.decision_function(chunk)
                if gaussian:
                    variances[start:stop] = model.margin_variance(chunk)
                length = weight_norm(model)
                linear = linear and length is not None
                norms[start:stop] = length or 0.0
            model.partial_fit(chunk, y[start:stop], classes=labels)
        return scores, variances, (norms if linear else None)

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """The learner's labels; with ``probability="calibrated"``, the calibration's label for a
        document with no known feature (:mod:`textcw.learners.unknown_documents`)."""
        check_is_fitted(self, "estimator_")
        if self.probability == "raw":
            return self.estimator_.predict(X)
        return self._scaling().predict(self.estimator_, X)

    def _scaling(self) -> TemperatureScaling:
        # a Calibrated pickled before scaling_ existed holds margin_ and inverse_temperature_
        return getattr(self, "scaling_", None) or TemperatureScaling(self.margin_, self.inverse_temperature_, "first")

    def calibrated_scores(self, X) -> np.ndarray:
        """The scores the temperature scales (``margin_``), shape (n,) or (n, K)."""
        check_is_fitted(self, "estimator_")
        return self._scaling().scores(self.estimator_, X)

    def predict_proba(self, X):
        """``softmax(z / T)`` (binary: the logistic of ``z / T``); ``probability="raw"``: the
        learner's own probabilities. Columns follow ``classes_``; the argmax is ``predict``'s
        label (module docstring)."""
        check_is_fitted(self, "estimator_")
        if self.probability == "raw":
            if not hasattr(self.estimator_, "predict_proba"):
                raise ParameterError(
                    f"Calibrated: probability='raw' needs a learner with its own predict_proba; "
                    f"{type(self.estimator_).__name__} has none: use probability='calibrated'"
                )
            return self.estimator_.predict_proba(X)
        return self._scaling().predict_proba(self.estimator_, X)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @available_if(learner_has("margin_variance"))
    def margin_variance(self, X):
        return self.estimator_.margin_variance(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
