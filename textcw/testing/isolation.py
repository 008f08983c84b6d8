"""Isolated plugin managers and registries, and a tiny in-memory corpus plugin.

The process-wide registries (:func:`textcw.plugins.default_registries`) hold whatever happens to
be installed. Tests should not depend on that: build a manager with the built-ins and exactly
the plugins under test, and put its registries in use for a block with
:func:`textcw.plugins.use_registries` (every lookup inside it, however deep, sees them)::

    with use_registries(make_registries(my_plugin)):
        result = train("topics", "my-learner")

That block is the one way to choose registries: the ``registries=`` keyword the entry points
(:func:`textcw.make_learner`, :func:`textcw.pipeline.train`, ...) took for a single call is
deprecated (:func:`textcw.plugins.deprecated_registries`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from textcw.corpus.base import Dataset, check_split
from textcw.errors import UnknownNameError
from textcw.hookspecs import hookimpl
from textcw.plugins import build_registries, get_plugin_manager
from textcw.registry import Registries

__all__ = ["make_corpus_plugin", "make_plugin_manager", "make_registries"]


def make_plugin_manager(*plugins: object, entry_points: bool = False):
    """A fresh plugin manager: the built-ins plus ``plugins``.

    Parameters
    ----------
    *plugins : module or object
        Plugins to register (modules or instances with :data:`textcw.hookimpl` functions).
    entry_points : bool, default False
        Also load the installed third-party plugins. Off by default so a test sees the same
        names whatever else is installed.

    Returns
    -------
    pluggy.PluginManager
    """
    return get_plugin_manager(entry_points=entry_points, extra=plugins)


def make_registries(*plugins: object, entry_points: bool = False) -> Registries:
    """The registries of :func:`make_plugin_manager` ``(*plugins)``.

    Examples
    --------
    >>> import textcw
    >>> from textcw.plugins import use_registries
    >>> from textcw.testing import make_registries
    >>> with use_registries(make_registries()):  # built-ins only
    ...     textcw.make_learner("perceptron").n_epochs
    5
    """
    return build_registries(make_plugin_manager(*plugins, entry_points=entry_points))


class _InMemoryCorpus:
    """A corpus plugin serving fixed train/test documents (see :func:`make_corpus_plugin`)."""

    def __init__(self, name, splits, summary, featurizer):
        self.name = name
        # pluggy names a plugin after its __name__; this makes `provider` readable in listings.
        self.__name__ = f"textcw.testing:{name}"
        self._splits = splits
        self._summary = summary
        self._featurizer = featurizer

    def load(self, task=None, split="train"):
        check_split(split)
        if task is not None:
            raise UnknownNameError(f"task of corpus {self.name!r}", task, [])
        docs, labels = self._splits[split]
        names = sorted(set(labels.tolist()))
        target = np.searchsorted(names, labels)
        return Dataset(list(docs), target, names, name=self.name, split=split)

    @hookimpl
    def register_corpora(self, register):
        extra = {"featurizer": self._featurizer} if self._featurizer else {}
        register(self.name, self.load, summary=self._summary, tasks={}, **extra)

    def __repr__(self) -> str:
        return f"<in-memory corpus plugin {self.name!r}>"


def make_corpus_plugin(name: str, train: tuple[Sequence, Sequence], test: tuple[Sequence, Sequence],
                       *, summary: str = "In-memory test corpus", featurizer: str | None = None):
    """A plugin registering corpus ``name`` with fixed documents, for end-to-end tests.

    Parameters
    ----------
    name : str
        The corpus name (what ``train(corpus=...)`` takes).
    train, test : (documents, labels)
        The two splits; labels are names (strings).
    summary : str
        The one-line summary ``textcw list corpora`` would show.
    featurizer : str, optional
        The corpus's default featurizer name (otherwise textcw's default).

    Returns
    -------
    object
        A plugin object; register it with :func:`make_registries`.

    Examples
    --------
    >>> from textcw.pipeline import train
    >>> from textcw.plugins import use_registries
    >>> from textcw.testing import make_corpus_plugin, make_documents, make_registries
    >>> corpus = make_corpus_plugin("topics", make_documents(random_state=0),
    ...                             make_documents(random_state=1))
    >>> with use_registries(make_registries(corpus)):
    ...     result = train("topics", "perceptron")
    >>> result.accuracy > 0.9
    True
    """
    splits = {}
    for split, (docs, labels) in (("train", train), ("test", test)):
        labels = np.asarray(labels)
        if len(docs) != labels.shape[0] or labels.ndim != 1:
            raise ValueError(f"{split}: {len(docs)} documents but labels of shape {labels.shape}")
        splits[split] = (list(docs), labels)
    return _InMemoryCorpus(name, splits, summary, featurizer)
