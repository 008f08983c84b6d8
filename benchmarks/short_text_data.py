"""Many classes of short text: held-out tasks built from files that a Debian system with the
project's development environment already holds, plus the subject lines of 20 Newsgroups.

No test and no default was tuned on these tasks; they are only measured
(``benchmarks/bench_short_text.py``, docs/quality.md "Many classes of short text"). Nothing is
downloaded: each loader reads files on the machine, and a rerun on another machine rebuilds the
same kind of task from that machine's files (the counts it finds are reported with the results,
since installed versions differ).

- ``debian-sections`` (38 classes): the one-line ``Description`` of every binary package in the
  APT package list of Debian's ``main`` archive (``/var/lib/apt/lists/*_main_binary-*_Packages``,
  plain or lz4/gz/xz-compressed, left by ``apt-get update``), labelled by its archive
  ``Section`` (``libs``, ``python``, ``games``, ``science``, ...). A description given under two
  sections is dropped as ambiguous, the rest counted once; sections with at least
  :data:`MIN_PER_CLASS` descriptions are kept.
- ``python-docstrings`` (30 classes): the first line of the docstring of every module, class and
  function in the installed Python distributions next to scikit-learn (``site-packages``),
  labelled by top-level package (``numpy``, ``scipy``, ``sklearn``, ``matplotlib``, ...), read by
  parsing the sources (``ast``), never importing them. The :data:`TOP_CLASSES` packages with the
  most distinct first lines are kept (textcw's own packages excluded).
- ``locale-languages`` (30 classes): the translated messages of the gettext catalogues under
  ``/usr/share/locale/<language>/LC_MESSAGES/*.mo`` (read with :mod:`gettext`), labelled by
  language folder (``de``, ``pt_BR``, ``zh_CN``, ...); a message equal to its English original
  or found under two languages is dropped; the :data:`TOP_CLASSES` languages with the most
  distinct messages are kept.
- ``gcloud-groups`` (30 classes): the one-line ``NAME`` description of every manual page of the
  Google Cloud CLI under ``/usr/share/man/man1`` (``gcloud compute instances create \- create
  Compute Engine virtual machine instances``: the text after the dash), labelled by the
  command's group (``compute``, ``iam``, ``sql``, ...); the ``alpha``, ``beta`` and ``preview``
  copies of each command left out, a description under two groups dropped, and the
  :data:`TOP_CLASSES` groups with the most descriptions kept (at least
  :data:`MIN_PER_GROUP`). Added after the n-gram choice was designed, as a test of it.
- ``wordnet-glosses`` (40 classes): the gloss of every WordNet 3.0 synset (its definition,
  up to the first ``;``: ``a large natural stream of water``), labelled by the synset's
  lexicographer file (``noun.animal``, ``verb.motion``, ``adj.all``, ...), read from the
  ``data.noun``/``data.verb``/``data.adj``/``data.adv`` files Debian's ``wordnet-base`` package
  installs under ``/usr/share/wordnet`` (``apt-get install wordnet-base``); a gloss under two
  files is dropped; files with at least :data:`MIN_PER_CLASS` glosses are kept. Added after
  the calibration of short documents was designed, as its test.
- ``wordnet-examples``: the usage examples of the same synsets (the quoted sentences of a gloss:
  ``"the river was navigable for 50 miles"``), each labelled by its synset's lexicographer
  file, as ``wordnet-glosses`` reads them (an example under two files dropped, files with at
  least :data:`MIN_PER_CLASS` examples kept). Added after the intercept for short documents
  was designed, as its test.
- ``locale-domains`` (30 classes): the English originals of the same gettext catalogues (the
  ``msgid`` of every message), labelled by the catalogue's domain, the program or library that
  prints them (``git``, ``coreutils``, ``dpkg``, ``gnupg2``, ``bash``, ...); a message found in two
  domains is dropped; the :data:`TOP_CLASSES` domains with at least :data:`MIN_PER_CLASS`
  messages are kept. Added after the multi-class update study (docs/quality.md "Which
  multi-class update"), as a test of what it found.
- ``python-stdlib`` (20 classes): the first docstring lines of the Python standard library that
  runs the benchmark (``sysconfig``'s ``stdlib`` folder, its ``test`` packages left out),
  labelled by top-level module or package (``tkinter``, ``asyncio``, ``email``, ``logging``, ...);
  a line under two modules is dropped; the :data:`STDLIB_CLASSES` modules with at least
  :data:`MIN_PER_STDLIB_CLASS` lines are kept. Added with ``locale-domains``, for the same test.
- ``newsgroups-subjects`` (20 classes): the ``Subject:`` header of every message of 20
  Newsgroups "bydate" (the project's staged corpus, ``$TEXTCW_DATA/newsgroups``), without its
  ``Re:`` prefixes, labelled by newsgroup; the corpus's own by-date train/test split.

One multi-label task, for ``benchmarks/bench_multilabel.py --task debian-tags`` (not among the
single-label tasks above):

- ``debian-tags``: the same one-line descriptions labelled by their debtags (``Tag:``, e.g.
  ``implemented-in::python``, ``interface::commandline``, ``use::editing``), the tags of at least
  :data:`MIN_PER_TAG` descriptions, without the ``role::`` facet (what kind of package it is:
  program, shared library, documentation, ...) and the ``*::TODO`` placeholders; a description
  given two different tag sets is dropped, one without any kept tag too; split 70/30, seeded.

The first four and ``wordnet-glosses`` keep at most :data:`MAX_PER_CLASS` documents a class (a seeded sample), so a
class of libraries does not drown the rest, and are split 70/30, stratified, seeded, after
sorting, so the split depends on the files' contents only. ``max_per_class`` (and
``--max-per-class`` of the benchmark) shrinks every task, the newsgroups one included, for a
quick run.
"""

