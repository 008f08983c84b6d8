"""Combining models trained on disjoint shards (JMLR 2012 section 7.10; ICML 2008 section 5.3).

Each shard model of a Gaussian learner is a distribution ``N(mu_c, Sigma_c)`` over weights. The
papers combine them by the Gaussian closest to all of them, ``min sum_c D((mu, Sigma) || (mu_c,
Sigma_c))``:

- ``uniform`` (``D`` Euclidean, "L2"): ``mu = mean_c mu_c``, ``Sigma = mean_c Sigma_c``; for
  first-order learners (perceptron, PA, averaged perceptron, SGD) this is parameter averaging
  (McDonald et al. 2010);
- ``kl`` (``D`` the KL divergence): ``Sigma^{-1} = sum_c Sigma_c^{-1}`` and
  ``mu = Sigma sum_c Sigma_c^{-1} mu_c`` (JMLR 2012, the equation after Figure 6), so each weight
  follows the shards that are confident about it, e.g. the shards that saw its feature.

The precision is the papers' *sum* (docs/algorithms.md "Shard combination";
``precision="sum"``, the default). Minimising
the KL divergence itself gives the *mean* of the precisions (``precision="mean"``). With
``P = Sigma^{-1}``, ``P_c = Sigma_c^{-1}`` and ``d`` weights,

    (1/n) sum_c KL(N(mu, Sigma) || N(mu_c, Sigma_c))
        = (1/2n) sum_c [tr(P_c Sigma) + (mu - mu_c)' P_c (mu - mu_c) - d + ln |Sigma_c| - ln |Sigma|].

Its gradient in ``Sigma`` is ``(1/2n) sum_c (P_c - P)`` (using ``d ln|Sigma| / d Sigma = P``),
zero at ``P = (1/n) sum_c P_c``; its gradient in ``mu`` is ``(1/n) sum_c P_c (mu - mu_c)``, zero at
``mu = (sum_c P_c)^{-1} sum_c P_c mu_c``, which the factor ``1/n`` does not change. So the two
variants have the same mean ``mu``, hence the same predictions, and differ by the factor ``n`` on
the precision: a weight's combined variance is the harmonic mean of the shards' variances
(``mean``) or ``1/n`` of it (``sum``). The sum is the product of the shard posteriors, as if each
shard's posterior were independent evidence about the same weights; shards trained from the same
prior ``a I`` each count the prior, and each has shrunk its variances on its own data, so with
``n`` shards the summed model is about ``n`` times over-confident: ``predict_proba`` is sharper
and a model that continues with ``partial_fit`` takes steps ``n`` times too small. ``mean`` keeps
the variances on the scale of one model.

A diagonal covariance (the variances ``s``, shape of ``mu``) is combined per weight. A full
covariance, which the learners keep as the upper Cholesky factor ``R`` of the precision
(``Sigma^{-1} = R' R``; one ``(d, d)`` block per label in multi-class problems), is combined per
block: ``kl`` adds the precisions ``R_c' R_c``, ``uniform`` averages the covariances; the result
is factored again.
Combining is exact up to rounding in any order, and combining a single model returns it as is.
:class:`Combiner` folds models in one at a time, so ``n`` shard models never need to be in memory
together.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import numpy as np
import scipy.linalg
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from textcw.errors import InputError, ParameterError, UnknownNameError
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import GaussianLinearClassifier, covariance_from_factor

METHODS = ("kl", "uniform")
PRECISIONS = ("sum", "mean")  # how ``kl`` combines the precisions (module docstring)
# Parameters shard models may differ in: each shard is seeded on its own.
FREE_PARAMS = ("random_state",)
DIAG, FULL, FIRST_ORDER = "diag", "full", "first-order"
# Uniform combination of first-order state follows each learner's ``state_combine``
# (textcw.learners.protocol.COMBINE_RULES): weights are averaged (parameter averaging); example
# counters (SGD's and the averaged perceptron's, which drive the learning-rate schedule and the
# running average) add up, since the combined model has seen every shard's examples; "derived"
# arrays are recomputed by the learner's own ``derive_combined_state``.
_FIRST_ORDER_RULES = ("mean", "sum", "derived")


def combine(models: Iterable, method: str = "kl", *, precision: str = "sum"):
    """Combine fitted models of one learner into one model.

    Parameters
    ----------
    models : iterable of fitted learners or of fitted ``Pipeline(featurizer, learner)``
        Models of the same learner with the same parameters (``random_state`` aside), over the
        same feature space (same featurizer, same fitted vocabulary) and the same labels.
    method : {"kl", "uniform"}
        ``kl``: precision-weighted (Gaussian learners only); ``uniform``: plain averages.
    precision : {"sum", "mean"}, default "sum"
        For ``kl`` only: the combined precision is the sum of the shards' precisions (the
        papers' formula) or their mean (the minimiser of the KL divergence; variances on the
        scale of one model). The combined mean is the same for both (module docstring).

    Returns
    -------
    The combined learner, or a ``Pipeline`` with the shared featurizer if pipelines were given.
    A single model is returned unchanged (the same object).

    Raises
    ------
    textcw.errors.InputError
        Models of different learners, parameters, feature spaces or label sets, or unfitted.
    textcw.errors.ParameterError
        ``kl`` for a learner without a covariance; ``precision`` not ``"sum"`` or ``"mean"``, or
        ``"mean"`` with ``uniform``.
    """
    combiner = Combiner(method, precision=precision)
    for model in models:
        combiner.add(model)
    return combiner.result()


def check_combinable(learner, method: str) -> None:
    """Raise the error :func:`combine` would raise for models of ``learner`` (fitted or not).

    Shard training calls this before training, so an impossible combination fails at once.
    """
    if method not in METHODS:
        raise UnknownNameError("combination method", method, METHODS)
    if not isinstance(learner, OnlineLinearClassifier):
        raise InputError(
            f"cannot combine {type(learner).__name__} models: only textcw online learners can be "
            "trained on shards and combined"
        )
    _layout(learner, method)


def check_precision(method: str, precision) -> None:
    """Refuse a ``precision`` other than ``"sum"``/``"mean"``, or ``"mean"`` without ``kl``."""
    if precision not in PRECISIONS:
        raise ParameterError(
            f"precision must be one of {', '.join(map(repr, PRECISIONS))} (how method='kl' "
            f"combines the shards' precisions); got {precision!r}"
        )
    if precision == "mean" and method != "kl":
        raise ParameterError(
            f"precision='mean' applies to method='kl' only (method={method!r} averages the "
            "covariances); use method='kl' or leave precision='sum'"
        )


class Combiner:
    """Running sums of a combination: ``add`` models one by one, then ``result()``.

    Memory is a few arrays the size of one model's state, however many models are added. Sums
    run in the order of ``add``; a different order changes the result only by rounding.
    """

    def __init__(self, method: str = "kl", *, precision: str = "sum"):
        if method not in METHODS:
            raise UnknownNameError("combination method", method, METHODS)
        check_precision(method, precision)
        self.method = method
        self.precision = precision
        self.n_models = 0
        self._ref = None  # the first model, as given (learner or pipeline)
        self._learner = None
        self._steps = None  # the featurizer steps when pipelines are combined
        self._layout = None
        self._sums: dict[str, np.ndarray] = {}
        self._mistakes: list[int] | None = []
        self._updates: list[int] | None = []
        self._total_mistakes = 0
        self._total_updates = 0
        self._seeds: set = set()

    # ------------------------------------------------------------------ public
    def add(self, model) -> None:
        """Fold ``model`` in, after checking it matches the models already added."""
        where = f"model {self.n_models}"
        learner, steps = _split(model, where)
        state = fitted_state(learner, where)
        if self._ref is None:
            self._layout = _layout(learner, self.method)
            self._ref, self._learner, self._steps = model, learner, steps
        else:
            self._check_matches(learner, steps, state, where)
        self._accumulate(state)
        self._count(learner)
        self.n_models += 1

    def result(self):
        """The combined model (see :func:`combine`)."""
        if self.n_models == 0:
            raise InputError("combine needs at least one model; got none")
        if self.n_models == 1:
            return self._ref
        ref = self._learner
        seeds = self._seeds
        combined = clone(ref).set_params(random_state=next(iter(seeds)) if len(seeds) == 1 else None)
        # combined in doubles, stored in the learners' own type (float32 for dtype="float32")
        arrays = {name: np.asarray(array, dtype=combined.state_dtype(name))
                  for name, array in self._combined_state().items()}
        combined.load_state_dict({
            "classes": ref.classes_, "n_features_in": ref.n_features_in_, "arrays": arrays,
            "mistakes": self._mistakes if self._mistakes is not None else [self._total_mistakes],
            "n_updates": self._updates if self._updates is not None else [self._total_updates],
        })
        if self._steps is None:
            return combined
        pipeline = Pipeline(copy.deepcopy(self._ref.steps[:-1]) + [(self._ref.steps[-1][0], combined)])
        components = copy.deepcopy(getattr(self._ref, "textcw_components_", None))
        if components is not None:
            learner_info = components.get("learner")
            if isinstance(learner_info, dict):
                learner_info["params"] = combined.get_params(deep=False)
            components["combination"] = {"method": self.method, "n_models": self.n_models}
            if self.precision != "sum":  # (the default is left out: older records stay equal)
                components["combination"]["precision"] = self.precision
            pipeline.textcw_components_ = components
        return pipeline

    # ------------------------------------------------------------------ checks
    def _check_matches(self, learner, steps, state, where: str) -> None:
        ref = self._learner
        if type(learner) is not type(ref):
            raise InputError(
                f"cannot combine models of different learners: model 0 is a {type(ref).__name__}, "
                f"{where} is a {type(learner).__name__}"
            )
        mine, theirs = ref.get_params(deep=False), learner.get_params(deep=False)
        for name in mine:
            if name not in FREE_PARAMS and not _same(mine[name], theirs.get(name)):
                raise InputError(
                    f"cannot combine models trained with different parameters: model 0 has "
                    f"{name}={mine[name]!r}, {where} has {name}={theirs.get(name)!r}; only "
                    f"{', '.join(FREE_PARAMS)} may differ"
                )
        if not np.array_equal(ref.classes_, learner.classes_) or ref.classes_.dtype.kind != learner.classes_.dtype.kind:
            raise InputError(
                f"cannot combine models with different label sets: model 0 has "
                f"{ref.classes_.tolist()}, {where} has {learner.classes_.tolist()}"
            )
        if ref.n_features_in_ != learner.n_features_in_:
            raise InputError(
                f"cannot combine models over different feature spaces: model 0 has "
                f"{ref.n_features_in_} features, {where} has {learner.n_features_in_}"
            )
        if (self._steps is None) != (steps is None):
            raise InputError(
                f"cannot combine a bare learner with a pipeline: give all models as pipelines or "
                f"all as learners ({where} differs from model 0)"
            )
        if steps is not None:
            same = len(self._steps) == len(steps) and all(
                name_a == name_b and _same(a, b) for (name_a, a), (name_b, b) in zip(self._steps, steps)
            )
            if not same:
                raise InputError(
                    f"cannot combine models over different feature spaces: the featurizer of "
                    f"{where} differs from model 0's (another featurizer, other parameters or "
                    "another fitted vocabulary); shard models must share one fitted featurizer"
                )
        ref_state = fitted_state(ref)
        for name in state_names(ref):
            if state[name].shape != ref_state[name].shape:
                raise InputError(
                    f"cannot combine models with different state shapes: {name} is "
                    f"{ref_state[name].shape} in model 0 and {state[name].shape} in {where}"
                )

    # ------------------------------------------------------------------ arithmetic
    def _accumulate(self, state) -> None:
        form, mu = self._layout, state["mu"]
        if form == FIRST_ORDER:
            rules = combine_rules(self._learner)
            for name, value in state.items():
                if rules[name] != "derived":
                    self._add(name, value)
        elif form == DIAG and self.method == "uniform":
            self._add("mu", mu)
            self._add("s", state["s"])
        elif form == DIAG:
            precision = 1.0 / state["s"]
            self._add("precision", precision)
            self._add("eta", precision * mu)
        elif self.method == "uniform":
            self._add("mu", mu)
            for k, R in enumerate(_factors(state["R"])):
                self._add(("sigma", k), covariance_from_factor(R))
        else:
            for k, R in enumerate(_factors(state["R"])):
                precision = R.T @ R
                self._add(("precision", k), precision)
                self._add(("eta", k), precision @ _column(mu, k))

    def _combined_state(self) -> dict[str, np.ndarray]:
        n, form, sums = self.n_models, self._layout, self._sums
        if form == FIRST_ORDER:
            state = {}
            rules = combine_rules(self._learner)
            for name in state_names(self._learner):
                if rules[name] == "mean":
                    state[name] = sums[name] / n
                elif rules[name] == "sum":
                    state[name] = sums[name].copy()
            if "derived" in rules.values():
                state = self._learner.derive_combined_state(state)
            return state
        if form == DIAG and self.method == "uniform":
            return {"mu": sums["mu"] / n, "s": sums["s"] / n}
        if form == DIAG:
            variance = 1.0 / sums["precision"]
            mu = sums["eta"] * variance  # the same for both precisions (module docstring)
            return {"mu": mu, "s": variance * n if self.precision == "mean" else variance}
        ref = fitted_state(self._learner)
        mu = sums["mu"] / n if self.method == "uniform" else np.empty_like(ref["mu"])
        R = np.empty_like(ref["R"])
        for k, block in enumerate(_factors(R)):
            if self.method == "uniform":
                precision = np.linalg.inv(sums[("sigma", k)] / n)
            else:
                precision = sums[("precision", k)]
            # Exact symmetry (rounding breaks it) before the factorisation.
            block[...] = scipy.linalg.cholesky(0.5 * (precision + precision.T), lower=False)
            if self.method == "kl":
                mean = scipy.linalg.cho_solve((block, False), sums[("eta", k)])
                if mu.ndim == 1:
                    mu[:] = mean
                else:
                    mu[:, k] = mean
                if self.precision == "mean":  # R' R / n: the factor of the mean precision
                    block /= np.sqrt(n)
        return {"mu": mu, "R": R}

    def _add(self, key, value: np.ndarray) -> None:
        if key in self._sums:
            self._sums[key] += value
        else:
            self._sums[key] = np.array(value, dtype=np.float64, copy=True)

    def _count(self, learner) -> None:
        mistakes = list(getattr(learner, "mistakes_", []))
        updates = list(getattr(learner, "n_updates_", []))
        self._total_mistakes += sum(mistakes)
        self._total_updates += sum(updates)
        self._seeds.add(learner.get_params(deep=False).get("random_state"))
        # Per-epoch counts add up across shards when every model ran the same epochs; otherwise
        # (e.g. streams of different lengths) only the totals are meaningful.
        if self.n_models == 0:
            self._mistakes, self._updates = mistakes, updates
        elif self._mistakes is not None and len(mistakes) == len(self._mistakes) and len(updates) == len(self._updates):
            self._mistakes = [a + b for a, b in zip(self._mistakes, mistakes)]
            self._updates = [a + b for a, b in zip(self._updates, updates)]
        else:
            self._mistakes = self._updates = None


# ---------------------------------------------------------------------- helpers
def _split(model, where: str):
    """``(learner, featurizer steps or None)``."""
    if isinstance(model, Pipeline):
        if len(model.steps) < 2:
            raise InputError(f"{where} is a pipeline with no featurizer step; give the learner itself")
        return model.steps[-1][1], list(model.steps[:-1])
    return model, None


def fitted_state(model, where: str = "model") -> dict[str, np.ndarray]:
    """The state arrays of a fitted online learner, by name (not copies: do not modify)."""
    if not isinstance(model, OnlineLinearClassifier):
        raise InputError(
            f"{where} is a {type(model).__name__}; only textcw online learners (subclasses of "
            "OnlineLinearClassifier) or pipelines ending in one can be combined"
        )
    try:
        return model.state_dict()["arrays"]
    except AttributeError:  # not fitted (scikit-learn's convention for missing fitted state)
        raise InputError(f"{where} ({type(model).__name__}) is not fitted; fit it before combining") from None


def state_names(model) -> tuple[str, ...]:
    """The names of a learner's state arrays, fitted or not (they follow from its parameters)."""
    return tuple(model.state_names)


