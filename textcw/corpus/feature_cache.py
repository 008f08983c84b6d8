"""Featurized matrices in the corpus cache (:mod:`textcw.corpus.cache`), with the fitted featurizer.

A cached matrix is only usable with the featurizer that made it, and a model saved after a run
from the cache must be the very file a run without it saves. So the fitted featurizer is stored
as JSON in its attribute order, restored into a fresh featurizer, and the entry is written only
when the restored one pickles to the same bytes as the real one; otherwise only the parsed
documents are cached. Only loaders marked with :func:`textcw.corpus.cache.sources` (whose
output is determined by their source files) have their matrices cached.

A cache entry is read like an import (:mod:`textcw.portable`), not trusted because its digest
matches: whoever can write the cache can recompute the digest. :func:`restore_featurizer` puts
back only what an import may set: the attributes the fresh featurizer was made with, untouched
(its parameters come from the run's own key, never from the entry), scikit-learn's stop-word
check record, and fitted attributes (``name_``, not a class attribute) holding plain JSON; then
the restored featurizer's parameters must equal the fresh one's, a vectorizer's parameters must
pass :func:`textcw.features.params.check_text_params`, a vocabulary must map its terms to the
columns ``0..n-1`` and its width must match the cached matrices. The entry's JSON is read within
:data:`textcw.corpus.cache.MAX_META_BYTES` and :data:`textcw.untrusted.MAX_JSON_DEPTH`. An entry that fails any of
these is deleted and rebuilt.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from textcw._compare import same_value
from textcw._sklearn_compat import STOP_WORDS_CHECK_ATTRIBUTE
from textcw.corpus.cache import (
    CacheMiss,
    _to_json,
    discard_entry,
    enabled,
    load_entry,
    log,
    make_key,
    save_entry,
    source_digest,
)
from textcw.errors import TextcwError
from textcw.features.params import check_text_params
from textcw.untrusted import FITTED_NAME, check_idf, check_vocabulary, safe_text

__all__ = [
    "features_key", "featurizer_state", "load_features", "pack_csr", "restore_featurizer",
    "save_features", "unpack_csr"
]


def features_key(corpus: str, loader, featurizer: str, entry, params: dict, feat) -> dict | None:
    """The key of ``corpus`` featurized by ``feat``, or None when it cannot be cached.

    None for a corpus whose loader names no source files (:func:`sources`) and for parameters
    that are not plain JSON.
    """
    remotes = getattr(loader, "cache_sources", None)
    if not remotes or not enabled():
        return None
    try:
        params_text = json.dumps(params, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    import scipy
    import sklearn

    return make_key(
        "features", name=corpus, sources=[source_digest(r) for r in remotes],
        featurizer=featurizer, provider=str(getattr(entry, "provider", "")),
        cls=f"{type(feat).__module__}.{type(feat).__qualname__}", params=json.loads(params_text),
        versions={"scikit-learn": sklearn.__version__, "scipy": scipy.__version__,
                  "numpy": np.__version__},
    )


def featurizer_state(fitted, fresh) -> list | None:
    """What fitting changed in ``fitted`` (compared with the unfitted ``fresh``), as JSON.

    A list of ``[attribute, how, value]`` in the order of ``fitted.__dict__``: ``"made"`` for an
    attribute left as the featurizer was made, ``"id"`` for scikit-learn's record of which
    stop-word list it checked (``id(stop_words)``, which differs between processes), ``"json"``
    for a value kept as JSON. None when some fitted value is not plain JSON.
    """
    state = []
    # What pickle keeps: a featurizer may hold state derived from its fitted attributes that its
    # __getstate__ leaves out (WordCounts' compiled vocabulary table, _native_table, rebuilt on
    # first use); that is neither stored nor restored, as a saved model does not hold it either.
    kept = fitted.__getstate__() if hasattr(fitted, "__getstate__") else fitted.__dict__
    kept = kept if isinstance(kept, dict) else fitted.__dict__
    for name, value in fitted.__dict__.items():
        if name not in kept:
            continue
        if name in fresh.__dict__ and same_value(fresh.__dict__[name], value):
            state.append([name, "made", None])
        elif name == STOP_WORDS_CHECK_ATTRIBUTE and value == id(getattr(fitted, "stop_words", None)):
            state.append([name, "id", None])
        elif _fitted_name(fresh, name) and _plain(value):
            state.append([name, "json", value])
        else:
            return None
    return state


def _fitted_name(featurizer, name) -> bool:
    """Whether an import could set attribute ``name`` on ``featurizer``: a fitted attribute
    (``name_``), not a method, property or class attribute (:func:`textcw.portable_rebuild.set_attributes`)."""
    return isinstance(name, str) and bool(FITTED_NAME.match(name)) and not hasattr(type(featurizer), name)


def restore_featurizer(fresh, state: list, name: str = "featurizer"):
    """``fresh`` given the fitted ``state`` of :func:`featurizer_state`, attribute order included.

    ``state`` comes from a cache file, so it is checked as an import is (module docstring):
    :class:`ValueError` names the first thing that an import would refuse.
    """
    if not isinstance(state, list):
        raise ValueError("the featurizer state is not a list")
    made = dict(fresh.__dict__)
    restored = {}
    for item in state:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)):
            raise ValueError("a featurizer attribute is not [name, how, value]")
        attribute, how, value = item
        # attribute names are interned, as setattr makes them; a pickle of the model refers to
        # the same string objects elsewhere (a model file would differ by a few bytes otherwise)
        attribute = sys.intern(attribute)
        if attribute in restored:
            raise ValueError(f"the featurizer attribute {attribute!r} is given twice")
        if how == "made" and attribute in made:
            restored[attribute] = made[attribute]
        elif how == "id" and attribute == STOP_WORDS_CHECK_ATTRIBUTE:
            restored[attribute] = id(made.get("stop_words"))
        elif how == "json" and _fitted_name(fresh, attribute) and _plain(value):
            restored[attribute] = value
        else:
            raise ValueError(f"the featurizer cannot take {safe_text(attribute, 60)!r} as {safe_text(how, 20)!r} "
                             "(a cache entry restores only fitted attributes, as an import does)")
    missing = [a for a in made if a not in restored and not a.endswith("_")]
    if missing:
        raise ValueError(f"the featurizer state leaves out {safe_text(missing[0], 60)!r}")
    try:
        check_vocabulary("vocabulary_", restored["vocabulary_"], name) if "vocabulary_" in restored else None
        if "idf_" in restored:  # tfidf: one positive finite weight per vocabulary term
            check_idf(restored["idf_"], restored.get("vocabulary_"), name)
    except TextcwError as exc:
        raise ValueError(str(exc)) from None
    before = fresh.get_params(deep=False) if hasattr(fresh, "get_params") else None
    fresh.__dict__.clear()
    fresh.__dict__.update(restored)
    if before is not None and not same_value(fresh.get_params(deep=False), before):
        raise ValueError("the restored featurizer's parameters differ from those of the run")
    _check_like_an_import(fresh, name)
    return fresh


def _check_like_an_import(featurizer, name: str) -> None:
    """The parameter check an import makes (:func:`textcw.features.params.check_text_params`)."""
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

    if isinstance(featurizer, (CountVectorizer, HashingVectorizer)):
        try:
            check_text_params(featurizer, name)
        except TextcwError as exc:
            raise ValueError(str(exc)) from None


_SCALARS = frozenset((str, int, bool, float, type(None)))


def _plain(value) -> bool:
    """A value that JSON gives back exactly: str, int, float, bool, None, and dicts of str keys
    and lists of them (no tuples, no NumPy scalars, no infinite or NaN float)."""
    stack = [value]
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is dict:
            if not set(map(type, v)) <= {str}:
                return False
            items = v.values()
        elif kind is list:
            items = v
        else:
            items = (v,)
        # by the types present, not item by item: a vocabulary or idf list holds 130,107 scalars
        kinds = set(map(type, items))
        if float in kinds and not all(map(math.isfinite, items if kinds == {float} else
                                          (x for x in items if type(x) is float))):
            return False
        if not kinds <= _SCALARS:
            if not kinds <= _SCALARS | {dict, list} or kind not in (dict, list):
                return False
            stack.extend(x for x in items if type(x) in (dict, list))
    return True


def pack_csr(X, prefix: str) -> dict[str, np.ndarray] | None:
    """A CSR matrix as arrays, or None for anything else."""
    import scipy.sparse as sp

    if type(X) not in (sp.csr_matrix, sp.csr_array) or X.dtype.hasobject:
        return None
    return {f"{prefix}data": X.data, f"{prefix}indices": X.indices, f"{prefix}indptr": X.indptr,
            f"{prefix}shape": np.array(X.shape, dtype=np.int64)}


def unpack_csr(arrays: dict, prefix: str, kind: str):
    import scipy.sparse as sp

    cls = {"csr_matrix": sp.csr_matrix, "csr_array": sp.csr_array}[kind]
    shape = tuple(int(n) for n in arrays[f"{prefix}shape"])
    X = cls((arrays[f"{prefix}data"], arrays[f"{prefix}indices"], arrays[f"{prefix}indptr"]),
            shape=shape, copy=False)
    X.check_format(full_check=False)
    return X


def save_features(key: dict, fitted, make_fresh, Xtr, Xte, train_set, test_set) -> bool:
    """Cache the matrices and the fitted featurizer; False (nothing written) when the restored
    featurizer would not pickle byte for byte like ``fitted`` or the data are not plain.

    ``make_fresh()`` makes the unfitted featurizer, as a run that finds this entry will.
    """
    state = featurizer_state(fitted, make_fresh())
    names = list(train_set.target_names)
    if state is None or names != list(test_set.target_names) or not all(type(n) is str for n in names):
        return False
    arrays = {}
    for prefix, X in (("train_", Xtr), ("test_", Xte)):
        packed = pack_csr(X, prefix)
        if packed is None:
            return False
        arrays.update(packed)
    meta = {"state": state, "target_names": names, "matrix": type(Xtr).__name__,
            "test_matrix": type(Xte).__name__}
    # The model file must not depend on whether the cache was used: check the round trip now,
    # from the very JSON text the entry holds (encoded once: a vocabulary and its idf weights
    # take a third of a second to write as JSON).
    meta_json = _to_json(meta)
    restored = restore_featurizer(make_fresh(), json.loads(meta_json)["state"], key["featurizer"])
    if _pickled(restored) != _pickled(fitted):
        log.debug("not caching the features of %s: the featurizer does not round-trip", key["name"])
        return False
    for prefix, X in (("train_", Xtr), ("test_", Xte)):
        again = unpack_csr(arrays, prefix, type(X).__name__)
        if again.indices.dtype != X.indices.dtype or again.indptr.dtype != X.indptr.dtype:
            return False
    arrays["train_target"] = np.asarray(train_set.target, dtype=np.int64)
    arrays["test_target"] = np.asarray(test_set.target, dtype=np.int64)
    return save_entry(key, arrays, meta, meta_json=meta_json) is not None


def _width(featurizer) -> int | None:
    vocabulary = getattr(featurizer, "vocabulary_", None)
    if isinstance(vocabulary, dict):
        return len(vocabulary)
    width = getattr(featurizer, "n_features_out_", getattr(featurizer, "n_features", None))
    return width if isinstance(width, int) and not isinstance(width, bool) else None


def _pickled(featurizer) -> bytes:
    """The featurizer's pickle with interned attribute names beside it, so that a difference in
    which string objects it shares with the rest of a model shows as well."""
    import pickle

    names = [sys.intern(k) for k in featurizer.__dict__]
    return pickle.dumps((featurizer, names, id(featurizer.__dict__.get("stop_words"))), protocol=5)


def load_features(key: dict, fresh):
    """``(featurizer, Xtr, ytr, Xte, yte)`` from the cache (labels as names), or None on a miss.

    ``fresh`` is an unfitted featurizer made with the key's parameters; it is returned fitted.
    """
    try:
        arrays, meta = load_entry(key)
        names = np.asarray(meta["target_names"], dtype=object)
        out = [unpack_csr(arrays, "train_", meta["matrix"]), None,
               unpack_csr(arrays, "test_", meta["test_matrix"]), None]
        for i, split in ((1, "train"), (3, "test")):
            target = arrays[f"{split}_target"]
            if target.ndim != 1 or len(target) != out[i - 1].shape[0] or \
                    (len(target) and (target.min() < 0 or target.max() >= len(names))):
                raise ValueError(f"the {split} labels do not fit the matrix")
            out[i] = names[target]
        feat = restore_featurizer(fresh, meta["state"], key["featurizer"])
        width = _width(feat)
        if width is not None and any(m.shape[1] != width for m in (out[0], out[2])):
            raise ValueError(f"the featurizer makes {width} features but the cached matrices have "
                             f"{out[0].shape[1]}")
    except CacheMiss:
        return None
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # a valid digest, wrong contents
        log.warning("the cached features of %s cannot be read (%s); rebuilding them", key["name"], exc)
        discard_entry(key)
        return None
    return (feat, *out)
