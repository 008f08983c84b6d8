"""Integer variant codes shared by the kernels and the learner classes."""

# First-order update rules.
PERCEPTRON = 0
PA = 1
PA1 = 2
PA2 = 3

# Gaussian (mean + covariance) update rules: each turns an example's margin ``m`` and margin
# variance ``v`` into a mean step ``alpha`` and a precision increment ``c``
# (docs/algorithms.md "Notation").
CW_VAR = 0
CW_STDEV = 1
AROW_SQUARED_HINGE = 2
AROW_HINGE = 3
SCW1 = 4
SCW2 = 5

# Diagonal covariance forms.
DIAG_KL = 0  # project: diagonalise the inverse (precision) update
DIAG_L2 = 1  # drop: diagonalise the covariance update

# SGD losses.
HINGE = 0
LOG = 1
MODIFIED_HUBER = 2

# SGD learning-rate schedules.
DECAY = 0  # eta_t = eta0 / (1 + eta0 alpha t)
CONSTANT = 1  # eta_t = eta0
INVSCALING = 2  # eta_t = eta0 / t^power_t

# Multi-class update strategies (EMNLP 2009 section 5; MLJ 2013 section 3.3;
# docs/algorithms.md "Multi-class").
MC_TOP1 = 0  # one constraint: the highest-scoring competitor
MC_SEQ = 1  # k constraints, one binary update each, in order, from the current parameters
MC_PAR = 2  # k binary updates from the same start, means and precisions averaged
MC_EXACT = 3  # the k-constraint problem solved jointly (see hildreth.py)

# Floor on every variance, relative to the initial variance ``a`` (see gaussian_diag.floor_variance).
VARIANCE_FLOOR = 1e-12

# The smallest positive normal double (numpy.finfo(float).tiny). A margin variance
# ``v = x' Sigma x`` or squared norm ``||x||^2`` below it has underflowed (to zero or to a
# subnormal number with a few significant bits): the step sizes divide by it (``alpha ~ |m| / v``,
# ``tau = loss / ||x||^2``) and would overflow to inf, and a zero would give 0/0. Such a document
# carries no usable information in double precision, like an empty one, so the kernels skip it.
SMALLEST_NORMAL = 2.2250738585072014e-308

# The largest feature value, in absolute value, that the kernels accept (textcw._limits, where the
# input check below the kernels reads it too).
from textcw._limits import MAX_ABS_VALUE  # noqa: E402,F401

# Slots of the optional ``counts`` array (int64, length N_COUNTS) that the Gaussian kernels add
# to, so that the learners can report what the papers' formulas alone would not show.
COUNT_SOLVER_FALLBACKS = 0  # joint multi-class solves whose sweeps did not converge (hildreth.cw_solve)
COUNT_SOLVER_UNCERTIFIED = 1  # ... and whose fallback did not reach the KKT conditions either
COUNT_FLOORED = 2  # updates after which some variance they changed sat at the floor
N_COUNTS = 3

# The step parameters each Gaussian rule reads (the kernels take ``phi, C, r`` and a rule ignores
# the others): the learners check that they provide exactly these (textcw.learners.gaussian).
GAUSSIAN_RULE_PARAMETERS = {
    CW_VAR: ("phi",),
    CW_STDEV: ("phi",),
    AROW_SQUARED_HINGE: ("r",),
    AROW_HINGE: ("r",),
    SCW1: ("phi", "C"),
    SCW2: ("phi", "C"),
}
GAUSSIAN_STEP_PARAMETERS = ("phi", "C", "r")
