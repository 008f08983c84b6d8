"""Short training documents choose unigrams or uni+bigrams by progressive validation
(textcw.learners.ngram_choice), in make_pipeline(train_defaults=True) and in textcw train."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import textcw
from textcw.learners.ngram_choice import (
    BIGRAMS,
    SHORT_TEXT_WORDS,
    UNIGRAMS,
    NgramChoice,
    can_choose,
    fit_chosen,
    probe_mistakes,
)
from textcw.pipeline import train

WORDS = [f"w{i:02d}" for i in range(12)]


def ordered_pairs(n: int, seed: int, filler: int = 2):
    """Documents of two distinct words in some order, plus ``filler`` random words; the label
    is the order (whether the first word sorts before the second). The bag of words of
    "w01 w07" and "w07 w01" is the same, so unigrams carry nothing; bigrams carry it all."""
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for _ in range(n):
        a, b = rng.choice(len(WORDS), 2, replace=False)
        noise = [f"x{j}" for j in rng.integers(0, 40, filler)]
        docs.append(" ".join([*noise[: filler // 2], WORDS[a], WORDS[b], *noise[filler // 2:]]))
        labels.append("ascending" if a < b else "descending")
    return docs, np.array(labels)


def topic_words(n: int, seed: int, length: int):
    """Documents of ``length`` words in random order whose label is which of two word lists
    most of them come from: bigrams add only noise."""
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for _ in range(n):
        label = int(rng.integers(0, 2))
        own = rng.integers(0, 30, length)
        docs.append(" ".join(f"{'ab'[label] if rng.random() < 0.8 else 'ab'[1 - label]}{w}" for w in own))
        labels.append(f"topic-{label}")
    return docs, np.array(labels)


def test_word_order_chooses_bigrams_and_fits_the_bigram_featurizer():
    docs, labels = ordered_pairs(600, seed=1)
    feat = textcw.make_featurizer("tfidf")
    fitted, X, choice = fit_chosen(feat, docs, labels)
    assert choice.ngram_range == BIGRAMS
    assert fitted is not feat and fitted.get_params()["ngram_range"] == BIGRAMS
    assert choice.mistakes["1-2"] < choice.mistakes["1-1"]
    # the matrix is that of the bigram featurizer fitted alone, and the probe counts are its own
    alone = textcw.make_featurizer("tfidf", ngram_range=(1, 2)).fit_transform(docs)
    assert (X != alone).nnz == 0 and X.shape == alone.shape
    assert choice.mistakes["1-2"] == probe_mistakes(alone, labels)
    assert choice.mistakes["1-1"] == probe_mistakes(textcw.make_featurizer("tfidf").fit_transform(docs), labels)
    assert choice.median_words == 4.0
    assert choice.to_dict() == {"ngram_range": [1, 2], "median_words": 4.0, "mistakes": choice.mistakes}
    assert "unigrams and bigrams" in choice.describe() and "first-pass mistakes" in choice.describe()


def test_bigrams_must_make_strictly_fewer_mistakes():
    docs, labels = topic_words(400, seed=2, length=6)
    fitted, X, choice = fit_chosen(textcw.make_featurizer("tfidf"), docs, labels)
    expected = BIGRAMS if choice.mistakes["1-2"] < choice.mistakes["1-1"] else UNIGRAMS
    assert choice.ngram_range == expected == tuple(fitted.get_params()["ngram_range"])
    assert X.shape[1] == len(fitted.vocabulary_)


def test_equal_mistakes_keep_unigrams(monkeypatch):
    docs, labels = ordered_pairs(100, seed=3)
    monkeypatch.setattr("textcw.learners.ngram_choice.probe_mistakes", lambda X, y: 7)
    feat = textcw.make_featurizer("tfidf")
    fitted, _, choice = fit_chosen(feat, docs, labels)
    assert fitted is feat and choice == NgramChoice(UNIGRAMS, 4.0, {"1-1": 7, "1-2": 7})


def test_long_documents_are_not_compared():
    docs, labels = topic_words(60, seed=4, length=80)
    feat = textcw.make_featurizer("tfidf")
    fitted, X, choice = fit_chosen(feat, docs, labels)
    assert fitted is feat and choice.mistakes == {} and choice.ngram_range == UNIGRAMS
    assert choice.median_words > SHORT_TEXT_WORDS
    assert "not compared" in choice.describe()


@pytest.mark.parametrize("case", ["no labels", "one label", "multi-label", "a stream"])
def test_nothing_to_compare_keeps_unigrams(case):
    docs, labels = ordered_pairs(80, seed=5)
    given = {"no labels": (docs, None), "one label": (docs, np.array(["a"] * 80)),
             "multi-label": (docs, np.ones((80, 2), dtype=int)), "a stream": (iter(docs), labels)}[case]
    feat = textcw.make_featurizer("tfidf")
    fitted, X, choice = fit_chosen(feat, *given)
    assert fitted is feat and choice.mistakes == {} and X.shape[0] == 80


def test_which_featurizers_take_the_choice():
    assert can_choose(textcw.make_featurizer("tfidf"))
    assert not can_choose(textcw.make_featurizer("tfidf", ngram_range=(1, 2)))
    assert not can_choose(textcw.make_featurizer("tfidf", analyzer="char_wb", ngram_range=(1, 1)))
    assert not can_choose(textcw.make_featurizer("binary-bow"))  # the papers' features stay as given
    assert not can_choose(textcw.make_featurizer("bigram-counts"))


def test_make_pipeline_with_train_defaults_chooses_and_exports_the_choice(tmp_path):
    docs, labels = ordered_pairs(600, seed=6)
    test_docs, test_labels = ordered_pairs(200, seed=7)
    model = textcw.make_pipeline("tfidf", "arow", train_defaults=True).fit(docs, labels)
    assert model.ngrams == "auto" and model.ngram_choice_.ngram_range == BIGRAMS
    assert model[0].get_params()["ngram_range"] == BIGRAMS
    assert model.textcw_components_["featurizer"]["params"] == {"ngram_range": (1, 2)}
    assert np.mean(model.predict(test_docs) == test_labels) > 0.9  # unigrams cannot beat 0.5 here
    textcw.export_model(model, tmp_path / "m.textcw")
    again = textcw.import_model(tmp_path / "m.textcw")
    assert np.array_equal(again.predict_proba(test_docs), model.predict_proba(test_docs))
    # a refit on documents that do not choose bigrams starts from unigrams again
    long_docs, long_labels = topic_words(150, seed=8, length=80)
    model.fit(long_docs, long_labels)
    assert model.ngram_choice_.ngram_range == UNIGRAMS and model[0].get_params()["ngram_range"] == UNIGRAMS
    assert model.textcw_components_["featurizer"]["params"] == {}


@pytest.mark.parametrize("setup", [
    {"featurizer_params": {"ngram_range": (1, 1)}, "train_defaults": True},
    {"train_defaults": False},
    {"train_defaults": True, "probability": "raw"},
])
def test_given_ngrams_or_no_train_defaults_keep_the_featurizer(setup):
    docs, labels = ordered_pairs(300, seed=9)
    model = textcw.make_pipeline("tfidf", "arow", **setup).fit(docs, labels)
    assert model[0].get_params()["ngram_range"] == UNIGRAMS
    assert not hasattr(model, "ngram_choice_")


def test_unknown_ngrams_setting_is_refused():
    model = textcw.make_pipeline("tfidf", "arow", train_defaults=True).set_params(ngrams="bigrams")
    with pytest.raises(textcw.errors.ParameterError, match="ngrams must be 'fixed' or 'auto'"):
        model.fit(*ordered_pairs(20, seed=10))


def _write_csv(path, docs, labels):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["text", "label"])
        out.writerows(zip(docs, labels))


def test_textcw_train_chooses_as_make_pipeline_does(tmp_path):
    docs, labels = ordered_pairs(600, seed=11)
    test_docs, test_labels = ordered_pairs(200, seed=12)
    _write_csv(tmp_path / "train.csv", docs, labels)
    _write_csv(tmp_path / "test.csv", test_docs, test_labels)
    corpus = f"csv:{tmp_path / 'train.csv'},{tmp_path / 'test.csv'}"
    result = train(corpus, "arow", cache=False)
    assert result.model[0].get_params()["ngram_range"] == BIGRAMS
    assert result.model.textcw_components_["featurizer"]["params"] == {"ngram_range": (1, 2)}
    same = textcw.make_pipeline("tfidf", "arow", train_defaults=True).fit(docs, labels)
    assert np.array_equal(result.model.predict_proba(test_docs), same.predict_proba(test_docs))
    # given n-grams are kept as given
    given = train(corpus, "arow", cache=False, featurizer_params={"ngram_range": [1, 1]})
    assert given.model[0].get_params()["ngram_range"] == UNIGRAMS


def test_a_pipeline_pickled_before_ngrams_existed_keeps_its_featurizer():
    docs, labels = ordered_pairs(300, seed=13)
    model = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
    del model.__dict__["ngrams"]  # what unpickling a model saved before the parameter gives
    assert model.get_params()["ngrams"] == "fixed"
    model.fit(docs, labels)
    assert model[0].get_params()["ngram_range"] == UNIGRAMS


def test_textcw_train_says_when_the_documents_chose_bigrams(tmp_path, capsys):
    from cli_run import run

    docs, labels = ordered_pairs(400, seed=14)
    _write_csv(tmp_path / "train.csv", docs, labels)
    _write_csv(tmp_path / "test.csv", *ordered_pairs(100, seed=15))
    corpus = f"csv:{tmp_path / 'train.csv'},{tmp_path / 'test.csv'}"
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "arow")
    assert code == 0, err
    assert " features of unigrams and bigrams, chosen for short documents; an intercept, for short documents; " in out
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "arow",
                         "--featurizer-param", "ngram_range=[1,2]", "--param", "fit_intercept=false")
    assert code == 0, err
    assert "chosen for short documents" not in out and "intercept" not in out and " features; featurize " in out
