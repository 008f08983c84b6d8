"""Built-in evaluators (the papers' evaluation protocol; docs/algorithms.md "Evaluation protocol")."""

from textcw.hookspecs import hookimpl


@hookimpl
def register_evaluators(register):
    register("holdout", "textcw.evaluation.holdout:holdout", summary="Train on the training split, accuracy on the test split")
    register("cv", "textcw.evaluation.cv:cv", summary="Stratified seeded k-fold cross-validation: mean and spread of test error")
    register("tune", "textcw.evaluation.tune:tune", summary="Parameters and passes (1..10) chosen on one randomised tuning run")
    register("mcnemar", "textcw.evaluation.mcnemar:mcnemar", summary="McNemar's test: exact binomial or continuity-corrected chi-square")
    register("curve", "textcw.evaluation.curve:curve", summary="Test accuracy after each pass (JMLR 2012 Figures 3-4)")
    register("online", "textcw.evaluation.online:online", summary="Cumulative mistakes over a single online pass")
    register("noise", "textcw.evaluation.noise:noise", summary="Cross-validation with noisy training labels, clean test labels")
    register("rank", "textcw.evaluation.rank:rank", summary="Mean rank of each learner across tasks")
    register("timing", "textcw.evaluation.timing:timing", summary="Training seconds per run (JMLR 2012 Table 5)")
    register("calibration", "textcw.evaluation.calibration:calibration", summary="Probability calibration, EMNLP 2009 Fig. 2")
