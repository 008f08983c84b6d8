"""Built-in evaluators (the papers' evaluation protocol; docs/algorithms.md "Evaluation protocol")."""

from textcw.hookspecs import hookimpl


@hookimpl
def register_evaluators(register):
    from textcw.evaluation.calibration import calibration
    from textcw.evaluation.curve import curve
    from textcw.evaluation.cv import cv
    from textcw.evaluation.holdout import holdout
    from textcw.evaluation.mcnemar import mcnemar
    from textcw.evaluation.noise import noise
    from textcw.evaluation.online import online
    from textcw.evaluation.rank import rank
    from textcw.evaluation.timing import timing
    from textcw.evaluation.tune import tune
    register("holdout", holdout, summary="Train on the training split, accuracy on the test split")
    register("cv", cv, summary="Stratified seeded k-fold cross-validation: mean and spread of test error")
    register("tune", tune, summary="Parameters and passes (1..10) chosen on one randomised tuning run")
    register("mcnemar", mcnemar, summary="McNemar's test: exact binomial or continuity-corrected chi-square")
    register("curve", curve, summary="Test accuracy after each pass (JMLR 2012 Figures 3-4)")
    register("online", online, summary="Cumulative mistakes over a single online pass")
    register("noise", noise, summary="Cross-validation with noisy training labels, clean test labels")
    register("rank", rank, summary="Mean rank of each learner across tasks")
    register("timing", timing, summary="Training seconds per run (JMLR 2012 Table 5)")
    register("calibration", calibration, summary="Probability calibration, EMNLP 2009 Fig. 2")
