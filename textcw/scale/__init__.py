"""Scale out: combine shard models, train on shards in parallel, train from a stream.

- :func:`combine` (also ``textcw.combine``): uniform or KL-weighted combination of models
  trained on disjoint shards (JMLR 2012 section 7.10);
- :func:`train_sharded`: train on ``n`` shards with joblib processes or a Dask cluster, combine;
- :func:`train_stream`: out-of-core training, chunks through ``hashing`` into ``partial_fit``.
"""

from textcw.scale.combine import METHODS, Combiner, combine
from textcw.scale.training import ScaleTrainResult, train_sharded, train_stream

__all__ = ["METHODS", "Combiner", "ScaleTrainResult", "combine", "train_sharded", "train_stream"]
