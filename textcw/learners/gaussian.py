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

import numpy as np

from textcw.errors import ParameterError
from textcw.learners import multiclass as mc
from textcw.learners._kernels.constants import (
    AROW_HINGE,
    AROW_SQUARED_HINGE,
    COUNT_FLOORED,
    COUNT_SOLVER_FALLBACKS,
    GAUSSIAN_RULE_PARAMETERS,
    GAUSSIAN_STEP_PARAMETERS,
    MC_EXACT,
    MC_TOP1,
    N_COUNTS,
    SCW1,
    SCW2,
    VARIANCE_FLOOR,
)
from textcw.learners._kernels.diagonal_loop import DiagonalKernels
from textcw.learners.averaging import AVERAGE_COMBINE, AveragedMean
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.covariance import FORMS
from textcw.learners.gaussian_views import GaussianViews
from textcw.learners.interleaved import PairedState
from textcw.learners.linalg import covariance_from_factor  # noqa: F401  (the old import path)
from textcw.learners.params import SCALE, Options
from textcw.learners.protocol import bind_kernel
from textcw.learners.run_warnings import warn_about_counts

PROBA = Options(("quadrature", "sampling"))
# The state's floating-point type (``dtype=``): 64-bit by default; 32-bit halves the memory of the
# means and variances, and what an epoch reads and writes, for hashing spaces of 2^24 and more.
DTYPE = Options(("float64", "float32"))
# With a 32-bit state, the initial variance ``a`` is kept where ``a`` and its variance floor
# ``a * VARIANCE_FLOOR`` are normal float32 numbers (about 1.2e-38 to 3.4e38) with room to spare
# for the updates, as SCALE does for doubles (textcw.learners.params).
FLOAT32_SCALE = (1e-20, 1e20)


# The rules whose objective has a loss term a weight can scale (docs/algorithms.md "Weighted
# examples"): AROW and SCW; CW's hard constraint has none.
WEIGHTED_RULES = (AROW_SQUARED_HINGE, AROW_HINGE, SCW1, SCW2)

