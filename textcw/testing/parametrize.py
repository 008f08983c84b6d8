"""One pytest item per check, in the style of scikit-learn's ``parametrize_with_checks``.

::

    from textcw.testing import featurizer_under_test, parametrize_with_checks

    @parametrize_with_checks([MyLearner, featurizer_under_test(my_featurizer, name="mine")])
    def test_textcw_contract(component, check):
        check(component)

Each (component, check) pair is its own test, with an id such as
``MyLearner-fits_and_predicts``, so a failing check does not hide the ones after it. A check
listed in a component's ``expected_failures`` is marked ``xfail(strict=True)`` with its reason:
the run stays green while it fails, and turns red the moment it passes (take it off the list).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from textcw.testing.featurizer_checks import FEATURIZER_CHECKS, featurizer_under_test
from textcw.testing.learner_checks import LEARNER_CHECKS, learner_under_test
from textcw.testing.runner import Check, Component, UsageError, is_estimator_instance

__all__ = ["check_names", "iter_checks", "parametrize_with_checks"]

_CHECKS = {"learner": LEARNER_CHECKS, "featurizer": FEATURIZER_CHECKS}


def check_names(kind: str) -> list[str]:
    """The names of the checks of a ``"learner"`` or a ``"featurizer"``, in the order
    :func:`~textcw.testing.check_learner` / :func:`~textcw.testing.check_featurizer` run them
    (the keys ``expected_failures`` accepts)."""
    if kind not in _CHECKS:
        raise ValueError(f"kind must be one of {', '.join(_CHECKS)}; got {kind!r}")
    return [check.name for check in _CHECKS[kind]]


def as_component(entry) -> Component:
    """``entry`` if it is a :class:`Component`; otherwise a learner or featurizer factory (class,
    function or unfitted instance) with the default check settings, its kind told by what it
    builds: an object with ``predict`` is a learner, one with ``transform`` a featurizer."""
    if isinstance(entry, Component):
        return entry
    if not (callable(entry) or is_estimator_instance(entry)):
        raise UsageError(f"parametrize_with_checks takes learners and featurizers (classes, "
                         f"factory functions or unfitted instances); got {entry!r}")
    sample = entry if is_estimator_instance(entry) else entry()
    if callable(getattr(sample, "predict", None)):
        return learner_under_test(entry)
    if callable(getattr(sample, "transform", None)):
        return featurizer_under_test(entry)
    raise UsageError(f"{entry!r} builds {type(sample).__name__}, which has neither predict() "
                     "(a learner) nor transform() (a featurizer); wrap it in learner_under_test() "
                     "or featurizer_under_test() to say which it is")


def iter_checks(entries: Iterable) -> Iterator[tuple[Component, Check]]:
    """Every ``(component, check)`` pair of ``entries`` (components or factories, as
    :func:`parametrize_with_checks` takes them); ``check(component)`` runs one."""
    for entry in entries:
        component = as_component(entry)
        for check in component.checks:
            yield component, check


def parametrize_with_checks(entries: Iterable):
    """A ``pytest.mark.parametrize("component, check", ...)`` over every check of ``entries``.

    Parameters
    ----------
    entries : iterable
        Learners and featurizers: :class:`~textcw.testing.runner.Component`\\ s from
        :func:`~textcw.testing.learner_under_test`, :func:`~textcw.testing.featurizer_under_test`
        or :func:`~textcw.testing.plugin_components` (to set a name, ``min_accuracy``,
        documents or ``expected_failures``), or bare factories (classes, factory functions or
        unfitted instances) checked with the defaults.

    Returns
    -------
    pytest.MarkDecorator
        Decorate a test taking ``component`` and ``check`` whose body is ``check(component)``.
        Ids read ``<component name>-<check name>``; a check in the component's
        ``expected_failures`` is marked ``xfail(strict=True, raises=AssertionError)``.
    """
    import pytest

    params = []
    for component, check in iter_checks(entries):
        reason = component.expected_failures.get(check.name)
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] \
            if reason is not None else []
        name = component.name.strip("'")  # plugin components are named by their repr
        params.append(pytest.param(component, check, marks=marks, id=f"{name}-{check.name}"))
    return pytest.mark.parametrize("component, check", params)
