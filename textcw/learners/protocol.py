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
from collections.abc import Callable, Collection, Mapping
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


# The names a subclass of a textcw learner may define over textcw's own, and what each is for
# (docs/plugins.md "The learner contract"). Every other public or private name of the base
# classes (``fit``, ``floor``, ``fitted_state``, ``_run_epoch``, ...) is textcw's: the guards,
# counters and warnings around the kernel read them, so a subclass that redefines one computes
# one thing and reports another. The plugin kit's ``overrides_only_hooks`` check enforces this.
LEARNER_HOOKS: dict[str, str] = {
    # declarations
    "constraints": "{parameter: constraint} for every parameter (textcw.learners.params)",
    "state_names": "the state arrays, in kernel order",
    "kernel_state_names": "the state arrays the kernel takes by position, when others go by name",
    "state_params": "parameters that decide what the state is (fixed once fitted)",
    "positive_states": "state arrays that must stay > 0 (variances)",
    "factor_states": "state arrays that are upper Cholesky factors",
    "weights": "the state array coef_ reads",
    "state_combine": "how textcw.combine merges each state array (COMBINE_RULES)",
    "run_counters": "per-epoch counters beyond mistakes_ that state_dict carries",
    "binary_kernel": "the binary epoch kernel",
    "multiclass_kernel": "the multi-class epoch kernel",
    "tuning": "the tunable parameters (textcw.learners.selftune.Axis): tune's grid and 'auto'",
    "inert_params": "parameters declared not to change the fitted model (the kit checks the others do)",
    "covariances": "Gaussian learners: the covariance forms accepted",
    "diagonal_suggestion": "Gaussian learners: the form named when a full covariance does not fit",
    "rule": "Gaussian learners: the built-in update rule's code (None: the learner's own kernels)",
    "step_kernels": "diagonal Gaussian variants: the kernels textcw.kernels.diagonal_gaussian_kernels built",
    # methods
    "new_state": "fresh state arrays",
    "state_shapes": "the state arrays' shapes, without building them",
    "weight_shape": "the shape of a weight-like array",
    "kernel_values": "the kernel's named arguments after the state arrays",
    "optional_kernel_values": "names in kernel_values a kernel may leave unread",
    "epoch_call": "the KernelCall of one epoch",
    "epoch_kernel": "Gaussian learners: the kernel of one epoch",
    "rule_code": "Gaussian learners: the rule code passed as ``rule``",
    "step_params": "Gaussian learners: the rule's step parameters by name",
    "validate_params": "parameter checks beyond constraints (raise ParameterError)",
    "check_classes": "checks that depend on the number of classes",
    "check_weight_support": "refuse example weights the update cannot honour",
    "check_state_values": "checks of a loaded state's values",
    "average_refusal": "why a configuration cannot average (None: it can)",
    "derive_combined_state": "recompute 'derived' state arrays after combining",
    "coef_": "the weights, when they are not one state array",
    "decision_function": "the scores, when they are not X @ coef_.T + intercept_",
    "intercept_": "the intercepts, when they are not in the weights",
    "predict_proba": "label probabilities",
    "predict_log_proba": "log label probabilities",
}


@functools.lru_cache(maxsize=None)
def kernel_parameters(kernel) -> tuple[tuple[str, bool], ...]:
    """``(name, has_default)`` of every parameter of ``kernel`` (a numba dispatcher or a plain
    function), read from the Python function it compiles."""
    function = getattr(kernel, "py_func", kernel)
    return tuple((p.name, p.default is not inspect.Parameter.empty)
                 for p in inspect.signature(function).parameters.values())


@functools.lru_cache(maxsize=None)
def kernel_defaults(kernel) -> dict[str, Any]:
    """``{name: default}`` of the parameters of ``kernel`` that have a default."""
    function = getattr(kernel, "py_func", kernel)
    return {p.name: p.default for p in inspect.signature(function).parameters.values()
            if p.default is not inspect.Parameter.empty}


def bind_kernel(kernel, state_names, values: Mapping[str, Any],
                optional: Collection[str] = ()) -> KernelCall:
    """The :class:`KernelCall` that passes ``values`` to ``kernel`` by parameter name.

    ``kernel``'s signature must start with :data:`DATA_ARGUMENTS` and then ``state_names`` in
    order; every later parameter is taken from ``values`` by name, and one with a default may be
    left out of ``values`` (its default is passed). The binding fails closed, with a
    :class:`~textcw.errors.ParameterError` naming the kernel and the argument:

    - a parameter without a default that ``values`` does not give is an error;
    - a value the kernel does not take is an error, unless its name is in ``optional``: a
      learner family that offers one set of values to kernels reading different subsets of them
      declares which values a kernel may leave unread (e.g. the step parameters its rule does
      not read). A value the learner offers changes what the learner computes, so a kernel
      that does not read it would compute something else without a word;
    - ``None`` is a value like any other (passed as is): a learner that has nothing to pass
      for a name leaves the name out.
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
    taken = [p for p, _ in params[len(expected):]]
    unread = sorted(set(values) - set(taken) - set(optional))
    if unread:
        raise ParameterError(
            f"kernel {name} does not take {', '.join(map(repr, unread))}, which the learner "
            f"passes (it takes {taken}): the learner would compute something other than its "
            "parameters say; give the kernel a parameter of that name (spelled exactly), "
            "choose a kernel that reads it, or refuse the parameter value that needs it"
        )
    defaults = kernel_defaults(kernel)
    args = []
    for param in taken:
        if param in values:
            args.append(values[param])
        elif param in defaults:
            args.append(defaults[param])
        else:
            raise ParameterError(
                f"kernel {name} needs the argument {param!r}, which the learner does not provide "
                f"(it provides {sorted(values)})"
            )
    # trailing defaults are left to the kernel (a numba kernel then compiles fewer versions)
    while args and taken[len(args) - 1] not in values:
        args.pop()
    return KernelCall(kernel, tuple(args))
