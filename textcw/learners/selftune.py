"""Self-tuning by progressive validation: several hyperparameter values over one stream.

An online learner predicts every training document before it learns from it, so the mistakes it
makes during its first pass are an honest estimate of its error on unseen data (progressive
validation: Blum, Kalai and Langford, "Beating the hold-out", COLT 1999). :class:`SelfTuning`
uses that: it trains a small set of candidate hyperparameter values side by side over the same
stream, counts each candidate's online mistakes (the learners' ``mistakes_``, counted before
each update), and predicts with the candidate that made the fewest. No held-out split is needed
and ``partial_fit`` works: every call updates every candidate and adds its online mistakes, so
the choice follows the data as it arrives.

What it costs. ``fit`` runs the first pass for every candidate and the remaining
``n_epochs - 1`` passes for the winner only: ``G + n_epochs - 1`` passes over the data for ``G``
candidates, against ``G * n_epochs`` for fitting each candidate separately (9 against 25 for
five candidates and five epochs); the input checks and each pass's shuffled copy of the data are
made once and shared. After ``fit`` the winner is exactly the model ``fit`` of the learner with
the winning values gives (same seeded visiting orders), and the other candidates keep their
first-pass model.

Each learner class declares its tunable parameters once, in its ``tuning`` attribute (a tuple
of :class:`Axis`): the ``tune`` evaluator's grid, and the candidates ``"auto"`` and
:class:`SelfTuning` run. A subclass inherits them and a plugin learner declares its own, with no
table to edit anywhere else. The self-tuning candidates are stated in units of the data, not as
constants: the scale ``q``, the median squared norm of the training rows (with the intercept
column), and the initial variance ``a`` fix how large a margin variance ``x' Sigma x = a q``
and a step are on this data, and each parameter is compared with that quantity inside its
update rule (docs/algorithms.md gives the rules):

- CW-stdev and SCW ``eta``: a confidence, ``phi = Phi^{-1}(eta)`` standard deviations of
  margin (JMLR 2012 eq. 19). CW-stdev's mistakes depend neither on ``a`` (NIPS 2008, Lemma 3)
  nor on the scale of ``x``, so ``phi`` is scale-free: candidates ``phi`` in
  {0.25, 0.5, 1, 2, 4}, a factor of 2 apart (``eta`` of about 0.60, 0.69, 0.84, 0.977 and
  0.99997).
- CW-var ``eta``: its constraint ``m >= phi v`` (JMLR 2012 eq. 10) is not scale-free. Scaling
  ``x`` by ``s`` is the same as scaling ``a`` by ``s^2``, and scaling ``a`` by ``lambda`` gives
  the same predictions with ``phi / sqrt(lambda)`` (substitute ``mu -> sqrt(lambda) mu``,
  ``Sigma -> lambda Sigma``, ``alpha -> alpha / sqrt(lambda)`` into eq. 18 and the precision
  update), so what matters is ``phi sqrt(a q)``: candidates ``phi = c / sqrt(a q)`` for the same
  ``c``. (The tests check that invariance on the learner itself.)
- AROW ``r``: ``beta = 1 / (v + r)`` (MLJ 2013 eq. 12), so what matters is ``r / v``; on a new
  document ``v = a q``. Candidates ``r = c a q`` for ``c`` in {0.01, 0.1, 1, 10, 100}: from
  trusting each example almost fully to averaging over about a hundred.
- PA-I and PA-II ``C``: the step ``tau = min(C, l / ||x||^2)`` (PA-I) or
  ``l / (||x||^2 + 1/(2C))`` (PA-II) (JMLR 2006 eqs. 4-5) compares ``C`` with ``1 / ||x||^2``.
  Candidates ``C = c / q`` for ``c`` in {0.01, 0.1, 1, 10}.
- SCW ``C``: SCW-I caps the mean step ``alpha``, whose size is ``1 / sqrt(v)`` (it moves the
  margin by ``alpha v`` to reach ``phi sqrt(v)``), so ``C = c / sqrt(a q)``; SCW-II adds
  ``1/(2C)`` to ``v``, so ``C = c / (a q)``. Candidates ``c`` in {0.1, 1, 10}, crossed with
  ``phi`` in {0.5, 1, 2}.

The perceptron and averaged perceptron have no such parameter (their mistakes do not depend on
the scale of ``x``); SGD's and SOP's are not covered by a default grid: pass ``grid=``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from textcw.errors import InputError, ParameterError
from textcw.learners.inputs import as_label_array, check_features, check_labels, check_targets


@dataclass(frozen=True)
class Axis:
    """One tunable parameter of a learner class, declared in its ``tuning`` attribute.

    Attributes
    ----------
    param : str
        The parameter.
    unit : str or None
        How ``"auto"`` and :class:`SelfTuning` state its candidates on the training data: a key
        of :data:`UNITS`. ``None``: the parameter has no self-tuning (it cannot be ``"auto"``).
    multipliers : tuple of float
        Those candidates, in that unit.
    grid : tuple
        The values the ``tune`` evaluator searches (absolute values).
    quick : tuple
        Its values with ``--quick`` (empty: ``grid``).
    in_train : bool
        ``textcw train`` (and ``make_pipeline(..., train_defaults=True)``) self-tunes the
        parameter (``"auto"``) unless the user gives it: declared where self-tuning beat the
        class default on data from outside the papers' corpora (docs/quality.md).
        ``make_learner`` keeps the class default. Needs a ``unit``.
    """

    param: str
    unit: str | None = None
    multipliers: tuple[float, ...] = ()
    grid: tuple = ()
    quick: tuple = ()
    in_train: bool = False

    def __post_init__(self):
        if self.unit is not None and (self.unit not in UNITS or not self.multipliers):
            raise TypeError(f"Axis({self.param!r}): unit must be one of {sorted(UNITS)} (or None), "
                            f"with multipliers; got unit={self.unit!r}, multipliers={self.multipliers!r}")
        if self.in_train and self.unit is None:
            raise TypeError(f"Axis({self.param!r}): in_train=True needs a unit (the parameter must self-tune)")
        if self.unit is None and self.multipliers:
            raise TypeError(f"Axis({self.param!r}): multipliers need a unit ({sorted(UNITS)})")

    @property
    def self_tunes(self) -> bool:
        """The parameter may be ``"auto"``."""
        return self.unit is not None


def decades(low: int, high: int) -> tuple[float, ...]:
    """``(10**low, ..., 10**high)``."""
    return tuple(float(10.0 ** k) for k in range(low, high + 1))


# How a multiplier ``c`` becomes a parameter value on data of scale q (median squared row norm)
# for a learner of initial variance a; the module docstring gives the reasons.
UNITS = {
    "confidence": lambda c, q, a: float(ndtr(c)),  # eta = Phi(phi), phi = c
    "confidence-per-sd": lambda c, q, a: float(ndtr(c / math.sqrt(a * q))),  # CW-var
    "margin-variance": lambda c, q, a: c * a * q,  # AROW r against v = a q
    "inverse-margin-variance": lambda c, q, a: c / (a * q),  # SCW-II C: 1/(2C) against v
    "inverse-margin-sd": lambda c, q, a: c / math.sqrt(a * q),  # SCW-I C: alpha ~ 1/sqrt(v)
    "inverse-squared-norm": lambda c, q, a: c / q,  # PA-I/II C against 1/||x||^2
}

# Shared by the learners' ``tuning`` declarations. The papers tune ``phi`` (or ``eta``), ``C``
# and ``r`` without printing their grids (JMLR 2012 section 7.6; AROW 2013 section 5.1), so the
# ``tune`` grids are textcw's choices: a confidence grid that spans ``phi = Phi^{-1}(eta)`` from
# 0.025 to 3.1, and decades for the regularisers; ranges were widened where the first full
# reproductions often chose an end point (under heavy label noise CW still prefers the smallest
# eta, whose limit is 0.5, and PA-I the smallest C).
PHI = (0.25, 0.5, 1.0, 2.0, 4.0)
ETA = (0.51, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)
QUICK_ETA = (0.6, 0.8, 0.95)
PA_C = Axis("C", "inverse-squared-norm", (0.01, 0.1, 1.0, 10.0), grid=decades(-4, 1), quick=(0.01, 1.0))
# What textcw train self-tunes (in_train): CW's confidence and SCW's confidence and
# aggressiveness. Self-tuning beat the class defaults on both tasks from outside the papers'
# corpora in docs/quality.md (digits and synthetic text: +1.1 to +4.3 points) and on 20
# Newsgroups (cw-stdev 0.8455 -> 0.8490, scw1 0.830 -> 0.842); AROW's r and PA's C lost on the
# dense task, so they keep their class defaults.
SCW_ETA = Axis("eta", "confidence", (0.5, 1.0, 2.0), grid=(0.6, 0.8, 0.9, 0.95), quick=(0.8, 0.95),
               in_train=True)

# A grid is trained in full for every candidate: keep it a small set.
MAX_CANDIDATES = 64


def data_scale(X, fit_intercept: bool = False) -> float:
    """The median squared norm of the rows of ``X`` (canonical CSR), plus 1 for the intercept's
    always-active feature; 1.0 when every row is empty (any unit then serves)."""
    norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    q = (float(np.median(norms)) if norms.size else 0.0) + float(bool(fit_intercept))
    return q if q > 0 else 1.0


def tuning(learner) -> tuple[Axis, ...]:
    """The ``tuning`` declared by ``learner``'s class (a learner or a class; none: ``()``)."""
    return tuple(getattr(learner, "tuning", ()))


