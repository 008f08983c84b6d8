"""The shared base of learners that keep a Gaussian over weights, ``w ~ N(mu, Sigma)``.

CW var and stdev, AROW and SCW differ only in how one example's margin ``m`` and margin variance
``v`` set the step sizes (:mod:`textcw.learners._kernels.gaussian_rules`); the state, the
covariance forms and the label probabilities are common and live here.

Covariance forms (``covariance=``):

- ``"diag-kl"``: one variance per feature; the precision update is diagonalised ("project",
  ICML 2008): ``1/s_j += c x_j^2``.
- ``"diag-l2"``: one variance per feature; the covariance update is diagonalised ("drop"):
  ``s_j -= beta (s_j x_j)^2``.
- ``"exact"`` (CW only): the constraint is solved exactly over diagonal covariances
  (JMLR 2012, section 6.2).
- ``"full"``: the full ``d x d`` matrix (one per label in multi-class problems), kept as the
  Cholesky factor of its inverse. For small ``d`` only: a ``d`` whose matrices would not fit in
  memory is refused with an error suggesting a diagonal form.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.special import ndtr, ndtri

from textcw.errors import ParameterError, VarianceFloorWarning
from textcw.learners import multiclass as mc
from textcw.learners._kernels import (
    gaussian_diag,
    gaussian_diag_kbest,
    gaussian_exact,
    gaussian_exact_kbest,
    gaussian_full,
    gaussian_full_kbest,
)
from textcw.learners._kernels.constants import (
    COUNT_FLOORED,
    COUNT_SOLVER_FALLBACKS,
    COUNT_SOLVER_UNCERTIFIED,
    DIAG_KL,
    DIAG_L2,
    MC_EXACT,
    MC_TOP1,
    N_COUNTS,
    VARIANCE_FLOOR,
)
from textcw.learners.base import OnlineLinearClassifier, memory_budget
from textcw.learners.params import SCALE, Interval, Options
from textcw.learners.probability import (
    binary_probability_sampling,
    label_probabilities_quadrature,
    label_probabilities_sampling,
)

DIAGONAL_CODES = {"diag-kl": DIAG_KL, "diag-l2": DIAG_L2}
PROBA = Options(("quadrature", "sampling"))
_CHUNK = 4096
# VarianceFloorWarning when more than this fraction of an epoch's updates were floored, and at
# least this many (a handful of floored updates on a toy problem says nothing about the model).
FLOORED_WARNING_FRACTION = 0.1
FLOORED_WARNING_MIN = 10


# The full-covariance matrices may take the memory any learner state may take (a module-level
# name, so that tests can shrink it).
full_matrix_budget = memory_budget


def check_full_fits(learner, n_rows: int, n_blocks: int, diagonal: str) -> None:
    """Refuse ``covariance="full"`` when ``n_blocks`` matrices of ``n_rows^2`` floats do not fit."""
    need = n_blocks * n_rows * n_rows * 8
    budget = full_matrix_budget()
    if need > budget:
        what = (f"a {n_rows} x {n_rows} matrix" if n_blocks == 1
                else f"{n_blocks} matrices of {n_rows} x {n_rows}, one per label,")
        raise ParameterError(
            f"{type(learner).__name__}: covariance='full' needs {what} ({need / 1e9:.1f} GB), more "
            f"than the {budget / 1e9:.1f} GB available (half of this machine's memory); use "
            f"covariance={diagonal!r}, which keeps one value per feature, or reduce the number of "
            "features"
        )


def with_intercept_column(X, fit_intercept: bool):
    return sp.hstack([X, np.ones((X.shape[0], 1))], format="csr") if fit_intercept else X


def quadratic_forms(X, R) -> np.ndarray:
    """``x' (R' R)^{-1} x = ||R^{-T} x||^2`` for every row of ``X`` (``R`` upper triangular)."""
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start:start + _CHUNK]
        dense = block.toarray().T if sp.issparse(block) else np.asarray(block).T
        z = scipy.linalg.solve_triangular(R, dense, trans="T", lower=False, check_finite=False)
        out[start:start + _CHUNK] = np.einsum("ij,ij->j", z, z)
    return out


# Floats of R^{-1} that variances_from_factor holds at a time (two blocks of this size: 64 MB).
_BLOCK_FLOATS = 1 << 22


def variances_from_factor(R) -> np.ndarray:
    """``diag((R' R)^{-1})`` without forming the matrix, in ``O(d)`` extra memory per column block.

    ``Sigma = R^{-1} R^{-T}``, so ``Sigma_ii`` is the squared norm of row ``i`` of ``R^{-1}``.
    Column ``j`` of the upper-triangular ``R^{-1}`` solves ``R z = e_j`` and is zero below row
    ``j``, so a block of columns ``[start, stop)`` needs only ``R[:stop, :stop]``; the squares are
    summed block by block. The working memory is two blocks of at most ``_BLOCK_FLOATS`` floats,
    whatever ``d``: reading the variances never needs the ``d x d`` matrices that
    :func:`covariance_from_factor` builds.
    """
    d = R.shape[0]
    out = np.zeros(d)
    width = max(1, min(d, _BLOCK_FLOATS // max(d, 1)))
    # LAPACK reads Fortran order: R's transpose is R's own memory in that order, whereas a
    # C-ordered R (or a slice of it) would be copied whole. Solving R' with trans="T" is R z = e.
    Rt = R.T if R.flags.c_contiguous else np.asfortranarray(R.T)
    for start in range(0, d, width):
        stop = min(d, start + width)
        unit = np.zeros((d, stop - start), order="F")
        unit[np.arange(start, stop), np.arange(stop - start)] = 1.0
        Z = scipy.linalg.solve_triangular(Rt, unit, trans="T", lower=True, check_finite=False,
                                          overwrite_b=True)
        out[:stop] += np.einsum("ij,ij->i", Z[:stop], Z[:stop])
    return out


def covariance_from_factor(R) -> np.ndarray:
    """``Sigma = (R' R)^{-1}``, symmetrised (it is symmetric in exact arithmetic).

    Needs three ``d x d`` temporaries besides ``R``: see :meth:`GaussianLinearClassifier.covariance_`
    for the memory check."""
    inv = scipy.linalg.solve_triangular(R, np.eye(R.shape[0]), lower=False, check_finite=False)
    sigma = inv @ inv.T
    return (sigma + sigma.T) / 2.0


class GaussianLinearClassifier(OnlineLinearClassifier):
    """Mean ``mu`` and covariance ``Sigma`` (``Sigma_1 = a I``), updated by a kernel rule.

    Subclasses set ``_rule`` (or override :meth:`_rule_code`), ``_covariances`` and
    :meth:`_rule_args` (``phi``, ``C``, ``r``). Those with the ``multiclass`` and ``k``
    parameters (:mod:`textcw.learners.multiclass`) get the k-competitor kernels in multi-class
    problems; the others use the top-1 update.

    Fitted attributes, beyond those of :class:`OnlineLinearClassifier`:

    sigma_ : ndarray, same shape as ``coef_``
        The variance of every weight: the diagonal of ``Sigma`` (of each label's block), for
        every covariance form. For ``covariance="full"`` it is computed from the Cholesky factor
        column block by column block, in memory proportional to ``n_features``, never forming
        the matrix (the intercept's variance, with ``fit_intercept``, is not included).
    covariance_ : ndarray of shape (n_features, n_features), or (n_classes, ...) per label
        Only for ``covariance="full"``: the covariance matrix itself (with ``fit_intercept``,
        the intercept is the last row and column). Forming it takes the matrices plus three
        temporaries of the same size; when that is more memory than a learner may use, reading
        it is an error that points to ``sigma_`` and :meth:`margin_variance`.
    n_variance_floored_ : list of int
        Per epoch (or ``partial_fit`` call), the updates after which a variance they changed sat
        at the floor ``a * 1e-12`` that keeps variances positive (:mod:`.gaussian_diag`), for the
        diagonal forms ``diag-kl`` and ``diag-l2``; always 0 for ``exact`` and ``full``, which
        guard differently. A floored variance no longer follows the papers' update, so the model
        stops depending on ``eta`` there; when more than a tenth of an epoch's updates were
        floored, :meth:`fit` (or the first such :meth:`partial_fit` call) issues one
        :class:`textcw.errors.VarianceFloorWarning`. On dense, low-dimensional data CW-stdev at
        ``eta >= 0.9`` reaches the floor; a lower ``eta`` avoids it (docs/learners.md).
    n_solver_fallbacks_ : list of int
        Per epoch, the examples whose joint multi-class problem (``multiclass="exact"``, CW)
        Hildreth's sweeps did not solve to the KKT conditions, so that the accelerated solver
        of :func:`textcw.learners._kernels.hildreth.cw_solve` took over (it certifies the KKT
        conditions to 1e-9). Always 0 for the other updates. Should even the fallback fail on
        an example, its best point is used and a ``RuntimeWarning`` names the count.
    mistakes_ : list of int
        As for every online learner; note that with ``shuffle=True`` (the default) ``fit``
        visits the documents in a new seeded random order in every epoch, so these count the
        mistakes of that shuffled pass, not of the papers' single online pass in the corpus
        order (use ``shuffle=False`` for that).

    The two counters are not kept in model files (they describe a training run).
    """

    _rule: int
    _covariances: tuple[str, ...] = ("diag-kl", "diag-l2", "full")
    _diagonal_suggestion = "diag-kl"
    _state_params = ("fit_intercept", "covariance")
    _positive_states = ("s",)  # checked when a state is loaded
    _factor_states = ("R",)
    _late_defaults = {"proba": "quadrature"}

    # ----------------------------------------------------------------- subclass interface
    def _rule_code(self) -> int:
        return self._rule

    def _rule_args(self) -> tuple[float, float, float]:
        """``(phi, C, r)``; a rule ignores those it does not use."""
        raise NotImplementedError

    # ----------------------------------------------------------------- kernels and state
    @property
    def _state_names(self):
        return ("mu", "R") if self.covariance == "full" else ("mu", "s")

    @property
    def _floor(self) -> float:
        return float(self.a) * VARIANCE_FLOOR

    def _strategy(self, binary: bool) -> int:
        """The multi-class update (a ``MC_*`` code); top-1 for binary problems and learners
        without the ``multiclass`` parameter."""
        if binary or not hasattr(self, "multiclass"):
            return MC_TOP1
        return mc.MULTICLASS_CODES[self.multiclass]

    def _kernel(self, binary):
        if self._strategy(binary) != MC_TOP1:
            module = {"full": gaussian_full_kbest, "exact": gaussian_exact_kbest}.get(
                self.covariance, gaussian_diag_kbest)
            return module.multiclass_epoch
        module = {"full": gaussian_full, "exact": gaussian_exact}.get(self.covariance, gaussian_diag)
        return module.binary_epoch if binary else module.multiclass_top1_epoch

    def _run_epoch(self, X, y, order, on_chunk=None) -> None:
        # The kernels add to ``counts`` (the last kernel argument, see _kernel_args): floored
        # updates and joint-solver fallbacks, reported per epoch like mistakes_.
        counts = np.zeros(N_COUNTS, np.int64)
        self.__dict__["_epoch_counts"] = counts
        try:
            super()._run_epoch(X, y, order, on_chunk)
        finally:
            self.__dict__.pop("_epoch_counts", None)
        if len(self.mistakes_) == 1 or not hasattr(self, "n_variance_floored_"):
            self.n_variance_floored_ = []  # a new fit (or a model loaded without the counters)
            self.n_solver_fallbacks_ = []
            self.__dict__["_warned"] = set()  # each warning once per fit (and its partial_fits)
        self.n_variance_floored_.append(int(counts[COUNT_FLOORED]))
        self.n_solver_fallbacks_.append(int(counts[COUNT_SOLVER_FALLBACKS]))
        self._warn_about_counts(counts)

    def _warn_about_counts(self, counts) -> None:
        updates = self.n_updates_[-1]
        floored = int(counts[COUNT_FLOORED])
        warned = self.__dict__.setdefault("_warned", set())
        if (floored >= FLOORED_WARNING_MIN and floored > FLOORED_WARNING_FRACTION * updates
                and "floor" not in warned):
            warned.add("floor")
            # The parameter that sets how fast variances shrink: eta for CW and SCW, r for AROW.
            knob = next((k for k in ("eta", "r") if k in self.get_params(deep=False)), None)
            advice = ("a lower eta (e.g. 0.7)" if knob == "eta" else "a larger r" if knob == "r"
                      else "fewer epochs")
            depends = f" and stops depending on {knob}={getattr(self, knob)!r}" if knob else ""
            warnings.warn(
                f"{type(self).__name__}: {floored:,} of {updates:,} updates in this pass left a "
                f"variance at its floor (a * {VARIANCE_FLOOR:g}); there the model no longer "
                f"follows the update rule{depends}. Typical of dense, low-dimensional data: try "
                f"{advice}, or check n_variance_floored_",
                VarianceFloorWarning, stacklevel=4,
            )
        failed = int(counts[COUNT_SOLVER_UNCERTIFIED])
        if failed and "solver" not in warned:
            warned.add("solver")
            warnings.warn(
                f"{type(self).__name__}: the joint multi-class solver (multiclass='exact') did not "
                f"reach the KKT conditions on {failed:,} example(s) in this pass, even after its "
                "fallback; their updates are approximate. multiclass='seq' avoids the joint solve",
                RuntimeWarning, stacklevel=4,
            )

    def _kernel_args(self):
        phi, C, r = self._rule_args()
        strategy = self._strategy(self._binary)
        kbest = () if strategy == MC_TOP1 else (strategy, mc.competitors(self, len(self.classes_)))
        counts = self.__dict__.get("_epoch_counts")
        # the counting kernels take an optional counts array last (see _run_epoch)
        if self.covariance == "full":
            extra = (counts,) if counts is not None and strategy == MC_EXACT else ()
            return (self._rule_code(), *kbest, phi, C, r, self._floor, *extra)
        if self.covariance == "exact":
            return (self._rule_code(), *kbest, phi, self._floor)
        extra = () if counts is None else (counts,)
        return (self._rule_code(), DIAGONAL_CODES[self.covariance], *kbest, phi, C, r, self._floor,
                *extra)

    def _check_classes(self, n_classes):
        if hasattr(self, "multiclass"):
            mc.competitors(self, n_classes)

    def validate_params(self) -> None:
        super().validate_params()
        if not hasattr(self, "multiclass"):
            return
        mc.check_strategy(self)
        if self.multiclass == "exact" and self.covariance == "exact":
            raise ParameterError(
                f"{type(self).__name__}: multiclass='exact' with covariance='exact' is not "
                "supported: covariance='exact' already finds each constraint's step by root "
                "finding over diagonal covariances, and solving k such constraints jointly "
                "couples them through the true label's variances into a k-dimensional nonlinear "
                "system per example; use multiclass='seq' or 'par' with covariance='exact' (each "
                "constraint solved exactly in turn), or multiclass='exact' with covariance="
                "'diag-kl', 'diag-l2' or 'full'"
            )

    def _state_shapes(self, n_rows, n_labels):
        shape = self._weight_shape(n_rows, n_labels)
        if self.covariance != "full":
            return {"mu": shape, "s": shape}
        return {"mu": shape, "R": (n_rows, n_rows) if n_labels is None else (n_labels, n_rows, n_rows)}

    def _new_state(self, n_rows, n_labels):
        shape = self._weight_shape(n_rows, n_labels)
        mu = np.zeros(shape)
        if self.covariance != "full":
            return {"mu": mu, "s": np.full(shape, float(self.a))}
        blocks = 1 if n_labels is None else n_labels
        check_full_fits(self, n_rows, blocks, self._diagonal_suggestion)
        # Precision a^{-1} I, whose upper Cholesky factor is a^{-1/2} I.
        factor = np.eye(n_rows) / np.sqrt(float(self.a))
        R = factor if n_labels is None else np.repeat(factor[None], n_labels, axis=0)
        return {"mu": mu, "R": R}

    # ----------------------------------------------------------------- model views
    def _blocks(self):
        """The Cholesky factor of each label block's precision (full covariance only)."""
        R = self._fitted_state()["R"]
        return [R] if R.ndim == 2 else list(R)

    @property
    def sigma_(self) -> np.ndarray:
        state = self._fitted_state()
        if "s" in state:
            s = state["s"][: self.n_features_in_]
            return s.reshape(1, -1) if self._binary else s.T
        diag = np.stack([variances_from_factor(R) for R in self._blocks()])
        return diag[:, : self.n_features_in_]

    @property
    def covariance_(self) -> np.ndarray:
        state = self._fitted_state()
        if self.__dict__.get("_previewing"):
            raise AttributeError("covariance_ is formed on demand only")  # see _get_fitted_attr_html
        if "R" not in state:
            raise AttributeError(
                f"covariance_ exists only for covariance='full' (this model has "
                f"covariance={self.covariance!r}); the diagonal is sigma_"
            )
        blocks = self._blocks()
        d = blocks[0].shape[0]
        # the result, plus covariance_from_factor's three d x d temporaries for one block (and
        # for several blocks, the list np.stack copies from)
        need = 8 * d * d * (len(blocks) * (1 if self._binary else 2) + 3)
        budget = full_matrix_budget()
        if need > budget:
            raise ParameterError(
                f"{type(self).__name__}: forming covariance_ ({len(blocks)} matrix(es) of {d} x {d}) "
                f"needs {need / 1e9:.1f} GB, more than the {budget / 1e9:.1f} GB a learner may use "
                "(half of this machine's memory); read the variances from sigma_, or x' Sigma x "
                "from margin_variance(X), which need far less"
            )
        mats = [covariance_from_factor(R) for R in blocks]
        return mats[0] if self._binary else np.stack(mats)

    def margin_variance(self, X) -> np.ndarray:
        """``x' Sigma x`` for every row (binary: shape (n,); multi-class: (n, K) per label block)."""
        X = self._check_predict_input(X)
        state = self._fitted_state()
        if "s" in state:
            s = state["s"]
            var = np.asarray(X.multiply(X) @ s[: self.n_features_in_])
            if self.fit_intercept:
                var = var + s[self.n_features_in_]
            return var
        Xa = with_intercept_column(X, self.fit_intercept)
        var = np.column_stack([quadratic_forms(Xa, R) for R in self._blocks()])
        return var[:, 0] if self._binary else var

    def predict_proba(self, X):
        """Probability of each label under ``w ~ N(mu, Sigma)``.

        ``proba="quadrature"`` (exact to about 1e-10): binary,
        ``P(classes_[1] | x) = Phi(mu.x / sqrt(x' Sigma x))`` (docs/algorithms.md
        "Label probabilities"); multi-class, the label
        scores are independent Gaussians ``N(mu_k.x, x' Sigma_k x)`` and ``P(k wins)`` is a
        one-dimensional integral computed by composite Gauss-Legendre quadrature, with knots
        at every label's mean and at 2.5, 5 and 8.5 standard deviations either side of it
        (:func:`textcw.learners.probability.label_probabilities_quadrature`).
        ``proba="sampling"``: the papers' Monte Carlo estimate (EMNLP 2009 section 7), the
        fraction of 2,000 seeded draws of the scores that each label wins, seeded with
        ``random_state`` (0 when ``None``; 0 by default) so that it is a deterministic function of
        the model.
        Rows sum to 1.
        """
        scores = self.decision_function(X)
        var = self.margin_variance(X)
        if getattr(self, "proba", "quadrature") == "sampling":
            if self._binary:
                p = binary_probability_sampling(scores, var, self.random_state)
                return np.column_stack([1.0 - p, p])
            return label_probabilities_sampling(scores, var, self.random_state)
        if self._binary:
            with np.errstate(divide="ignore", invalid="ignore"):
                z = scores / np.sqrt(var)
                z = np.where(var > 0, z, np.sign(scores) * np.inf)  # no uncertainty left: a step
            p = np.where(scores == 0, 0.5, ndtr(z))
            return np.column_stack([1.0 - p, p])
        return label_probabilities_quadrature(scores, var)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class ConfidenceWeighted(GaussianLinearClassifier):
    __doc__ = """Common parameters of the two CW variants.

    Parameters
    ----------
    eta : float in (0.5, 1)
        The confidence: after an update the example is classified correctly with probability
        at least ``eta`` under ``N(mu, Sigma)``; ``phi = Phi^{-1}(eta)``.
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "exact", "full"}, default "diag-kl"
        ``diag-kl`` diagonalises the precision update (KL projection, "Project" in ICML 2008),
        ``diag-l2`` drops the off-diagonal part of the covariance update ("Drop"), ``exact``
        solves the constraint exactly over diagonal covariances (JMLR 2012, section 6.2) and
        ``full`` keeps the whole matrix (small ``d`` only). In multi-class problems each label
        has its own block. ``exact`` cannot be combined with ``multiclass="exact"``.
""" + mc.PARAMETER_DOC + """\
    proba : {"quadrature", "sampling"}, default "quadrature"
        How :meth:`predict_proba` computes label probabilities: exactly (closed form or
        quadrature) or by the papers' seeded sampling estimate.
    n_epochs : int, default 5
        Passes over the training data.
    shuffle, random_state, fit_intercept
        As for every online learner; ``random_state`` also seeds ``proba="sampling"``.

    The default ``eta`` differs by variant because the constraints scale differently (``m >= phi v``
    against ``m >= phi sqrt(v)``); both defaults were chosen on the 20 Newsgroups training split.
    """

    _covariances = ("diag-kl", "diag-l2", "exact", "full")
    _constraints = {
        **OnlineLinearClassifier._constraints,
        # Any double in (0.5, 1) gives phi = Phi^{-1}(eta) in (2.8e-16, 8.3], a usable confidence.
        "eta": Interval(0.5, 1.0, closed="neither"),
        "a": SCALE,
        "covariance": Options(_covariances),
        **mc.CONSTRAINTS,
        "proba": PROBA,
    }
    _late_defaults = {**mc.DEFAULTS, "proba": "quadrature"}

    def __init__(self, *, eta, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False):
        self.eta = eta
        self.a = a
        self.covariance = covariance
        self.multiclass = multiclass
        self.k = k
        self.proba = proba
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    @property
    def phi(self) -> float:
        """``Phi^{-1}(eta)``, the confidence in standard deviations."""
        return float(ndtri(self.eta))

    def _rule_args(self):
        return (self.phi, 0.0, 0.0)
