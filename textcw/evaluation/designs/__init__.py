"""The built-in evaluation designs (hook ``register_evaluators``).

``cv``, ``holdout`` and ``noise`` are :class:`~textcw.evaluation.contract.SplitDesign` designs: the
papers' protocol with its own splits. ``cv`` is JMLR 2012 section 7.6 (stratified seeded k-fold
over the pooled task, optionally tuned first); ``holdout`` trains on the corpus's train split and
tests on its test split (AROW 2013 section 5.3, USPS and MNIST); ``noise`` is ``cv`` at the
binary label-noise rates of AROW 2013 section 5.3, tuned at each rate.

The other measurements of the papers are designs too, each giving the same table of cells
(task x learner, a value per "fold"), with what a fold is said in its docstring: ``tune`` (the
tuning run's held-out part), ``timing`` (repeated fits, JMLR 2012 Table 5), ``curve`` (a
learning curve: one row per training size), ``online`` (progressive validation, one pass per
run), ``combination`` (shard models combined, JMLR 2012 Figure 6: one row per shard count) and
``active`` (active learning: one row per number of labels used, one column per learner and
strategy).
"""

from __future__ import annotations

from textcw.evaluation.designs.active import Active
from textcw.evaluation.designs.combination import Combination
from textcw.evaluation.designs.curve import Curve
from textcw.evaluation.designs.online import Online
from textcw.evaluation.designs.splits import CV, Holdout, Noise
from textcw.evaluation.designs.timing import Timing
from textcw.evaluation.designs.tune import Tune

# In the order of the module docstring, which the reference page follows (docs/reference/evaluation.md).
__all__ = ["CV", "Holdout", "Noise", "Tune", "Timing", "Curve", "Online", "Combination", "Active"]