def auto_params(learner) -> tuple[str, ...]:
    """The parameters of ``learner`` (or its class) that may be ``"auto"``."""
    return tuple(axis.param for axis in tuning(learner) if axis.self_tunes)


def train_defaults(learner) -> dict[str, str]:
    """``{parameter: "auto"}`` for each axis of ``learner``'s ``tuning`` that ``textcw train``
    self-tunes by default (``in_train``)."""
    return {axis.param: "auto" for axis in tuning(learner) if axis.in_train}


def tune_grid(learner, *, quick: bool = False) -> dict[str, list]:
    """``{parameter: values}`` the ``tune`` evaluator searches for ``learner`` (or its class),
    from its ``tuning``: each axis's ``quick`` values with ``quick=True`` (else ``grid``)."""
    return {axis.param: list((axis.quick if quick else ()) or axis.grid)
            for axis in tuning(learner) if axis.grid}


def default_grid(learner, X) -> list[dict]:
    """The self-tuning candidates of ``learner``'s ``tuning``, in the units of ``X``."""
    axes = [axis for axis in tuning(learner) if axis.self_tunes]
    if not axes:
        raise ParameterError(
            f"SelfTuning: {type(learner).__name__} declares no self-tuning parameter (its class's "
            "tuning attribute has no Axis with a unit); pass grid={'param': [values, ...]}"
        )
    params = learner.get_params(deep=False)
    q = data_scale(X, bool(params.get("fit_intercept", False)))
    a = float(params.get("a", 1.0))
    grids = [[(axis.param, UNITS[axis.unit](c, q, a)) for c in axis.multipliers] for axis in axes]
    return [dict(combo) for combo in itertools.product(*grids)]


