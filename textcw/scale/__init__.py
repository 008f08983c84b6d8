"""Scale out: combine shard models, train on shards in parallel, train from a stream.

- :func:`combine` (also ``textcw.combine``): uniform or KL-weighted combination of models
  trained on disjoint shards (JMLR 2012 section 7.10);
- :func:`train_sharded`: train on ``n`` shards with joblib processes or a Dask cluster, combine;
- :func:`train_stream`: out-of-core training, chunks through ``hashing`` into ``partial_fit``.

The names are imported on first use: a worker process that only reads and featurizes chunks
(:mod:`textcw.scale.pipelined`) then starts without importing the learners and their kernels.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "METHODS": "textcw.scale.combine", "Combiner": "textcw.scale.combine", "combine": "textcw.scale.combine",
    "ScaleTrainResult": "textcw.scale.training", "train_sharded": "textcw.scale.training",
    "train_stream": "textcw.scale.training",
}

__all__ = ["METHODS", "Combiner", "ScaleTrainResult", "combine", "train_sharded", "train_stream"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'textcw.scale' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
