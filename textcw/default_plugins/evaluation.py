"""Built-in evaluation components: designs, metrics and comparisons, registered through the same
hooks as any plugin's (:mod:`textcw.evaluation.contract`), by reference so that listing them
imports nothing heavy."""

from textcw.hookspecs import hookimpl

DESIGNS = "textcw.evaluation.designs"
METRICS = "textcw.evaluation.measures"
MULTILABEL = "textcw.evaluation.multilabel_measures"
COMPARISONS = "textcw.evaluation.comparisons"


@hookimpl
def register_evaluators(register):
    register("cv", f"{DESIGNS}:CV", summary="Stratified seeded k-fold cross-validation (JMLR 2012 section 7.6)")
    register("holdout", f"{DESIGNS}:Holdout", summary="The corpus's train split for training, its test split for testing")
    register("noise", f"{DESIGNS}:Noise",
             summary="Tuned cross-validation at label-noise rates 0 to 0.3 (AROW 2013 section 5.3)")
    register("tune", f"{DESIGNS}:Tune", summary="The tuning run: chosen settings tested on its held-out 10%")
    register("timing", f"{DESIGNS}:Timing", summary="Training seconds per fit, repeated (JMLR 2012 Table 5)")
    register("curve", f"{DESIGNS}:Curve", summary="Learning curve: error after training on n documents, per size")
    register("online", f"{DESIGNS}:Online",
             summary="Online mistakes of one pass, predict then learn (NIPS 2008 Figure 2a)")
    register("combination", f"{DESIGNS}:Combination",
             summary="Shard models combined, per shard count (JMLR 2012 Figure 6)")
    register("active", f"{DESIGNS}:Active",
             summary="Active learning: error against labels used, per what-to-label-next strategy")


@hookimpl
def register_metrics(register):
    register("error", f"{METRICS}:Error", summary="Test error (%), lower is better")
    register("macro-f1", f"{METRICS}:MacroF1", summary="Macro-averaged F1, higher is better")
    register("log-loss", f"{METRICS}:LogLoss", summary="Log-loss of predict_proba, lower is better")
    register("brier", f"{METRICS}:Brier", summary="Brier score of predict_proba, lower is better")
    register("ece", f"{METRICS}:ECE", summary="Expected calibration error of predict_proba, lower is better")
    register("precision@k", f"{METRICS}:PrecisionAtK",
             summary="Top-k accuracy: the true label among the k best-scored (k=3; precision@k:k=5), higher is better")
    register("micro-f1", f"{MULTILABEL}:MicroF1", summary="Multi-label: micro-averaged F1, higher is better")
    register("hamming-loss", f"{MULTILABEL}:HammingLoss",
             summary="Multi-label: share of wrong document-label decisions, lower is better")
    register("subset-accuracy", f"{MULTILABEL}:SubsetAccuracy",
             summary="Multi-label: share of documents with exactly the right labels, higher is better")


@hookimpl
def register_comparisons(register):
    register("mcnemar", f"{COMPARISONS}:McNemar",
             summary="McNemar's test against the baseline: marks in the table (JMLR 2012 Tables 3-4)")
    register("rank", f"{COMPARISONS}:Rank", summary="Mean rank over the tasks: a row of the table (JMLR 2012 Table 2)")
    register("bootstrap", f"{COMPARISONS}:Bootstrap",
             summary="Paired bootstrap interval of each learner's error minus the baseline's")
