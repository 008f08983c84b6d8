"""NHERD: normal herding (Crammer and Lee, "Learning via Gaussian Herding", NIPS 2010).

Like CW and AROW, NHERD keeps a Gaussian over weight vectors, ``w ~ N(mu, Sigma)``,
``Sigma_1 = a I``. CW moves the Gaussian so that one example is classified confidently; NHERD
instead moves *every* weight vector of the herd by the same passive-aggressive step it would
take on its own (for the squared hinge, with aggressiveness ``C``) and refits a Gaussian to the
moved herd. All vectors move by a linear map, so the new herd is again Gaussian, and for the
squared hinge the paper's update (section "Normal herding", the NHERD update for the squared
hinge loss) is, with margin ``m = y mu.x`` and margin variance ``v = x' Sigma x``:

- mean: ``mu <- mu + alpha y Sigma x`` with ``alpha = max(0, 1 - m) / (v + 1/C)`` (AROW's mean
  step with ``r = 1/C``), so an update happens when ``m < 1``;
- covariance: ``Sigma <- Sigma - Sigma x x' Sigma (C^2 v + 2C) / (1 + C v)^2``.

Derivation of the forms implemented. Each vector moves as ``w <- A w + b`` with
``A = I - C Sigma x x' / (1 + C v)``, so ``Sigma <- A Sigma A'``; expanding,
``A Sigma A' = Sigma - Sigma x x' Sigma (2C (1 + C v) - C^2 v) / (1 + C v)^2``, which is the line
above. By Sherman-Morrison, ``(Sigma^{-1} + c x x')^{-1} = Sigma - Sigma x x' Sigma c / (1 + c v)``,
and with ``c = 2C + C^2 v``, ``1 + c v = (1 + C v)^2``: the two agree, so NHERD's full update is
the precision update ``Sigma^{-1} <- Sigma^{-1} + (2C + C^2 v) x x'``, AROW's with the
increment ``1/r`` replaced by ``2C + C^2 v``. textcw's diagonal forms (docs/algorithms.md
"Covariance forms") then apply as they do for CW and AROW; the paper's diagonal variants carry
the same names:

- ``covariance="diag-kl"`` (the paper's *project*): keep the diagonal of the precision update,
  ``1/s_j <- 1/s_j + (2C + C^2 v) x_j^2``;
- ``covariance="diag-l2"`` (*drop*): keep the diagonal of the covariance update,
  ``s_j <- s_j - c / (1 + c v) (s_j x_j)^2`` with the same ``c`` (``c / (1 + c v)`` is the full
  update's ``(C^2 v + 2C) / (1 + C v)^2``);
- ``covariance="exact"`` (*exact*): the full update computed as though ``Sigma`` and ``x x'``
  were both diagonal, so that each coordinate is a one-feature problem of its own with
  ``v_j = s_j x_j^2``: ``1/s_j + (2C + C^2 s_j x_j^2) x_j^2 = (1 + C s_j x_j^2)^2 / s_j``, i.e.
  ``s_j <- s_j / (1 + C x_j^2 s_j)^2``.

With one feature the diagonal is the matrix, and ``diag-kl``, ``diag-l2``, ``exact`` and the
full update coincide (the tests check it).

Multi-class: textcw's top-1 reduction (EMNLP 2009; docs/algorithms.md "Multi-class"), as for
CW's top-1 kernels: the binary update on ``f(x, y) - f(x, r)`` against the best other label ``r``,
with ``v = x' Sigma_y x + x' Sigma_r x``; both label blocks move and both get the covariance
update.
"""

from __future__ import annotations

from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Options
from textcw.learners.selftune import Axis, decades

from textcw_example import nherd_step

# covariance= -> the kernels' ``covariance`` code
FORM_CODES = {"diag-kl": nherd_step.PROJECT, "diag-l2": nherd_step.DROP, "exact": nherd_step.EXACT}


class NHERD(GaussianLinearClassifier):
    """Normal herding (Crammer and Lee, NIPS 2010), squared-hinge loss.

    Parameters
    ----------
    C : float > 0 or "auto", default 1.0
        Aggressiveness: each vector of the herd takes the squared-hinge passive-aggressive step
        with this ``C``. Larger ``C`` means larger mean steps and faster shrinking variances.
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "exact"}, default "diag-kl"
        The diagonal form of the covariance update (the paper's *project*, *drop* and *exact*;
        see the module docstring). In multi-class problems each label has its own block.
    proba : {"quadrature", "sampling"}, default "quadrature"
        How :meth:`predict_proba` computes label probabilities (as for every Gaussian learner).
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner; ``random_state`` also seeds ``proba="sampling"``.

    Attributes
    ----------
    coef_, intercept_, sigma_, mistakes_, n_updates_, n_variance_floored_
        As for every Gaussian learner
        (:class:`textcw.learners.gaussian.GaussianLinearClassifier`).

    References
    ----------
    K. Crammer and D. D. Lee. Learning via Gaussian herding. NIPS 23, 2010.

    Examples
    --------
    >>> import textcw
    >>> model = textcw.make_learner("nherd", C=0.1, covariance="diag-l2")
    """

    covariances = tuple(FORM_CODES)
    constraints = {
        **OnlineLinearClassifier.constraints,
        "C": SCALE,
        "a": SCALE,
        "covariance": Options(covariances),
        "proba": PROBA,
    }
    # NHERD is its update (nherd_step): textcw's loop runs it; no built-in rule code.
    rule = None
    step_kernels = nherd_step.KERNELS
    # alpha = (1 - m) / (v + 1/C): 1/C is weighed against v = a q on a new document, so the
    # self-tuning candidates ("auto") are C = c / (a q); tune's grid is in decades
    tuning = (Axis("C", "inverse-margin-variance", (0.01, 0.1, 1.0, 10.0, 100.0),
                   grid=decades(-4, 0), quick=(1e-3, 1e-1)),)

    def __init__(self, *, C=1.0, a=1.0, covariance="diag-kl", proba="quadrature", n_epochs=5,
                 shuffle=True, random_state=0, fit_intercept=False):
        self.C = C
        self.a = a
        self.covariance = covariance
        self.proba = proba
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def step_params(self):
        # resolved: C="auto" is the value fitting chose (a later partial_fit continues with it)
        return {"C": self.resolved("C")}

    def kernel_values(self):
        return {**super().kernel_values(), "covariance": FORM_CODES[self.covariance]}
