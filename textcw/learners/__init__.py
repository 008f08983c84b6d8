"""Learners: one algorithm per module, all on :class:`textcw.learners.base.OnlineLinearClassifier`.

The package's public names are its modules, imported on first use; the numba kernels under
``_kernels`` are private to it.
"""

__all__ = [
    "arow", "averaged_perceptron", "base", "batch", "calibrated", "cw_stdev", "cw_var", "gaussian",
    "inputs", "multiclass", "multilabel", "params", "passive_aggressive", "perceptron", "probability", "scw",
    "selftune", "sgd", "sop"
]
