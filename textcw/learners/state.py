"""A learner's fitted state: its consistency checks and its round trip as plain data.

The state is a dict of float arrays (``state_names``) whose shapes follow from the number of
rows (features, plus the intercept), the labels and the parameters in ``state_params``, and
whose dtypes are :meth:`LearnerState.state_dtype`'s (float64 unless a learner's ``dtype``
parameter says otherwise). The kernels index it without bounds checks, so it is checked before
every epoch (``_kernel_state``) and whenever it is read;
:meth:`LearnerState.load_state_dict` checks a state that may come from someone else's file
before it replaces the learner's own.
"""

from __future__ import annotations

import os

import numpy as np
from sklearn.utils.validation import check_is_fitted

from textcw._compare import same_value
from textcw.errors import InputError, ParameterError
from textcw.learners.packed import pack, unpack
from textcw.learners.selftune import auto_params


def memory_budget() -> int:
    """Bytes a learner's state may take: half the machine's physical memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # not a POSIX system: assume 16 GB of memory
        return 8 * 2**30


class LearnerState:
    """The state half of :class:`textcw.learners.base.OnlineLinearClassifier`."""

    # Per-epoch counters beyond mistakes_ and n_updates_ (attribute names without the trailing
    # underscore) that state_dict carries, so that exported and combined models keep them.
    run_counters: tuple[str, ...] = ()

    def state_dtype(self, name: str) -> np.dtype:
        """The dtype of state array ``name``: float64, unless a learner keeps some arrays in
        32 bits (the Gaussian learners' ``dtype="float32"``)."""
        return np.dtype(np.float64)

    @property
    def kernel_state_names(self) -> tuple[str, ...]:
        """The state arrays the epoch kernel takes by position, in that order: all of
        ``state_names``, unless the learner keeps arrays that its kernels take by name (the
        averaging arrays, :mod:`textcw.learners.averaging`)."""
        return tuple(self.state_names)

    def _shaping_values(self) -> dict:
        return {name: getattr(self, name) for name in self.state_params}

    def _check_state_params(self, action: str) -> None:
        """Refuse to use the fitted state when a parameter in ``state_params`` changed since it
        was fitted (or loaded): the state would not have the arrays or shapes that value needs."""
        fitted = self.__dict__.get("_fitted_params")
        if fitted is None:
            return
        for name, then in fitted.items():
            now = getattr(self, name, then)
            if not same_value(now, then):
                raise ParameterError(
                    f"{type(self).__name__}: {name} was {then!r} when the model was fitted and is "
                    f"now {now!r}; {name} decides the shape of the fitted state, so the fitted model "
                    f"cannot be {action} with {name}={now!r}: call fit() to start over with the new "
                    f"value, or set_params({name}={then!r}) to keep the fitted model"
                )

    def _check_state_arrays(self, n_rows: int) -> None:
        """Every state array exists, has its dtype (:meth:`state_dtype`) and the shape the kernels
        assume for ``n_rows`` rows (features, plus the intercept) and the labels."""
        classes = self.classes_
        if not (isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.size >= 2
                and np.all(classes[1:] > classes[:-1])):
            # labels are encoded by binary search in classes_ and index the label blocks
            raise InputError(
                f"{type(self).__name__}: classes_ must be the sorted, distinct labels the model was "
                "fitted with; it was modified after fitting: call fit() to start over"
            )
        n_labels = None if len(classes) == 2 else len(classes)
        expected = self.state_shapes(n_rows, n_labels)
        state = self._state
        for name in self.state_names:
            array = state.get(name) if isinstance(state, dict) else None
            if array is None:
                raise InputError(
                    f"{type(self).__name__}: the fitted model has no {name!r} state array for the "
                    "current parameters; call fit() to start over"
                )
            problem = None
            dtype = self.state_dtype(name)
            if not isinstance(array, np.ndarray) or array.dtype != dtype:
                problem = f"is {getattr(array, 'dtype', type(array).__name__)}, not a {dtype} array"
            elif array.shape != expected[name]:
                problem = f"has shape {array.shape}, not {expected[name]}"
            if problem is not None:
                raise InputError(
                    f"{type(self).__name__}: state array {name!r} {problem}, which "
                    f"{int(self.n_features_in_)} features, {len(self.classes_)} classes and "
                    f"fit_intercept={self.fit_intercept} need; the fitted model was modified after "
                    "fitting (its arrays, n_features_in_ or classes_): call fit() to start over, "
                    "or load a state with load_state_dict()"
                )

    def _kernel_state(self, X, y, order) -> list[np.ndarray]:
        """The state arrays in kernel order, once everything the kernel indexes without bounds
        checks is known to agree: the state with the parameters, ``X``'s width (the kernels
        index the state with its column indices), ``y`` with the labels (multi-class kernels
        index label blocks with it) and ``order`` with the rows. Cheap: shapes, plus a min/max
        over ``y`` and ``order``, against an epoch that reads every non-zero.

        Within one ``partial_fit_each`` call (:mod:`textcw.learners.blocks`), whose blocks share
        one ``X`` and ``y``, only a block's ``order`` is checked again, as long as the state
        arrays are the very arrays checked for the first block (the kernels change their values
        only, which the checks do not read)."""
        blocks = self.__dict__.get("_blocks_of")
        n = X.shape[0]
        arrays = ([self._state.get(name) for name in self.state_names]
                  if blocks is not None and isinstance(self._state, dict) else None)
        checked = (arrays is not None and blocks[0] is X and blocks[1] is y and len(blocks[2]) == len(arrays)
                   and all(a is b for a, b in zip(blocks[2], arrays)))
        y_ok = True
        if not checked:
            self._check_state_params("continued by partial_fit")
            self._check_state_arrays(X.shape[1])
            y_ok = (y.ndim == 1 and y.shape[0] == n and y.flags.c_contiguous and
                    (y.dtype == np.float64 if self._binary else y.dtype == np.int64))
            if y_ok and n and not self._binary:
                y_ok = 0 <= int(y.min()) and int(y.max()) < len(self.classes_)
        order_ok = order.ndim == 1 and (order.size == 0 or (0 <= int(order.min()) and int(order.max()) < n))
        if not (y_ok and order_ok):
            raise InputError(
                f"{type(self).__name__}: the encoded labels or the visiting order do not match X "
                f"({n} rows) and the {len(self.classes_)} classes; the model's classes_ was "
                "modified after fitting: call fit() to start over"
            )
        self._writeable_state()
        if blocks is not None and blocks[0] is X and blocks[1] is y and y_ok:
            blocks[2][:] = [self._state[name] for name in self.state_names]  # checked, as the kernel gets them
        return [self._state[name] for name in self.kernel_state_names]

    def _writeable_state(self, skip: tuple[str, ...] = ()) -> None:
        """Make every state array one the kernels can write in place: C-contiguous and writeable
        (e.g. a model loaded read-only, memory-mapped, gets copies). A learner whose kernels
        want another layout overrides this (the Gaussian learners' paired mean and variance,
        :mod:`textcw.learners.interleaved`), leaving the arrays it arranged itself out (``skip``)."""
        for name in self.state_names:
            if name in skip:
                continue
            array = self._state[name]
            if not (array.flags.c_contiguous and array.flags.writeable):
                self._state[name] = np.array(array, order="C", copy=True)

    def _remember_fitted_params(self) -> None:
        self._fitted_params = self._shaping_values()


    def state_dict(self) -> dict:
        """The fitted model as plain data, the inverse of :meth:`load_state_dict`.

        ``{"classes": ndarray, "n_features_in": int, "mistakes": [int], "n_updates": [int],
        "arrays": {name: ndarray}}``, plus ``"counters": {name: [int]}`` for a learner with
        further per-epoch counters (``run_counters``, e.g. the Gaussian learners'
        ``n_variance_floored_``); the arrays are the learner's state (``mu`` and, for
        Gaussian learners, the covariance), not copies. With the learner's parameters
        (``get_params()``) this is everything needed to rebuild it, without pickle
        (:mod:`textcw.portable`, :func:`textcw.combine`).
        """
        state = self.fitted_state()
        check_is_fitted(self, "classes_")
        out = {
            "classes": self.classes_,
            "n_features_in": int(self.n_features_in_),
            "mistakes": [int(m) for m in self.mistakes_],
            "n_updates": [int(u) for u in self.n_updates_],
            "arrays": {name: state[name] for name in self.state_names},
        }
        counters = {name: [int(v) for v in getattr(self, name + "_")] for name in self.run_counters
                    if hasattr(self, name + "_")}
        if counters:
            out["counters"] = counters
        if "tuned_params_" in self.__dict__:
            out["tuned"] = {name: float(value) for name, value in self.tuned_params_.items()}
        return out

    def load_state_dict(self, state: dict):
        """Make this learner the fitted model described by ``state`` (see :meth:`state_dict`).

        Everything is checked first, because the state may come from a file someone else wrote:
        the labels, the array names for the current parameters, their shapes (from the number
        of features and labels), finite float values, and the learner's own constraints (e.g.
        positive variances). A bad state raises :class:`~textcw.errors.InputError` and leaves
        the learner as it was. Returns ``self``.
        """
        classes, n_features, counts = self._check_state_header(state)
        counters = self._check_counters(state.get("counters", {}))
        self.validate_params()
        tuned = self._check_tuned(state.get("tuned"))
        self.check_classes(classes.size)
        checked = self._checked_state_arrays(state["arrays"], classes, n_features)
        self.check_state_values(checked)
        self._adopt_state(classes, n_features, checked, counts, tuned, counters)
        return self

    @staticmethod
    def _check_state_header(state) -> tuple[np.ndarray, int, dict]:
        """``(classes, n_features_in, {"mistakes": [...], "n_updates": [...]})`` of a state, checked."""
        if not isinstance(state, dict):
            raise InputError(f"a learner state is a dict; got {type(state).__name__}")
        missing = {"classes", "n_features_in", "arrays"} - set(state)
        if missing:
            raise InputError(f"the learner state lacks {sorted(missing)}")
        classes = np.asarray(state["classes"])
        plain_objects = classes.dtype.kind == "O" and all(
            isinstance(c, (str, int, float, np.generic)) and not isinstance(c, bool) for c in classes.tolist())
        if classes.ndim != 1 or not (classes.dtype.kind in "biufU" or plain_objects):
            raise InputError(
                f"the learner state's classes must be a 1-d array of numbers or strings; got "
                f"dtype {classes.dtype} and shape {classes.shape}"
            )
        if classes.size < 2 or not np.array_equal(np.unique(classes), classes):
            raise InputError("the learner state's classes must be at least two distinct labels, sorted")
        n_features = state["n_features_in"]
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
            raise InputError(f"the learner state's n_features_in must be a positive integer; got {n_features!r}")
        counts = {k: state.get(k, []) for k in ("mistakes", "n_updates")}
        for key, values in counts.items():
            if not (isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                     for v in values)):
                raise InputError(f"the learner state's {key} must be a list of non-negative integers")
        return classes, n_features, counts

    def _checked_state_arrays(self, arrays, classes: np.ndarray, n_features) -> dict[str, np.ndarray]:
        """The state arrays, checked against the current parameters: names, dtypes, shapes, finite values."""
        names = tuple(self.state_names)
        if not isinstance(arrays, dict) or set(arrays) != set(names):
            got = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
            raise InputError(
                f"{type(self).__name__} with these parameters keeps the state arrays {list(names)}; "
                f"the state has {got}"
            )
        n_rows = int(n_features) + int(self.fit_intercept)
        template = self.state_shapes(n_rows, None if classes.size == 2 else int(classes.size))
        checked = {}
        for name in names:
            value = arrays[name]
            dtype = self.state_dtype(name)
            if not isinstance(value, np.ndarray) or value.dtype != dtype:
                raise InputError(f"state array {name!r} must be a {dtype} numpy array; got "
                                 f"{getattr(value, 'dtype', type(value).__name__)}"
                                 + (f" (the learner's dtype is {self.dtype!r}: set it to the "
                                    "state's)" if hasattr(self, "dtype") else ""))
            if value.shape != template[name]:
                raise InputError(
                    f"state array {name!r} has shape {value.shape}; with {n_features} features, "
                    f"{classes.size} classes and fit_intercept={self.fit_intercept} it must be "
                    f"{template[name]}"
                )
            if not np.all(np.isfinite(value)):
                raise InputError(f"state array {name!r} contains NaN or infinite values")
            checked[name] = np.ascontiguousarray(value)
        return checked

    def _adopt_state(self, classes: np.ndarray, n_features, checked: dict, counts: dict, tuned: dict,
                     counters: dict) -> None:
        """Replace the learner's fitted state by a checked one (the last step of :meth:`load_state_dict`)."""
        self.classes_ = classes.copy()
        self.n_features_in_ = int(n_features)
        self._state = checked
        self._remember_fitted_params()
        self.mistakes_ = list(counts["mistakes"])
        self.n_updates_ = list(counts["n_updates"])
        self.__dict__.pop("_tuner", None)
        if tuned:
            self.tuned_params_ = tuned
        else:
            self.__dict__.pop("tuned_params_", None)
        for name in self.run_counters:
            if name in counters:
                setattr(self, name + "_", list(counters[name]))
            else:
                self.__dict__.pop(name + "_", None)  # a state saved without them: not counted

    def _check_tuned(self, tuned) -> dict:
        """The values chosen for the learner's ``"auto"`` parameters, one finite number each."""
        auto = [name for name in auto_params(self) if getattr(self, name, None) == "auto"]
        if tuned is None and not auto:
            return {}
        if not (isinstance(tuned, dict) and set(tuned) == set(auto) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in tuned.values())):
            raise InputError(
                f"{type(self).__name__} with these parameters needs the state to record the values "
                f"chosen for {auto or 'no parameter'} (its 'tuned' entry); the state has {tuned!r}"
            )
        return {name: float(value) for name, value in tuned.items()}

    def _check_counters(self, counters) -> dict:
        """The optional per-epoch counters of a state (``run_counters``), checked."""
        if not isinstance(counters, dict) or not set(counters) <= set(self.run_counters):
            known = list(self.run_counters)
            raise InputError(f"the learner state's counters must be a dict with keys among {known}")
        for name, values in counters.items():
            if not (isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                     for v in values)):
                raise InputError(f"the learner state's counter {name} must be a list of non-negative integers")
        return counters

    def state_shapes(self, n_rows: int, n_labels: int | None) -> dict[str, tuple[int, ...]]:
        """The shape of every state array for ``n_rows`` rows and ``n_labels`` labels (``None``:
        binary).

        The default reads them off a fresh :meth:`new_state` and remembers them for these
        sizes and parameters, so that the check before every kernel call allocates a state at
        most once per change; learners whose shapes are plain arithmetic override this.
        """
        key = self._shapes_key(n_rows, n_labels)
        cached = self.__dict__.get("_shapes_cache")
        if cached is None or cached[0] != key:
            shapes = {name: array.shape for name, array in self.new_state(n_rows, n_labels).items()}
            self.__dict__["_shapes_cache"] = cached = (key, shapes)
        return cached[1]

    def _shapes_key(self, n_rows, n_labels):
        return (n_rows, n_labels, repr(sorted(self.get_params(deep=False).items())))

    @staticmethod
    def weight_shape(n_rows: int, n_labels: int | None) -> tuple[int, ...]:
        """A weight-like array: one value per row (binary) or per row and label."""
        return (n_rows,) if n_labels is None else (n_rows, n_labels)

    def check_state_values(self, state: dict[str, np.ndarray]) -> None:
        """Refuse state values the learner could never reach (subclasses: e.g. variances <= 0).

        Arrays named in ``positive_states`` must be positive; those in ``factor_states`` are
        upper-triangular Cholesky factors (per label block) with a positive diagonal.
        """
        for name in self.positive_states:
            if name in state and not np.all(state[name] > 0):
                raise InputError(f"state array {name!r} holds variances and must be positive everywhere")
        for name in self.factor_states:
            if name not in state:
                continue
            blocks = state[name] if state[name].ndim == 3 else state[name][None]
            for block in blocks:
                if not np.all(np.diag(block) > 0) or np.any(np.tril(block, -1)):
                    raise InputError(
                        f"state array {name!r} must be upper-triangular Cholesky factors with a "
                        "positive diagonal"
                    )

    def __getstate__(self):
        """The pickled state, with large state arrays that are mostly one value packed
        (:mod:`textcw.learners.packed`: a hashed model stores the buckets it learned)."""
        state = super().__getstate__()
        arrays = state.get("_state")
        if isinstance(arrays, dict):
            # C-ordered first: the paired mean and variance (views with a stride) are stored as
            # the two plain arrays they always were, and packed like them
            state = {**state, "_state": {name: pack(np.ascontiguousarray(array) if isinstance(array, np.ndarray)
                                                    else array) for name, array in arrays.items()}}
        return state

    def __setstate__(self, state):
        arrays = state.get("_state")
        if isinstance(arrays, dict):
            state = {**state, "_state": {name: unpack(value) for name, value in arrays.items()}}
        super().__setstate__(state)
        if "_state" in state and "_fitted_params" not in state:
            # pickled before the fitted values were recorded: its parameters are those it was
            # fitted with (the state-array checks hold either way)
            self._remember_fitted_params()
