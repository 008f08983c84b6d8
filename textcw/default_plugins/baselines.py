"""Built-in batch baselines (scikit-learn), for the papers' batch comparisons.

JMLR 2012 Table 4 (naive Bayes, maxent, SVM) and EMNLP 2009 Table 3 (maxent, SVM one-vs-one and
multi-class) run through the same pipeline as the online learners. For maxent, ``C`` is the
variance of the Gaussian prior; for the SVM, the usual ``C`` (JMLR 2012 section 7.8). Their tuning
grids are declared on the classes (:mod:`textcw.learners.batch`).
"""

from textcw.hookspecs import hookimpl


@hookimpl
def register_learners(register):
    register("nb", "textcw.learners.batch:NaiveBayes",
             summary="Naive Bayes, multinomial by default (batch baseline, scikit-learn)")
    register("maxent", "textcw.learners.batch:MaxEnt",
             summary="Maximum entropy / logistic regression, Gaussian prior (batch, scikit-learn)")
    register("svm", "textcw.learners.batch:LinearSVM",
             summary="Linear SVM, hinge loss (batch baseline, scikit-learn LinearSVC)")
