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

Mistakes that would otherwise compute something else without a word are caught when the class
is defined (:func:`prepare_learner_class`: ``constraints`` must cover exactly the constructor's
parameters, and a Gaussian variant's ``covariances`` the forms its variance update computes) or
when it runs (:func:`bind_kernel` warns when a kernel's default stands in for a
value the learner never passes; :func:`warn_if_no_updates` when a pass makes mistakes and no
update); both warnings are a :class:`LearnerContractWarning`, which the plugin kit's
``learns_from_mistakes`` check turns into a failure.

A kernel is called as ``kernel(indptr, indices, data, y, order, *state_arrays, *args)`` and
returns ``(mistakes, updates)`` (:mod:`textcw.kernels` documents the conventions and offers the
building blocks).
"""

from __future__ import annotations

import functools
import inspect
import warnings
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


class LearnerContractWarning(UserWarning):
    """A learner computes something other than its class declares (a plugin author's mistake)."""


class KernelDefaultWarning(LearnerContractWarning):
    """A kernel parameter's default stood in for a value the learner does not pass."""


class NoUpdateWarning(LearnerContractWarning):
    """A pass over data the learner got wrong made no update at all."""


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
      for a name leaves the name out;
    - a parameter whose default is not ``None`` that ``values`` leaves out is warned about
      (:class:`KernelDefaultWarning`), unless its name is in ``optional``: the default then
      stands in for a value the learner never sets (a kernel's ``margin=1.0`` that no parameter
      reaches). A default of ``None`` is the convention for an array a kernel may do without
      (``weights``, averaging arrays, ``counts``) and may be left out.
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
    standing_in = [p for p in taken if p not in values and p not in optional
                   and p in defaults and defaults[p] is not None]
    if standing_in:
        warnings.warn(
            f"kernel {name}: the learner does not pass {', '.join(map(repr, standing_in))}, so "
            f"the kernel's default {', '.join(repr(defaults[p]) for p in standing_in)} silently "
            "stands in for it; pass it from kernel_values(), or list it in "
            "optional_kernel_values() if the default is meant", KernelDefaultWarning, stacklevel=2)
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


def prepare_learner_class(cls) -> None:
    """The class-creation checks of a learner class (``__init_subclass__``): ``tuning`` names
    its parameters (a self-tuning axis makes the parameter's constraint accept ``"auto"``), and
    ``constraints`` covers exactly the parameters of ``__init__`` (as scikit-learn's
    ``check_param_validation`` asserts of ``_parameter_constraints``): a parameter without a
    constraint is never checked, so a value that makes no sense (``b=-5``) trains a wrong model
    without a word: a ``TypeError`` naming the class and the parameters. A constraint for a
    name ``__init__`` does not take is warned about (:class:`LearnerContractWarning`) in the
    class that declares it (a subclass that narrows ``__init__`` may keep its parent's dict);
    it is not silent, since ``fit`` fails reading the attribute. An abstract base without its
    own ``__init__`` is not checked."""
    from textcw.learners import autotune
    from textcw.learners.selftune import Axis

    declared = "constraints" in vars(cls)  # this class wrote its own dict (else inherited it)
    constraints = dict(cls.constraints)
    for axis in cls.tuning:
        if not isinstance(axis, Axis) or axis.param not in constraints:
            raise TypeError(f"{cls.__name__}.tuning: {axis!r} must be an Axis naming one of "
                            f"its parameters ({', '.join(constraints)})")
        if axis.self_tunes and not constraints[axis.param].contains(autotune.AUTO):
            constraints[axis.param] = autotune.auto_or(constraints[axis.param])
    cls.constraints = constraints
    _check_variance_forms(cls)
    if cls.__init__ is object.__init__:
        return  # an abstract base: its subclasses declare the parameters
    try:
        params = set(cls._get_param_names())
    except RuntimeError as exc:  # scikit-learn refuses *args
        raise TypeError(f"{cls.__name__}: {exc}") from None
    missing, extra = sorted(params - set(constraints)), sorted(set(constraints) - params)
    if missing:
        raise TypeError(
            f"{cls.__name__}: constraints has no entry for {', '.join(map(repr, missing))}, which "
            f"__init__ takes; add one constraint per parameter (textcw.learners.params, e.g. "
            f"{missing[0]!r}: Interval(0.0, closed='left')) so that a value outside it is refused")
    if extra and declared:  # a subclass that narrows __init__ may keep its parent's constraints
        # not silent (fit fails reading the attribute), so a warning: a class may be a sketch
        warnings.warn(
            f"{cls.__name__}: constraints names {', '.join(map(repr, extra))}, which __init__ does "
            "not take; remove it from constraints or add the parameter to __init__",
            LearnerContractWarning, stacklevel=3)


def _check_variance_forms(cls) -> None:
    """A Gaussian variant's ``covariances`` must stay within the forms its variance update
    computes (``step_kernels.forms``): a form outside them would run the update of another."""
    forms = getattr(getattr(cls, "step_kernels", None), "forms", None)
    if forms is None:
        return
    outside = [f for f in getattr(cls, "covariances", ()) if f not in forms]
    if outside:
        raise TypeError(
            f"{cls.__name__}.covariances names {', '.join(map(repr, outside))}, which its variance update "
            f"does not compute (step_kernels declares forms={tuple(forms)!r}); remove it from covariances or "
            "handle it in the variance function and add it to forms=")


def warn_if_no_updates(learner, X) -> None:
    """Warn (:class:`NoUpdateWarning`) when the pass just run made mistakes on documents with
    features and no update at all: the model did not move, so the learner would hand back the
    model it started from (a zero model predicts one class) as though it had trained. Called
    after the first pass of ``fit`` and after each ``partial_fit`` call."""
    mistakes, updates = learner.mistakes_[-1], learner.n_updates_[-1]
    if updates or not mistakes:
        return
    empty = int(np.count_nonzero(np.diff(X.indptr) == 0))  # a tie there cannot be learned
    if mistakes > empty:
        warnings.warn(
            f"{type(learner).__name__}: the pass made {mistakes} mistakes and no update, so the "
            "model did not move; check that the kernel updates the state arrays in place and "
            "counts its updates, and that the parameters allow an update (refuse the values that "
            "do not in constraints or validate_params())", NoUpdateWarning, stacklevel=3)
