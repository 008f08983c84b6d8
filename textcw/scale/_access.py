"""The one place :mod:`textcw.scale` reads or rebuilds a learner's fitted state.

Combining models needs the raw state arrays of :class:`~textcw.learners.base.OnlineLinearClassifier`
(``_state``: ``mu`` and, for Gaussian learners, the covariance) and a way to build a fitted model
from combined arrays. The base class has no public accessor for either yet, so both live here and
nowhere else in the package; when the base class grows ``state_dict()`` / ``from_state()`` this
module is the only one to change.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from textcw.errors import InputError
from textcw.learners.base import OnlineLinearClassifier


def fitted_state(model, where: str = "model") -> dict[str, np.ndarray]:
    """The state arrays of a fitted online learner, by name (not copies: do not modify)."""
    if not isinstance(model, OnlineLinearClassifier):
        raise InputError(
            f"{where} is a {type(model).__name__}; only textcw online learners (subclasses of "
            "OnlineLinearClassifier) or pipelines ending in one can be combined"
        )
    state = getattr(model, "_state", None)
    if state is None or not hasattr(model, "classes_"):
        raise InputError(f"{where} ({type(model).__name__}) is not fitted; fit it before combining")
    return {name: state[name] for name in state_names(model)}


def state_names(model) -> tuple[str, ...]:
    # An instance attribute: learners whose state depends on a parameter make it a property.
    return tuple(model._state_names)


def from_state(template, state: dict[str, np.ndarray], *, classes: np.ndarray, n_features_in: int,
               mistakes: list[int], n_updates: list[int], random_state=None):
    """A fitted copy of ``template``'s learner (same parameters) holding ``state``.

    The attributes set are exactly those :meth:`OnlineLinearClassifier._init_model` and
    ``_setup_labels`` set, so the result predicts, continues with ``partial_fit`` and pickles
    like a model fitted the ordinary way.
    """
    model = clone(template)
    model.set_params(random_state=random_state)
    model.classes_ = np.asarray(classes).copy()
    model.n_features_in_ = int(n_features_in)
    model._state = {name: np.ascontiguousarray(state[name]) for name in state_names(template)}
    model.mistakes_ = [int(m) for m in mistakes]
    model.n_updates_ = [int(u) for u in n_updates]
    return model
