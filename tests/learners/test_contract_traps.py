"""The learner and corpus contracts fail closed: each mistake a plugin author can make near them
ends in a clear error or a failing plugin-kit check, never in a model that silently computes
something else.

One test (or one group) per trap:

- (a) a kernel parameter spelled ``count`` instead of ``counts``;
- (b) a kernel without ``covariance`` asked for ``diag-l2``;
- (c) a subclass of the public ``AROW`` whose kernels ignore ``multiclass=``, ``loss=`` and
  ``average=``;
- (d) a subclass narrowing ``covariances``;
- (e) a corpus ``task_check`` that returns ``False`` (or forgets to return);
- (f) a subclass overriding the public ``floor`` property.
"""

from __future__ import annotations

import numpy as np
import pytest

import textcw
from textcw.corpus.base import check_task
from textcw.errors import InputError, ParameterError, UnknownNameError
from textcw.learners._kernels import gaussian_diag
from textcw.learners._kernels.constants import AROW_SQUARED_HINGE
from textcw.learners.arow import AROW
from textcw.learners.gaussian import GaussianLinearClassifier
from textcw.learners.params import Options
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.protocol import LEARNER_HOOKS
from textcw.plugins import build_registries, get_plugin_manager, resolve_corpus, use_registries
from textcw.testing.learner_checks import LearnerSubject, overrides_only_hooks, parameters_take_effect


# ------------------------------------------------------------------ kernels a plugin might write
def squared_hinge_binary(indptr, indices, data, y, order, mu, s, covariance, r, floor, counts=None):
    """AROW's binary update with the rule fixed to the squared hinge (reads no ``rule``)."""
    return gaussian_diag.binary_epoch(indptr, indices, data, y, order, mu, s, AROW_SQUARED_HINGE,
                                      covariance, 0.0, 0.0, r, floor, counts)


def squared_hinge_top1(indptr, indices, data, y, order, mu, s, covariance, r, floor, counts=None):
    return gaussian_diag.multiclass_top1_epoch(indptr, indices, data, y, order, mu, s,
                                               AROW_SQUARED_HINGE, covariance, 0.0, 0.0, r, floor,
                                               counts)


def misspelled_counts(indptr, indices, data, y, order, mu, s, rule, covariance, r, floor, count=None):
    """The trap of (a): ``count``, so the learner's ``counts`` array would never be written."""
    return gaussian_diag.binary_epoch(indptr, indices, data, y, order, mu, s, rule, covariance,
                                      0.0, 0.0, r, floor, count)


def no_covariance(indptr, indices, data, y, order, mu, s, rule, r, floor, counts=None):
    """The trap of (b): always the diag-kl update, whatever ``covariance=`` says."""
    return gaussian_diag.binary_epoch(indptr, indices, data, y, order, mu, s, rule,
                                      gaussian_diag.DIAG_KL, 0.0, 0.0, r, floor, counts)


def arow_subclass(choose, **attributes):
    """A subclass of the public AROW whose epoch kernel is ``choose(binary)``."""
    def epoch_kernel(self, binary):
        return choose(binary)
    return type("PluginAROW", (AROW,), {"epoch_kernel": epoch_kernel, "__module__": "plugin_arow",
                                        **attributes})


def fixed_rule_kernels(binary):
    return squared_hinge_binary if binary else squared_hinge_top1


# ------------------------------------------------------------------ (a)
def test_a_kernel_parameter_spelled_count_is_an_error_naming_counts(binary_problem):
    X, y = binary_problem
    learner = arow_subclass(lambda binary: misspelled_counts)(n_epochs=1)
    with pytest.raises(ParameterError, match=r"kernel misspelled_counts does not take 'counts', "
                                             r"which the learner passes"):
        learner.fit(X, y)


# ------------------------------------------------------------------ (b)
@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2"])
def test_b_a_kernel_without_covariance_is_an_error_for_every_diagonal_form(binary_problem, covariance):
    X, y = binary_problem
    learner = arow_subclass(lambda binary: no_covariance)(covariance=covariance, n_epochs=1)
    with pytest.raises(ParameterError, match=r"kernel no_covariance does not take 'covariance'"):
        learner.fit(X, y)


# ------------------------------------------------------------------ (c)
def _fixed_rule_arow():
    """An AROW subclass whose kernels read neither the rule, the strategy nor the averages: it
    silences the ``rule`` error by saying it has no built-in rule, the next trap."""
    return arow_subclass(fixed_rule_kernels, rule_code=lambda self: None)


def test_c_a_subclass_kernel_that_reads_no_rule_is_an_error_for_loss(binary_problem):
    X, y = binary_problem
    for loss in ("squared_hinge", "hinge"):
        with pytest.raises(ParameterError, match=r"kernel squared_hinge_binary does not take 'rule'"):
            arow_subclass(fixed_rule_kernels)(loss=loss, n_epochs=1).fit(X, y)


@pytest.mark.parametrize("multiclass", ["seq", "par", "exact"])
def test_c_a_subclass_top1_kernel_is_an_error_for_k_competitor_strategies(multiclass_problem, multiclass):
    X, y = multiclass_problem
    learner = _fixed_rule_arow()(multiclass=multiclass, n_epochs=1)
    with pytest.raises(ParameterError, match=r"kernel squared_hinge_top1 does not take 'k', 'strategy'"):
        learner.fit(X, y)


