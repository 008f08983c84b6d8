"""A plugin author's learner mistakes that used to train a wrong model without a word now end in
an error when the class is defined, or a warning when it runs, and fail the kit.

Each trap is reproduced on a scratch plugin class:

- (a) a hand-written kernel with a defaulted parameter the learner never passes (its default
  silently stood in): :class:`~textcw.learners.protocol.KernelDefaultWarning` while fitting;
- (b) a parameter missing from ``constraints`` (``b=-5`` was never checked): a ``TypeError``
  when the class is defined;
- (c) a kernel that makes no update at all: :class:`~textcw.learners.protocol.NoUpdateWarning`
  after the first pass, and the kit's ``learns_from_mistakes`` check fails.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import POSITIVE, Interval
from textcw.learners.perceptron import Perceptron
from textcw.learners.protocol import KernelDefaultWarning, LearnerContractWarning, NoUpdateWarning
from textcw.testing import learner_under_test, make_sparse_classification

from kit_components import CentroidLearner


# ------------------------------------------------------------------ scratch plugin kernels
def margin_perceptron(indptr, indices, data, y, order, mu, C, margin=1.0):
    """A perceptron that updates when ``y w.x <= margin`` (plain Python: the base class calls
    any callable with the kernel's signature)."""
    mistakes = updates = 0
    for i in order:
        score = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            score += mu[indices[p]] * data[p]
        if y[i] * score <= 0.0:
            mistakes += 1
        if y[i] * score <= margin and indptr[i + 1] > indptr[i]:
            updates += 1
            for p in range(indptr[i], indptr[i + 1]):
                mu[indices[p]] += C * y[i] * data[p]
    return mistakes, updates


def rebinding_perceptron(indptr, indices, data, y, order, mu, C):
    """The trap of (c): ``mu = mu + step`` makes a new array, so the learner's state never moves."""
    mistakes = 0
    for i in order:
        score = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            score += mu[indices[p]] * data[p]
        if y[i] * score <= 0.0:
            mistakes += 1
            step = np.zeros_like(mu)
            step[indices[indptr[i]:indptr[i + 1]]] = C * y[i] * data[indptr[i]:indptr[i + 1]]
            mu = mu + step  # the mistake under test: a new array, not the state
    return mistakes, 0


class MarginLearner(OnlineLinearClassifier):
    """A plugin learner with a ``margin`` parameter that its kernel_values forgets to pass."""

    constraints = {**OnlineLinearClassifier.constraints, "C": POSITIVE,
                   "margin": Interval(0.0, closed="left")}
    state_names = ("mu",)
    binary_kernel = margin_perceptron

    def __init__(self, *, C=1.0, margin=0.0, n_epochs=2, shuffle=True, random_state=0, fit_intercept=False):
        self.C, self.margin = C, margin
        self.n_epochs, self.shuffle, self.random_state, self.fit_intercept = n_epochs, shuffle, random_state, fit_intercept

    def new_state(self, n_rows, n_labels):
        return {"mu": np.zeros(n_rows if n_labels is None else (n_rows, n_labels))}

    def kernel_values(self):
        return {"C": float(self.C)}  # the trap of (a): no "margin"


class PassesMargin(MarginLearner):
    def kernel_values(self):
        return {"C": float(self.C), "margin": float(self.margin)}


class MeansTheDefault(MarginLearner):
    """Declares that its kernel's default margin is meant."""

    constraints = {**OnlineLinearClassifier.constraints, "C": POSITIVE}

    def __init__(self, *, C=1.0, n_epochs=2, shuffle=True, random_state=0, fit_intercept=False):
        self.C = C
        self.n_epochs, self.shuffle, self.random_state, self.fit_intercept = n_epochs, shuffle, random_state, fit_intercept

    def optional_kernel_values(self):
        return frozenset({"margin"})


class NeverUpdates(PassesMargin):
    binary_kernel = rebinding_perceptron

    def kernel_values(self):
        return {"C": float(self.C)}


def binary():
    return make_sparse_classification(160, 60, 2, random_state=0, label_names=("neg", "pos"))


def contract_warnings(fit) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, LearnerContractWarning)]


# ------------------------------------------------------------------ (a) a kernel default stands in
def test_a_a_kernel_default_the_learner_never_passes_is_warned_at_fit_time():
    X, y = binary()
    # what went unnoticed: margin=0.0 trains the model of the kernel's margin=1.0
    with pytest.warns(KernelDefaultWarning, match=r"^kernel margin_perceptron: the learner does not pass "
                                                  r"'margin', so the kernel's default 1\.0 silently stands "
                                                  r"in for it; pass it from kernel_values\(\)"):
        wrong = MarginLearner(margin=0.0).fit(X, y)
    meant = PassesMargin(margin=1.0).fit(X, y)
    assert np.array_equal(wrong.coef_, meant.coef_)  # margin=0.0 was ignored
    assert not contract_warnings(lambda: PassesMargin(margin=0.0).fit(X, y))
    assert not contract_warnings(lambda: MeansTheDefault().fit(X, y))  # declared optional


