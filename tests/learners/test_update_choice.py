"""Hard short documents give the Gaussian learners the k-best parallel multi-class update
(``with_chosen_update``), in ``textcw train`` and ``make_pipeline(..., train_defaults=True)`` alike,
unless ``multiclass`` or ``k`` is given."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import textcw
from csv_corpus import csv_corpus
from textcw.errors import ParameterError
from textcw.learners.arow import AROW
from textcw.learners.calibrated_pipeline import CalibratedPipeline
from textcw.learners.ngram_choice import probe_mistakes
from textcw.learners.update_choice import HARD_ERROR, PARALLEL_K, probe_error, with_chosen_update
from textcw.pipeline import train


def _task(n: int, seed: int, n_labels: int = 8, shared: float = 0.0, rare: int = 0):
    """Documents of four words. With probability ``shared`` a word comes from a vocabulary every
    label shares, else from the label's own. ``rare`` more words are drawn from thousands, so
    ``rare=30`` makes long documents."""
    rng = np.random.default_rng(seed)
    common = [f"c{i}" for i in range(40)]
    docs, y = [], []
    for _ in range(n):
        label = int(rng.integers(n_labels))
        own = [f"l{label}w{i}" for i in range(6)]
        words = [str(rng.choice(common)) if rng.random() < shared else str(rng.choice(own)) for _ in range(4)]
        docs.append(" ".join(words + [f"r{rng.integers(10 * n)}" for _ in range(rare)]))
        y.append(f"label{label}")
    return docs, np.array(y, dtype=object)


def _features(docs):
    return textcw.make_featurizer("tfidf").fit_transform(docs)


HARD = dict(n_labels=8, shared=0.9)  # mostly shared words: the probe gets most documents wrong
EASY = dict(n_labels=8, shared=0.0)  # every word names its label


def test_probe_error_is_the_share_of_the_probes_first_pass_mistakes():
    docs, labels = _task(300, seed=0, **HARD)
    X = _features(docs)
    assert probe_error(X, labels) == probe_mistakes(X, labels) / 300 > HARD_ERROR
    easy_docs, easy_labels = _task(300, seed=0, **EASY)
    assert probe_error(_features(easy_docs), easy_labels) < HARD_ERROR


@pytest.mark.parametrize("name", ["cw-var", "cw-stdev", "arow", "scw1", "scw2"])
def test_hard_short_documents_choose_the_parallel_update(name):
    docs, labels = _task(300, seed=1, **HARD)
    X = _features(docs)
    learner = textcw.make_learner(name)
    chosen = with_chosen_update(learner, X, labels, short=True)
    assert chosen is not learner and learner.multiclass == "top1"
    assert chosen.get_params() == {**learner.get_params(), "multiclass": "par", "k": PARALLEL_K}
    # fewer labels than PARALLEL_K + 1: every other label competes
    few_docs, few_labels = _task(300, seed=1, n_labels=4, shared=0.95)
    assert with_chosen_update(learner, _features(few_docs), few_labels, short=True).k == 3


class _OwnKernels(AROW):
    step_kernels = object()  # as a variant built on the diagonal loop declares them (a plugin's)


def _own_kernels():
    return _OwnKernels()


def test_the_update_is_kept_where_the_rule_does_not_apply():
    docs, labels = _task(300, seed=2, **HARD)
    X = _features(docs)
    easy_docs, easy_labels = _task(300, seed=2, **EASY)
    cases = [
        (textcw.make_learner("scw1"), _features(easy_docs), easy_labels, True),  # easy documents
        (textcw.make_learner("scw1"), X, labels, False),  # not short documents
        (textcw.make_learner("scw1"), X, np.where(labels == "label0", "a", "b"), True),  # two labels
        (textcw.make_learner("sgd"), X, labels, True),  # not a Gaussian learner
        (textcw.make_learner("pa1"), X, labels, True),
        (textcw.make_learner("scw1", multiclass="seq"), X, labels, True),  # given
        (textcw.make_learner("arow", multiclass="par", k=2), X, labels, True),
        (textcw.make_learner("scw1", class_weight="balanced"), X, labels, True),  # needs top-1
        (textcw.make_learner("arow", average=True), X, labels, True),
        (textcw.make_learner("cw-stdev", dtype="float32"), X, labels, True),
        (textcw.make_learner("scw1", k=1), X, labels, True),
        (_own_kernels(), X, labels, True),  # a variant's step kernels run top-1 only
    ]
    for learner, rows, y, short in cases:
        assert with_chosen_update(learner, rows, y, short=short) is learner, learner


def test_make_pipeline_chooses_records_exports_and_refits_the_update(tmp_path):
    docs, labels = _task(400, seed=3, **HARD)
    test_docs, _ = _task(100, seed=4, **HARD)
    model = textcw.make_pipeline("tfidf", "scw1", train_defaults=True).fit(docs, labels)
    assert model.multiclass == "auto" and model.multiclass_chosen_ is True
    assert (model[-1].multiclass, model[-1].k) == ("par", PARALLEL_K)
    params = model.textcw_components_["learner"]["params"]
    assert (params["multiclass"], params["k"]) == ("par", PARALLEL_K)
    # the same model as the learner given the parallel update outright
    given = textcw.make_pipeline("tfidf", "scw1", train_defaults=True, multiclass="par", k=PARALLEL_K)
    assert given.multiclass == "given"
    given.fit(docs, labels)
    np.testing.assert_array_equal(given.predict_proba(test_docs), model.predict_proba(test_docs))
    textcw.export_model(model, tmp_path / "m.textcw")
    again = textcw.import_model(tmp_path / "m.textcw")
    np.testing.assert_array_equal(again.predict_proba(test_docs), model.predict_proba(test_docs))
    # a refit on easy documents chooses again: top-1
    easy_docs, easy_labels = _task(400, seed=5, **EASY)
    model.fit(easy_docs, easy_labels)
    assert model.multiclass_chosen_ is False and (model[-1].multiclass, model[-1].k) == ("top1", None)
    params = model.textcw_components_["learner"]["params"]
    assert (params["multiclass"], params["k"]) == ("top1", None)


def test_a_given_update_is_kept_and_a_wrong_setting_is_refused():
    docs, labels = _task(400, seed=6, **HARD)
    for given in ({"multiclass": "top1"}, {"k": 1}):
        model = textcw.make_pipeline("tfidf", "arow", train_defaults=True, **given).fit(docs, labels)
        assert model.multiclass == "given" and model[-1].multiclass == "top1"
    plain = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)  # no train defaults: as given
    assert plain.multiclass == "given" and plain[-1].multiclass == "top1"
    with pytest.raises(ParameterError, match="^multiclass='yes' is invalid; multiclass must be 'given' or 'auto'$"):
        textcw.make_pipeline("tfidf", "arow", train_defaults=True).set_params(multiclass="yes").fit(docs, labels)


def test_textcw_train_chooses_as_the_pipeline_does(tmp_path):
    docs, labels = _task(400, seed=7, **HARD)
    test_docs, test_labels = _task(150, seed=8, **HARD)
    corpus = csv_corpus(tmp_path, (docs, labels), (test_docs, test_labels))
    result = train(corpus, "cw-stdev", cache=False)
    pipeline = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True).fit(docs, labels)
    assert (result.model[-1].multiclass, result.model[-1].k) == ("par", PARALLEL_K)
    np.testing.assert_array_equal(result.model.predict_proba(test_docs), pipeline.predict_proba(test_docs))
    given = train(corpus, "cw-stdev", params={"multiclass": "top1"}, cache=False)
    assert given.model[-1].multiclass == "top1"


def test_a_pipeline_pickled_before_the_choice_existed_keeps_its_update_as_given():
    docs, labels = _task(200, seed=9, **HARD)
    pipeline = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
    del pipeline.__dict__["multiclass"]
    again = pickle.loads(pickle.dumps(pipeline))
    assert isinstance(again, CalibratedPipeline) and again.get_params()["multiclass"] == "given"
    assert again.fit(docs, labels)[-1].multiclass == "top1"


def test_textcw_train_says_when_the_documents_chose_the_parallel_update(tmp_path, capsys):
    from cli_run import run

    corpus = csv_corpus(tmp_path, _task(400, seed=10, **HARD), _task(100, seed=11, **HARD))
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "scw1")
    assert code == 0, err
    assert f"; the parallel update (k={PARALLEL_K}), for hard short documents; featurize " in out
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "scw1", "--param", "k=2",
                         "--param", "multiclass=par")
    assert code == 0, err
    assert "parallel update" not in out
