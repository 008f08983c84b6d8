"""The contract between a learner class and the numba kernel that runs its epochs.

A learner (a subclass of :class:`textcw.learners.base.OnlineLinearClassifier`) declares, under
public names:

- ``constraints``: ``{parameter: constraint}`` (:mod:`textcw.learners.params`), checked on
  every ``fit``/``partial_fit``;
- ``state_names``: the state arrays, in the order the kernel takes them (a learner whose kernels
  take some arrays by name, e.g. the averaging arrays of :mod:`textcw.learners.averaging`, lists
  the positional ones in ``kernel_state_names`` and passes the others in ``epoch_call``);
- ``state_params``: the parameters that decide what the state *is* (fixed once fitted);
- ``weights``: the state array that holds the weights (``coef_`` reads it; ``"mu"``);
- ``state_combine``: how :func:`textcw.combine` merges each state array of models trained on
  shards (``"mean"``, ``"sum"``, ``"derived"`` or ``"gaussian"``, see :data:`COMBINE_RULES`);
- ``new_state(n_rows, n_labels)``: fresh state arrays;
- ``epoch_call(binary)``: the kernel that runs one epoch and its arguments after the state
  arrays, as a :class:`KernelCall`, best built with :func:`bind_kernel`, which passes every
  argument *by name*: a kernel whose signature and the learner disagree is an error naming the
  argument, never a silently shifted position.

A kernel is called as ``kernel(indptr, indices, data, y, order, *state_arrays, *args)`` and
returns ``(mistakes, updates)`` (:mod:`textcw.kernels` documents the conventions and offers the
building blocks).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from textcw.errors import ParameterError

# The arguments every epoch kernel takes first, before the state arrays.
DATA_ARGUMENTS = ("indptr", "indices", "data", "y", "order")

# What ``state_combine`` may say of a state array (textcw.combine):
COMBINE_RULES = {
    "mean": "averaged over the shards (weights)",
    "sum": "summed over the shards (counters)",
    "derived": "recomputed from the others after combining (e.g. the averaged perceptron's u)",
    "gaussian": "a mean or covariance combined as a Gaussian (method='kl' or 'uniform')",
}


class KernelCall(NamedTuple):
    """One epoch's kernel and the arguments that follow the state arrays."""

    kernel: Callable[..., tuple[int, int]]
    args: tuple


@runtime_checkable
class OnlineLearner(Protocol):
    """What textcw needs of a learner class beyond scikit-learn's estimator API."""

    constraints: dict
    state_names: tuple[str, ...]
    state_params: tuple[str, ...]
    weights: str
    state_combine: Mapping[str, str]

    def new_state(self, n_rows: int, n_labels: int | None) -> dict[str, np.ndarray]: ...

    def epoch_call(self, binary: bool) -> KernelCall: ...


@functools.lru_cache(maxsize=None)
def kernel_parameters(kernel) -> tuple[tuple[str, bool], ...]:
    """``(name, has_default)`` of every parameter of ``kernel`` (a numba dispatcher or a plain
    function), read from the Python function it compiles."""
    function = getattr(kernel, "py_func", kernel)
    return tuple((p.name, p.default is not inspect.Parameter.empty)
                 for p in inspect.signature(function).parameters.values())


@functools.lru_cache(maxsize=None)
def optional_parameters(kernel) -> frozenset[str]:
    """The parameters of ``kernel`` whose default is ``None`` (optional arrays)."""
    function = getattr(kernel, "py_func", kernel)
    return frozenset(p.name for p in inspect.signature(function).parameters.values() if p.default is None)


def bind_kernel(kernel, state_names, values: Mapping[str, Any]) -> KernelCall:
    """The :class:`KernelCall` that passes ``values`` to ``kernel`` by parameter name.

    ``kernel``'s signature must start with :data:`DATA_ARGUMENTS` and then ``state_names`` in
    order; every later parameter is taken from ``values`` by name. A parameter with a default
    may be left out of ``values`` (so may all after it; one whose default is ``None``, an
    optional array, is passed as ``None`` when a later one is given); a value the kernel does not name is
    ignored, so a learner family can offer one set of values to kernels that use different
    subsets of them. Anything else is a :class:`~textcw.errors.ParameterError` naming the kernel
    and the argument: the signature and the learner disagree.
    """
    params = kernel_parameters(kernel)
    name = getattr(kernel, "__name__", repr(kernel))
    expected = (*DATA_ARGUMENTS, *state_names)
    given = tuple(p for p, _ in params[:len(expected)])
    if given != expected:
        raise ParameterError(
            f"kernel {name} takes ({', '.join(given)}, ...) where the learner passes "
            f"({', '.join(expected)}, ...): its first parameters must be {DATA_ARGUMENTS} and "
            "then the learner's state_names, in order"
        )
    args = []
    for position, (param, has_default) in enumerate(params[len(expected):]):
        if param in values and values[param] is not None:
            args.append(values[param])
            continue
        later = params[len(expected) + position:]
        if has_default and not any(p in values and values[p] is not None for p, _ in later):
            break  # this and the rest keep their defaults
        if param in optional_parameters(kernel):
            args.append(None)  # an optional array left out, before one that is given
            continue
        raise ParameterError(
            f"kernel {name} needs the argument {param!r}, which the learner does not provide "
            f"(it provides {sorted(k for k, v in values.items() if v is not None)})"
        )
    return KernelCall(kernel, tuple(args))
