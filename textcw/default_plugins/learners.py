"""Built-in learners: each summary cites the paper and lists the variants (as parameters).

The tuning grids the ``tune`` evaluator searches, and what ``textcw train`` self-tunes, are
declared on each learner class (its ``tuning``, :class:`textcw.learners.selftune.Axis`, where the
choices are explained). A learner whose class declares none tunes only its passes.
"""

from textcw.hookspecs import hookimpl

GAUSSIAN_FORMS = "covariance=diag-kl|diag-l2|full"
MULTICLASS = "multiclass=top1|seq|par|exact, k"



@hookimpl
def register_learners(register):
    register("perceptron", "textcw.learners.perceptron:Perceptron", online=True,
             summary="Perceptron (Rosenblatt 1958); multiclass=top1|seq|par, k")
    register("averaged-perceptron", "textcw.learners.averaged_perceptron:AveragedPerceptron", online=True,
             summary="Averaged perceptron (Freund and Schapire 1999; Collins 2002)")
    register("pa", "textcw.learners.passive_aggressive:PassiveAggressive", online=True,
             summary=f"Passive-Aggressive (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("pa1", "textcw.learners.passive_aggressive:PassiveAggressiveI", online=True,
             summary=f"Passive-Aggressive I, step capped at C (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("pa2", "textcw.learners.passive_aggressive:PassiveAggressiveII", online=True,
             summary=f"Passive-Aggressive II, squared slack (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("sgd", "textcw.learners.sgd:SGD", online=True,
             summary="SGD, loss=hinge|log|modified_huber with L2 decay (Bottou 2012 schedule)")
    register("sop", "textcw.learners.sop:SecondOrderPerceptron", online=True,
             summary="Second-order perceptron (Cesa-Bianchi et al. SIAM J. Comput. 2005); "
                     "covariance=diag|full")
    register("cw-var", "textcw.learners.cw_var:CWVar", online=True,
             summary="Confidence-weighted, variance form (Dredze et al. ICML 2008); "
                     f"covariance=diag-kl|diag-l2|exact|full, {MULTICLASS}")
    register("cw-stdev", "textcw.learners.cw_stdev:CWStdev", online=True,
             summary="Confidence-weighted, exact stdev form (Crammer et al. NIPS 2008); "
                     f"covariance=diag-kl|diag-l2|exact|full, {MULTICLASS}")
    register("arow", "textcw.learners.arow:AROW", online=True,
             summary=f"AROW (Crammer, Kulesza, Dredze MLJ 2013); loss=squared_hinge|hinge, {GAUSSIAN_FORMS}, "
                     f"{MULTICLASS}")
    register("scw1", "textcw.learners.scw:SCW1", online=True,
             summary=f"Soft CW, SCW-I (Wang, Zhao, Hoi ICML 2012); {GAUSSIAN_FORMS}")
    register("scw2", "textcw.learners.scw:SCW2", online=True,
             summary=f"Soft CW, SCW-II (Wang, Zhao, Hoi ICML 2012); {GAUSSIAN_FORMS}")
