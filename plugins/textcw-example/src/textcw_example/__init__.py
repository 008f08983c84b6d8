"""textcw-example: the smallest complete textcw plugin.

It adds three learners and one featurizer to textcw through the entry-point group ``textcw``:

- ``balanced-winnow``: Balanced Winnow (Littlestone 1988; Dagan, Karov and Roth 1997), a
  mistake-driven learner with multiplicative updates (:class:`textcw_example.winnow.BalancedWinnow`);
- ``nherd``: normal herding (Crammer and Lee, NIPS 2010), a Gaussian learner built on textcw's
  :class:`~textcw.learners.gaussian.GaussianLinearClassifier` (:class:`textcw_example.nherd.NHERD`);
- ``bounded-arow``: diagonal AROW with a variance lower bound, a variant that is its update and
  nothing else (:class:`textcw_example.bounded_arow.BoundedAROW`);
- ``char-ngrams``: binary character n-grams within word boundaries
  (:func:`textcw_example.featurizers.char_ngrams`).

``docs/plugins.md`` in the textcw repository builds this package step by step.
"""

__version__ = "0.1.0"
