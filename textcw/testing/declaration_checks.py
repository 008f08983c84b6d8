"""The learner checks about what a class declares: ``overrides_only_hooks`` and
``parameters_take_effect``.

A learner's class declares two things the kernel trusts without running them: which methods of
textcw's base classes it replaces (only the hooks of
:data:`~textcw.learners.protocol.LEARNER_HOOKS`: the guards, counters and warnings read the
others) and which parameters it takes (``constraints``, each of which must change what is
computed). A wrong declaration trains without an error and reports a model other than the one
computed, so the kit checks both. The checks receive the learner checks' subject
(:class:`~textcw.testing.learner_checks.LearnerSubject`) and are listed, in order, in
:data:`~textcw.testing.learner_checks.LEARNER_CHECKS`.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import clone

from textcw.errors import TextcwError
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import AnyOf, Interval, Options
from textcw.learners.protocol import LEARNER_HOOKS
from textcw.testing.runner import fail, same_value

__all__ = ["overrides_only_hooks", "parameters_take_effect"]


def _is_textcw_class(cls) -> bool:
    return cls.__module__ == "textcw" or cls.__module__.startswith("textcw.")


def overrides_only_hooks(s) -> None:
    """A subclass of :class:`~textcw.learners.base.OnlineLinearClassifier` defines over
    textcw's base classes only the hooks of :data:`~textcw.learners.protocol.LEARNER_HOOKS`."""
    est = s.make()
    if not isinstance(est, OnlineLinearClassifier):
        return
    mro = type(est).__mro__
    textcw_bases = [k for k in mro if _is_textcw_class(k)]
    own = [k for k in mro if not _is_textcw_class(k) and issubclass(k, OnlineLinearClassifier)]
    wrong = {}
    for klass in own:
        for name in vars(klass):
            if (name.startswith("__") or name in LEARNER_HOOKS
                    or (name.startswith("set_") and name.endswith("_request"))):  # scikit-learn's
                continue
            base = next((b for b in textcw_bases if name in vars(b)), None)
            if base is not None:
                wrong.setdefault(name, f"{klass.__name__} redefines {base.__name__}.{name}")
    if wrong:
        fail(f"{'; '.join(wrong.values())}: {', '.join(sorted(wrong))} "
             f"{'is' if len(wrong) == 1 else 'are'} textcw's own (the kernel's guards, counters "
             "and warnings read them), so the model would be computed one way and reported "
             "another; override only the hooks in textcw.learners.protocol.LEARNER_HOOKS (e.g. "
             "a variance bound of a variant belongs in its update, not in floor)")


# Values tried for a parameter whose constraint lists none (e.g. class_weight).
_GENERIC_ALTERNATIVES = (True, False, "balanced", None, 1, 2, 0.5)


def _alternatives(constraint, current) -> list:
    """Valid values of a parameter other than ``current``, from its constraint: the other
    options, or nearby numbers inside an interval (never ``"auto"``, which chooses a value)."""
    if isinstance(constraint, Options):
        found = list(constraint.values)
    elif isinstance(constraint, AnyOf):
        found = [v for member in constraint.members for v in _alternatives(member, current)]
    elif isinstance(constraint, Interval):
        if isinstance(current, numbers.Real) and not isinstance(current, bool):
            # far enough that a bound that rarely binds (PA-I's C) binds
            found = [current / 2, current * 2, current / 100, current * 100, current + 1,
                     current - 1, (current + constraint.high) / 2, (current + constraint.low) / 2]
        else:
            low = constraint.low if np.isfinite(constraint.low) else 0.0
            found = [low + 1, low + 0.5, (constraint.low + constraint.high) / 2]
        if constraint.integer:
            if np.isfinite(constraint.low):  # the smallest values: e.g. one iteration
                found = [constraint.low, constraint.low + 1] + found
            found = [int(round(v)) for v in found if np.isfinite(v)]
    else:
        found = list(_GENERIC_ALTERNATIVES)
    out = []
    for value in found:
        if (same_value(value, current) or any(same_value(value, o) for o in out)
                or not constraint.contains(value) or (isinstance(value, str) and value == "auto")):
            continue
        out.append(value)
    return out[:4]