def expand_grid(grid) -> list[dict]:
    """``{"p": [v1, v2], "q": [...]}`` (crossed) or a list of such dicts, as a list of candidates."""
    grids = grid if isinstance(grid, (list, tuple)) else [grid]
    out = []
    for one in grids:
        if not isinstance(one, dict) or not one:
            raise ParameterError(
                f"SelfTuning: grid must be a non-empty dict of parameter -> list of values (or a "
                f"list of such dicts); got {one!r}"
            )
        for name, values in one.items():
            if not isinstance(name, str) or isinstance(values, (str, bytes)) or not hasattr(values, "__len__") \
                    or len(values) == 0:
                raise ParameterError(
                    f"SelfTuning: grid[{name!r}] must be a non-empty list of values; got {values!r}"
                )
    # counted from the axes' lengths before any candidate is built: a grid of 8,000,000 is
    # refused at once, not after building it
    count = sum(math.prod(len(values) for values in one.values()) for one in grids)
    if count > MAX_CANDIDATES:
        raise ParameterError(
            f"SelfTuning: the grid has {count} candidates, more than {MAX_CANDIDATES}; every "
            "candidate is trained over the whole stream, so keep the grid small"
        )
    for one in grids:
        names = list(one)
        out.extend(dict(zip(names, combo)) for combo in itertools.product(*(list(one[n]) for n in names)))
    return out


