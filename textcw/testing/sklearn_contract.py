"""The scikit-learn estimator checks a textcw learner must pass, and the check running them."""

from __future__ import annotations

from textcw.testing.runner import fail

__all__ = ["SKLEARN_CONTRACT_CHECKS", "passes_sklearn_contract"]

# The scikit-learn estimator checks about the estimator *contract* (parameters, cloning,
# fitting, pickling, sparse input, consistency of the prediction methods). The other checks in
# scikit-learn's suite mostly pin the wording of error messages, which textcw deliberately
# words its own way, so they are not applied. check_decision_proba_consistency is left out
# too: a Gaussian (CW) model's label probability depends on the margin's variance as well as on
# its mean, so it need not rank documents as decision_function does. Names missing from an
# installed scikit-learn version are simply not run.
SKLEARN_CONTRACT_CHECKS = frozenset({
    "check_classifiers_classes",
    "check_classifiers_one_label",
    "check_dict_unchanged",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_dont_overwrite_parameters",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features",
    "check_estimators_pickle",
    "check_estimators_unfitted",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_get_params_invariance",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_mixin_order",
    "check_n_features_in",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_pipeline_consistency",
    "check_readonly_memmap_input",
    "check_set_params",
    "check_supervised_y_no_nan",
    "check_valid_tag_types",
})


def passes_sklearn_contract(s) -> None:
    if not s.sklearn_checks:
        return
    from sklearn.utils.estimator_checks import check_estimator

    try:
        results = check_estimator(s.make(), on_fail=None, on_skip=None)
    except Exception as exc:
        fail(f"scikit-learn's check_estimator could not run: {type(exc).__name__}: {exc}")
    failed = [r for r in results
              if r["check_name"] in SKLEARN_CONTRACT_CHECKS and r["status"] == "failed"]
    if failed:
        lines = "; ".join(f"{r['check_name']}: {str(r['exception']).strip().splitlines()[0]}"
                          for r in failed)
        fail(f"scikit-learn estimator checks failed: {lines}")
