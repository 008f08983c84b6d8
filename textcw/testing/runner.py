"""How the kit's checks run: one :class:`Check` at a time, or all of a component's in order.

A component under test (a learner or a featurizer) is a :class:`Component`: how to build it, how
to name it, its :class:`Check`\\ s and the ones expected to fail. ``check(component)`` runs one
check and raises :class:`AssertionError` naming the component, the check and what to change,
which is what :func:`textcw.testing.parametrize_with_checks` turns into one pytest item each;
:meth:`Component.check_all` runs them all in order and stops at the first failure, which is what
:func:`~textcw.testing.check_learner` and :func:`~textcw.testing.check_featurizer` do.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

__all__ = ["Check", "Component"]


class Failed(AssertionError):
    """One check's failure; the runner adds which component and which check."""


class UsageError(ValueError):
    """A check called with arguments that make no sense; passed through unchanged."""


def fail(message: str) -> NoReturn:
    raise Failed(message)


@dataclass(frozen=True)
class Check:
    """One named property of a component: ``check(component)`` returns or raises AssertionError.

    Attributes
    ----------
    name : str
        What failure messages, ``expected_failures`` keys and pytest ids call it.
    function : callable
        Takes the component's :attr:`Component.subject` (its factory and check data).
    """

    name: str
    function: Callable[[Any], None]

    def __call__(self, component: Component) -> None:
        component.run(self)

    def __repr__(self) -> str:
        return self.name


class Component:
    """A learner or featurizer under test, as the check runners and pytest ids see it.

    Build one with :func:`~textcw.testing.learner_under_test` or
    :func:`~textcw.testing.featurizer_under_test`.

    Attributes
    ----------
    kind : str
        ``"learner"`` or ``"featurizer"``.
    name : str
        How failure messages and pytest ids name it.
    subject : object
        What each check function receives: the factory and the data the checks use.
    checks : tuple of Check
        The component's checks, in the order :meth:`check_all` runs them.
    expected_failures : dict
        ``{check name: reason}``: checks that must fail (strict; see :meth:`check_all`).
    """

    def __init__(self, kind: str, name: str, subject: object, checks: tuple[Check, ...],
                 expected_failures: Mapping[str, str] | None = None):
        self.kind, self.name, self.subject, self.checks = kind, name, subject, tuple(checks)
        self.expected_failures = dict(expected_failures or {})
        names = [check.name for check in self.checks]
        unknown = sorted(set(self.expected_failures) - set(names))
        if unknown:
            raise UsageError(f"expected_failures names unknown checks {unknown}; the checks of "
                             f"{self.label} are: {', '.join(names)}")

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}"

    def __repr__(self) -> str:
        return self.label

    def run(self, check: Check) -> None:
        """Run ``check``; any failure becomes ``AssertionError("<label> fails <check>: why")``."""
        try:
            with warnings.catch_warnings():
                # A component's own warnings (convergence, deprecation) are not failures here.
                warnings.simplefilter("ignore")
                check.function(self.subject)
        except Failed as exc:
            raise AssertionError(f"{self.label} fails {check.name}: {exc}") from None
        except UsageError:
            raise
        except AssertionError as exc:  # e.g. a nested check_learner from check_plugin
            raise AssertionError(f"{self.label} fails {check.name}: {exc}") from exc
        except Exception as exc:
            raise AssertionError(
                f"{self.label} fails {check.name}: it raised {type(exc).__name__}: {exc}"
            ) from exc

    def check_all(self) -> None:
        """Run every check in order; re-raise the first unexpected failure.

        A check listed in :attr:`expected_failures` must fail, like a strict xfail: its failure
        is skipped, and its passing is reported, so that the list cannot go stale.
        """
        for check in self.checks:
            try:
                self.run(check)
            except AssertionError:
                if check.name in self.expected_failures:
                    continue
                raise
            if check.name in self.expected_failures:
                raise AssertionError(
                    f"{self.label} now passes {check.name}, listed as an expected failure "
                    f"({self.expected_failures[check.name]}); remove it from expected_failures"
                )


# ====================================================================================== helpers
def describe(factory) -> str:
    return getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or repr(factory)


def is_estimator_instance(obj) -> bool:
    return not isinstance(obj, type) and hasattr(obj, "get_params")


def maker(factory, kind: str) -> Callable[[], object]:
    """A no-argument callable returning a fresh, seeded component.

    ``factory`` is a class, a factory function, or an unfitted instance (which is cloned).
    A ``random_state`` left at ``None`` is set to 0, so two fits must agree.
    """
    if not (callable(factory) or is_estimator_instance(factory)):
        raise TypeError(f"check_{kind} needs a class, a factory function or an instance; got {factory!r}")

    def make():
        obj = clone(factory) if is_estimator_instance(factory) else factory()
        params = obj.get_params(deep=False) if hasattr(obj, "get_params") else {}
        if "random_state" in params and params["random_state"] is None:
            obj.set_params(random_state=0)
        return obj

    return make


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def same_features(a, b) -> bool:
    """Two feature matrices hold the same numbers: equal shapes, then ``numpy.array_equal`` of
    their dense forms. Exact floating-point equality, no tolerance; the storage (sparse or dense,
    explicit zeros, index order), the dtype (1 == 1.0) and the sign of zero (0.0 == -0.0) do
    not matter, since they do not change what a learner computes from the features."""
    return a.shape == b.shape and np.array_equal(dense(a), dense(b))


def same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if hasattr(a, "get_params") and hasattr(b, "get_params"):  # nested estimators
        return type(a) is type(b) and same_params(a.get_params(deep=False), b.get_params(deep=False))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return a is b


def same_params(p: dict, q: dict) -> bool:
    return p.keys() == q.keys() and all(same_value(p[k], q[k]) for k in p)


def raises(call: Callable[[], object], expected: tuple[type[BaseException], ...]) -> BaseException | None:
    """The exception ``call`` raised if it is one of ``expected``; ``None`` if it returned.

    Any other exception is a failure in itself, reported with its type.
    """
    try:
        call()
    except expected as exc:
        return exc
    except Exception as exc:
        names = " or ".join(e.__name__ for e in expected)
        fail(f"expected {names}, but it raised {type(exc).__name__}: {exc}")
    return None


def round_trip(obj):
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    return joblib.load(buffer)