from __future__ import annotations

import ast
import gettext
import os
import re
import struct
import subprocess
import tarfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from heldout_data import WORD_GRID, HeldoutTask, text_features
from sklearn.model_selection import train_test_split

from textcw.errors import DataError

SEED = 0
TEST_SIZE = 0.3
# Enough for 90 test documents a class; more would let the largest classes dominate the run time.
MAX_PER_CLASS = 300
# A class needs this many distinct documents to be kept: at 70/30 about 75 test documents.
MIN_PER_CLASS = 250
TOP_CLASSES = 30
APT_LISTS = Path("/var/lib/apt/lists")
LOCALE_DIR = Path("/usr/share/locale")
WORDNET_DIR = Path("/usr/share/wordnet")
# The lexicographer files of WordNet 3.0 by number (the second field of a data file's line), as
# its lexnames(5WN) manual page lists them.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather "
    "adj.ppl").split()
# textcw's own packages (and its editable installs) are not a held-out source of text.
OWN_PACKAGES = {"textcw", "textcw_example", "textcw_pixels", "textcw_serve"}


def _cap_and_split(name, by_class: dict, source: str, max_per_class: int) -> HeldoutTask:
    """At most ``max_per_class`` documents of every class (seeded sample of the sorted
    documents), then a stratified, seeded 70/30 split."""
    rng = np.random.default_rng(SEED)
    documents, labels = [], []
    for label in sorted(by_class):
        docs = sorted(by_class[label])
        if len(docs) > max_per_class:
            docs = [docs[i] for i in sorted(rng.choice(len(docs), max_per_class, replace=False))]
        documents += docs
        labels += [label] * len(docs)
    if len(set(labels)) < 2:
        raise DataError(f"task {name!r} found fewer than two classes in {source}")
    Xtr, Xte, ytr, yte = train_test_split(documents, np.asarray(labels), test_size=TEST_SIZE,
                                          stratify=labels, random_state=SEED)
    return HeldoutTask(name, Xtr, ytr, Xte, yte, text_features, WORD_GRID, source)


def _unambiguous(label_sets: dict, min_count: int, top: int | None = None) -> dict:
    """``{label: [documents]}`` from ``{document: {labels}}``: documents under one label only,
    labels with at least ``min_count`` of them (the ``top`` largest if given)."""
    by_class: dict[str, list[str]] = defaultdict(list)
    for doc, found in label_sets.items():
        if len(found) == 1:
            by_class[next(iter(found))].append(doc)
    kept = {k: v for k, v in by_class.items() if len(v) >= min_count}
    if top is not None:
        kept = dict(sorted(kept.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top])
    return kept


def _read_packages_list(path: Path) -> str:
    if path.suffix == ".lz4":
        return subprocess.run(["lz4cat", str(path)], check=True, capture_output=True).stdout.decode("utf-8")
    if path.suffix in (".gz", ".xz"):
        import gzip
        import lzma

        opener = gzip.open if path.suffix == ".gz" else lzma.open
        with opener(path, "rt", encoding="utf-8") as handle:
            return handle.read()
    return path.read_text(encoding="utf-8")


