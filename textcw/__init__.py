"""textcw: fast, confidence-aware online text classification.

The public surface::

    import textcw
    model = textcw.make_learner("cw-stdev", eta=0.9)
    feats = textcw.make_featurizer("binary-bow")
    train = textcw.load_corpus("newsgroups:comp", split="train")
    textcw.save(pipeline, "model.joblib"); textcw.load("model.joblib")
    combined = textcw.combine(shard_models, method="kl")
    textcw.export_model(pipeline, "model.textcw"); textcw.import_model("model.textcw")  # no pickle

Plugins implement the hooks of :mod:`textcw.hookspecs` with :data:`textcw.hookimpl`.
"""

__version__ = "0.1.0"

from textcw.hookspecs import hookimpl  # noqa: E402
from textcw.persist import load, read_manifest, save  # noqa: E402
from textcw.pipeline import load_corpus, make_featurizer, make_learner  # noqa: E402
from textcw.portable import export_model, import_model  # noqa: E402

__all__ = ["__version__", "combine", "export_model", "import_model", "hookimpl", "load", "load_corpus", "make_featurizer", "make_learner", "read_manifest", "save"]


def __getattr__(name):
    # textcw.combine is imported on first use: it needs the learners (and numba), which a bare
    # ``import textcw`` should not load.
    if name == "combine":
        from textcw.scale.combine import combine

        return combine
    raise AttributeError(f"module 'textcw' has no attribute {name!r}")