def epoch_orders(n: int, n_epochs: int, shuffle: bool, random_state) -> Iterator[np.ndarray]:
    """The visiting order of each epoch, exactly as the learners' ``fit`` draws them."""
    rng = np.random.RandomState(random_state)
    for _ in range(n_epochs):
        yield rng.permutation(n) if shuffle else np.arange(n)


def check_online_learner(learner, owner: str) -> dict:
    """``learner``'s parameters, after checking it is an (unfitted) online textcw-style learner."""
    if not (hasattr(learner, "partial_fit") and hasattr(learner, "get_params")):
        raise ParameterError(
            f"{owner}: learner must be an online learner with partial_fit and get_params (e.g. "
            f"textcw.make_learner('cw-stdev')); got {type(learner).__name__}"
        )
    params = learner.get_params(deep=False)
    missing = {"n_epochs", "shuffle", "random_state"} - set(params)
    if missing:
        raise ParameterError(
            f"{owner}: learner {type(learner).__name__} lacks the parameters {sorted(missing)} "
            "that say how fit visits the data; use one of textcw's online learners"
        )
    return params


def check_training_data(X, y, owner: str):
    """``X`` as canonical CSR, ``y`` as a label array and the sorted labels: checked once here
    and shared by every candidate."""
    if y is None:
        check_targets(y, 0, estimator=owner)
    X = check_features(X, estimator=owner)
    y = check_targets(y, X.shape[0], estimator=owner)
    return X, y, check_labels(y)


def learner_has(attribute):
    """For ``available_if``: the wrapped learner (``self.learner``) has ``attribute``."""
    return lambda self: hasattr(self.learner, attribute)


