"""The plugin as textcw sees it: the kit's checks, the public API, training end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import textcw
from numpy.testing import assert_array_equal
from textcw.pipeline import train
from textcw.plugins import use_registries
from textcw.testing import check_plugin, make_documents

import textcw_example
import textcw_example.plugin

# The kit's fixtures (make_registries, binary_data, topic_corpus, ...).
pytest_plugins = ["textcw.testing.fixtures"]

def test_plugin_passes_the_kit_checks():
    """Registers beside the built-ins without clashes; its learners, featurizer, metrics and
    design pass their checks; the installed distribution declares it and provides its names."""
    costs = Path(__file__).resolve().parent / "costs.csv"  # two classes
    check_plugin(textcw_example.plugin, distribution="textcw-example",
                 evaluation_options={"cost-error": {"costs": str(costs), "n_classes": (2,)},
                                     "shuffle-split": {"rounds": 2}})


def test_installed_plugin_serves_the_public_api():
    # No use_registries block: the process-wide registries, which load installed plugins.
    model = textcw.make_learner("balanced-winnow", alpha=1.2, beta=0.8)
    assert model.get_params()["alpha"] == 1.2
    featurizer = textcw.make_featurizer("char-ngrams", ngram_range=[3, 3])
    assert featurizer.get_params()["ngram_range"] == (3, 3)


def test_trains_end_to_end(make_registries, topic_corpus):
    with use_registries(make_registries(textcw_example.plugin, topic_corpus)):
        result = train("topics", "balanced-winnow", featurizer="char-ngrams")
    assert result.n_train == 40 and result.n_test == 40
    assert result.accuracy >= 0.9
    assert result.params["alpha"] == 1.5 and result.params["random_state"] == 0
    assert len(result.mistakes) == 5
    assert result.mistakes[-1] <= result.mistakes[0]
    assert_array_equal(
        result.model.predict(["the rocket left orbit for the moon", "a nurse gave the patient therapy"]),
        ["space", "medicine"],
    )


def test_saved_model_names_the_plugin_and_loads(tmp_path, make_registries, topic_corpus):
    # entry_points=True: the plugin comes from its installed distribution, as for users.
    with use_registries(make_registries(topic_corpus, entry_points=True)):
        result = train("topics", "balanced-winnow", featurizer="char-ngrams")
    assert result.model.textcw_components_["learner"]["provider"] == "textcw-example"
    path = textcw.save(result.model, tmp_path / "winnow.joblib")
    manifest = textcw.read_manifest(path)
    assert manifest["plugins"] == {"textcw-example": textcw_example.__version__}
    loaded = textcw.load(path)
    docs, _ = make_documents(10, random_state=2)
    assert_array_equal(loaded.predict(docs), result.model.predict(docs))
    assert np.mean(loaded.predict(docs) == make_documents(10, random_state=2)[1]) >= 0.9
