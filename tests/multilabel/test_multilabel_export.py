"""Multi-label models through the pickle-free export (``textcw.portable_multilabel``): exact round
trips that keep learning, and a clear refusal of every tampered multi-label entry."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from tests.cli_run import one_line_error, run
from tests.hardening.test_portable import edit
from tests.multilabel.test_multilabel_cli import rows
from textcw.errors import InputError, ModelFileError
from textcw.learners.multilabel import MultiLabel
from textcw.multilabel_run import train_multilabel
from textcw.pipeline import make_learner
from textcw.portable import export_model, import_model
from textcw.portable_export import _encode


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multilabel-export")
    with open(folder / "train.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text", "label"])
        writer.writerows(rows(120, 0))
    return f"csv:{folder / 'train.csv'}?label_sep=|&test=0"


@pytest.fixture(scope="module", params=["arow", "pa1"])  # a Gaussian learner (variances kept) and not
def exported(request, corpus, tmp_path_factory):
    model = train_multilabel(corpus, request.param, epochs=2).model
    path = tmp_path_factory.mktemp(f"export-{request.param}") / "tags.textcw"
    export_model(model, path)
    return model, path


PROBE = [text for text, _ in rows(30, 7)] + ["golf copper", "", "unknown words only"]


def test_the_imported_model_predicts_and_keeps_learning_exactly_as_the_original(exported):
    model, path = exported
    back = import_model(path)
    ours, theirs = model[-1], back[-1]
    assert isinstance(theirs, MultiLabel) and theirs.classes_.tolist() == ours.classes_.tolist()
    np.testing.assert_array_equal(back.predict_proba(PROBE), model.predict_proba(PROBE))
    assert [tuple(p) for p in back.predict(PROBE)] == [tuple(p) for p in model.predict(PROBE)]
    np.testing.assert_array_equal(theirs.thresholds_, ours.thresholds_)
    np.testing.assert_array_equal(theirs.weight_norms_, ours.weight_norms_)  # recomputed, not read
    assert theirs.record_ == ours.record_ == "cross-fit" and theirs.record_f1_ == ours.record_f1_ == {}
    assert back.textcw_components_["multilabel"] == model.textcw_components_["multilabel"]
    # continuing: the same corrections give bit for bit the same models and calibration
    new = rows(20, 3)
    X = model[0].transform([t for t, _ in new])
    Y = [tuple(labels.split("|")) for _, labels in new]
    ours.partial_fit(X, Y)
    theirs.partial_fit(X, Y)
    for a, b in zip(ours.estimators_, theirs.estimators_):
        np.testing.assert_array_equal(a.coef_, b.coef_)
    assert theirs.calibration_ == ours.calibration_
    np.testing.assert_array_equal(back.predict_proba(PROBE), model.predict_proba(PROBE))


def test_textcw_import_rebuilds_a_tagger_that_predicts_tag_sets(exported, capsys, tmp_path):
    model, path = exported
    code, _, err = run(capsys, "import", path, tmp_path / "back.textcw-model")
    assert code == 0, err
    code, out, err = run(capsys, "predict", tmp_path / "back.textcw-model", stdin=b"golf tennis and iron\n")
    assert code == 0, err
    assert out.strip().split("\t") == list(model.predict(["golf tennis and iron"])[0])  # tags, tab-separated


def _learner_step(document):
    return document["steps"][1]["multilabel"]


def _array_of(document, key):
    return _learner_step(document)["attributes"]["__dict__"]["recorded_"]["__dict__"][key]["__array__"]


TAMPERED = [
    ("a label model removed", lambda d: _learner_step(d)["labels"].pop(), "must be a list of"),
    ("an unknown option", lambda d: _learner_step(d)["params"]["__dict__"].update(margn="raw"),
     "unknown options ['margn']"),
    ("a threshold option out of range", lambda d: _learner_step(d)["params"]["__dict__"].update(threshold=2.0),
     "are invalid: "),
    ("an unknown record", lambda d: _learner_step(d)["attributes"]["__dict__"].update(record_="later"),
     "must be one of first, cross-fit"),
    ("a compared F1 above 1",
     lambda d: _learner_step(d)["attributes"]["__dict__"].update(record_f1_={"__dict__": {"first": 2.0}}),
     "must map some of first, cross-fit to an F1 between 0 and 1"),
    ("an unknown label format", lambda d: _learner_step(d)["attributes"]["__dict__"].update(label_format_="bag"),
     "must be one of sets, indicator"),
    ("a negative temperature",
     lambda d: _learner_step(d)["attributes"]["__dict__"]["calibration_"][0]["__dict__"].update(inverse_temperature=-1.0),
     "inverse_temperature must be a finite number >= 0"),
    ("a calibration missing", lambda d: _learner_step(d)["attributes"]["__dict__"]["calibration_"].pop(),
     "one probability calibration per label (3)"),
    ("no feature count", lambda d: _learner_step(d)["attributes"]["__dict__"].update(n_features_in_=0),
     "must be a positive integer"),
    ("a wider feature count", lambda d: _learner_step(d)["attributes"]["__dict__"].update(n_features_in_=10**6),
     "must be a binary model (classes 0 and 1) of 1000000 features"),
    ("targets that are scores",
     lambda d: _learner_step(d)["attributes"]["__dict__"]["recorded_"]["__dict__"]["Y"].update(__array__=_array_of(d, "scores")),
     "must be a uint8 array"),
    ("a negative honest-score count", lambda d: _learner_step(d)["attributes"]["__dict__"].update(n_honest_scores_=-1),
     "must be an integer >= 0"),
    ("an attribute fit never sets", lambda d: _learner_step(d)["attributes"]["__dict__"].update(coef_=1.0),
     "must be some of classes_"),
    ("a negative unlabelled-document count",
     lambda d: _learner_step(d)["attributes"]["__dict__"].update(unlabelled_documents_=-2), "must be an integer >= 0"),
    ("a minimum of labels out of range", lambda d: _learner_step(d)["params"]["__dict__"].update(min_labels=101),
     "are invalid: "),
]


def test_a_file_without_the_unlabelled_count_predicts_as_before_the_minimum_existed(exported, tmp_path):
    # files written before the count was kept have no minimum: their predictions do not change
    model, path = exported
    copy = tmp_path / "older.textcw"
    copy.write_bytes(path.read_bytes())
    edit(copy, change_document=lambda d: _learner_step(d)["attributes"]["__dict__"].pop("unlabelled_documents_"))
    back = import_model(copy)[-1]
    assert back.unlabelled_documents_ is None and back.min_labels_ == 0
    assert import_model(path)[-1].unlabelled_documents_ == 0 and import_model(path)[-1].min_labels_ == 1
    X = model[0].transform(PROBE)
    np.testing.assert_array_equal(back.predict_indicator(X), (back.predict_proba(X) > back.thresholds_).astype(int))


@pytest.mark.parametrize("what, change, message", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_tampered_multilabel_entry_is_refused_naming_what_is_wrong(exported, tmp_path, what, change, message):
    _, path = exported
    copy = tmp_path / "tampered.textcw"
    copy.write_bytes(path.read_bytes())
    edit(copy, change_document=change)
    with pytest.raises(ModelFileError) as info:
        import_model(copy)
    assert message in str(info.value)


def test_thresholds_outside_zero_one_are_refused(exported, tmp_path):
    model, path = exported
    thresholds = model[-1].thresholds_.copy()
    thresholds[1] = 1.5
    copy = tmp_path / "tampered.textcw"
    model[-1].thresholds_, saved = thresholds, model[-1].thresholds_
    try:
        export_model(model, copy)
    finally:
        model[-1].thresholds_ = saved
    with pytest.raises(ModelFileError, match=r"must be probabilities in \[0, 1\]"):
        import_model(copy)


def test_a_textcw_learner_nested_elsewhere_is_refused_rather_than_exported_without_weights():
    learner = make_learner("arow").fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(InputError, match="nests a textcw learner \\(AROW\\)"):
        _encode(learner, [], "learner.inner")