class GaussianLinearClassifier(PairedState, GaussianViews, AveragedMean, OnlineLinearClassifier):
    """Mean ``mu`` and covariance ``Sigma`` (``Sigma_1 = a I``), updated by a kernel rule.

    Subclasses set ``rule`` (or override :meth:`rule_code`), ``covariances`` (the forms of
    :data:`textcw.learners.covariance.FORMS` they accept) and :meth:`step_params`; a variant
    with its own kernels overrides :meth:`epoch_kernel` too. Those with the ``multiclass`` and ``k``
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

    The two counters travel with the model (``state_dict``, model files and exports).
    """

    rule: int  # the update rule's code (textcw.learners._kernels.constants)
    covariances: tuple[str, ...] = ("diag-kl", "diag-l2", "full")  # the forms in FORMS it accepts
    diagonal_suggestion = "diag-kl"  # named when a full covariance does not fit in memory
    state_params = ("fit_intercept", "covariance", "average", "dtype")
    dtype = "float64"  # for variants without the parameter (a built-in learner's __init__ sets it)
    positive_states = ("s",)  # checked when a state is loaded
    factor_states = ("R",)
    state_names = AveragedMean.state_names
    run_counters = ("n_variance_floored", "n_solver_fallbacks")
    # A variant that is its update and nothing else: the kernels textcw.kernels.
    # diagonal_gaussian_kernels built from its step (rule None); its step_params() are passed
    # to them as the tuple ``params``, in the order the kernels were built with.
    step_kernels: DiagonalKernels | None = None

    def __init_subclass__(cls, **kwargs):
        """The ``covariance`` constraint is always the class's own ``covariances``, so that a
        subclass narrowing (or widening) ``covariances`` changes what it accepts."""
        super().__init_subclass__(**kwargs)
        unknown = [name for name in cls.covariances if name not in FORMS]
        if unknown or not cls.covariances:
            raise TypeError(
                f"{cls.__name__}.covariances = {cls.covariances!r}: it must name one or more of "
                f"the covariance forms {list(FORMS)}")
        if "covariance" in cls.constraints:
            cls.constraints = {**cls.constraints, "covariance": Options(tuple(cls.covariances))}

    # ----------------------------------------------------------------- subclass interface
    def rule_code(self) -> int | None:
        """The update rule (a Gaussian rule code of :mod:`textcw.learners._kernels.constants`);
        ``None`` for a variant with kernels of its own that take no ``rule`` argument (set
        ``rule = None``)."""
        return getattr(self, "rule", None)

    def step_params(self) -> dict[str, float]:
        """The rule's step parameters by name: exactly those the rule reads (``phi`` for CW,
        ``r`` for AROW, ``phi`` and ``C`` for SCW; ``GAUSSIAN_RULE_PARAMETERS``)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- kernels and state
    @property
    def form(self):
        """The :class:`~textcw.learners.covariance.CovarianceForm` of ``covariance``."""
        return FORMS[self.covariance]

    @property
    def kernel_state_names(self):
        return self.form.state_names

    @property
    def state_combine(self):
        """Mean and covariance combine as a Gaussian. With ``average=True`` the models combine
        by parameter averaging (``method="uniform"``: the means, the variances and the
        averages averaged, the example counts summed); the precision-weighted ``kl`` method is
        for models without averaging."""
        if not self.averaged:
            return {"mu": "gaussian", "s": "gaussian", "R": "gaussian"}
        # a full covariance's factor R has no parameter-averaging rule: such models do not combine
        return {"mu": "mean", "s": "mean", "R": "gaussian", **AVERAGE_COMBINE}

    def average_refusal(self, binary: bool) -> str | None:
        if self.strategy(binary) != MC_TOP1:
            return (f"with multiclass={self.multiclass!r} (the k-competitor updates); it is "
                    "supported for binary problems and multiclass='top1', with every covariance")
        return None

    def state_dtype(self, name: str) -> np.dtype:
        """float32 for ``mu`` and ``s`` with ``dtype="float32"``, else float64. Only the state is
        32-bit: the epoch loops sum margins and margin variances in 64-bit doubles."""
        if self.dtype == "float32" and name in ("mu", "s"):
            return np.dtype(np.float32)
        return np.dtype(np.float64)

    def check_dtype_support(self) -> None:
        """Refuse ``dtype="float32"`` where no 32-bit kernels exist, or where ``a`` would not
        fit a 32-bit variance (:data:`FLOAT32_SCALE`)."""
        if self.dtype != "float32":
            return
        name = type(self).__name__
        if self.covariance not in ("diag-kl", "diag-l2"):
            raise ParameterError(
                f"{name}: dtype='float32' is supported with covariance='diag-kl' or 'diag-l2', "
                f"not covariance={self.covariance!r}; use dtype='float64'")
        if self.averaged:
            raise ParameterError(
                f"{name}: dtype='float32' is not supported with average=True (the running sum "
                "behind the average needs 64 bits); use dtype='float64' to average")
        low, high = FLOAT32_SCALE
        if not low <= float(self.a) <= high:
            raise ParameterError(
                f"{name}: a={self.a!r} is invalid with dtype='float32': the initial variance must be "
                f"between {low:g} and {high:g} (32-bit numbers end near 1e-38 and 3e38, and the "
                f"variance floor is a * {VARIANCE_FLOOR:g}); use dtype='float64' for that scale")

    @property
    def floor(self) -> float:
        """The floor that keeps variances positive: ``a * VARIANCE_FLOOR``."""
        return float(self.a) * VARIANCE_FLOOR

    def strategy(self, binary: bool) -> int:
        """The multi-class update (a ``MC_*`` code); top-1 for binary problems and learners
        without the ``multiclass`` parameter."""
        if binary or not hasattr(self, "multiclass"):
            return MC_TOP1
        return mc.MULTICLASS_CODES[self.multiclass]

    def epoch_kernel(self, binary: bool):
        """The numba kernel of one epoch: the covariance form's, for the multi-class strategy
        (or the variant's own ``step_kernels``)."""
        if self.step_kernels is not None:
            return self.step_kernels.binary if binary else self.step_kernels.top1
        return self.form.kernel(binary, self.strategy(binary))

    def kernel_values(self) -> dict:
        """Every named argument this configuration's kernel must read, after the state arrays:
        a name is offered only when its value matters (``covariance`` for the forms whose
        kernels serve two forms, ``strategy`` and ``k`` for the k-competitor updates, the
        averaging arrays with ``average=True``, ``weights`` while examples are weighted), so a
        kernel that does not read one computes something else and binding it is an error."""
        strategy = self.strategy(self._binary)
        values = {"floor": self.floor}
        rule = self.rule_code()
        if rule is not None:
            values["rule"] = rule
        if self.form.code is not None:
            values["covariance"] = self.form.code
        if strategy != MC_TOP1:
            values["strategy"] = strategy
            values["k"] = mc.competitors(self, len(self.classes_))
        counts = self.__dict__.get("_epoch_counts")  # per epoch, see _run_epoch
        if counts is not None:
            values["counts"] = counts
        weights = self.__dict__.get("_epoch_weights")  # while fit/partial_fit weights examples
        if weights is not None:
            values["weights"] = weights
        values.update(self.average_values())
        if self.step_kernels is not None:
            values["params"] = self._packed_step_params()
        else:
            values.update(self._checked_step_params(rule))
        return values

    def _packed_step_params(self) -> tuple[float, ...]:
        """``step_params()`` as the tuple the ``step_kernels`` take, checked against the names
        they were built with."""
        params = self.step_params()
        names = self.step_kernels.params
        if set(params) != set(names):
            raise ParameterError(
                f"{type(self).__name__}: its step kernels read the step parameters {list(names)}, "
                f"but step_params() gives {sorted(params)}")
        return tuple(float(params[name]) for name in names)

    def optional_kernel_values(self) -> frozenset[str]:
        """The step parameters a built-in rule does not read (passed as 0.0, since the
        built-in kernels take all of them), and ``counts`` where no variance floor is counted
        (``exact`` and ``full`` guard otherwise; only the joint multi-class solver counts)."""
        optional = set(GAUSSIAN_STEP_PARAMETERS) - set(GAUSSIAN_RULE_PARAMETERS.get(self.rule_code(), GAUSSIAN_STEP_PARAMETERS))
        if not self.form.counts_floored and self.strategy(self._binary) != MC_EXACT:
            optional.add("counts")
        return frozenset(optional)

    def _checked_step_params(self, rule) -> dict[str, float]:
        """``step_params()`` for a built-in rule, checked against the parameters the rule reads,
        with 0.0 for the kernels' step parameters that the rule ignores."""
        params = {name: float(value) for name, value in self.step_params().items()}
        wanted = GAUSSIAN_RULE_PARAMETERS.get(rule)
        if wanted is None:
            return params  # a rule of the learner's own kernel: it names what it reads
        if set(params) != set(wanted):
            raise ParameterError(
                f"{type(self).__name__}: rule {rule} reads the step parameters {list(wanted)}, "
                f"but step_params() gives {sorted(params)}"
            )
        return {**dict.fromkeys(GAUSSIAN_STEP_PARAMETERS, 0.0), **params}

    def epoch_call(self, binary):
        return bind_kernel(self.epoch_kernel(binary), self.kernel_state_names, self.kernel_values(),
                           self.optional_kernel_values())

    def _run_epoch(self, X, y, order, on_chunk=None) -> None:
        # The kernels add to ``counts`` (a named kernel argument): floored updates and
        # joint-solver fallbacks, reported per epoch like mistakes_.
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
        warn_about_counts(self, counts)

    def check_weight_support(self, binary: bool) -> None:
        """Weighted examples (docs/algorithms.md "Weighted examples"): AROW (``r -> r / s``) and
        SCW (``C -> s C``) weight their loss terms; CW's update is a hard probabilistic
        constraint (ICML 2008 eq. 3; JMLR 2012 eqs. 8 and 27), which a weight cannot enter."""
        name = type(self).__name__
        if self.rule_code() is None:  # a variant's own update: no weighted form is known
            return super().check_weight_support(binary)
        if self.rule_code() not in WEIGHTED_RULES:
            raise ParameterError(
                f"{name} has no weighted update: CW's margin constraint Pr[y w.x >= 0] >= eta is "
                "hard (no loss term for a weight to scale), so sample_weight and class_weight are "
                "refused; use AROW (a weight s acts as r/s) or SCW1/SCW2 (s acts as s*C)")
        if self.covariance not in ("diag-kl", "diag-l2"):
            raise ParameterError(
                f"{name}: sample_weight and class_weight are supported with covariance='diag-kl' "
                f"or 'diag-l2', not covariance={self.covariance!r}")
        if self.strategy(binary) != MC_TOP1:
            raise ParameterError(
                f"{name}: sample_weight and class_weight are supported for binary problems and "
                f"multiclass='top1', not multiclass={self.multiclass!r}")

    def check_classes(self, n_classes):
        if hasattr(self, "multiclass"):
            mc.competitors(self, n_classes)
        self.check_average_support(n_classes)
        if self.strategy(n_classes == 2) == MC_TOP1:
            return
        name, given = type(self).__name__, f"multiclass={self.multiclass!r}"
        if self.step_kernels is not None:  # a variant's own loop (_kernels.diagonal_loop) has top-1 only
            raise ParameterError(f"{name}: its own step kernels run the top-1 update, not {given}, which "
                                 "needs the built-in rules' kernels; use multiclass='top1'")
        if self.dtype == "float32":
            raise ParameterError(f"{name}: dtype='float32' is supported for binary problems and "
                                 f"multiclass='top1', not {given} with {n_classes} classes; "
                                 "use multiclass='top1' or dtype='float64'")

    def validate_params(self) -> None:
        super().validate_params()
        self.check_dtype_support()
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

    def state_shapes(self, n_rows, n_labels):
        return {**self.form.state_shapes(n_rows, n_labels),
                **self.average_shapes(self.weight_shape(n_rows, n_labels))}

    def new_state(self, n_rows, n_labels):
        return {**self.form.new_state(self, n_rows, n_labels, self.a, self.state_dtype("mu")),
                **self.average_state(self.weight_shape(n_rows, n_labels))}

