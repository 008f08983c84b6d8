"""Built-in learners: each summary cites the paper and lists the variants (as parameters)."""

from textcw.hookspecs import hookimpl

GAUSSIAN_FORMS = "covariance=diag-kl|diag-l2|full"
MULTICLASS = "multiclass=top1|seq|par|exact, k"


@hookimpl
def register_learners(register):
    from textcw.learners.arow import AROW
    from textcw.learners.averaged_perceptron import AveragedPerceptron
    from textcw.learners.cw_stdev import CWStdev
    from textcw.learners.cw_var import CWVar
    from textcw.learners.passive_aggressive import PassiveAggressive, PassiveAggressiveI, PassiveAggressiveII
    from textcw.learners.perceptron import Perceptron
    from textcw.learners.scw import SCW1, SCW2
    from textcw.learners.sgd import SGD
    from textcw.learners.sop import SecondOrderPerceptron
    register("perceptron", Perceptron,
             summary="Perceptron (Rosenblatt 1958); multiclass=top1|seq|par, k")
    register("averaged-perceptron", AveragedPerceptron,
             summary="Averaged perceptron (Freund and Schapire 1999; Collins 2002)")
    register("pa", PassiveAggressive,
             summary=f"Passive-Aggressive (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("pa1", PassiveAggressiveI,
             summary=f"Passive-Aggressive I, step capped at C (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("pa2", PassiveAggressiveII,
             summary=f"Passive-Aggressive II, squared slack (Crammer et al. JMLR 2006); {MULTICLASS}")
    register("sgd", SGD,
             summary="SGD, loss=hinge|log|modified_huber with L2 decay (Bottou 2012 schedule)")
    register("sop", SecondOrderPerceptron,
             summary="Second-order perceptron (Cesa-Bianchi et al. SIAM J. Comput. 2005); "
                     "covariance=diag|full")
    register("cw-var", CWVar,
             summary="Confidence-weighted, variance form (Dredze et al. ICML 2008); "
                     f"covariance=diag-kl|diag-l2|exact|full, {MULTICLASS}")
    register("cw-stdev", CWStdev,
             summary="Confidence-weighted, exact stdev form (Crammer et al. NIPS 2008); "
                     f"covariance=diag-kl|diag-l2|exact|full, {MULTICLASS}")
    register("arow", AROW,
             summary=f"AROW (Crammer, Kulesza, Dredze MLJ 2013); loss=squared_hinge|hinge, {GAUSSIAN_FORMS}, "
                     f"{MULTICLASS}")
    register("scw1", SCW1, summary=f"Soft CW, SCW-I (Wang, Zhao, Hoi ICML 2012); {GAUSSIAN_FORMS}")
    register("scw2", SCW2, summary=f"Soft CW, SCW-II (Wang, Zhao, Hoi ICML 2012); {GAUSSIAN_FORMS}")
