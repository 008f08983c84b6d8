"""``textcw train``, ``evaluate`` and ``predict`` on multi-label tasks: tag sets in every output,
one-line refusals of what does not apply."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

import textcw
from tests.cli_run import one_line_error, run
from textcw import persist
from textcw.learners.multilabel import MultiLabel

TOPICS = {"fruit": "apple banana cherry", "metal": "iron copper zinc", "sport": "tennis golf rugby"}


def rows(n, seed):
    """Documents with one or two topics, each topic's words in the document."""
    rng = np.random.default_rng(seed)
    names = sorted(TOPICS)
    out = []
    for i in range(n):
        chosen = sorted(set(rng.choice(names, size=1 + i % 2, replace=False)))
        words = " ".join(rng.choice(TOPICS[t].split()) for t in chosen for _ in range(3))
        out.append((f"{words} filler{i % 5}", "|".join(chosen)))
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multilabel-cli")
    for name, n, seed in (("train", 240, 0), ("test", 60, 1)):
        with open(folder / f"{name}.csv", "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["text", "label"])
            writer.writerows(rows(n, seed))
    return folder


def task(folder):
    return f"csv:{folder / 'train.csv'},{folder / 'test.csv'}?label_sep=|"


def test_train_reports_multilabel_scores_and_saves_a_tagger(tables, capsys):
    model = tables / "tags.textcw-model"
    code, out, err = run(capsys, "train", "--corpus", task(tables), "--learner", "arow", "--out", model)
    assert code == 0, err
    assert "micro-F1 1.000  macro-F1 1.000  Hamming loss 0.0000  subset accuracy 1.000" in out
    assert "(train 240 docs, test 60, 3 labels" in out
    loaded = persist.load(model)
    assert isinstance(loaded[-1], MultiLabel) and loaded[-1].classes_.tolist() == ["fruit", "metal", "sport"]
    assert persist.read_manifest(model)["model"]["classes"] == ["fruit", "metal", "sport"]
    code, out, err = run(capsys, "train", "--corpus", task(tables), "--learner", "arow", "--json")
    summary = json.loads(out)
    assert summary["micro_f1"] == 1.0 and summary["hamming_loss"] == 0.0 and summary["n_test"] == 60
    assert summary["per_class"]["metal"]["support"] == sum("metal" in r[1] for r in rows(60, 1))


def test_workers_train_the_labels_on_threads_and_the_saved_model_learns_on_in_one(tables, capsys):
    models = {}
    for workers in ("1", "2"):
        models[workers] = tables / f"tags-{workers}.textcw-model"
        code, out, err = run(capsys, "train", "--corpus", task(tables), "--learner", "arow", "--epochs", "3",
                             "--workers", workers, "--out", models[workers])
        assert code == 0, err
    one, two = (persist.load(models[w])[-1] for w in ("1", "2"))
    for a, b in zip(one.estimators_, two.estimators_):
        assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(one.thresholds_, two.thresholds_)
    assert one.n_jobs is None and two.n_jobs is None  # the threads were the run's, not the model's
    code, _, err = run(capsys, "train", "--corpus", task(tables), "--workers", "0")
    assert code == 2 and one_line_error(err) == "error: --workers 0 is invalid; give at least 1 thread"


def test_predict_prints_tag_sets_in_text_csv_and_json(tables, capsys):
    model = tables / "tags.textcw-model"
    if not model.exists():
        run(capsys, "train", "--corpus", task(tables), "--learner", "arow", "--out", model)
    docs = b"apple cherry tennis golf\niron zinc copper\n"
    code, out, err = run(capsys, "predict", model, stdin=docs)
    assert code == 0, err
    assert out.splitlines() == ["fruit\tsport", "metal"]
    code, out, _ = run(capsys, "predict", model, "--proba", stdin=docs)
    fields = out.splitlines()[0].split("\t")
    assert fields[0::2] == ["fruit", "sport"] and all(0.5 < float(p) <= 1.0 for p in fields[1::2])
    new = tables / "new.csv"
    new.write_text("id,text\n1,apple banana golf\n2,zinc iron\n")
    code, out, err = run(capsys, "predict", model, "--input", f"csv:{new}")
    assert code == 0, err
    table = list(csv.reader(io.StringIO(out)))
    assert [row[:3] for row in table] == [["id", "text", "predicted"], ["1", "apple banana golf", "fruit|sport"],
                                          ["2", "zinc iron", "metal"]]
    assert table[0][3] == "probability" and len(table[1][3].split("|")) == 2 and float(table[2][3]) > 0.5
    jsonl = tables / "new.jsonl"
    jsonl.write_text('{"text": "apple banana golf"}\n')
    code, out, err = run(capsys, "predict", model, "--input", f"jsonl:{jsonl}")
    record = json.loads(out)
    assert record["predicted"] == ["fruit", "sport"] and len(record["probability"]) == 2
    code, _, err = run(capsys, "predict", model, "--top", "2", stdin=docs)
    assert code == 2 and "a multi-label model predicts a set of tags: drop --top" in one_line_error(err)


def test_evaluate_runs_the_holdout_design_with_the_multilabel_metrics(tables, capsys):
    code, out, err = run(capsys, "evaluate", "--corpus", task(tables), "--learner", "arow,pa1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["design"] == "holdout" and report["metrics"] == ["micro-f1", "macro-f1", "hamming-loss",
                                                                   "subset-accuracy"]
    assert [r["learner"] for r in report["rows"]] == ["arow", "pa1"]
    assert report["rows"][0]["micro-f1"] == 1.0 and report["rows"][0]["hamming-loss"] == 0.0


def test_param_sets_the_multilabel_settings_beside_the_learners(tables, capsys):
    """--param record=..., threshold=..., min_labels=... reach MultiLabel (the model trained is
    MultiLabel's own with those settings, bit for bit); the learner's own parameters still reach
    the learner; a wrong value is refused before the corpus is read."""
    model = tables / "tags-best.textcw-model"
    code, out, err = run(capsys, "train", "--corpus", task(tables), "--learner", "arow", "--epochs", "2",
                         "--param", "record=best", "--param", "threshold=0.3", "--param", "min_labels=0",
                         "--param", "r=2", "--out", model)
    assert code == 0, err
    est = persist.load(model)[-1]
    assert (est.record, est.threshold, est.min_labels, est.learner.r) == ("best", 0.3, 0, 2)
    assert est.record_ in ("first", "cross-fit") and est.thresholds_.tolist() == [0.3] * 3
    featurizer = persist.load(model)[0]
    train = textcw.load_corpus(task(tables), "train")
    direct = MultiLabel(textcw.make_learner("arow", r=2, n_epochs=2, random_state=0), record="best",
                        threshold=0.3, min_labels=0).fit(featurizer.transform(train.data), train.labels)
    for ours, theirs in zip(est.estimators_, direct.estimators_):
        assert np.array_equal(ours.coef_, theirs.coef_)
    assert est.calibration_ == direct.calibration_
    for scale in (["--stream"], ["--shards", "2"]):  # the settings but record apply to streams and shards too
        code, _, err = run(capsys, "train", "--corpus", task(tables), "--learner", "arow", *scale, "--param",
                           "threshold=0.3", "--param", "min_labels=0", "--param", "margin=raw", "--out", model)
        assert code == 0, err
        est = persist.load(model)[-1]
        assert (est.threshold, est.min_labels, est.margin, est.thresholds_.tolist()) == (0.3, 0, "raw", [0.3] * 3)
    code, _, err = run(capsys, "train", "--corpus", task(tables), "--param", "record=always")
    assert code == 2 and one_line_error(err) == (
        "error: MultiLabel: record='always' is invalid; record must be one of 'auto', 'first', 'cross-fit', 'best'")


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "--design", "cv"], "design 'cv' does not apply to the multi-label task"),
    (["evaluate", "--tune"], "--tune does not apply to the multi-label task"),
    (["evaluate", "--metric", "log-loss"], "metric 'log-loss' does not apply to the multi-label task"),
    (["train", "--probability", "raw"], "--probability does not apply to the multi-label task"),
    (["train", "--stream", "--epochs", "2"], "a multi-label stream is read once"),
    (["train", "--stream", "--param", "record=best"], "record sets where a multi-label model trained in memory "
                                                       "takes its honest scores"),
    (["train", "--shards", "2", "--param", "record=first"], "with --stream or --shards they are the stream's"),
])
def test_what_does_not_apply_is_refused_in_one_line(tables, capsys, argv, message):
    code, _, err = run(capsys, *argv, "--corpus", task(tables))
    assert code == 2
    assert message in one_line_error(err)


def test_mixing_single_and_multilabel_tasks_is_refused(tables, capsys):
    single = tables / "single.csv"
    single.write_text("text,label\n" + "".join(f"apple {i},fruit\niron {i},metal\n" for i in range(10)))
    code, _, err = run(capsys, "evaluate", "--corpus", f"{task(tables)},csv:{single}")
    assert code == 2 and "evaluate multi-label and single-label tasks in separate runs" in one_line_error(err)