def _outcome(est, params: dict, problems):
    """What a fit with ``params`` computes on each problem (scores, probabilities and the
    variances where the learner has them), or ``None`` when the learner refuses the values."""
    result = []
    for _, X, y, Xt, _ in problems:
        model = clone(est).set_params(**params)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
                parts = [np.asarray(model.decision_function(Xt), dtype=float)]
                for view in ("predict_proba", "sigma_"):
                    try:
                        value = getattr(model, view)
                        parts.append(np.asarray(value(Xt) if callable(value) else value, dtype=float))
                    except (AttributeError, NotImplementedError):
                        pass
        except TextcwError:
            return None  # refused: the learner says it cannot honour the values
        result.append(parts)
    return result


def _same_outcome(a, b) -> bool:
    return all(len(pa) == len(pb) and all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
                                          for x, y in zip(pa, pb)) for pa, pb in zip(a, b))


def parameters_take_effect(s) -> None:
    """Every parameter in ``constraints`` changes what the learner computes for some other
    valid value, alone or with another parameter, is refused for the values it cannot honour,
    or is listed in ``inert_params``."""
    est = s.make()
    constraints = getattr(est, "constraints", None)
    if not isinstance(constraints, dict) or not hasattr(est, "decision_function"):
        return
    inert = set(getattr(est, "inert_params", ()))
    params = est.get_params(deep=False)
    if params.get("random_state", 0) is None:
        params["random_state"] = 0
    est = clone(est).set_params(**params)
    problems = _thinned(s.problems)
    base = _outcome(est, {}, problems)
    if base is None:
        return  # fits_and_predicts reports a learner that cannot fit its defaults
    settings = {name: _alternatives(c, params.get(name)) for name, c in constraints.items()
                if name in params}
    if "random_state" in settings:  # a fresh seed per fit would differ by chance
        settings["random_state"] = [v for v in settings["random_state"] if v is not None]
    # a parameter may act only together with another (k with multiclass): options first
    partners = sorted(settings, key=lambda n: not isinstance(constraints[n], Options))
    ignored = []
    for name, values in settings.items():
        if name in inert or not values:
            continue
        tried, honoured = _acts_alone(est, name, values, problems, base)
        for other in partners:
            if honoured:
                break
            if other != name:
                honoured = _acts_with(est, name, values, other, settings[other], problems, tried)
        if tried and not honoured:
            shown = list(dict.fromkeys(map(repr, tried)))
            ignored.append(f"{name} (tried {', '.join(shown)} against {params.get(name)!r})")
    if ignored:
        fail(f"these parameters change nothing it computes, alone or with any other parameter: "
             f"{'; '.join(ignored)}. A learner must honour every parameter it declares (a "
             "subclass, every parameter it inherits): pass it to the kernel, refuse the values "
             "it cannot honour with a ParameterError in validate_params(), or list a parameter "
             "that by design changes nothing in inert_params")


def _thinned(problems) -> list:
    """The problems with every other row of the first label left out, so that weighting the
    labels changes weights."""
    out = []
    for what, X, y, Xt, yt in problems:
        keep = np.flatnonzero((y != y[0]) | (np.cumsum(y == y[0]) % 2 == 0))
        out.append((what, X[keep], y[keep], Xt, yt))
    return out


def _acts_alone(est, name: str, values: list, problems, base) -> tuple[list, bool]:
    """``(values tried, whether one changed the outcome)``: parameter ``name`` set alone."""
    tried = []
    for value in values:
        outcome = _outcome(est, {name: value}, problems)
        if outcome is None:
            continue  # refused: the learner says it cannot honour the value
        tried.append(value)
        if not _same_outcome(outcome, base):
            return tried, True
    return tried, False


def _acts_with(est, name: str, values: list, other: str, other_values: list, problems, tried: list) -> bool:
    """Whether a value of ``name`` changes the outcome with ``other`` set to one of its
    ``other_values``; the values tried are added to ``tried``."""
    for other_value in other_values:
        reference = _outcome(est, {other: other_value}, problems)
        if reference is None:
            continue
        for value in values:
            outcome = _outcome(est, {other: other_value, name: value}, problems)
            if outcome is None:
                continue
            tried.append(value)
            if not _same_outcome(outcome, reference):
                return True
    return False
