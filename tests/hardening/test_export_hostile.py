"""Hostile exports that try to do harm at prediction time, or to reach the terminal: each is
refused at import with a clear error, so the worst an accepted export can do is predict badly."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from textcw.errors import ModelFileError
from textcw.portable import JSON_MEMBER, export_model, import_model

from test_portable import X_MULTI, Y_MULTI, edit, npy, pipeline, state_array


@pytest.fixture
def exported(tmp_path):
    return export_model(pipeline("binary-bow", "cw-stdev"), tmp_path / "m.textcw")


def featurizer_params(**params):
    return lambda d: d["steps"][0].update(params={"__dict__": params})


@pytest.mark.parametrize("params,message", [
    ({"token_pattern": "(a+)+$"}, r"token_pattern='\(a\+\)\+\$' is not allowed; a regular expression chosen freely"),
    ({"token_pattern": r"\w*\w*\w*\w*x"}, "token_pattern=.* is not allowed"),
    ({"ngram_range": {"__tuple__": [1, 10**6]}}, r"ngram_range=\(1, 1000000\) is not allowed; give two integers"),
    ({"ngram_range": [0, 2]}, r"ngram_range=\(0, 2\) is not allowed"),
    ({"ngram_range": [3, 2]}, r"ngram_range=\(3, 2\) is not allowed"),
    ({"input": "filename"}, "input='filename' is not allowed; featurizers take the documents' text"),
    ({"input": "file"}, "input='file' is not allowed"),
    ({"analyzer": "char_wb", "ngram_range": [1, 11]}, r"ngram_range=\(1, 11\) is not allowed"),
    ({"analyzer": "bogus"}, "analyzer"),
    ({"dtype": {"__dtype__": "<i8"}}, "dtype=<class 'numpy.int64'> is not allowed; use float64"),
    ({"dtype": {"__dtype__": "<U0"}}, r"dtype <U0 is not allowed"),
    ({"encoding": "zlib_codec"}, "encoding='zlib_codec' is not allowed; give the name of a text encoding"),
    ({"analyzer": {"__estimator__": "sklearn.preprocessing:FunctionTransformer", "params": {}}},
     r"a value tagged __estimator__ is not allowed here"),
    ({"stop_words": {"__array__": 0}}, "a value tagged __array__ is not allowed here"),
])
def test_harmful_featurizer_parameters_are_refused(exported, params, message):
    edit(exported, change_document=featurizer_params(**params))
    with pytest.raises(ModelFileError, match=message):
        import_model(exported)


def test_plugin_vectorizers_get_the_same_limits(tmp_path):
    path = export_model(pipeline("char-ngrams", "pa"), tmp_path / "m.textcw")
    edit(path, change_document=featurizer_params(input="filename"))
    with pytest.raises(ModelFileError, match="featurizer 'char-ngrams': input='filename' is not allowed"):
        import_model(path)


def test_a_hostile_regex_never_runs(exported, monkeypatch):
    """The refusal comes before scikit-learn ever compiles the pattern."""
    import re

    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, *a, **k: compiled.append(p) or real(p, *a, **k))
    edit(exported, change_document=featurizer_params(token_pattern="(x+x+)+y"))
    with pytest.raises(ModelFileError, match="token_pattern"):
        import_model(exported)
    assert "(x+x+)+y" not in compiled


def baseline(learner, **params):
    return pipeline("precomputed", learner, params, data=(X_MULTI, Y_MULTI, None))


def estimator_of(doc):
    return doc["steps"][1]["attributes"]["__dict__"]["estimator_"]


@pytest.mark.parametrize("learner,params,change,message", [
    ("maxent", {}, lambda e: e["params"]["__dict__"].update(n_jobs=10000),
     r"estimator_ has n_jobs=10000; its parent gives it n_jobs=None"),
    ("maxent", {}, lambda e: e["params"]["__dict__"].update(solver="saga"), "has solver='saga'; its parent gives it solver='newton-cg'"),
    ("svm", {}, lambda e: e.update({"__estimator__": "sklearn.linear_model._logistic:LogisticRegression"}),
     r"estimator_ is a sklearn.linear_model._logistic:LogisticRegression, but its parent makes a sklearn.svm._classes:LinearSVC"),
    ("svm", {}, lambda e: e.update({"__estimator__": "sklearn.ensemble._forest:RandomForestClassifier"}),
     "but its parent makes a sklearn.svm._classes:LinearSVC"),
    ("svm", {}, lambda e: e["params"]["__dict__"].pop("C"), r"has the parameters \['C'\] its parent does not give it"),
    ("svm", {"multi_class": "ovo"}, lambda e: e["params"]["__dict__"].update(n_jobs=10000),
     "estimator_ has n_jobs=10000; its parent gives it n_jobs=None"),
    ("svm", {"multi_class": "ovo"}, lambda e: e["params"]["__dict__"]["estimator"]["params"]["__dict__"].update(max_iter=10**9),
     r"estimator_.estimator has max_iter=1000000000; its parent gives it max_iter=10000"),
    ("svm", {"multi_class": "ovo"}, lambda e: e["attributes"]["__dict__"]["estimators_"]["__tuple__"][0].update(
        {"__estimator__": "sklearn.svm._classes:SVC"}), r"estimators_\[0\] is a sklearn.svm._classes:SVC"),
    ("nb", {}, lambda e: e["attributes"]["__dict__"].update(evil_={"__estimator__": "sklearn.svm._classes:SVC", "params": {}}),
     "makes no nested estimator 'evil_'"),
    ("nb", {}, lambda e: e["attributes"]["__dict__"].update(feature_log_prob_={"__array__": 0}),
     "cannot score a document"),
])
def test_nested_estimators_are_pinned_to_what_their_parent_makes(tmp_path, learner, params, change, message):
    path = export_model(baseline(learner, **params), tmp_path / "m.textcw")
    edit(path, change_document=lambda d: change(estimator_of(d)))
    with pytest.raises(ModelFileError, match=message):
        import_model(path)


def test_precomputed_dict_vectorizer_is_pinned(tmp_path):
    from test_portable import MAPPINGS

    path = export_model(pipeline("precomputed", "pa", data=(MAPPINGS, Y_MULTI, None)), tmp_path / "m.textcw")
    edit(path, change_document=lambda d: d["steps"][0]["attributes"]["__dict__"]["vectorizer_"]["params"]["__dict__"]
         .update(dtype={"__dtype__": "<i8"}))
    with pytest.raises(ModelFileError, match=r"vectorizer_ has dtype=<class 'numpy.int64'>; its parent gives it dtype=<class 'numpy.float64'>"):
        import_model(path)


ESCAPES = ["\x1b[2J", "a\nb", "x\ry", "\x07", "\u2028", "\x9b31m"]


@pytest.mark.parametrize("label", ESCAPES)
def test_labels_with_control_characters_are_refused(exported, label):
    with zipfile.ZipFile(exported) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
    number = doc["steps"][1]["state_dict"]["__dict__"]["classes"]["__array__"]
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(number, npy(np.array(["aaa", label]))))
    with pytest.raises(ModelFileError, match=r"holds (a line break|a control character) \(U\+"):
        import_model(exported)


def test_nested_labels_are_refused_too(tmp_path):
    path = export_model(baseline("nb"), tmp_path / "m.textcw")
    with zipfile.ZipFile(path) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
    number = doc["steps"][1]["attributes"]["__dict__"]["classes_"]["__array__"]
    edit(path, change_arrays=lambda arrays: arrays.__setitem__(number, npy(np.array(["a", "b\x1b]0;x\x07", "c"]))))
    with pytest.raises(ModelFileError, match=r"holds a control character \(U\+001B\)"):
        import_model(path)


@pytest.mark.parametrize("change", [
    lambda d: d.update(textcw_version="0.1\x1b[31m"),
    lambda d: d["steps"][1].update(provider="evil\nplugin"),
    lambda d: d["components"]["__dict__"].update(corpus="toy\x1b]8;;http://x\x07"),
    lambda d: d["components"]["__dict__"]["learner"]["__dict__"].update(name="cw\rstdev"),
    lambda d: d["steps"][0].update(params={"__dict__": {"stop_words": ["ok", "bad\x1b"]}}),
])
def test_names_and_versions_with_control_characters_are_refused(exported, change):
    edit(exported, change_document=change)
    with pytest.raises(ModelFileError, match=r"holds (a line break|a control character) \(U\+00"):
        import_model(exported)


@given(st.text(min_size=1, max_size=12))
def test_any_label_is_imported_printable_or_refused(label):
    """Labels that survive the import print on one line, with no control character."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = export_model(pipeline("binary-bow", "pa"), Path(folder) / "m.textcw")
        with zipfile.ZipFile(path) as archive:
            doc = json.loads(archive.read(JSON_MEMBER))
        number = doc["steps"][1]["state_dict"]["__dict__"]["classes"]["__array__"]
        labels = np.array(sorted({"\uffff" * 3, label}))
        if labels.size < 2 or "\0" in label:  # numpy strips trailing NULs: not a distinct label
            return
        edit(path, change_arrays=lambda arrays: arrays.__setitem__(number, npy(labels)))
        try:
            model = import_model(path)
        except ModelFileError:
            return
        for shown in model[-1].classes_:
            assert len(str(shown).splitlines()) <= 1 and not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in shown)


def test_an_accepted_hostile_model_only_predicts_badly(exported):
    """Weights replaced by garbage that passes every check: the model imports and predicts,
    wrongly, and nothing else happens."""
    with zipfile.ZipFile(exported) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
        mu = np.lib.format.read_array(archive.open(f"arrays/{state_array(doc, 'mu')}.npy"))
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"), npy(-mu * 1e6)))
    model = import_model(exported)
    from test_portable import PROBE_DOCS

    assert model.predict(PROBE_DOCS).shape == (len(PROBE_DOCS),)
