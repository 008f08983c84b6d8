"""Multi-label learning: any binary textcw learner, one-vs-rest, with calibrated per-label
probabilities and per-label thresholds chosen on honest scores.

``MultiLabel(make_learner("arow")).fit(X, Y)`` learns one binary model per label, as
scikit-learn's ``OneVsRestClassifier`` does, with ``Y`` a list of label sets or a 0/1 indicator
matrix (:mod:`textcw.learners.multilabel_targets`). Three things differ:

- **One pass over the data.** The documents are visited once per epoch, chunk by chunk, and
  every label's model learns each chunk before the next is read: one featurization of ``X`` and
  one visiting order serve every label (the labels' models are independent, so each is the very
  model the learner's own ``fit`` gives on that label's 0/1 column with the same order: tested
  bit for bit). A stream read once (``partial_fit`` on successive batches) trains every label.
- **Calibrated probabilities per label.** ``predict_proba`` gives, for each label, a logistic of
  the label's score over a temperature fitted to honest scores (temperature scaling, Guo, Pleiss,
  Sun and Weinberger, "On calibration of modern neural networks", ICML 2017, section 4.2, as
  :mod:`textcw.learners.temperature` fits it for a binary learner: Platt's regularised targets,
  and the raw, normalised or standardised margin that fits those scores best; every label's at
  once, :mod:`textcw.learners.label_temperatures`).
- **Thresholds chosen per label on honest scores.** A label is predicted when its probability
  exceeds that label's threshold, the cut that maximises its F1 on the honest scores (SCut:
  Yang, "A study of thresholding strategies for text categorization", SIGIR 2001, section 3.2):
  rare labels get lower cuts than 1/2, and no test document is ever looked at. A document no
  label's threshold admits gets its most probable label when every training document had one
  (``min_labels="auto"``; :func:`~textcw.learners.multilabel_targets.at_least`).

Honest scores (``record=``) are scores of training documents by a model that had not learned
them, as in :class:`textcw.learners.calibrated.Calibrated`: ``"first"``, progressive validation
(Blum, Kalai and Langford, COLT 1999) over the first pass, chunks of 1, 1, 2, 4, ... then
``chunk_size`` documents each scored before it is learned (free, exact for one epoch);
``"cross-fit"``, two half-size models trained as the final one is, each scoring the other half
(about twice the training time; scores of models trained as the final one was, which the
first pass's young models are not); ``"auto"``: ``"first"`` for one epoch, else ``"cross-fit"``.

``"best"``: which source sets the best cuts depends on the data (docs/guide/multi-label.md), so
with several epochs the two are compared at no extra fit: each cross-fit half's models are
scored on the other half with the cuts and temperatures of their own first pass, and with those
of the other half's models' scores of their documents; the source of the higher pooled micro-F1
(a tie: ``"cross-fit"``) is taken for the final models. Neither set of cuts saw the documents it
is judged on (Yang's SCut, SIGIR 2001, section 3.2, one level up). Not the default: where the
first pass wins, the final models' probabilities are over-confident (temperatures fitted to
young models), and on a few hundred documents the comparison is noise.

``partial_fit`` learns each batch in one pass, scoring each chunk before learning it, and then
refits every label's temperature and threshold on the honest scores of the last
``max_recorded`` documents (those ``fit`` recorded included). The label set is fixed by the
first call (``classes=``, which may name labels no document has yet); a batch with a label
outside it is refused, as by the learners' own ``partial_fit``: a label's model learns from
every document, so a label added later would have missed the documents where it was absent.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from textcw._csr import as_kernel_csr
from textcw.errors import InputError, ParameterError
from textcw.learners.autotune import auto_names
from textcw.learners.recorded_scores import recorded_chunks
from textcw.learners.inputs import check_features
from textcw.learners.label_threads import LabelGroups, thread_count
from textcw.learners.multilabel_scores import (HonestScores, LearnedCount, kept_scores, label_scores,
                                                margin_variances)
from textcw.learners.label_temperatures import label_margins, label_temperatures, margin_kinds
from textcw.learners.multilabel_targets import (INDICATOR, SETS, as_indicator, as_output, at_least, f1_thresholds,
                                                is_matrix, micro_f1, resolve_min_labels, unlabelled_rows)
from textcw.learners.params import AnyOf, Interval, Options, check_params
from textcw.learners.selftune import check_online_learner, epoch_orders
from textcw.learners.state import memory_budget
from textcw.learners.temperature import TemperatureScaling, weight_norm

RECORDED = ("first", "cross-fit")  # where a fitted model's honest scores came from (record_)
RECORDS = ("auto", *RECORDED, "best")
# MultiLabel's own settings, which `textcw train --param` takes by name beside the learner's
SETTINGS = ("threshold", "record", "margin", "min_labels", "max_recorded")
MARGINS = ("auto", "raw", "standardized", "normalized")
CROSS_FIT_FOLDS = 2


class MultiLabel(ClassifierMixin, BaseEstimator):
    """One-vs-rest multi-label learning with any binary textcw learner (module docstring).

    Parameters
    ----------
    learner : textcw learner
        An unfitted online learner (``textcw.make_learner("scw1")``, ``AROW()``, ...): each label
        gets a model with its parameters.
    threshold : "auto" or float in (0, 1), default "auto"
        ``"auto"``: each label's F1-maximising cut on the honest probabilities; a number: that
        probability cut for every label.
    record : {"auto", "first", "cross-fit", "best"}, default "auto"
        Where the honest scores come from (module docstring).
    margin : {"auto", "raw", "standardized", "normalized"}, default "auto"
        What each label's temperature scales (:func:`textcw.learners.temperature.fit_temperature`).
    chunk_size : int in [1, 1000000], default 2048
        Documents every label learns before the next chunk is read (and, recording, scored
        before they are learned).
    max_recorded : int in [100, 10000000], default 10000
        Honest scores kept (of the most recent documents) for refitting after ``partial_fit``.
    min_labels : "auto" or int in [0, 100], default "auto"
        The least number of labels ``predict`` gives a document, completed with its most
        probable labels where the thresholds give fewer; ``"auto"``: 1 if every document
        learned had at least one label, else 0 (the thresholds alone).
    n_jobs : None, -1 or int in [1, 1024], default None
        Threads that train the labels' models (:mod:`textcw.learners.label_threads`): ``None``
        one, ``-1`` one per core. The models are the same, bit for bit, whatever the number.

    Fitted attributes
    -----------------
    classes_ : ndarray (the labels; ``0 .. K-1`` for an indicator ``Y``)
    estimators_ : list of fitted binary learners, one per label (``classes_ == [0, 1]``)
    scalings_ : list of :class:`~textcw.learners.temperature.TemperatureScaling`, one per label
        (read from ``calibration_``, their ``to_dict()`` forms)
    thresholds_ : ndarray of shape (n_labels,), probability cuts
    record_ : str, label_format_ : ``"sets"`` or ``"indicator"`` (what ``predict`` returns)
    record_f1_ : dict, with ``record="best"`` and several epochs: the held-out micro-F1 of each
        source's thresholds on the cross-fit's halves (module docstring); else empty
    n_features_in_ : int, n_honest_scores_ : int (documents behind the calibration)
    unlabelled_documents_ : int, documents learned with an empty label set (``min_labels="auto"``)
    """

    _constraints = {
        "threshold": AnyOf((Options(("auto",)), Interval(0.0, 1.0, closed="neither"))),
        "record": Options(RECORDS),
        "margin": Options(MARGINS),
        "chunk_size": Interval(1, 1_000_000, closed="both", integer=True),
        "max_recorded": Interval(100, 10_000_000, closed="both", integer=True),
        "min_labels": AnyOf((Options(("auto",)), Interval(0, 100, closed="both", integer=True))),
        "n_jobs": AnyOf((Options((None, -1)), Interval(1, 1024, closed="both", integer=True))),
    }

    def __init__(self, learner, *, threshold="auto", record="auto", margin="auto", chunk_size=2048,
                 max_recorded=10_000, min_labels="auto", n_jobs=None):
        self.learner = learner
        self.threshold = threshold
        self.record = record
        self.margin = margin
        self.chunk_size = chunk_size
        self.max_recorded = max_recorded
        self.min_labels = min_labels
        self.n_jobs = n_jobs

    # ----------------------------------------------------------------- checks
    def _check_setup(self) -> dict:
        check_params(self, self._constraints)
        params = check_online_learner(self.learner, "MultiLabel")
        if not (hasattr(self.learner, "_run_epoch") and hasattr(self.learner, "_init_model")):
            raise ParameterError(
                f"MultiLabel: learner must be a textcw online linear learner (e.g. "
                f"textcw.make_learner('scw1')); got {type(self.learner).__name__}")
        if auto_names(self.learner):
            raise ParameterError(
                f"MultiLabel: {type(self.learner).__name__} has 'auto' hyperparameters "
                f"({', '.join(auto_names(self.learner))}), which are chosen per model; give the "
                "values explicitly for multi-label learning")
        if self.margin == "standardized" and not self._gaussian:
            raise ParameterError(
                f"MultiLabel: margin='standardized' needs a Gaussian learner (cw-var, cw-stdev, arow, "
                f"scw1, scw2); {type(self.learner).__name__} has none: use margin='raw' or 'auto'")
        return params

    @property
    def _gaussian(self) -> bool:
        return hasattr(self.learner, "margin_variance")

    # ----------------------------------------------------------------- fitting
    def fit(self, X, Y, progress=None):
        """Train every label's model for the learner's ``n_epochs`` passes, then calibrate each
        label and choose its threshold on honest scores. ``progress(done, total)`` counts
        documents learned (all passes, and the halves of ``"cross-fit"``)."""
        params = self._check_setup()
        X = check_features(X, estimator="MultiLabel")
        Y, classes, form = as_indicator(Y, X.shape[0])
        n = X.shape[0]
        record = self.record
        choose = record == "best" and params["n_epochs"] > 1
        if record in ("auto", "best"):
            record = "first" if params["n_epochs"] == 1 else "cross-fit"
        total = params["n_epochs"] * n * (CROSS_FIT_FOLDS if record == "cross-fit" else 1)
        counter = LearnedCount(progress, total)
        self._reset(classes, form, X.shape[1], record)
        self.unlabelled_documents_ = unlabelled_rows(Y)
        if record == "cross-fit":
            # the halves first: the final models' first pass is recorded only if its cuts won
            # (the final models do not depend on the halves: each fit draws the same orders)
            honest, halves = self._cross_fit(X, Y, params, counter, recording=choose)
            if choose:
                self.record_f1_ = self._held_out_f1(X, Y, honest, halves)
                if self.record_f1_["first"] > self.record_f1_["cross-fit"]:
                    self.record_ = "first"
            self.estimators_, first = self._train(X, Y, params, counter, recording=self.record_ == "first")
            honest = first if self.record_ == "first" else honest
        else:
            self.estimators_, honest = self._train(X, Y, params, counter, recording=True)
        self._remember(honest, Y)
        self._calibrate()
        return self

    def partial_fit(self, X, Y, classes=None):
        """One pass over ``(X, Y)`` in the given order, continuing the fitted models; then every
        label's temperature and threshold are refitted (module docstring). ``classes``: every
        label of the stream, required on the first call with label sets."""
        params = self._check_setup()
        first = not hasattr(self, "estimators_")
        X = check_features(X, None if first else self.n_features_in_, estimator="MultiLabel")
        if first:
            if classes is None and not is_matrix(Y):
                raise InputError("the first partial_fit call needs classes=[...] listing every label "
                                 "the stream will contain")
            declared = np.arange(np.shape(Y)[1]) if classes is None else np.asarray(list(classes))
            if declared.size == 0 or np.unique(declared).size != declared.size:
                raise InputError("classes must list at least one label, each once")
            declared = declared if is_matrix(Y) else np.unique(declared)
            Y, _, form = as_indicator(Y, X.shape[0], declared)
            self._reset(declared, form, X.shape[1], "first")
            self.estimators_ = self._new_models(self._columns(X.shape[1]), len(self.classes_))
            self.unlabelled_documents_ = 0
        else:
            check_is_fitted(self, "estimators_")
            if classes is not None and not np.array_equal(np.asarray(list(classes)), self.classes_):
                raise InputError(f"classes= differs from the labels of the first call "
                                 f"({self.classes_.tolist()[:10]}); the label set is fixed")
            Y, _, form = as_indicator(Y, X.shape[0], self.classes_)
        if getattr(self, "unlabelled_documents_", None) is not None:  # None: a file saved without the count
            self.unlabelled_documents_ += unlabelled_rows(Y)
        params = dict(params, n_epochs=1, shuffle=False)
        _, honest = self._train(X, Y, params, LearnedCount(None, 0), recording=True, models=self.estimators_)
        self._remember(honest, Y)
        self._calibrate()
        return self

    def _reset(self, classes, form, n_features, record) -> None:
        self.classes_ = np.asarray(classes)
        self.label_format_ = form
        self.n_features_in_ = int(n_features)
        self.record_ = record
        self.record_f1_ = {}
        self.__dict__.pop("recorded_", None)

    def _columns(self, n_features: int) -> int:
        return n_features + int(bool(self.learner.get_params(deep=False).get("fit_intercept", False)))

    def _new_models(self, n_columns: int, n_labels: int) -> list:
        template = clone(self.learner)
        template.validate_params()
        template.check_classes(2)
        need = 8 * n_columns * n_labels * max(1, len(template.state_names))
        if need > memory_budget():
            raise InputError(
                f"{n_labels} labels x {n_columns:,} weights: the {n_labels} models would take "
                f"{need / 1e9:,.1f} GB, more than half of this machine's memory; use fewer features "
                "(e.g. the hashing featurizer with a smaller n_features) or fewer labels")
        models = []
        for _ in range(n_labels):
            model = clone(template)
            model._setup_labels(np.array([0, 1]))
            model._init_model(n_columns)
            models.append(model)
        return models

    def _train(self, X, Y, params, counter, *, recording: bool, models=None):
        """Every label's model over ``params["n_epochs"]`` passes, each pass chunk by chunk with
        every label learning a chunk before the next; with ``recording``, each chunk of the first
        pass is scored by every label's model before it learns it. Returns the models and the
        honest ``(scores, variances, norms)`` (``None`` when not recording)."""
        n, n_labels = X.shape[0], Y.shape[1]
        Xk = X
        if self._columns(X.shape[1]) > X.shape[1]:  # the bias's always-active feature
            Xk = as_kernel_csr(sp.hstack([X, np.ones((n, 1))], format="csr"))
        if models is None:
            models = self._new_models(Xk.shape[1], n_labels)
        signs = np.ascontiguousarray(2.0 * Y.T.astype(np.float64) - 1.0)  # row l: label l as +-1
        honest = HonestScores(n, n_labels, self._gaussian) if recording else None
        for epoch, order in enumerate(epoch_orders(n, params["n_epochs"], params["shuffle"],
                                                   params["random_state"])):
            order = order.astype(np.int64)
            size = self.chunk_size
            chunks = (recorded_chunks(n, size) if recording and epoch == 0
                      else [(s, min(n, s + size)) for s in range(0, n, size)])
            counts = [(len(m.mistakes_), len(m.n_updates_)) for m in models]
            with LabelGroups(models, thread_count(self.n_jobs, n_labels)) as groups:
                for start, stop in chunks:
                    rows = order[start:stop]
                    if honest is not None and epoch == 0:
                        groups.run(honest.score_labels, models, X[rows], rows)
                    groups.learn(Xk, signs, rows)
                    counter.add(stop - start)
            for model, (m, u) in zip(models, counts):  # one count per pass, as the learner's fit keeps
                model.mistakes_[m:] = [int(sum(model.mistakes_[m:]))]
                model.n_updates_[u:] = [int(sum(model.n_updates_[u:]))]
        return models, (None if honest is None else honest.arrays())

    def _cross_fit(self, X, Y, params, counter, *, recording: bool = False):
        """Out-of-fold scores: two half-size sets of models trained as the final ones were. With
        ``recording``, also each half's ``(models, rows learned, rows scored, honest scores of its
        own first pass)`` for :meth:`_held_out_f1`; else an empty list."""
        n, n_labels = Y.shape
        halves = []
        scores, norms = np.zeros((n, n_labels)), np.zeros((n, n_labels))
        variances = np.zeros((n, n_labels)) if self._gaussian else None
        # here, not at the top: sklearn.model_selection loads scipy.stats, which a one-line
        # predict of a saved model never needs (textcw._deferred; tests/test_deferred.py)
        from sklearn.model_selection import KFold

        folds = KFold(CROSS_FIT_FOLDS, shuffle=True, random_state=params.get("random_state", 0))
        for fitted_on, scored in folds.split(np.zeros((n, 1))):
            half, own = self._train(X[fitted_on], Y[fitted_on], params, counter, recording=recording)
            if recording:
                halves.append((half, fitted_on, scored, own))
            recorder = HonestScores(n, n_labels, self._gaussian)
            with LabelGroups(half, thread_count(self.n_jobs, n_labels)) as groups:
                groups.run(recorder.score_labels, half, X[scored], scored)
            part = recorder.arrays()
            scores[scored], norms[scored] = part[0][scored], part[2][scored]
            if variances is not None:
                variances[scored] = part[1][scored]
        return (scores, variances, norms), halves

    def _held_out_f1(self, X, Y, cross, halves) -> dict:
        """The micro-F1, pooled over the two halves, of each half's models on the other half
        with the thresholds and temperatures fitted to (``"first"``) the honest scores of their
        own first pass or (``"cross-fit"``) the other half's models' scores of their documents
        (module docstring)."""
        truth, predicted = [], {"first": [], "cross-fit": []}
        cross_scores, cross_variances, _ = cross
        for models, fitted_on, scored, own in halves:
            other = tuple(None if a is None else a[fitted_on] for a in cross)
            # the half's scores of the other half as _cross_fit recorded them (predict_proba's, bit for bit)
            scores, variances = cross_scores[scored], None if cross_variances is None else cross_variances[scored]
            for source, honest in (("first", own), ("cross-fit", other)):
                probe = self._probe(models, honest, Y[fitted_on])
                predicted[source].append(probe.indicator_of(probe._proba(scores, lambda labels: variances[:, labels])))
            truth.append(Y[scored])
        truth = np.vstack(truth).astype(bool)
        return {source: micro_f1(truth, np.vstack(rows).astype(bool)) for source, rows in predicted.items()}

    def _probe(self, models, honest, Y) -> MultiLabel:
        """A model of ``models`` calibrated on ``honest`` scores of documents labelled ``Y``."""
        probe = clone(self)
        probe._reset(self.classes_, INDICATOR, self.n_features_in_, "cross-fit")
        probe.estimators_ = models
        probe.unlabelled_documents_ = unlabelled_rows(Y)
        probe._remember(honest, Y)
        probe._calibrate()
        return probe

    # ----------------------------------------------------------------- calibration
    def _remember(self, honest, Y) -> None:
        """Keep the honest scores of the most recent ``max_recorded`` documents."""
        self.recorded_ = kept_scores(self.__dict__.get("recorded_"), honest, Y, self.max_recorded)

    def _calibrate(self) -> None:
        """Every label's temperature, then its threshold on the calibrated honest probabilities."""
        rec = self.recorded_
        Y = rec["Y"]
        scores, norms = rec["scores"].astype(float), rec["norms"].astype(float)
        variances = rec["variances"].astype(float) if "variances" in rec else None
        margins = {kind: label_margins(kind, scores, variances, norms)
                   for kind in margin_kinds(self.margin, variances is not None)}
        scalings = label_temperatures(margins, Y, self.record_)
        betas = np.array([scaling.inverse_temperature for scaling in scalings])
        chosen = [margins[scaling.margin][:, label] for label, scaling in enumerate(scalings)]
        proba = expit(betas * np.column_stack(chosen)) if chosen else np.empty_like(scores)
        # plain arrays and JSON, so that an export (textcw.portable) carries them without pickle
        self.calibration_ = [scaling.to_dict() for scaling in scalings]
        self.thresholds_ = (f1_thresholds(proba, Y) if self.threshold == "auto"
                            else np.full(Y.shape[1], float(self.threshold)))
        self.n_honest_scores_ = int(Y.shape[0])
        self.weight_norms_ = np.array([weight_norm(m) for m in self.estimators_])

    # ----------------------------------------------------------------- prediction
    @property
    def scalings_(self) -> list[TemperatureScaling]:
        check_is_fitted(self, "calibration_")
        return [TemperatureScaling.from_dict(data) for data in self.calibration_]

    def decision_function(self, X) -> np.ndarray:
        """Every label's score, shape (n, n_labels); positive means the learner says yes."""
        check_is_fitted(self, "estimators_")
        X = check_features(X, self.n_features_in_, estimator="MultiLabel")
        return label_scores(self.estimators_, X)

    def predict_proba(self, X) -> np.ndarray:
        """Each label's calibrated probability, shape (n, n_labels) (rows need not sum to 1)."""
        check_is_fitted(self, "estimators_")
        X = check_features(X, self.n_features_in_, estimator="MultiLabel")
        return self._proba(label_scores(self.estimators_, X),
                           lambda labels: margin_variances([self.estimators_[k] for k in labels], X))

    def _proba(self, scores: np.ndarray, variances_of) -> np.ndarray:
        """:meth:`predict_proba` from every label's score; ``variances_of(labels)``: the margin
        variances ``(n, len(labels))`` of the labels whose temperature scales the standardised margin."""
        scalings = self.scalings_
        z = scores.copy()
        for kind in ("normalized", "standardized"):
            labels = [k for k, scaling in enumerate(scalings) if scaling.margin == kind]
            if labels:
                variances = variances_of(labels) if kind == "standardized" else None
                z[:, labels] = label_margins(kind, scores[:, labels], variances, self.weight_norms_[labels])
        return expit(np.array([scaling.inverse_temperature for scaling in scalings]) * z)

    def predict_indicator(self, X) -> np.ndarray:
        """0/1 matrix (n, n_labels): 1 where the label's probability exceeds its threshold
        (so a label whose probability is exactly 1/2 under the fallback cut is not given, as a
        binary learner answers classes_[0] at a zero margin), each row completed to
        ``min_labels_`` labels by its most probable ones."""
        return self.indicator_of(self.predict_proba(X))

    def indicator_of(self, proba: np.ndarray) -> np.ndarray:
        """:meth:`predict_indicator` from probabilities ``predict_proba`` gave, for a caller that
        has them already (the service answers both)."""
        return at_least((proba > self.thresholds_).astype(int), proba, self.min_labels_)

    @property
    def min_labels_(self) -> int:
        """The least number of labels ``predict`` gives a document (``min_labels`` resolved)."""
        check_is_fitted(self, "estimators_")
        return resolve_min_labels(self.min_labels, getattr(self, "unlabelled_documents_", None), len(self.classes_))

    def predict(self, X):
        """Label sets (a tuple of labels per document) if ``fit`` was given label sets, else
        indicator rows."""
        return as_output(self.predict_indicator(X), self.classes_, self.label_format_)

    def score(self, X, Y, sample_weight=None):
        """Micro-averaged F1 of ``predict`` against ``Y`` (either form)."""
        from sklearn.metrics import f1_score

        check_is_fitted(self, "estimators_")
        truth, _, _ = as_indicator(Y, np.shape(X)[0], self.classes_)
        return float(f1_score(truth, self.predict_indicator(X), average="micro", zero_division=0.0,
                              sample_weight=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_label = True
        return tags


def split_settings(params: dict | None) -> tuple[dict, dict]:
    """``(learner's, MultiLabel's)``: ``params`` split by :data:`SETTINGS`."""
    params = dict(params or {})
    return {k: v for k, v in params.items() if k not in SETTINGS}, {k: v for k, v in params.items() if k in SETTINGS}


__all__ = ["MultiLabel", "SETS", "INDICATOR", "SETTINGS", "split_settings"]