@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_c_a_subclass_kernel_without_averages_is_an_error_for_average(problem, request):
    X, y = request.getfixturevalue(problem)
    learner = _fixed_rule_arow()(average=True, n_epochs=1)
    with pytest.raises(ParameterError, match=r"does not take 'count', 'u'"):
        learner.fit(X, y)
    # the plain update still trains the model AROW trains
    ours = _fixed_rule_arow()(n_epochs=2).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, AROW(n_epochs=2).fit(X, y).coef_)


def test_c_the_kit_fails_a_subclass_that_ignores_loss():
    subject = LearnerSubject(_fixed_rule_arow(), 0.8, False)
    with pytest.raises(AssertionError, match=r"change nothing it computes.*loss \(tried 'hinge' "
                                             r"against 'squared_hinge'\)") as failure:
        parameters_take_effect(subject)
    # the other inherited options are honoured, or refused with an error
    assert "multiclass" not in str(failure.value) and "average" not in str(failure.value)


def test_c_the_kit_accepts_a_subclass_that_refuses_what_it_cannot_honour():
    class RefusingAROW(_fixed_rule_arow()):
        # its kernels are top-1 only (multiclass='seq' ... fail to bind), so k, which only the
        # k-competitor strategies read, changes nothing: declared so
        inert_params = ("k",)

        def validate_params(self):
            super().validate_params()
            if self.loss != "squared_hinge":
                raise ParameterError("RefusingAROW: loss must be 'squared_hinge'")

    parameters_take_effect(LearnerSubject(RefusingAROW, 0.8, False))


# ------------------------------------------------------------------ (d)
def test_d_narrowing_covariances_narrows_the_accepted_values(binary_problem):
    X, y = binary_problem

    class DiagonalAROW(AROW):
        covariances = ("diag-kl", "diag-l2")

    assert DiagonalAROW.constraints["covariance"] == Options(("diag-kl", "diag-l2"))
    assert AROW.constraints["covariance"] == Options(("diag-kl", "diag-l2", "full"))
    with pytest.raises(ParameterError, match=r"DiagonalAROW: covariance='full' is invalid; covariance "
                                             r"must be one of 'diag-kl', 'diag-l2'"):
        DiagonalAROW(covariance="full", n_epochs=1).fit(X, y)
    DiagonalAROW(covariance="diag-l2", n_epochs=1).fit(X, y)


def test_d_covariances_must_name_known_forms():
    with pytest.raises(TypeError, match=r"Banded.covariances = \('banded',\): it must name one or "
                                        r"more of the covariance forms"):
        type("Banded", (AROW,), {"covariances": ("banded",)})


# ------------------------------------------------------------------ (e)
def test_e_task_check_false_refuses_the_task():
    with pytest.raises(UnknownNameError, match=r"unknown task of corpus 'toy' 'nope'"):
        check_task("toy", "nope", {"a": ""}, lambda task: task.startswith("ok"))
    check_task("toy", "ok-1", {"a": ""}, lambda task: task.startswith("ok"))


def test_e_task_check_returning_neither_true_nor_false_is_an_error():
    def forgot_return(task):
        task.startswith("ok")

    with pytest.raises(InputError, match=r"corpus 'toy': its task_check returned None for the task "
                                         r"'ok-1'; a task_check returns True \(accept\) or False"):
        check_task("toy", "ok-1", {}, forgot_return)


def test_e_a_plugin_corpus_whose_task_check_returns_false_refuses_the_task():
    class Plugin:
        @textcw.hookimpl
        def register_corpora(self, register):
            register("shapes", lambda task=None, split="train", **options: None, tasks={"all": ""},
                     task_check=lambda task: task in ("circles", "squares"))

    registries = build_registries(get_plugin_manager(entry_points=False, extra=[Plugin()]))
    with use_registries(registries):
        assert resolve_corpus("shapes:circles")[1] == "circles"
        with pytest.raises(UnknownNameError, match=r"'triangles'"):
            resolve_corpus("shapes:triangles")


# ------------------------------------------------------------------ (f)
def test_f_overriding_floor_fails_the_kit():
    class BoundedAROW(AROW):
        @property
        def floor(self):
            return 0.05  # a variance lower bound, put where textcw's numerical floor lives

    with pytest.raises(AssertionError, match=r"BoundedAROW redefines GaussianLinearClassifier.floor: "
                                             r"floor is textcw's own"):
        overrides_only_hooks(LearnerSubject(BoundedAROW, 0.8, False))


def test_f_private_and_public_internals_are_not_hooks():
    class Meddler(AROW):
        def fit(self, X, y, sample_weight=None, *, progress=None):
            return super().fit(X, y)

        def _run_epoch(self, X, y, order, on_chunk=None):
            return super()._run_epoch(X, y, order, on_chunk)

        def step_params(self):  # a hook: allowed
            return super().step_params()

        def extra_view(self):  # a new name: allowed
            return 1

    with pytest.raises(AssertionError, match=r"_run_epoch, fit are textcw's own") as failure:
        overrides_only_hooks(LearnerSubject(Meddler, 0.8, False))
    assert "step_params" not in str(failure.value) and "extra_view" not in str(failure.value)


def test_every_hook_is_a_name_of_the_base_classes():
    from textcw.learners.averaging import AveragedMean
    bases = (OnlineLinearClassifier, GaussianLinearClassifier, AveragedMean)
    unknown = [name for name in LEARNER_HOOKS
               if not any(hasattr(b, name) or name in b.__annotations__ for b in bases)]
    assert unknown == []
