"""Corpora: the data home, sha256-pinned reading and downloading, and one loader per corpus.

The package's public names are its modules (imported on first use, so that registering the
corpora loads none of them): :mod:`~textcw.corpus.base` (what a loader returns, ``corpus:task``
names), :mod:`~textcw.corpus.datahome` (the data home and pinned files), a loader module per
corpus, and the corpus cache (:mod:`~textcw.corpus.cache`, :mod:`~textcw.corpus.feature_cache`).
"""

__all__ = [
    "amazon", "base", "cache", "catalogue", "datahome", "download", "enron", "feature_cache", "folder",
    "newsgroups", "rcv1", "remote", "reuters", "sampling", "spam", "svmlight", "synthetic", "tabular",
    "synthetic_text"
]
