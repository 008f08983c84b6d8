"""Published numbers as stored, experiment lookup, and what a reproduction does when a name is missing."""

from __future__ import annotations

import pytest

from textcw.errors import DataError, TextcwError, UnknownNameError
from textcw.evaluation import experiments
from textcw.evaluation.experiments.base import ExperimentResult, check_learners, check_tasks, published
from textcw.evaluation.specs import LearnerSpec, TaskSpec

FILES = {
    "jmlr2012_table2.json": (17, 6),
    "jmlr2012_table3.json": (22, 8),
    "jmlr2012_table4.json": (22, 7),
    "jmlr2012_table5.json": (17, 6),
    "emnlp2009_table3.json": (9, 9),
}


@pytest.mark.parametrize("filename", list(FILES))
def test_published_tables_are_complete(filename):
    paper = published(filename)
    rows, cols = FILES[filename]
    assert len(paper["rows"]) == rows and len(paper["columns"]) == cols
    assert paper["table"] and paper["source"].startswith("section ") and "papers/" not in paper["source"] and paper["paper"]
    for row in paper["rows"]:
        assert len(row["values"]) == cols and len(row["marks"]) == cols
        assert row["row"] in row["text"]            # the transcribed line is kept with each row


def test_spot_values_against_the_papers():
    # copied by hand from the papers: JMLR 2012 Tables 2-5, EMNLP 2009 Table 3, MLJ 2013 section 5.3.1
    def cell(filename, row, col):
        paper = published(filename)
        r = next(r for r in paper["rows"] if r["row"] == row)
        k = paper["columns"].index(col)
        return r["marks"][k], r["values"][k]

    assert cell("jmlr2012_table3.json", "Comp", "var-L2") == ("†", 5.61)
    assert cell("jmlr2012_table3.json", "Books", "stdev-KL") == ("∗", 16.25)
    assert cell("jmlr2012_table3.json", "7 vs 8", "SGD") == ("", 53.04)
    assert cell("jmlr2012_table2.json", "Talk", "stdev-KL") == ("", 0.27)
    assert published("jmlr2012_table2.json")["mean_rank"] == [2.53, 2.35, 5.29, 2.47, 4.53, 3.59]
    assert cell("jmlr2012_table4.json", "Webspam", "NB") == ("", 19.10)
    assert cell("jmlr2012_table5.json", "Webspam", "SVM") == ("", 103.0)
    assert cell("emnlp2009_table3.json", "20 News", "CW K=1") == ("∗∗", 92.90)
    assert cell("emnlp2009_table3.json", "Enron A", "CW K=1") == ("††", 83.83)
    assert published("arow2013_noise.json")["mean_rank"]["0"] == {"AROW": 1.51, "CW": 1.63}
    nips = published("nips2008_synthetic.json")
    assert nips["n_train"] == 1000 and nips["n_test"] == 10000


def test_every_experiment_is_listed_and_loads():
    assert {"jmlr-table2", "jmlr-table3", "emnlp-table3", "arow-noise", "nips-synthetic"} <= set(experiments.names())
    for name in experiments.names():
        assert callable(experiments.get(name).run)
    with pytest.raises(UnknownNameError, match="unknown experiment 'nope'"):
        experiments.get("nope")


def test_missing_learner_is_an_error_naming_it(regs):
    specs = [LearnerSpec("perceptron"), LearnerSpec("nope-learner", {}, "Nope")]
    with pytest.raises(TextcwError, match="nope-learner.*--available"):
        check_learners("demo", specs, available=False)
    ok, notes = check_learners("demo", specs, available=True)
    assert ok == specs[:1] and "Nope" in notes[0]
    with pytest.raises(TextcwError, match="unknown parameter 'nope'"):
        check_learners("demo", [LearnerSpec("cw-var", {"nope": 5})], available=False)


def test_missing_corpus_is_an_error_and_missing_data_a_skip(regs, monkeypatch):
    from textcw.plugins import build_registries, get_plugin_manager, use_registries
    from toy_corpus import ToyPlugin

    # without the installed plugins, as a user without textcw-pixels has them
    with use_registries(build_registries(get_plugin_manager(entry_points=False, extra=[ToyPlugin()]))):
        with pytest.raises(TextcwError, match="usps.*textcw-pixels"):
            check_tasks("demo", [("0 vs 9", TaskSpec("usps:0v9"))], available=False)
        ok, skipped = check_tasks("demo", [("0 vs 9", TaskSpec("usps:0v9")), ("toy", TaskSpec("toy:binary"))],
                                  available=True)
    assert [t.corpus for _, t in ok] == ["toy:binary"] and "not registered" in skipped[0]

    import textcw.pipeline

    real = textcw.pipeline.load_corpus

    def absent(spec, *args, **kwargs):
        if spec.startswith("toy:multi"):
            raise DataError("toy archive missing: put it in /nowhere")
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(textcw.pipeline, "load_corpus", absent)
    ok, skipped = check_tasks("demo", [("m", TaskSpec("toy:multi")), ("b", TaskSpec("toy:binary"))],
                              available=False)
    assert len(ok) == 1 and skipped == ["m: no data here (toy archive missing: put it in /nowhere)"]


def test_synthetic_reproduction_runs_and_round_trips():
    result = experiments.run("nips-synthetic", quick=True)
    assert not result.interrupted and len(result.tables[0].rows) == 7
    assert {c.name for c in result.checks} >= {"first-order learners make at least 129 mistakes"}
    assert ExperimentResult.from_json(result.to_json()) == result


def test_synthetic_tuning_candidates_that_floor_do_not_warn(monkeypatch):
    import warnings

    from textcw.errors import VarianceFloorWarning
    from textcw.evaluation.experiments import nips_synthetic

    seeds = []

    def flooring_run(spec, params, seed, n_test):
        seeds.append(seed)
        warnings.warn("variances reached the floor", VarianceFloorWarning)
        return [10], [3.0 + seed - nips_synthetic.TUNE_SEED], 0.0

    monkeypatch.setattr(nips_synthetic, "one_run", flooring_run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning that escapes fails the test
        score = nips_synthetic.tuning_score(LearnerSpec("cw-var", {}, "CW"), {"eta": 0.999}, 3)
    assert score == 4.0 and seeds == [nips_synthetic.TUNE_SEED + r for r in range(3)]
