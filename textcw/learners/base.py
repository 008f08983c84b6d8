"""The base class of every online linear learner.

It owns everything but the update rule: input validation, labels (binary or multi-class), epochs,
seeded shuffling, ``partial_fit``, online mistake counting, ``decision_function`` and ``predict``.
A learner module declares its parameters, its state arrays and the kernels that update them
(the contract is :mod:`textcw.learners.protocol`; :mod:`textcw.kernels` has the kernel
conventions and building blocks).
"""

from __future__ import annotations


import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from textcw._compare import same_value
from textcw._csr import as_kernel_csr
from textcw.errors import DataError, InputError, ParameterError
from textcw.learners import autotune, blocks, weighting
from textcw.learners.inputs import (as_label_array, check_features, check_labels, check_targets, distinct_labels,
                                   unknown_labels)
from textcw.learners.params import BOOL, EPOCHS, SEED, check_params
from textcw.learners.protocol import KernelCall, bind_kernel, prepare_learner_class, warn_if_no_updates
from textcw.learners.selftune import Axis
from textcw.learners.state import LearnerState, memory_budget

_PROGRESS_CHUNK = 2048


class OnlineLinearClassifier(LearnerState, ClassifierMixin, BaseEstimator):
    """Online linear classifier over sparse features; subclasses supply the update.

    A subclass implements the learner contract of :mod:`textcw.learners.protocol` under public
    names: it extends ``constraints`` with its own parameters, lists its state arrays in
    ``state_names`` and implements :meth:`new_state`; for the kernel it either sets
    ``binary_kernel`` and ``multiclass_kernel`` and returns the kernels' named scalar arguments
    from :meth:`kernel_values`, or overrides :meth:`epoch_call`. A learner whose kernel or state
    depends on a parameter (e.g. ``covariance``) makes ``state_names`` a property and lists that
    parameter in ``state_params``; a learner whose state shapes are plain arithmetic overrides
    :meth:`state_shapes` (the default builds a fresh state once per shape to read them off).
    A subclass overrides only the names in :data:`textcw.learners.protocol.LEARNER_HOOKS`
    (the plugin kit's ``overrides_only_hooks`` check holds it to that list).

    Parameters and the fitted state. ``fit`` starts over with the current parameters.
    ``partial_fit`` continues the fitted model, as in scikit-learn, with the current values of
    the parameters that only steer the updates (``eta``, ``C``, ``multiclass``, ...); a
    parameter in ``state_params`` (``fit_intercept``, ``covariance``) decides what the state
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

    constraints: dict = {
        "n_epochs": EPOCHS,
        "shuffle": BOOL,
        "random_state": SEED,
        "fit_intercept": BOOL,
    }
    state_names: tuple[str, ...] = ()
    # Parameters that decide the state's arrays or their shapes: fixed once the model is fitted
    # (partial_fit refuses a changed value; fit starts over with it).
    state_params: tuple[str, ...] = ("fit_intercept",)
    positive_states: tuple[str, ...] = ()  # state arrays that must stay > 0 (variances)
    factor_states: tuple[str, ...] = ()  # upper Cholesky factors with a positive diagonal
    weights: str = "mu"  # the state array coef_ and intercept_ read
    state_combine: dict = {"mu": "mean"}  # how textcw.combine merges each array (protocol.py)
    binary_kernel = None
    multiclass_kernel = None
    # The tunable parameters (textcw.learners.selftune.Axis): the tune evaluator's grid and, for
    # an axis with a unit, the candidates of "auto" (textcw.learners.autotune), which the
    # parameter's constraint then accepts.
    tuning: tuple[Axis, ...] = ()
    # Parameters that do not change the fitted model or its predictions (the plugin kit's
    # parameters_take_effect check holds every other parameter to changing them).
    inert_params: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        prepare_learner_class(cls)  # tuning's "auto"; constraints cover exactly __init__'s parameters

    # ----------------------------------------------------------------- subclass interface
    def new_state(self, n_rows: int, n_labels: int | None) -> dict[str, np.ndarray]:
        """Fresh state arrays: shape ``(n_rows,)`` if binary, ``(n_rows, n_labels)`` otherwise."""
        raise NotImplementedError

    def kernel_values(self) -> dict:
        """The kernels' scalar arguments after the state arrays, by parameter name (variant
        codes and hyperparameters); :meth:`epoch_call` passes each to the kernel parameter of
        that name. Offer a name only when its value matters: a kernel must read every value
        offered (:func:`~textcw.learners.protocol.bind_kernel` fails closed), except those
        :meth:`optional_kernel_values` names."""
        return {}

    def optional_kernel_values(self) -> frozenset[str]:
        """The names in :meth:`kernel_values` that a kernel may leave unread (none by default)."""
        return frozenset()

    def epoch_call(self, binary: bool) -> KernelCall:
        """The kernel that runs one epoch, and its arguments after the state arrays."""
        cls = type(self)  # class access: a numba dispatcher would otherwise bind like a method
        kernel = cls.binary_kernel if binary else cls.multiclass_kernel
        if kernel is None:
            raise NotImplementedError(
                f"{cls.__name__} sets no {'binary' if binary else 'multiclass'}_kernel and does not "
                "override epoch_call()"
            )
        return bind_kernel(kernel, self.kernel_state_names, self.kernel_values(),
                           self.optional_kernel_values())

    def validate_params(self) -> None:
        """Check every parameter; raises :class:`textcw.errors.ParameterError`."""
        check_params(self, self.constraints)

    def resolved(self, name: str):
        """The value of parameter ``name`` the updates use: the parameter itself, or for
        ``"auto"`` the value fitting chose (``tuned_params_``)."""
        value = getattr(self, name)
        if isinstance(value, str) and value == autotune.AUTO:
            tuned = self.__dict__.get("tuned_params_", {})
            if name not in tuned:
                raise ParameterError(
                    f"{type(self).__name__}: {name}='auto' is chosen when the learner is fitted; "
                    "call fit or partial_fit first"
                )
            return tuned[name]
        return value

    def check_classes(self, n_classes: int) -> None:
        """Check the parameters that depend on the number of classes (e.g. ``k``), at fit time."""

    # ----------------------------------------------------------------- fitting
    def fit(self, X, y, sample_weight=None, *, progress=None):
        """Train from scratch for ``n_epochs`` passes over ``(X, y)``.

        ``sample_weight`` (one weight >= 0 per document, or None) weights each document's term
        of the learner's objective (docs/algorithms.md "Weighted examples"); a weight of 0 skips
        the document. ``class_weight`` (where the learner has it) multiplies in. Learners whose
        update has no weighted form (plain PA, CW) refuse weights.
        ``progress(done, total)``, if given, is called as documents are processed.
        """
        self.validate_params()
        if autotune.auto_names(self):
            if sample_weight is not None or getattr(self, "class_weight", None) is not None:
                raise ParameterError(
                    f"{type(self).__name__}: sample_weight and class_weight are not supported "
                    "with 'auto' hyperparameters; give the hyperparameters explicitly")
            return autotune.fit(self, X, y)
        X, y, labels = self._check_training_input(X, y, reset=True)
        weights = self._example_weights(sample_weight, y, labels, partial=False)
        self.check_classes(len(labels))
        self._setup_labels(labels)
        self._init_model(X.shape[1])
        rng = np.random.RandomState(self.random_state)
        yk = self._encode(y)
        n = X.shape[0]
        self.__dict__["_epoch_weights"] = weights
        try:
            for epoch in range(self.n_epochs):
                order = rng.permutation(n) if self.shuffle else np.arange(n)
                on_chunk = None if progress is None else (lambda done, e=epoch: progress(e * n + done, self.n_epochs * n))
                self._run_epoch(X, yk, order, on_chunk)
                if epoch == 0:
                    warn_if_no_updates(self, X)
        finally:
            self.__dict__.pop("_epoch_weights", None)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over ``(X, y)`` in the given order, continuing from the current model.

        ``classes`` (every label the stream will contain) is required on the first call.
        ``sample_weight`` as for :meth:`fit`; ``class_weight="balanced"`` needs the whole
        training set's class counts and is refused here (as in scikit-learn).
        """
        first = not hasattr(self, "classes_")
        self.validate_params()  # every call: set_params may have changed anything since
        if autotune.auto_names(self) and (first or "_tuner" in self.__dict__):
            if sample_weight is not None or getattr(self, "class_weight", None) is not None:
                raise ParameterError(
                    f"{type(self).__name__}: sample_weight and class_weight are not supported "
                    "with 'auto' hyperparameters; give the hyperparameters explicitly")
            return autotune.partial_fit(self, X, y, classes)
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
            self.check_classes(len(declared))
            self._setup_labels(declared)
            self._init_model(X.shape[1])
        elif classes is not None:
            declared = self._check_labels(as_label_array(classes, "classes"), what="classes", min_classes=1)
            if not np.array_equal(declared, self.classes_):
                raise InputError(
                    f"classes={declared.tolist()} differs from the classes of the first "
                    f"partial_fit call ({self.classes_.tolist()})"
                )
        unknown = unknown_labels(labels, self.classes_)
        if unknown.size:
            raise InputError(
                f"labels {unknown.tolist()} are not among the declared classes {self.classes_.tolist()}; "
                "declare every label in classes= on the first partial_fit call"
            )
        if not first:
            self.check_classes(len(self.classes_))  # e.g. k changed by set_params since
        self.__dict__["_epoch_weights"] = self._example_weights(sample_weight, y, self.classes_, partial=True)
        try:
            self._run_epoch(X, self._encode(y), np.arange(X.shape[0]))
        finally:
            self.__dict__.pop("_epoch_weights", None)
        warn_if_no_updates(self, X)
        return self

    def partial_fit_each(self, X, y, sizes=None, sample_weight=None):
        """Consecutive :meth:`partial_fit` calls in one: for each block of ``sizes[i]`` rows of
        ``(X, y)`` in turn, what ``partial_fit(X[a:b], y[a:b])`` does, bit for bit (the same
        state arrays, one entry per block appended to ``mistakes_``, ``n_updates_`` and the
        learner's other per-call counters). ``sizes=None`` makes every row its own block:
        ``mistakes_[-n:]`` and ``n_updates_[-n:]`` then say of each row whether it was a
        mistake and whether it changed the model. The checks cost what one call's do, whatever
        the number of blocks; every block is checked before any is learned (bad input raises
        and learns nothing). See :mod:`textcw.learners.blocks`. Returns ``self``."""
        one_call = type(self).partial_fit is OnlineLinearClassifier.partial_fit
        return blocks.partial_fit_each(self, X, y, sizes, sample_weight, one_call=one_call)

    # ----------------------------------------------------------------- example weights
    def check_weight_support(self, binary: bool) -> None:
        """Raise :class:`~textcw.errors.ParameterError` unless this learner, as configured, has
        a weighted update (docs/algorithms.md "Weighted examples"). A learner that supports
        weights overrides this and passes ``weights`` to its kernel."""
        raise ParameterError(
            f"{type(self).__name__} has no weighted update: sample_weight and class_weight are "
            "not supported; use Perceptron, PA-I, PA-II, SGD, AROW or SCW for weighted examples")

    def _example_weights(self, sample_weight, y, labels, *, partial: bool):
        """Per-document weights for this call (:func:`textcw.learners.weighting.example_weights`),
        after checking that the learner has a weighted update; ``None`` when no weights apply."""
        weights = weighting.example_weights(self, sample_weight, y, labels, partial=partial)
        if weights is not None and not np.all((weights == 0.0) | (weights == 1.0)):
            # weights of 0 (skip) and 1 (as is) are defined for every learner
            self.check_weight_support(len(labels if not partial else self.classes_) == 2)
        return weights

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
        mu = self.fitted_state()[self.weights]
        mu = mu[: self.n_features_in_]
        return mu.reshape(1, -1) if self._binary else mu.T

    @property
    def intercept_(self) -> np.ndarray:
        mu = self.fitted_state()[self.weights]
        if not self.fit_intercept:
            return np.zeros(1 if self._binary else len(self.classes_))
        bias = mu[self.n_features_in_]
        return np.atleast_1d(bias).astype(float).copy()

    # ----------------------------------------------------------------- internals
    @property
    def _binary(self) -> bool:
        return len(self.classes_) == 2

    def fitted_state(self) -> dict[str, np.ndarray]:
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
                labels = distinct_labels(y)
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
        per_row = sum(self.state_dtype(name).itemsize for name in self.state_names)  # bytes
        need = n_columns * (n_labels or 1) * per_row
        if need > memory_budget():
            raise InputError(
                f"X has {n_columns - int(self.fit_intercept):,} features: {type(self).__name__}'s state "
                f"would take {need / 1e9:,.1f} GB, more than half of this machine's memory; use "
                "fewer features (e.g. the hashing featurizer with a smaller n_features)"
            )
        self.n_features_in_ = n_columns - int(self.fit_intercept)
        self._state = self.new_state(n_columns, n_labels)
        self._remember_fitted_params()
        if type(self).state_shapes is LearnerState.state_shapes:
            # the shapes the default state_shapes would build a second state to read off
            self.__dict__["_shapes_cache"] = (self._shapes_key(n_columns, n_labels),
                                              {name: a.shape for name, a in self._state.items()})
        self.mistakes_ = []
        self.n_updates_ = []
        for name in ("tuned_params_", "tuning_", "_tuner"):  # from an earlier fit with "auto"
            self.__dict__.pop(name, None)

    def _encode(self, y) -> np.ndarray:
        idx = np.searchsorted(self.classes_, y)
        if self._binary:
            return np.where(idx == 1, 1.0, -1.0)
        return idx.astype(np.int64)

    def _run_epoch(self, X, y, order, on_chunk=None) -> None:
        order = order.astype(np.int64)
        weights = self.__dict__.get("_epoch_weights")
        if weights is not None:
            order = order[weights[order] > 0.0]  # a weight of 0 skips the document
            if np.all(weights[order] == 1.0):
                # unit weights: the kernel's unweighted path, which they equal bit for bit (and
                # which every kernel has)
                weights = None
        given = self.__dict__.get("_epoch_weights")
        self.__dict__["_epoch_weights"] = weights
        try:
            kernel, args = self.epoch_call(self._binary)
        finally:
            self.__dict__["_epoch_weights"] = given
        state = self._kernel_state(X, y, order)
        # The kernel updates the state in place, so running it over consecutive slices of the
        # order is the same epoch; slicing only serves to report progress.
        step = max(1, order.shape[0]) if on_chunk is None else _PROGRESS_CHUNK
        mistakes = updates = 0
        for start in range(0, order.shape[0], step):
            try:
                m, u = kernel(X.indptr, X.indices, X.data, y, order[start:start + step], *state, *args)
            except FloatingPointError as exc:  # a plugin variant's loop refused a non-finite state
                raise DataError(f"{type(self).__name__}: {exc} (documents before it were learned); "
                                "lower the step's parameters or check the update for an overflow") from None
            mistakes += m
            updates += u
            if on_chunk is not None:
                on_chunk(min(start + step, order.shape[0]))
        self.mistakes_.append(int(mistakes))
        self.n_updates_.append(int(updates))

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

