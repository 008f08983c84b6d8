"""Pickle-free export/import (``textcw.portable``): exact round trips for every registered
component, and refusal of every kind of bad or hostile file without running anything from it."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.errors import InputError, ModelFileError
from textcw.pipeline import assemble, make_featurizer, make_learner
from textcw.plugins import default_registries
from textcw.portable import JSON_MEMBER, export_model, import_model
from textcw.testing import make_documents, make_sparse_classification

DOCS, LABELS = make_documents(20, random_state=0)
PROBE_DOCS, _ = make_documents(5, random_state=1)
RNG = np.random.RandomState(0)
IMAGES = RNG.uniform(-1, 1, (40, 16))
X_MULTI, Y_MULTI = make_sparse_classification(90, 30, 3, random_state=0, label_names=("a", "b", "c"))
MAPPINGS = [{f"w{j}": float(v) for j, v in enumerate(row) if v} for row in X_MULTI.toarray()]

# Training and probe inputs for each registered featurizer; a new featurizer must be added here.
FEATURIZER_INPUTS = {
    "binary-bow": (DOCS, LABELS, PROBE_DOCS),
    "bigram-counts": (DOCS, LABELS, PROBE_DOCS),
    "tfidf": (DOCS, LABELS, PROBE_DOCS),
    "hashing": (DOCS, LABELS, PROBE_DOCS),
    "hashed-tfidf": (DOCS, LABELS, PROBE_DOCS),
    "char-ngrams": (DOCS, LABELS, PROBE_DOCS),
    "precomputed": (X_MULTI, Y_MULTI, X_MULTI[:7]),
    "pixels": (IMAGES, np.arange(40) % 2, IMAGES[:5]),
    "pixel-pairs": (IMAGES, np.arange(40) % 2, IMAGES[:5]),
}
LEARNER_VARIANTS = [
    ("cw-stdev", {"covariance": "full"}), ("cw-var", {"covariance": "exact"}),
    ("cw-var", {"covariance": "diag-l2", "fit_intercept": True}), ("arow", {"loss": "hinge"}),
    ("sop", {"covariance": "full"}), ("cw-var", {"multiclass": "exact", "k": 2}),
]


def pipeline(featurizer, learner, params=None, featurizer_params=None, data=None):
    X, y, _ = data or FEATURIZER_INPUTS[featurizer]
    feat = make_featurizer(featurizer, **(featurizer_params or {}))
    est = make_learner(learner, **(params or {}))
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    Z = feat.fit_transform(X)
    est.fit(Z, y)
    return assemble(feat, est, learner=learner, featurizer_name=featurizer,
                    featurizer_params=featurizer_params, corpus="toy")


def assert_same_model(a, b, probe):
    np.testing.assert_array_equal(a.predict(probe), b.predict(probe))
    np.testing.assert_array_equal(a.decision_function(probe), b.decision_function(probe))
    if hasattr(a, "predict_proba"):
        np.testing.assert_array_equal(a.predict_proba(probe), b.predict_proba(probe))


def round_trip(model, tmp_path, name="m.textcw"):
    path = export_model(model, tmp_path / name)
    back = import_model(path)
    again = export_model(back, tmp_path / f"again-{name}")
    assert path.read_bytes() == again.read_bytes()  # nothing lost or added: the same bytes
    return back


def test_every_featurizer_has_inputs_here():
    assert set(default_registries().featurizers.names()) <= set(FEATURIZER_INPUTS)


@pytest.mark.parametrize("featurizer", sorted(FEATURIZER_INPUTS))
def test_every_featurizer_round_trips(featurizer, tmp_path):
    model = pipeline(featurizer, "pa")
    back = round_trip(model, tmp_path)
    assert_same_model(model, back, FEATURIZER_INPUTS[featurizer][2])


def test_mapping_input_round_trips_its_nested_dict_vectorizer(tmp_path):
    model = pipeline("precomputed", "cw-var", data=(MAPPINGS, Y_MULTI, MAPPINGS[:9]))
    back = round_trip(model, tmp_path)
    assert type(back[0].vectorizer_).__name__ == "DictVectorizer"
    assert_same_model(model, back, MAPPINGS[:9])


@pytest.mark.parametrize("learner", sorted(default_registries().learners.names()))
def test_every_learner_round_trips(learner, tmp_path):
    model = pipeline("binary-bow", learner)
    back = round_trip(model, tmp_path)
    assert_same_model(model, back, PROBE_DOCS)
    assert back.textcw_components_ == json.loads(json.dumps(model.textcw_components_, default=lambda v: None))
    if hasattr(model[-1], "partial_fit"):  # the imported learner continues exactly where it was
        Z = model[0].transform(PROBE_DOCS)
        y = np.asarray(LABELS[: Z.shape[0]])
        model[-1].partial_fit(Z, y)
        back[-1].partial_fit(Z, y)
        assert_same_model(model, back, DOCS)


@pytest.mark.parametrize("learner,params", LEARNER_VARIANTS)
def test_learner_variants_round_trip(learner, params, tmp_path):
    data = (X_MULTI, Y_MULTI, X_MULTI[:10]) if params.get("multiclass") else None
    model = pipeline("precomputed" if data else "binary-bow", learner, params, data=data)
    assert_same_model(model, round_trip(model, tmp_path), data[2] if data else PROBE_DOCS)


def test_imported_model_saves_loads_and_predicts(tmp_path):
    model = pipeline("binary-bow", "cw-stdev")
    back = round_trip(model, tmp_path)
    loaded = textcw.load(textcw.save(back, tmp_path / "m.joblib"))
    assert_same_model(model, loaded, PROBE_DOCS)


# ---------------------------------------------------------------------------- refusals

@pytest.fixture
def exported(tmp_path):
    return export_model(pipeline("binary-bow", "cw-stdev"), tmp_path / "m.textcw")


def edit(path, change_document=None, change_arrays=None, extra=()):
    """Rewrite an export: ``change_document(doc)`` edits the JSON, ``change_arrays(arrays)`` the
    list of raw ``.npy`` bytes; ``extra`` adds members."""
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read(JSON_MEMBER))
        arrays = [archive.read(n) for n in archive.namelist()[1:]]
    if change_document:
        change_document(document)
    if change_arrays:
        change_arrays(arrays)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(JSON_MEMBER, json.dumps(document))
        for i, data in enumerate(arrays):
            archive.writestr(f"arrays/{i}.npy", data)
        for name, data in extra:
            archive.writestr(name, data)
    return path


def npy(array, allow_pickle=False) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def learner_step(doc):
    return doc["steps"][1]


def state_array(doc, name):
    return learner_step(doc)["state_dict"]["__dict__"]["arrays"]["__dict__"][name]["__array__"]


class Boom:
    def __reduce__(self):
        return (pytest.fail, ("a pickle inside an export was run",))


def test_files_that_are_not_exports(tmp_path, exported):
    with pytest.raises(ModelFileError, match="does not exist"):
        import_model(tmp_path / "none.textcw")
    (tmp_path / "plain.txt").write_text("hello")
    with pytest.raises(ModelFileError, match="is not an exported textcw model"):
        import_model(tmp_path / "plain.txt")
    truncated = tmp_path / "cut.textcw"
    truncated.write_bytes(exported.read_bytes()[:-40])
    with pytest.raises(ModelFileError, match="not an exported textcw model .*or it is truncated"):
        import_model(truncated)
    joblib_model = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.joblib")
    with pytest.raises(ModelFileError, match=r"an archive but not an exported textcw model \(members \['manifest.json'"):
        import_model(joblib_model)


@pytest.mark.parametrize("change,message", [
    (lambda d: d.update(format="other"), "its model.json has another format"),
    (lambda d: d.update(format_version=7), "uses export format 7; .*upgrade textcw"),
    (lambda d: d["steps"].reverse(), "has the steps featurizer and learner, in that order"),
    (lambda d: learner_step(d).update(name="no-such-learner"), "needs a component that is not installed: .*no-such-learner"),
    (lambda d: learner_step(d).update(name="winnow-x", provider="textcw-x"),
     "needs the plugin 'textcw-x', which provides the learner 'winnow-x' .*from a source you trust"),
    (lambda d: learner_step(d).update(params={"__dict__": {"eta": 7}}), "holds an invalid model: .*eta"),
    (lambda d: learner_step(d).update(params={"__dict__": {"bogus": 1}}), "unknown parameter 'bogus'"),
    (lambda d: learner_step(d)["state_dict"]["__dict__"].update(n_features_in=3), "has shape .* it must be"),
    (lambda d: learner_step(d)["state_dict"]["__dict__"].update(n_updates=[-1]), "n_updates must be a list of non-negative"),
    (lambda d: learner_step(d)["state_dict"]["__dict__"]["arrays"]["__dict__"].pop("s"), r"keeps the state arrays \['mu', 's'\]"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(binary=False), "cannot take an attribute named 'binary'"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(__class__=1), "cannot take an attribute named '__class__'"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(_private=1), "cannot take an attribute named '_private'"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"]["vocabulary_"]["__dict__"].update(extra=0),
     "must map its .* terms to the distinct columns"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(vocabulary_={"__dict__": {"a": 0}}),
     "the featurizer makes 1 features but the learner was fitted with"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(stop_words_={"__weird__": 1}), "unknown value tags"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(
        x_={"__estimator__": "os:system", "params": {}}), "makes no nested estimator 'x_'; the file cannot add one"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(
        x_={"__estimator__": "textcw.cli.__main__:main", "params": {}}), "makes no nested estimator 'x_'"),
    (lambda d: d["steps"][0]["attributes"]["__dict__"].update(
        x_={"__estimator__": "sklearn.utils:Bunch", "params": {}}), "makes no nested estimator 'x_'"),
])
def test_bad_documents_are_refused(exported, change, message):
    edit(exported, change_document=change)
    with pytest.raises(ModelFileError, match=message):
        import_model(exported)


@pytest.mark.parametrize("idf,message", [
    ([1.0, 2.0], "must be a list of .* numbers, one per term"),
    ("2.0", "must be a list of .* numbers, one per term"),
    (None, "positive finite numbers"),  # -1.0 for every term
    ("zero", "positive finite numbers"),  # 0.0 for every term
])
def test_tfidf_idf_weights_are_checked_on_import(tmp_path, idf, message):
    path = export_model(pipeline("tfidf", "pa"), tmp_path / "m.textcw")

    def change(document):
        attributes = document["steps"][0]["attributes"]["__dict__"]
        n = len(attributes["idf_"])
        attributes["idf_"] = [-1.0] * n if idf is None else [0.0] * n if idf == "zero" else idf

    edit(path, change_document=change)
    with pytest.raises(ModelFileError, match=message):
        import_model(path)


@pytest.mark.parametrize("name,value,message", [
    ("s", -np.ones(1), "has shape"),
    ("mu", None, "contains NaN or infinite"),
    ("s", 0.0, "must be positive everywhere"),
    ("s", "int", "must be a float64 numpy array"),
])
def test_bad_state_arrays_are_refused(exported, name, value, message):
    with zipfile.ZipFile(exported) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
        original = np.lib.format.read_array(archive.open(f"arrays/{state_array(doc, name)}.npy"))
    if value is None:
        bad = original.copy()
        bad[0] = np.nan
    elif isinstance(value, str):
        bad = original.astype(np.int64)
    elif isinstance(value, float):
        bad = original.copy()
        bad[-1] = value
    else:
        bad = value
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, name), npy(bad)))
    with pytest.raises(ModelFileError, match=message):
        import_model(exported)


def test_pickled_array_is_never_unpickled(exported):
    with zipfile.ZipFile(exported) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
    evil = np.array([Boom()], dtype=object)
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"), npy(evil, allow_pickle=True)))
    with pytest.raises(ModelFileError, match=r"holds an array of dtype \|O, which an export never has"):
        import_model(exported)


def test_lying_array_header_is_refused_before_allocating(exported):
    with zipfile.ZipFile(exported) as archive:
        doc = json.loads(archive.read(JSON_MEMBER))
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"), header.getvalue() + b"\0" * 64))
    with pytest.raises(ModelFileError, match=r"declares a \(1000000000000,\) array, more data than it holds"):
        import_model(exported)


def test_size_limit_and_extra_members(exported, tmp_path):
    with pytest.raises(ModelFileError, match="unpacks to .* bytes, more than the limit of 1,000"):
        import_model(exported, max_bytes=1000)
    edit(exported, extra=[("evil.py", b"print('hi')")])
    with pytest.raises(ModelFileError, match="an archive but not an exported textcw model"):
        import_model(exported)


def test_damaged_member_is_refused(exported):
    data = bytearray(exported.read_bytes())
    data[200] ^= 0xFF  # inside the compressed JSON
    exported.write_bytes(bytes(data))
    # the deflate stream itself may fail first, or the CRC check after it: both are "damaged"
    with pytest.raises(ModelFileError, match=r"is damaged or was modified after saving \((Bad CRC-32 for file "
                                             r"'model.json'|Error -3 while decompressing data)"):
        import_model(exported)


def test_any_damaged_byte_is_refused_or_harmless(exported, tmp_path):
    original = exported.read_bytes()
    for position in range(30, min(len(original), 2000), 7):
        data = bytearray(original)
        data[position] ^= 0xFF
        damaged = tmp_path / "damaged.textcw"
        damaged.write_bytes(bytes(data))
        try:
            import_model(damaged)  # a byte of slack (e.g. a timestamp) may change nothing
        except ModelFileError:
            pass


def test_what_cannot_be_exported_is_named(tmp_path):
    model = pipeline("binary-bow", "pa")
    model[0].custom_ = object()
    with pytest.raises(InputError, match=r"featurizer.custom_ holds a object, which cannot be exported without pickle"):
        export_model(model, tmp_path / "m.textcw")
    with pytest.raises(InputError, match="only pipelines trained by textcw"):
        export_model(model[-1], tmp_path / "m.textcw")
    plain = sp.csr_matrix(np.eye(3))
    with pytest.raises(InputError, match="only pipelines trained by textcw"):
        export_model(plain, tmp_path / "m.textcw")
    assert not list(tmp_path.iterdir())  # nothing half-written
