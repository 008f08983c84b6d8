"""Built-in batch baselines (scikit-learn), for the papers' batch comparisons.

JMLR 2012 Table 4 (naive Bayes, maxent, SVM) and EMNLP 2009 Table 3 (maxent, SVM one-vs-one and
multi-class) run through the same pipeline as the online learners. For maxent, ``C`` is the
variance of the Gaussian prior; for the SVM, the usual ``C`` (JMLR 2012 section 7.8).
"""

from textcw.default_plugins.learners import decades
from textcw.hookspecs import hookimpl


@hookimpl
def register_learners(register):
    register("nb", "textcw.learners.batch:NaiveBayes",
             grid={"alpha": decades(-3, 0)}, quick_grid={"alpha": [0.1, 1.0]},
             summary="Naive Bayes, multinomial by default (batch baseline, scikit-learn)")
    register("maxent", "textcw.learners.batch:MaxEnt",
             grid={"C": decades(-3, 2)}, quick_grid={"C": [1.0, 10.0]},
             summary="Maximum entropy / logistic regression, Gaussian prior (batch, scikit-learn)")
    register("svm", "textcw.learners.batch:LinearSVM",
             grid={"C": decades(-4, 1)}, quick_grid={"C": [0.1, 1.0]},
             summary="Linear SVM, hinge loss (batch baseline, scikit-learn LinearSVC)")
