"""Every use of scikit-learn's private API in textcw, in one place.

textcw admits scikit-learn ``>=1.6,<2`` (``pyproject.toml``). The shims below were checked
against scikit-learn 1.6.0 (the lowest version admitted, ``tests/install/minimum-versions.txt``)
and 1.9.1; ``tests/test_sklearn_compat.py`` exercises each one against the installed version, so
a release that moves or renames one of these fails there, with the shim's name, rather than deep
inside a featurizer or a saved model.

What is used, and why there is no public equivalent:

- :data:`InvalidParameterError` (``sklearn.utils._param_validation``, since 1.2): the error
  scikit-learn raises for a parameter outside an estimator's declared constraints. It subclasses
  both ``ValueError`` and ``TypeError``; catching it by name lets a featurizer tell a bad
  parameter from bad documents, which scikit-learn reports as plain ``ValueError``.
- :func:`validate_declared_params` (``BaseEstimator._validate_params()``, since 1.2): checks an
  estimator's parameters against its ``_parameter_constraints`` without fitting it. Publicly the
  check runs only inside ``fit``; textcw runs it when a component is made, so that ``textcw
  train`` and an import refuse a bad parameter before any data is read.
- :data:`STOP_WORDS_CHECK_ATTRIBUTE` (``_stop_words_id``): scikit-learn's text vectorizers record
  ``id(stop_words)`` there once they have checked the stop-word list, to skip checking it again.
  The value is a memory address, different in every process, so saving a model drops it (a
  saved file is then byte-identical between runs) and the corpus cache restores it rather than
  storing it.
"""

from __future__ import annotations

try:
    from sklearn.utils._param_validation import InvalidParameterError
except ImportError:  # pragma: no cover - a scikit-learn that moved it; its errors are ValueErrors
    class InvalidParameterError(ValueError, TypeError):
        """Stands in for scikit-learn's own class where it cannot be imported."""

__all__ = ["STOP_WORDS_CHECK_ATTRIBUTE", "InvalidParameterError", "has_declared_constraints",
           "validate_declared_params"]

STOP_WORDS_CHECK_ATTRIBUTE = "_stop_words_id"


def has_declared_constraints(estimator) -> bool:
    """Whether ``estimator`` declares scikit-learn parameter constraints (``_parameter_constraints``),
    so that :func:`validate_declared_params` can check it."""
    return hasattr(estimator, "_parameter_constraints") and callable(getattr(estimator, "_validate_params", None))


def validate_declared_params(estimator) -> None:
    """Check ``estimator``'s parameters against its declared constraints, as ``fit`` would.

    Raises :data:`InvalidParameterError` for a value outside them.
    """
    estimator._validate_params()