def debian_sections(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """Debian package one-line descriptions by archive section (module docstring)."""
    lists = _main_package_lists()
    sections: dict[str, set[str]] = defaultdict(set)
    for path in lists:
        for stanza in _read_packages_list(path).split("\n\n"):
            fields = dict(re.findall(r"^(Section|Description): *(.*)$", stanza, flags=re.M))
            if "Section" in fields and fields.get("Description"):
                sections[fields["Description"].strip()].add(fields["Section"].split("/")[-1])
    by_class = _unambiguous(sections, MIN_PER_CLASS)
    return _cap_and_split("debian-sections", by_class, ", ".join(p.name for p in lists), max_per_class)


MIN_PER_TAG = 200


def _main_package_lists() -> list[Path]:
    lists = sorted(p for p in APT_LISTS.glob("*_main_binary-*_Packages*") if "security" not in p.name
                   and "updates" not in p.name)
    if not lists:
        raise DataError(f"no APT package list of a 'main' archive under {APT_LISTS}; run `apt-get update`")
    return lists


def debian_tags(min_per_tag: int = MIN_PER_TAG):
    """Debian package one-line descriptions and their debtags (module docstring): ``(train,
    test, tags, source)``, each split a list of ``(description, tag set)``."""
    lists = _main_package_lists()
    tagged: dict[str, frozenset | None] = {}
    for path in lists:
        for stanza in _read_packages_list(path).split("\n\n"):
            # a field's continuation lines start with a space: the tag list wraps
            fields = dict(re.findall(r"^(Tag|Description): *(.*(?:\n .*)*)$", stanza, flags=re.M))
            description = fields.get("Description", "").strip()
            tags = frozenset(t.strip() for t in fields.get("Tag", "").replace("\n", " ").split(",") if t.strip())
            if description and tags:
                tagged[description] = tags if tagged.get(description, tags) == tags else None
    counts: dict[str, int] = defaultdict(int)
    for tags in tagged.values():
        for tag in tags or ():
            counts[tag] += 1
    kept = {t for t, c in counts.items() if c >= min_per_tag and not t.startswith("role::") and not t.endswith("::TODO")}
    items = sorted((d, tags & kept) for d, tags in tagged.items() if tags and tags & kept)
    if len(kept) < 2:
        raise DataError(f"task 'debian-tags' found fewer than two tags with {min_per_tag} descriptions in the APT lists")
    train, test = train_test_split(items, test_size=TEST_SIZE, random_state=SEED)
    return train, test, sorted(kept), ", ".join(p.name for p in lists)


def _site_packages() -> Path:
    import sklearn

    return Path(sklearn.__file__).resolve().parent.parent


def _first_docstring_lines(path: Path):
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = (ast.get_docstring(node) or "").strip()
            if doc:
                line = doc.splitlines()[0].strip()
                if len(line.split()) >= 2:  # a lone word ("Constructor.") says nothing
                    yield line


def python_docstrings(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """First docstring lines of the installed Python packages by package (module docstring)."""
    root = _site_packages()
    packages = sorted(p for p in root.iterdir() if p.is_dir() and p.name.isidentifier()
                      and p.name not in OWN_PACKAGES and not p.name.startswith("_"))
    lines: dict[str, set[str]] = defaultdict(set)
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            for line in _first_docstring_lines(path):
                lines[line].add(package.name)
    by_class = _unambiguous(lines, MIN_PER_CLASS, TOP_CLASSES)
    return _cap_and_split("python-docstrings", by_class, str(root), max_per_class)


def _catalogues():
    """Every readable gettext catalogue under :data:`LOCALE_DIR`: ``(language folder, domain,
    {original: translation})``."""
    for folder in sorted(p for p in LOCALE_DIR.iterdir() if (p / "LC_MESSAGES").is_dir() and "@" not in p.name):
        for path in sorted((folder / "LC_MESSAGES").glob("*.mo")):
            try:
                with path.open("rb") as handle:
                    catalog = gettext.GNUTranslations(handle)._catalog
            except (OSError, ValueError, IndexError, struct.error):  # a damaged or non-UTF-8 catalogue
                continue
            yield folder.name, path.stem, catalog


def locale_languages(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """Translated gettext messages by language (module docstring)."""
    if not LOCALE_DIR.is_dir():
        raise DataError(f"no gettext catalogues under {LOCALE_DIR}")
    messages: dict[str, set[str]] = defaultdict(set)
    for language, _, catalog in _catalogues():
        for key, text in catalog.items():
            original = key[0] if isinstance(key, tuple) else key
            text = " ".join(str(text).split())
            if original and text and text != original and len(text.split()) >= 2:
                messages[text].add(language)
    by_class = _unambiguous(messages, MIN_PER_CLASS, TOP_CLASSES)
    return _cap_and_split("locale-languages", by_class, str(LOCALE_DIR), max_per_class)


def locale_domains(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """English gettext messages by catalogue domain (module docstring)."""
    if not LOCALE_DIR.is_dir():
        raise DataError(f"no gettext catalogues under {LOCALE_DIR}")
    domains: dict[str, set[str]] = defaultdict(set)
    for _, domain, catalog in _catalogues():
        for key in catalog:
            original = " ".join(str(key[0] if isinstance(key, tuple) else key).split())
            if len(original.split()) >= 2:
                domains[original].add(domain)
    by_class = _unambiguous(domains, MIN_PER_CLASS, TOP_CLASSES)
    return _cap_and_split("locale-domains", by_class, str(LOCALE_DIR), max_per_class)


STDLIB_CLASSES = 20
MIN_PER_STDLIB_CLASS = 60


def python_stdlib(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """First docstring lines of the Python standard library by top-level module (module docstring)."""
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    lines: dict[str, set[str]] = defaultdict(set)
    for entry in sorted(root.iterdir()):
        if entry.name in ("site-packages", "dist-packages", "test") or entry.name.startswith("_"):
            continue
        files = sorted(entry.rglob("*.py")) if entry.is_dir() else [entry] if entry.suffix == ".py" else []
        for path in files:
            if any(part in ("test", "tests", "idle_test") for part in path.relative_to(root).parts):
                continue
            for line in _first_docstring_lines(path):
                lines[line].add(entry.stem)
    by_class = _unambiguous(lines, MIN_PER_STDLIB_CLASS, STDLIB_CLASSES)
    return _cap_and_split("python-stdlib", by_class, str(root), max_per_class)


MAN_DIR = Path("/usr/share/man/man1")
MIN_PER_GROUP = 50


def _groff_text(line: str) -> str:
    """A manual page's line without its font changes and escapes (``\\fB``, ``\\-``)."""
    return re.sub(r"\\f[A-Z0-9]|\\f\(..|\\", "", line.replace("\\-", "-")).strip()


def gcloud_groups(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """Google Cloud CLI manual pages' one-line descriptions by command group (module docstring)."""
    import gzip

    pages = sorted(MAN_DIR.glob("gcloud_*.1.gz"))
    groups: dict[str, set[str]] = defaultdict(set)
    for path in pages:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            found = re.search(r'^\.SH "NAME"\n\.HP\n(.*) \\- (.*)$', handle.read(8192), flags=re.M)
        command = found.group(1).split() if found else []
        if len(command) >= 3 and command[1] not in ("alpha", "beta", "preview"):
            groups[_groff_text(found.group(2))].add(_groff_text(command[1]))
    by_class = _unambiguous(groups, MIN_PER_GROUP, TOP_CLASSES)
    if not pages:
        raise DataError(f"task 'gcloud-groups' needs the Google Cloud CLI's manual pages in {MAN_DIR}")
    return _cap_and_split("gcloud-groups", by_class, f"{len(pages)} manual pages in {MAN_DIR}", max_per_class)


def _wordnet_texts(task: str, texts_of) -> dict:
    """``{text: {lexicographer file, ...}}`` of every synset, ``texts_of(gloss)`` its texts."""
    files = [WORDNET_DIR / f"data.{pos}" for pos in ("noun", "verb", "adj", "adv")]
    if not all(path.is_file() for path in files):
        raise DataError(f"task {task!r} needs WordNet's data files in {WORDNET_DIR}; "
                        "run `apt-get install wordnet-base`")
    texts: dict[str, set[str]] = defaultdict(set)
    for path in files:
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):  # the licence at the top of each file
                continue
            head, _, gloss = line.partition(" | ")
            for text in texts_of(gloss):
                texts[text].add(LEXNAMES[int(head.split()[1])])
    return texts


def wordnet_glosses(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """WordNet 3.0 glosses by lexicographer file (module docstring)."""
    glosses = _wordnet_texts("wordnet-glosses", lambda gloss: [d for d in [gloss.split(";")[0].strip()] if d])
    by_class = _unambiguous(glosses, MIN_PER_CLASS)
    return _cap_and_split("wordnet-glosses", by_class, f"WordNet data files in {WORDNET_DIR}", max_per_class)


def wordnet_examples(max_per_class: int = MAX_PER_CLASS) -> HeldoutTask:
    """WordNet 3.0 usage examples by lexicographer file (module docstring)."""
    examples = _wordnet_texts("wordnet-examples",
                              lambda gloss: [e.strip() for e in re.findall(r'"([^"]+)"', gloss) if e.strip()])
    by_class = _unambiguous(examples, MIN_PER_CLASS)
    return _cap_and_split("wordnet-examples", by_class, f"WordNet data files in {WORDNET_DIR}", max_per_class)


def newsgroups_subjects(max_per_class: int | None = None) -> HeldoutTask:
    """20 Newsgroups subject lines, bydate split (module docstring)."""
    data = Path(os.environ.get("TEXTCW_DATA", "/work/shared/corpora")) / "newsgroups" / "20news-bydate.tar.gz"
    if not data.is_file():
        raise DataError(f"20 Newsgroups not found at {data}; set TEXTCW_DATA to the folder holding newsgroups/")
    split: dict[str, tuple[list, list]] = {"train": ([], []), "test": ([], [])}
    with tarfile.open(data) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            parts = member.name.split("/")
            if not member.isfile() or len(parts) < 3:
                continue
            part = "train" if parts[-3].endswith("train") else "test"
            head = archive.extractfile(member).read().decode("latin-1").split("\n\n", 1)[0]
            found = re.search(r"^Subject:(.*)$", head, flags=re.M | re.I)
            subject = re.sub(r"^(\s*re\s*:\s*)+", "", found.group(1), flags=re.I).strip() if found else ""
            if subject:
                split[part][0].append(subject)
                split[part][1].append(parts[-2])
    if max_per_class is not None:  # a quick run: a seeded sample of each group in each part
        rng = np.random.default_rng(SEED)
        for part, (docs, labels) in split.items():
            labels_a = np.asarray(labels)
            keep = np.sort(np.concatenate([
                rng.permutation(np.flatnonzero(labels_a == g))[:max_per_class if part == "train"
                                                               else max(1, max_per_class * 3 // 7)]
                for g in sorted(set(labels))]))
            split[part] = ([docs[i] for i in keep], [labels[i] for i in keep])
    return HeldoutTask("newsgroups-subjects", split["train"][0], np.asarray(split["train"][1]), split["test"][0],
                       np.asarray(split["test"][1]), text_features, WORD_GRID, str(data))


def cached(name: str, max_per_class: int | None = None, folder: str | Path = "build/short-text") -> HeldoutTask:
    """The task ``name`` as built by its loader, kept as JSON in ``folder`` (under the current
    directory) after the first build: reading every installed package's sources takes
    minutes. Delete the folder to rebuild from the machine's files."""
    import json

    path = Path(folder) / f"{name}-{max_per_class or 'default'}.json"
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        return HeldoutTask(name, data["X_train"], np.asarray(data["y_train"]), data["X_test"],
                           np.asarray(data["y_test"]), text_features, WORD_GRID, data["source"])
    load = SHORT_TEXT_TASKS[name]
    task = load(max_per_class) if max_per_class else load()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"X_train": list(task.X_train), "y_train": task.y_train.tolist(),
                                "X_test": list(task.X_test), "y_test": task.y_test.tolist(),
                                "source": task.source}), encoding="utf-8")
    return task


SHORT_TEXT_TASKS: dict[str, Callable[..., HeldoutTask]] = {
    "debian-sections": debian_sections,
    "python-docstrings": python_docstrings,
    "locale-languages": locale_languages,
    "newsgroups-subjects": newsgroups_subjects,
    "gcloud-groups": gcloud_groups,
    "wordnet-glosses": wordnet_glosses,
    "wordnet-examples": wordnet_examples,
    "locale-domains": locale_domains,
    "python-stdlib": python_stdlib,
}
