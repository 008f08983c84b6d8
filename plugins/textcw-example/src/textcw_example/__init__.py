"""textcw-example: the smallest complete textcw plugin.

It adds one learner and one featurizer to textcw through the entry-point group ``textcw``:

- ``balanced-winnow``: Balanced Winnow (Littlestone 1988; Dagan, Karov and Roth 1997), a
  mistake-driven learner with multiplicative updates (:class:`textcw_example.winnow.BalancedWinnow`);
- ``char-ngrams``: binary character n-grams within word boundaries
  (:func:`textcw_example.featurizers.char_ngrams`).

``docs/plugins.md`` in the textcw repository builds this package step by step.
"""

__version__ = "0.1.0"
