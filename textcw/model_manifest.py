"""What a model file's manifest may record: the checks made on it before anything is shown or
unpickled (:mod:`textcw.persist` reads and writes the file; this module judges its manifest).

A manifest is JSON that anyone who can write the file can write, so every value that is shown
(``textcw inspect``, warnings, ``predict``'s labels) or trusted (the payload's size and digest) is
checked for the form and range that :func:`textcw.persist.save` itself writes.
"""

from __future__ import annotations

from pathlib import Path

from textcw._version import __version__
from textcw.errors import ModelFileError
from textcw.untrusted import check_printable, parse_json, safe_text

__all__ = ["FORMAT", "FORMAT_VERSION", "MAX_MANIFEST_BYTES", "check_manifest", "check_manifest_numbers",
           "parse_manifest"]

FORMAT = "textcw-model"
FORMAT_VERSION = 4  # 3: the "model" description, created_at, the signature; 4: featurizer state as arrays
# A manifest is a few kB. Parsed JSON takes up to ~25 times its size in Python objects
# ("[{},{},...]"), so the bound on the text is a bound on memory too.
MAX_MANIFEST_BYTES = 4 << 20


def parse_manifest(raw: bytes, path: Path) -> dict:
    """The manifest whose exact bytes are ``raw`` (read from ``path``), parsed and checked."""
    manifest = parse_json(raw, f"the manifest of {path}")
    check_manifest(manifest, path)
    return manifest


def check_manifest(manifest, path: Path) -> None:
    """Refuse a manifest that :func:`textcw.persist.save` could not have written."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{path} holds no textcw model manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path} uses model format {safe_text(repr(version), 40)}, newer than this textcw ({__version__}, "
            f"format {FORMAT_VERSION}) reads; upgrade textcw to load it"
        )
    payload = manifest.get("payload")
    if not (isinstance(payload, dict) and isinstance(payload.get("size"), int)
            and isinstance(payload.get("sha256"), str)):
        raise ModelFileError(f"the manifest of {path} does not describe its payload; the file is damaged")
    _check_manifest_text(manifest, path)
    check_manifest_numbers(manifest, path)


# The numbers a manifest records, each with the range a saved model has: (where, field, test, rule).
def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _fraction(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0


_MANIFEST_NUMBERS = (
    ("payload", "size", _count, "a byte count >= 0"),
    ("model", "n_features", lambda v: _count(v) and v >= 1, "a feature count >= 1"),
    ("info", "accuracy", _fraction, "a fraction in [0, 1]"),
    ("info", "n_train", _count, "a document count >= 0"),
    ("info", "n_test", _count, "a document count >= 0"),
)


def check_manifest_numbers(manifest: dict, path: Path) -> None:
    """Refuse a manifest number that no saved model records (a negative count, an accuracy of 7,
    NaN): what ``inspect``, model cards and other tools show must be what ``save`` could write."""
    for where, field, valid, rule in _MANIFEST_NUMBERS:
        section = manifest.get(where)
        value = section.get(field) if isinstance(section, dict) else None
        if value is not None and not valid(value):
            raise ModelFileError(f"the manifest of {path} records {where}.{field} = {safe_text(repr(value), 40)}, "
                                 f"which is not {rule}; the file is damaged or was modified")


def _check_manifest_text(manifest: dict, path: Path) -> None:
    """Versions, names and labels are printed as they are (inspect, warnings, predict): refuse
    control characters in them. Free text (``info``: corpus paths, file names) is shown through
    :func:`safe_text` instead, so that a model trained on an oddly named folder still loads."""
    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    components = manifest.get("components") if isinstance(manifest.get("components"), dict) else {}
    fields = {
        "its textcw version": manifest.get("textcw_version"),
        "its Python version": manifest.get("python"),
        "its dependency versions": manifest.get("dependencies"),
        "its plugins": manifest.get("plugins"),
        "its components": {k: v for k, v in components.items() if isinstance(v, dict)},
        "its learner": [model.get("learner"), model.get("learner_class"), model.get("featurizer")],
        "its labels": model.get("classes"),
        "its creation time": manifest.get("created_at"),
    }
    for what, value in fields.items():
        check_printable(value, f"the manifest of {path}: {what}")
