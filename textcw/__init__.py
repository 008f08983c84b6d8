"""textcw: fast, confidence-aware online text classification.

The public surface::

    import textcw
    model = textcw.make_learner("cw-stdev", eta=0.9)
    feats = textcw.make_featurizer("binary-bow")
    pipeline = textcw.make_pipeline("binary-bow", "cw-stdev")  # savable and exportable once fitted
    train = textcw.load_corpus("newsgroups:comp", split="train")
    textcw.save(pipeline, "model.textcw-model"); textcw.load("model.textcw-model")
    combined = textcw.combine(shard_models, method="kl")
    textcw.export_model(pipeline, "model.textcw"); textcw.import_model("model.textcw")  # no pickle

Plugins implement the hooks of :mod:`textcw.hookspecs` with :data:`textcw.hookimpl`.
"""

from __future__ import annotations

import importlib

from textcw._version import __version__

# Each public name and the module that defines it. They are imported on first use (PEP 562), so
# that ``import textcw`` and the command line's help do not pay for scikit-learn, scipy and numba.
_PUBLIC = {
    "combine": "textcw.scale.combine",
    "export_model": "textcw.portable",
    "hookimpl": "textcw.hookspecs",
    "import_model": "textcw.portable",
    "load": "textcw.persist",
    "load_corpus": "textcw.pipeline",
    "make_featurizer": "textcw.pipeline",
    "make_learner": "textcw.pipeline",
    "make_pipeline": "textcw.pipeline",
    "read_manifest": "textcw.persist",
    "save": "textcw.persist",
}

__all__ = ["__version__", *sorted(_PUBLIC)]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'textcw' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
