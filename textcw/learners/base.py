"""The base class of every online linear learner.

It owns everything but the update rule: input validation, labels (binary or multi-class), epochs,
seeded shuffling, ``partial_fit``, online mistake counting, ``decision_function`` and ``predict``.
A learner module declares its parameters, its state arrays and the kernels that update them
(see :mod:`textcw.learners._kernels` for the kernel conventions).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from textcw._compare import same_value
from textcw._csr import as_kernel_csr
from textcw.errors import InputError, ParameterError
from textcw.learners.inputs import as_label_array, check_features, check_labels, check_targets
from textcw.learners.params import BOOL, EPOCHS, SEED, check_params

_PROGRESS_CHUNK = 2048


def memory_budget() -> int:
    """Bytes a learner's state may take: half the machine's physical memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # not a POSIX system: assume 16 GB of memory
        return 8 * 2**30


class OnlineLinearClassifier(ClassifierMixin, BaseEstimator):
    """Online linear classifier over sparse features; subclasses supply the update.

    Subclasses set ``_binary_kernel`` and ``_multiclass_kernel`` (numba kernels), list their
    state arrays in ``_state_names``, and implement :meth:`_new_state` and
    :meth:`_kernel_args`. They extend ``_constraints`` with their own parameters. A learner whose
    kernel or state depends on a parameter (e.g. ``covariance``) overrides :meth:`_kernel`,
    makes ``_state_names`` a property and lists that parameter in ``_state_params``; a learner
    whose state shapes are plain arithmetic overrides :meth:`_state_shapes` (the default builds
    a fresh state once per shape to read them off).

    Parameters and the fitted state. ``fit`` starts over with the current parameters.
    ``partial_fit`` continues the fitted model, as in scikit-learn, with the current values of
    the parameters that only steer the updates (``eta``, ``C``, ``multiclass``, ...); a
    parameter in ``_state_params`` (``fit_intercept``, ``covariance``) decides what the state
    *is*, so a value changed since the model was fitted is refused with a
    :class:`~textcw.errors.ParameterError` (call ``fit`` to start over, or set it back) by
    ``partial_fit`` and by everything that reads the fitted model. Parameters are validated on
    every ``fit`` and ``partial_fit`` call. Before a kernel runs, the state arrays are checked
    against ``X``, the labels and each other (numba does not check bounds): a state that
    does not fit (e.g. arrays replaced by hand) is an :class:`~textcw.errors.InputError`.

    Parameters every online learner has
    -----------------------------------
    n_epochs : int in [1, 1000000], default 5
        Passes of ``fit`` over the training data.
    shuffle : bool, default True
        Visit the documents in a new seeded random order in each pass of ``fit``.
    random_state : int in [0, 2**32 - 1] or None, default 0
        Seed of that order. The default makes every run give the same model, the one ``textcw
        train`` (whose ``--seed`` defaults to 0) trains; ``None`` draws a fresh order each time.
    fit_intercept : bool, default False
        Learn a bias as the weight of an extra, always-active feature.

    Fitted attributes
    -----------------
    classes_ : ndarray of shape (n_classes,)
        Sorted labels; in binary problems ``classes_[1]`` is the +1 label.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights (for Gaussian learners, the mean).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zero unless ``fit_intercept=True``.
    n_features_in_ : int
    mistakes_ : list of int
        Online mistakes of each epoch (or ``partial_fit`` call), counted before each update;
        a tie counts as a mistake. With ``shuffle=True``, ``fit`` counts them over a shuffled
        pass of each epoch, not the papers' online pass in corpus order (for that, use
        ``shuffle=False`` and one epoch).
    n_updates_ : list of int
        Examples that changed the model, per epoch.
    """

    _constraints: dict = {
        "n_epochs": EPOCHS,
        "shuffle": BOOL,
        "random_state": SEED,
        "fit_intercept": BOOL,
    }
    _state_names: tuple[str, ...] = ()
    # Parameters that decide the state's arrays or their shapes: fixed once the model is fitted
    # (partial_fit refuses a changed value; fit starts over with it).
    _state_params: tuple[str, ...] = ("fit_intercept",)
    _positive_states: tuple[str, ...] = ()  # state arrays that must stay > 0 (variances)
    _factor_states: tuple[str, ...] = ()  # upper Cholesky factors with a positive diagonal
    _binary_kernel = None
    _multiclass_kernel = None
    # Parameters added after models were first saved, with the value that reproduces the older
    # behaviour: an older pickle gets them when loaded (see __setstate__).
    _late_defaults: dict = {}

    # ----------------------------------------------------------------- subclass interface
    def _new_state(self, n_rows: int, n_labels: int | None) -> dict[str, np.ndarray]:
        """Fresh state arrays: shape ``(n_rows,)`` if binary, ``(n_rows, n_labels)`` otherwise."""
        raise NotImplementedError

    def _kernel_args(self) -> tuple:
        """The variant codes and hyperparameters passed after the state arrays."""
        return ()

    def _kernel(self, binary: bool):
        """The numba kernel that runs one epoch."""
        cls = type(self)  # class access: a numba dispatcher would otherwise bind like a method
        return cls._binary_kernel if binary else cls._multiclass_kernel

    def validate_params(self) -> None:
        """Check every parameter; raises :class:`textcw.errors.ParameterError`."""
        check_params(self, self._constraints)

    def _check_classes(self, n_classes: int) -> None:
        """Check the parameters that depend on the number of classes (e.g. ``k``), at fit time."""

    # ----------------------------------------------------------------- fitting
    def fit(self, X, y, *, progress=None):
        """Train from scratch for ``n_epochs`` passes over ``(X, y)``.

        ``progress(done, total)``, if given, is called as documents are processed.
        """
        self.validate_params()
        X, y, labels = self._check_training_input(X, y, reset=True)
        self._check_classes(len(labels))
        self._setup_labels(labels)
        self._init_model(X.shape[1])
        rng = np.random.RandomState(self.random_state)
        yk = self._encode(y)
        n = X.shape[0]
        for epoch in range(self.n_epochs):
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            on_chunk = None if progress is None else (lambda done, e=epoch: progress(e * n + done, self.n_epochs * n))
            self._run_epoch(X, yk, order, on_chunk)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over ``(X, y)`` in the given order, continuing from the current model.

        ``classes`` (every label the stream will contain) is required on the first call.
        """
        first = not hasattr(self, "classes_")
        self.validate_params()  # every call: set_params may have changed anything since
        if not first:
            self._check_state_params("continued by partial_fit")
        if first:
            if classes is None:
                raise InputError(
                    "the first partial_fit call needs classes=[...] listing every label the "
                    "stream will contain"
                )
        # A first mini-batch may hold a single class: classes= declares the others.
        X, y, labels = self._check_training_input(X, y, reset=first, min_classes=1)
        if first:
            declared = self._check_labels(as_label_array(classes, "classes"), what="classes")
            self._check_classes(len(declared))
            self._setup_labels(declared)
            self._init_model(X.shape[1])
        elif classes is not None:
            declared = self._check_labels(as_label_array(classes, "classes"), what="classes", min_classes=1)
            if not np.array_equal(declared, self.classes_):
                raise InputError(
                    f"classes={declared.tolist()} differs from the classes of the first "
                    f"partial_fit call ({self.classes_.tolist()})"
                )
        unknown = np.setdiff1d(labels, self.classes_)
        if unknown.size:
            raise InputError(
                f"labels {unknown.tolist()} are not among the declared classes {self.classes_.tolist()}; "
                "declare every label in classes= on the first partial_fit call"
            )
        if not first:
            self._check_classes(len(self.classes_))  # e.g. k changed by set_params since
        self._run_epoch(X, self._encode(y), np.arange(X.shape[0]))
        return self

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X):
        """Scores: shape (n,) for binary problems (positive means ``classes_[1]``), else (n, K)."""
        X = self._check_predict_input(X)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if self._binary else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if self._binary:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    # ----------------------------------------------------------------- model views
    @property
    def coef_(self) -> np.ndarray:
        mu = self._fitted_state()["mu"]
        mu = mu[: self.n_features_in_]
        return mu.reshape(1, -1) if self._binary else mu.T

    @property
    def intercept_(self) -> np.ndarray:
        mu = self._fitted_state()["mu"]
        if not self.fit_intercept:
            return np.zeros(1 if self._binary else len(self.classes_))
        bias = mu[self.n_features_in_]
        return np.atleast_1d(bias).astype(float).copy()

    # ----------------------------------------------------------------- internals
    @property
    def _binary(self) -> bool:
        return len(self.classes_) == 2

    def _fitted_state(self) -> dict[str, np.ndarray]:
        """The state arrays, after checking that they still describe the model the current
        parameters, ``n_features_in_`` and ``classes_`` say it is (O(number of arrays))."""
        if not hasattr(self, "_state"):
            # AttributeError keeps hasattr(model, "coef_") False before fitting, as sklearn expects.
            raise AttributeError(f"{type(self).__name__} is not fitted yet; call fit first")
        try:
            self._check_state_params("used")
            self._check_state_arrays(int(self.n_features_in_) + int(self.fit_intercept))
        except (InputError, ParameterError) as error:
            if self.__dict__.get("_previewing"):
                raise AttributeError(str(error)) from None  # the notebook view leaves it out
            raise
        return self._state

    # ----------------------------------------------------------------- state consistency
    def _shaping_values(self) -> dict:
        return {name: getattr(self, name) for name in self._state_params}

    def _check_state_params(self, action: str) -> None:
        """Refuse to use the fitted state when a parameter in ``_state_params`` changed since it
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
        """Every state array exists, is a float64 array and has the shape the kernels assume for
        ``n_rows`` rows (features, plus the intercept) and the labels."""
        classes = self.classes_
        if not (isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.size >= 2
                and np.all(classes[1:] > classes[:-1])):
            # labels are encoded by binary search in classes_ and index the label blocks
            raise InputError(
                f"{type(self).__name__}: classes_ must be the sorted, distinct labels the model was "
                "fitted with; it was modified after fitting: call fit() to start over"
            )
        n_labels = None if len(classes) == 2 else len(classes)
        expected = self._state_shapes(n_rows, n_labels)
        state = self._state
        for name in self._state_names:
            array = state.get(name) if isinstance(state, dict) else None
            if array is None:
                raise InputError(
                    f"{type(self).__name__}: the fitted model has no {name!r} state array for the "
                    "current parameters; call fit() to start over"
                )
            problem = None
            if not isinstance(array, np.ndarray) or array.dtype != np.float64:
                problem = f"is {getattr(array, 'dtype', type(array).__name__)}, not a float64 array"
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

    def _remember_fitted_params(self) -> None:
        self._fitted_params = self._shaping_values()

    def _check_labels(self, y, what="y", min_classes=2) -> np.ndarray:
        return check_labels(y, what, min_classes)

    def _check_X(self, X, *, reset: bool):
        """Canonical CSR for the kernels (:func:`textcw.learners.inputs.check_features`)."""
        return check_features(X, None if reset else self.n_features_in_, estimator=type(self).__name__)

    def _check_training_input(self, X, y, *, reset: bool, min_classes: int = 2):
        if y is None:  # before X: scikit-learn's checks expect this error first
            check_targets(y, 0, estimator=type(self).__name__)
        X = self._check_X(X, reset=reset)
        y = check_targets(y, X.shape[0], estimator=type(self).__name__)
        if reset:
            labels = self._check_labels(y, min_classes=min_classes)
        else:
            try:
                labels = np.unique(y)
            except TypeError:
                labels = self._check_labels(y)  # raises: mixed label types
        if self.fit_intercept:
            X = as_kernel_csr(sp.hstack([X, np.ones((X.shape[0], 1))], format="csr"))
        return X, y, labels

    def _check_predict_input(self, X):
        check_is_fitted(self, "classes_")
        return self._check_X(X, reset=False)

    def _setup_labels(self, classes: np.ndarray) -> None:
        self.classes_ = classes

    def _init_model(self, n_columns: int) -> None:
        n_labels = None if self._binary else len(self.classes_)
        # Refuse before allocating: np.zeros of a huge width fails with a bare MemoryError (or,
        # with overcommit, later and anywhere). Full covariances check their own, larger size.
        need = 8 * n_columns * (n_labels or 1) * len(self._state_names)
        if need > memory_budget():
            raise InputError(
                f"X has {n_columns - int(self.fit_intercept):,} features: {type(self).__name__}'s state "
                f"would take {need / 1e9:,.1f} GB, more than half of this machine's memory; use "
                "fewer features (e.g. the hashing featurizer with a smaller n_features)"
            )
        self.n_features_in_ = n_columns - int(self.fit_intercept)
        self._state = self._new_state(n_columns, n_labels)
        self._remember_fitted_params()
        if type(self)._state_shapes is OnlineLinearClassifier._state_shapes:
            # the shapes the default _state_shapes would build a second state to read off
            self.__dict__["_shapes_cache"] = (self._shapes_key(n_columns, n_labels),
                                              {name: a.shape for name, a in self._state.items()})
        self.mistakes_ = []
        self.n_updates_ = []

    def _encode(self, y) -> np.ndarray:
        idx = np.searchsorted(self.classes_, y)
        if self._binary:
            return np.where(idx == 1, 1.0, -1.0)
        return idx.astype(np.int64)

    def _run_epoch(self, X, y, order, on_chunk=None) -> None:
        kernel = self._kernel(self._binary)
        order = order.astype(np.int64)
        state = self._kernel_state(X, y, order)
        args = self._kernel_args()
        # The kernel updates the state in place, so running it over consecutive slices of the
        # order is the same epoch; slicing only serves to report progress.
        step = max(1, order.shape[0]) if on_chunk is None else _PROGRESS_CHUNK
        mistakes = updates = 0
        for start in range(0, order.shape[0], step):
            m, u = kernel(X.indptr, X.indices, X.data, y, order[start:start + step], *state, *args)
            mistakes += m
            updates += u
            if on_chunk is not None:
                on_chunk(min(start + step, order.shape[0]))
        self.mistakes_.append(int(mistakes))
        self.n_updates_.append(int(updates))

    def _kernel_state(self, X, y, order) -> list[np.ndarray]:
        """The state arrays in kernel order, once everything the kernel indexes without bounds
        checks is known to agree: the state with the parameters, ``X``'s width (the kernels
        index the state with its column indices), ``y`` with the labels (multi-class kernels
        index label blocks with it) and ``order`` with the rows. Cheap: shapes, plus a min/max
        over ``y`` and ``order``, against an epoch that reads every non-zero."""
        self._check_state_params("continued by partial_fit")
        self._check_state_arrays(X.shape[1])
        n = X.shape[0]
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
        for name in self._state_names:
            array = self._state[name]
            if not (array.flags.c_contiguous and array.flags.writeable):
                # e.g. a model loaded read-only (memory-mapped): the kernels write in place
                self._state[name] = np.array(array, order="C", copy=True)
        return [self._state[name] for name in self._state_names]

    # ----------------------------------------------------------------- state as plain data
    def state_dict(self) -> dict:
        """The fitted model as plain data, the inverse of :meth:`load_state_dict`.

        ``{"classes": ndarray, "n_features_in": int, "mistakes": [int], "n_updates": [int],
        "arrays": {name: ndarray}}``; the arrays are the learner's state (``mu`` and, for
        Gaussian learners, the covariance), not copies. With the learner's parameters
        (``get_params()``) this is everything needed to rebuild it, without pickle
        (:mod:`textcw.portable`, :func:`textcw.combine`).
        """
        state = self._fitted_state()
        check_is_fitted(self, "classes_")
        return {
            "classes": self.classes_,
            "n_features_in": int(self.n_features_in_),
            "mistakes": [int(m) for m in self.mistakes_],
            "n_updates": [int(u) for u in self.n_updates_],
            "arrays": {name: state[name] for name in self._state_names},
        }

    def load_state_dict(self, state: dict):
        """Make this learner the fitted model described by ``state`` (see :meth:`state_dict`).

        Everything is checked first, because the state may come from a file someone else wrote:
        the labels, the array names for the current parameters, their shapes (from the number
        of features and labels), finite float values, and the learner's own constraints (e.g.
        positive variances). A bad state raises :class:`~textcw.errors.InputError` and leaves
        the learner as it was. Returns ``self``.
        """
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
        self.validate_params()
        self._check_classes(classes.size)
        arrays = state["arrays"]
        names = tuple(self._state_names)
        if not isinstance(arrays, dict) or set(arrays) != set(names):
            got = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
            raise InputError(
                f"{type(self).__name__} with these parameters keeps the state arrays {list(names)}; "
                f"the state has {got}"
            )
        n_rows = int(n_features) + int(self.fit_intercept)
        template = self._state_shapes(n_rows, None if classes.size == 2 else int(classes.size))
        checked = {}
        for name in names:
            value = arrays[name]
            if not isinstance(value, np.ndarray) or value.dtype != np.float64:
                raise InputError(f"state array {name!r} must be a float64 numpy array; got "
                                 f"{getattr(value, 'dtype', type(value).__name__)}")
            if value.shape != template[name]:
                raise InputError(
                    f"state array {name!r} has shape {value.shape}; with {n_features} features, "
                    f"{classes.size} classes and fit_intercept={self.fit_intercept} it must be "
                    f"{template[name]}"
                )
            if not np.all(np.isfinite(value)):
                raise InputError(f"state array {name!r} contains NaN or infinite values")
            checked[name] = np.ascontiguousarray(value)
        self._check_state_values(checked)
        self.classes_ = classes.copy()
        self.n_features_in_ = int(n_features)
        self._state = checked
        self._remember_fitted_params()
        self.mistakes_ = list(counts["mistakes"])
        self.n_updates_ = list(counts["n_updates"])
        return self

    def _state_shapes(self, n_rows: int, n_labels: int | None) -> dict[str, tuple[int, ...]]:
        """The shape of every state array for ``n_rows`` rows and ``n_labels`` labels (``None``:
        binary).

        The default reads them off a fresh :meth:`_new_state` and remembers them for these
        sizes and parameters, so that the check before every kernel call allocates a state at
        most once per change; learners whose shapes are plain arithmetic override this.
        """
        key = self._shapes_key(n_rows, n_labels)
        cached = self.__dict__.get("_shapes_cache")
        if cached is None or cached[0] != key:
            shapes = {name: array.shape for name, array in self._new_state(n_rows, n_labels).items()}
            self.__dict__["_shapes_cache"] = cached = (key, shapes)
        return cached[1]

    def _shapes_key(self, n_rows, n_labels):
        return (n_rows, n_labels, repr(sorted(self.get_params(deep=False).items())))

    @staticmethod
    def _weight_shape(n_rows: int, n_labels: int | None) -> tuple[int, ...]:
        """A weight-like array: one value per row (binary) or per row and label."""
        return (n_rows,) if n_labels is None else (n_rows, n_labels)

    def _check_state_values(self, state: dict[str, np.ndarray]) -> None:
        """Refuse state values the learner could never reach (subclasses: e.g. variances <= 0).

        Arrays named in ``_positive_states`` must be positive; those in ``_factor_states`` are
        upper-triangular Cholesky factors (per label block) with a positive diagonal.
        """
        for name in self._positive_states:
            if name in state and not np.all(state[name] > 0):
                raise InputError(f"state array {name!r} holds variances and must be positive everywhere")
        for name in self._factor_states:
            if name not in state:
                continue
            blocks = state[name] if state[name].ndim == 3 else state[name][None]
            for block in blocks:
                if not np.all(np.diag(block) > 0) or np.any(np.tril(block, -1)):
                    raise InputError(
                        f"state array {name!r} must be upper-triangular Cholesky factors with a "
                        "positive diagonal"
                    )

    def __setstate__(self, state):
        for name, value in self._late_defaults.items():
            state.setdefault(name, value)
        super().__setstate__(state)
        if "_state" in state and "_fitted_params" not in state:
            # pickled before the fitted values were recorded: its parameters are those it was
            # fitted with (the state-array checks hold either way)
            self._remember_fitted_params()

    def _get_fitted_attr_html(self, doc_link=""):
        """scikit-learn's notebook view evaluates every public attribute ending in ``_`` to show
        a preview: it skips those that raise AttributeError, so while it runs, attributes that
        would form large matrices (``covariance_``) or read an unusable state raise that."""
        self.__dict__["_previewing"] = True
        try:
            return super()._get_fitted_attr_html(doc_link)
        finally:
            self.__dict__.pop("_previewing", None)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
