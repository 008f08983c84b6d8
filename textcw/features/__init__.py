"""Featurizers: scikit-learn transformers from documents to sparse feature matrices.

The package's public names are its modules, imported on first use: :mod:`~textcw.features.text`
(bag-of-words), :mod:`~textcw.features.hashing`, :mod:`~textcw.features.hashed_tfidf` (hashed
words weighted by idf), :mod:`~textcw.features.native` (their compiled
tokenising and hashing), :mod:`~textcw.features.precomputed` (feature
vectors as they are) and :mod:`~textcw.features.params` (the parameter limits of text featurizers).
"""

__all__ = ["hashed_tfidf", "hashing", "native", "params", "precomputed", "text"]
