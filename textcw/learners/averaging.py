"""Averaged learners: ``average=True`` predicts with the average of the weights (for Gaussian
learners, of the mean ``mu``) after every example seen, as the averaged perceptron averages its
weights (Collins, EMNLP 2002; Freund and Schapire, Machine Learning 1999).

Training is unchanged: the kernels update ``mu`` (and the covariance) as without averaging, so
``mistakes_``, ``n_updates_`` and the variances are the same. The average is kept lazily, in
``O(nnz)`` extra work per update (docs/algorithms.md "Averaging"): every change ``delta`` of
``mu`` made at the example of 0-based index ``g`` (over all epochs and ``partial_fit`` calls)
also adds ``g * delta`` to ``u``, and after ``T`` examples the average of ``mu_1 .. mu_T`` is
``mu - u / T`` (Daume, "A Course in Machine Learning", the averaged perceptron). The learner
writes it into the state array ``mu_avg`` when the fitted state is next read after training
(``O(d)`` per read, never per example); ``coef_``, ``intercept_``, ``decision_function``,
``predict``, the mean of ``predict_proba`` and ``state_dict`` read it.

Examples, not weights, are counted: an example of weight ``s > 0`` counts once in ``T`` (its
weight scales its step, hence ``delta``); a weight of 0 skips the example, which then does not
count (as if it were not in the stream). This is the averaged perceptron's convention.
"""

from __future__ import annotations

import numpy as np

from textcw.errors import InputError, ParameterError
from textcw.learners.params import BOOL

# The state arrays averaging adds, after the learner's own, and how textcw.combine merges them:
# the averages are averaged over the shards (parameter averaging of averaged models), the example
# counts summed, and ``u`` recomputed so that ``mu_avg = mu - u / count`` holds for the combined
# model, which partial_fit then continues.
AVERAGE_STATES = ("mu_avg", "u", "count")
AVERAGE_COMBINE = {"mu_avg": "mean", "u": "derived", "count": "sum"}
AVERAGE_CONSTRAINTS = {"average": BOOL}


class AveragedMean:
    """The ``average`` parameter for a learner whose kernels take ``u`` and ``count``.

    A learner lists its own state arrays in ``kernel_state_names`` (those its kernels take by
    position); with ``average=True``, ``state_names`` adds :data:`AVERAGE_STATES`, which the
    kernels take by name (:func:`textcw.learners.protocol.bind_kernel`). It says which of its
    configurations have averaging kernels in :meth:`average_refusal`.
    """

    average = False  # learners of the family without the parameter (e.g. the perceptron)

    @property
    def averaged(self) -> bool:
        return bool(self.average)

    @property
    def weights(self) -> str:
        """The state array ``coef_`` reads: the average when averaging."""
        return "mu_avg" if self.averaged else "mu"

    @property
    def state_names(self):
        own = tuple(self.kernel_state_names)
        return own + AVERAGE_STATES if self.averaged else own

    def average_refusal(self, binary: bool) -> str | None:
        """Why this configuration cannot average (``None``: it can)."""
        return None

    def check_average_support(self, n_classes: int) -> None:
        """Raise :class:`~textcw.errors.ParameterError` when ``average=True`` is asked of a
        configuration without averaging kernels."""
        if not self.averaged:
            return
        reason = self.average_refusal(n_classes == 2)
        if reason is not None:
            raise ParameterError(f"{type(self).__name__}: average=True is not supported {reason}")

    def average_values(self) -> dict:
        """The kernels' named averaging arguments; none without averaging (the plain update)."""
        if not self.averaged:
            return {}
        return {"u": self._state["u"], "count": self._state["count"]}

    def average_state(self, shape) -> dict[str, np.ndarray]:
        """Fresh averaging arrays (none without averaging)."""
        if not self.averaged:
            return {}
        return {"mu_avg": np.zeros(shape), "u": np.zeros(shape), "count": np.zeros(1)}

    def average_shapes(self, shape) -> dict[str, tuple[int, ...]]:
        return {"mu_avg": shape, "u": shape, "count": (1,)} if self.averaged else {}

    def derive_combined_state(self, state):
        """``u`` of a combined model, from the invariant ``mu_avg = mu - u / count``, so that
        ``partial_fit`` continues the combined average (:func:`textcw.combine`)."""
        return {**state, "u": (state["mu"] - state["mu_avg"]) * state["count"][0]}

    def check_state_values(self, state) -> None:
        super().check_state_values(state)
        if "count" in state and not (state["count"][0] >= 0 and float(state["count"][0]).is_integer()):
            raise InputError("state array 'count' counts the examples seen and must be a whole number >= 0")

    def _run_epoch(self, X, y, order, on_chunk=None) -> None:
        if self.averaged:
            for name in ("u", "count"):  # the kernels write them in place (by name, not position)
                if not (self._state[name].flags.c_contiguous and self._state[name].flags.writeable):
                    self._state[name] = np.array(self._state[name], order="C", copy=True)
        super()._run_epoch(X, y, order, on_chunk)
        if self.averaged:
            # mu_avg is brought up to date when it is read (fitted_state): a model trained by
            # many partial_fit calls, or a self-tuning candidate that is never read, pays O(d)
            # per read, not per call
            self.__dict__["_average_stale"] = True

    def load_state_dict(self, state: dict):
        super().load_state_dict(state)
        self.__dict__.pop("_average_stale", None)  # the loaded mu_avg is the average
        return self

    def fitted_state(self):
        state = super().fitted_state()
        if self.__dict__.pop("_average_stale", False) and self.averaged and state["count"][0] > 0:
            np.divide(state["u"], state["count"][0], out=state["mu_avg"])
            np.subtract(state["mu"], state["mu_avg"], out=state["mu_avg"])
        return state