def test_a_the_kit_fails_a_kernel_default_standing_in():
    component = learner_under_test(MarginLearner)
    check = next(c for c in component.checks if c.name == "learns_from_mistakes")
    with pytest.raises(AssertionError, match=r"learner MarginLearner fails learns_from_mistakes: 2-class: "
                                             r"fit warned KernelDefaultWarning: kernel margin_perceptron"):
        check(component)


# ------------------------------------------------------------------ (b) a parameter without a constraint
def test_b_a_parameter_missing_from_constraints_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match=r"^Bounded: constraints has no entry for 'b', which __init__ takes; "
                                        r"add one constraint per parameter") as raised:
        class Bounded(PassesMargin):  # b=-5 would train a zero model, never checked
            def __init__(self, *, C=1.0, margin=0.0, b=0.05, n_epochs=2, shuffle=True, random_state=0,
                         fit_intercept=False):
                super().__init__(C=C, margin=margin, n_epochs=n_epochs, shuffle=shuffle,
                                 random_state=random_state, fit_intercept=fit_intercept)
                self.b = b
    assert "\n" not in str(raised.value)


def test_b_a_constraint_for_no_parameter_is_warned_where_it_is_declared():
    with pytest.warns(LearnerContractWarning, match=r"^Stale: constraints names 'margin', which __init__ does not take"):
        class Stale(OnlineLinearClassifier):
            constraints = {**OnlineLinearClassifier.constraints, "margin": POSITIVE}

            def __init__(self, *, n_epochs=2, shuffle=True, random_state=0, fit_intercept=False):
                self.n_epochs, self.shuffle, self.random_state = n_epochs, shuffle, random_state
                self.fit_intercept = fit_intercept

    class Covered(PassesMargin):  # inherits both __init__ and constraints
        pass

    assert set(Covered.constraints) == set(Covered._get_param_names())


def test_b_every_registered_learner_covers_its_parameters():
    import textcw
    from textcw.plugins import build_registries, get_plugin_manager, use_registries

    regs = build_registries(get_plugin_manager())  # the built-ins and the installed plugins
    for name in regs["learners"].names():
        with use_registries(regs):
            cls = type(textcw.make_learner(name))
        if issubclass(cls, OnlineLinearClassifier):
            assert set(cls.constraints) == set(cls._get_param_names()), name


# ------------------------------------------------------------------ (c) no update at all
def test_c_a_pass_with_mistakes_and_no_update_is_warned_once_per_fit():
    X, y = binary()
    caught = contract_warnings(lambda: NeverUpdates(n_epochs=3).fit(X, y))
    assert [w.category for w in caught] == [NoUpdateWarning]
    assert str(caught[0].message).startswith("NeverUpdates: the pass made ")
    assert "mistakes and no update, so the model did not move" in str(caught[0].message)
    model = NeverUpdates()
    caught = contract_warnings(lambda: model.partial_fit(X, y, classes=["neg", "pos"]))
    assert [w.category for w in caught] == [NoUpdateWarning]
    assert not np.any(model.coef_)  # what went unnoticed: the zero model


def test_c_no_warning_for_a_learner_that_learns_or_data_it_cannot_learn_from():
    X, y = binary()
    assert not contract_warnings(lambda: PassesMargin().fit(X, y))
    assert not contract_warnings(lambda: Perceptron().fit(X, y))
    empty = sp.csr_matrix((6, 5))  # only ties on documents without features: nothing to learn
    assert not contract_warnings(lambda: NeverUpdates().fit(empty, ["neg", "pos"] * 3))


class LearnsNothing(CentroidLearner):
    """A third-party learner (no textcw base class) whose scores ignore the training data."""

    def decision_function(self, X):
        return np.zeros(X.shape[0]) if len(self.classes_) == 2 else np.zeros((X.shape[0], len(self.classes_)))

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


@pytest.mark.parametrize("learner, says", [
    (NeverUpdates, r"fit warned NoUpdateWarning: NeverUpdates: the pass made \d+ mistakes and no update"),
    (LearnsNothing, r"every held-out document gets the score 0\.0: the model learned nothing"),
])
def test_c_the_kit_fails_a_learner_that_learns_nothing(learner, says):
    component = learner_under_test(learner)
    check = next(c for c in component.checks if c.name == "learns_from_mistakes")
    with pytest.raises(AssertionError, match=f"learner {learner.__qualname__} fails learns_from_mistakes: "
                                             f"2-class: {says}"):
        check(component)


def test_c_correct_learners_pass_the_new_check():
    for learner in (Perceptron, CentroidLearner):
        component = learner_under_test(learner)
        next(c for c in component.checks if c.name == "learns_from_mistakes")(component)


# ------------------------------------------------------------------ resolved(): "auto" continued
def test_a_self_tuned_plugin_learner_continues_with_the_value_fitting_chose():
    nherd = pytest.importorskip("textcw_example.nherd")
    X, y = binary()
    model = nherd.NHERD(C="auto", n_epochs=2).fit(X, y)
    model.partial_fit(X, y)  # step_params reads resolved("C"), not the string "auto"
    assert model.C == "auto" and model.tuned_params_["C"] > 0