class SelfTuning(ClassifierMixin, BaseEstimator):
    """A learner whose hyperparameters are chosen by its candidates' online mistakes.

    Parameters
    ----------
    learner : online learner
        The learner to tune (e.g. ``textcw.make_learner("arow")``); its other parameters
        (``n_epochs``, ``shuffle``, ``random_state``, ...) are kept for every candidate.
    grid : dict, list of dicts or None, default None
        Candidate values, ``{"param": [v1, v2, ...]}`` (several parameters are crossed) or a
        list of such dicts. ``None``: the candidates the learner's class declares in
        ``tuning``, in the units of the first training data (module docstring).

    Fitted attributes
    -----------------
    candidates_ : list of dict
        The parameter values of each candidate, in grid order.
    estimators_ : list of learners
        One per candidate.
    online_mistakes_ : ndarray of int, shape (n_candidates,)
        Each candidate's online mistakes over the first pass of ``fit`` and every
        ``partial_fit`` call since, counted before each update (a tie counts as a mistake).
    online_error_ : ndarray of float
        ``online_mistakes_ / n_online_``.
    n_online_ : int
        Documents those mistakes were counted on.
    best_index_ : int
        The candidate with the fewest online mistakes (the first in grid order on a tie).
    best_params_ : dict
        Its values. ``best_estimator_`` is the candidate itself.
    scale_ : float or None
        The data scale ``q`` the default grid was built with (None with an explicit grid).
    classes_, n_features_in_
        As for the learner.
    """

    def __init__(self, learner, grid=None):
        self.learner = learner
        self.grid = grid

    # ----------------------------------------------------------------- fitting
    def fit(self, X, y):
        """Every candidate over the first pass, then the winner alone over the other passes."""
        params = check_online_learner(self.learner, "SelfTuning")
        X, y, labels = check_training_data(X, y, "SelfTuning")
        self._start(X, labels)
        for epoch, order in enumerate(epoch_orders(X.shape[0], params["n_epochs"], params["shuffle"],
                                                   params["random_state"])):
            Xe, ye = (X[order], y[order]) if params["shuffle"] else (X, y)
            if epoch == 0:
                self._update_all(Xe, ye, labels)
            else:
                self.best_estimator_.partial_fit(Xe, ye)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over ``(X, y)`` for every candidate; their online mistakes are added up and
        the best candidate chosen again. ``classes`` is required on the first call."""
        first = not hasattr(self, "estimators_")
        if first:
            check_online_learner(self.learner, "SelfTuning")
            if classes is None:
                raise InputError(
                    "the first partial_fit call needs classes=[...] listing every label the "
                    "stream will contain"
                )
            classes = check_labels(as_label_array(classes, "classes"), "classes")
        if y is None:
            check_targets(y, 0, estimator="SelfTuning")
        X = check_features(X, None if first else self.n_features_in_, estimator="SelfTuning")
        y = check_targets(y, X.shape[0], estimator="SelfTuning")
        if first:
            self._start(X, classes)
        self._update_all(X, y, classes)
        return self

    def _start(self, X, labels) -> None:
        if self.grid is None:
            self.candidates_ = default_grid(self.learner, X)
            params = self.learner.get_params(deep=False)
            self.scale_ = data_scale(X, bool(params.get("fit_intercept", False)))
        else:
            self.candidates_ = expand_grid(self.grid)
            self.scale_ = None
        valid = set(self.learner.get_params(deep=False))
        self.estimators_ = []
        for candidate in self.candidates_:
            unknown = sorted(set(candidate) - valid)
            if unknown:
                raise ParameterError(
                    f"SelfTuning: {type(self.learner).__name__} has no parameter {unknown[0]!r}; "
                    f"valid parameters: {', '.join(sorted(valid))}"
                )
            estimator = clone(self.learner).set_params(**candidate)
            if hasattr(estimator, "validate_params"):
                estimator.validate_params()  # a bad grid value fails now, naming the value
            self.estimators_.append(estimator)
        self.classes_ = labels
        self.n_features_in_ = X.shape[1]
        self.online_mistakes_ = np.zeros(len(self.candidates_), dtype=np.int64)
        self.n_online_ = 0

    def _update_all(self, X, y, classes) -> None:
        for i, estimator in enumerate(self.estimators_):
            estimator.partial_fit(X, y, classes=classes)
            self.online_mistakes_[i] += estimator.mistakes_[-1]
        self.n_online_ += X.shape[0]
        self.best_index_ = int(np.argmin(self.online_mistakes_))  # first on a tie

    # ----------------------------------------------------------------- the chosen candidate
    @property
    def online_error_(self) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        return self.online_mistakes_ / max(self.n_online_, 1)

    @property
    def best_params_(self) -> dict:
        check_is_fitted(self, "estimators_")
        return dict(self.candidates_[self.best_index_])

    @property
    def best_estimator_(self):
        check_is_fitted(self, "estimators_")
        return self.estimators_[self.best_index_]

    def decision_function(self, X):
        return self.best_estimator_.decision_function(X)

    def predict(self, X):
        return self.best_estimator_.predict(X)

    @available_if(learner_has("predict_proba"))
    def predict_proba(self, X):
        return self.best_estimator_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