def combine_rules(learner) -> dict[str, str | None]:
    """What the learner's ``state_combine`` says of each of its state arrays (None: nothing)."""
    declared = getattr(learner, "state_combine", {})
    return {name: declared.get(name) for name in state_names(learner)}


def _layout(learner, method: str) -> str:
    """How ``learner``'s state is combined: :data:`DIAG`, :data:`FULL` or :data:`FIRST_ORDER`.

    The state forms are those of :mod:`textcw.learners.gaussian`: ``("mu", "s")`` keeps the
    variances (the diagonal of ``Sigma``, shape of ``mu``); ``("mu", "R")`` keeps the upper
    Cholesky factor of the precision, ``Sigma^{-1} = R' R``, shape ``(d, d)`` or ``(K, d, d)``.
    """
    names = tuple(state_names(learner))
    kind = type(learner).__name__
    rules = combine_rules(learner)
    if isinstance(learner, GaussianLinearClassifier) and set(rules.values()) == {"gaussian"}:
        if names == ("mu", "s"):
            return DIAG
        if names == ("mu", "R"):
            return FULL
        raise InputError(
            f"cannot combine {kind}: its state {list(names)} is none of the Gaussian forms "
            "(mu, s) or (mu, R) that combination knows"
        )
    unknown = [name for name, rule in rules.items() if rule not in _FIRST_ORDER_RULES]
    if "mu" not in names or unknown:
        raise InputError(
            f"cannot combine {kind}: combination is defined for Gaussian (confidence-weighted) "
            f"learners and first-order learners, and {kind} keeps other state "
            f"({', '.join(unknown)}) that its state_combine does not declare as averaged, summed "
            "or derived"
        )
    if method == "kl" and getattr(learner, "average", False) and isinstance(learner, GaussianLinearClassifier):
        raise ParameterError(
            f"method='kl' weights each model by its covariance, but an averaged {kind} "
            "(average=True) predicts with the average of its means, which is not the mean of its "
            "Gaussian; use method='uniform' (on the command line: --combine uniform), or train "
            "with average=False to combine by KL"
        )
    if method == "kl":
        raise ParameterError(
            f"method='kl' weights each model by its covariance and {kind} keeps none; use "
            "method='uniform' (parameter averaging; on the command line: --combine uniform)"
        )
    return FIRST_ORDER


def _factors(R: np.ndarray) -> list[np.ndarray]:
    """Views of the ``(d, d)`` precision factors: one for binary, one per label otherwise."""
    return [R] if R.ndim == 2 else [R[k] for k in range(R.shape[0])]


def _column(mu: np.ndarray, k: int) -> np.ndarray:
    return mu if mu.ndim == 1 else mu[:, k]


def _same(a, b) -> bool:
    """Deep equality over parameters and fitted attributes (arrays, dicts, estimators)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "get_params") and hasattr(a, "__dict__"):
        return _same(vars(a), vars(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
