"""The learner contract's names before it became public, kept working for one release.

A subclass of :class:`textcw.learners.base.OnlineLinearClassifier` that defines an old,
underscored name (``_constraints``, ``_new_state``, ``_kernel_args``, ...) gets it under the public
name (:mod:`textcw.learners.protocol`) with a ``DeprecationWarning``; every class answers to both
names, so code that reads the old ones keeps working. Remove this module in the next release.
"""

from __future__ import annotations

import inspect
import warnings

from textcw.learners.protocol import KernelCall

# The names of the learner contract before it was public: a subclass that defines an old name
# gets it under the new one (with a DeprecationWarning), and every class answers to both, so
# code reading the old names keeps working for one release.
LEGACY_NAMES = {
    "_constraints": "constraints",
    "_state_names": "state_names",
    "_state_params": "state_params",
    "_positive_states": "positive_states",
    "_factor_states": "factor_states",
    "_late_defaults": "late_defaults",
    "_binary_kernel": "binary_kernel",
    "_multiclass_kernel": "multiclass_kernel",
    "_new_state": "new_state",
    "_state_shapes": "state_shapes",
    "_check_classes": "check_classes",
    "_check_state_values": "check_state_values",
    "_weight_shape": "weight_shape",
    "_fitted_state": "fitted_state",
}


def alias_legacy_names(cls) -> None:
    """Called for every subclass of the base: fill the public names from old ones it defines
    (warning), and the old names from the public ones."""
    own = cls.__dict__
    for old, new in LEGACY_NAMES.items():
        if old in own and new not in own:
            warnings.warn(
                f"{cls.__name__} defines {old}, the name of textcw's learner contract before it "
                f"became public; define {new} instead (the old name stops working in the next "
                "release)", DeprecationWarning, stacklevel=3)
            setattr(cls, new, own[old])
        elif new in own and old not in own:
            setattr(cls, old, own[new])
    if ("_kernel_args" in own or "_kernel" in own) and "epoch_call" not in own:
        warnings.warn(
            f"{cls.__name__} defines _kernel/_kernel_args, textcw's positional kernel contract "
            "before it became public; define kernel_values() (named arguments) or epoch_call() "
            "instead (the old names stop working in the next release)",
            DeprecationWarning, stacklevel=3)
        cls.epoch_call = legacy_epoch_call


def legacy_epoch_call(self, binary):
    """``epoch_call`` for a subclass written against the positional contract (``_kernel``,
    ``_kernel_args``): its own overrides, else the base's kernels with no arguments."""
    cls = type(self)
    if cls._kernel is not _BASE[0]._kernel:
        kernel = self._kernel(binary)
    else:
        kernel = cls.binary_kernel if binary else cls.multiclass_kernel
    args = self._kernel_args() if cls._kernel_args is not _BASE[0]._kernel_args else ()
    return KernelCall(kernel, tuple(args))


def install(base) -> None:
    """Give the base class itself the old names (e.g. ``OnlineLinearClassifier._constraints``,
    which subclasses extend), and remember it for :func:`legacy_epoch_call`."""
    _BASE[:] = [base]
    for old, new in LEGACY_NAMES.items():
        if old not in base.__dict__:
            setattr(base, old, inspect.getattr_static(base, new))


_BASE: list = []  # the base class, once installed
