"""The model card: what a model file or an export says it is, read without unpickling anything.

``textcw inspect`` prints it. Every value a file provides passes through
:func:`textcw.untrusted.safe_text` before it is shown.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from pathlib import Path

from textcw.errors import ModelFileError
from textcw.persist import read_parts
from textcw.portable_format import DEFAULT_MAX_BYTES, is_export, open_export, read_array, read_description
from textcw.signing import digests_equal, signature_status, signing_key
from textcw.untrusted import safe_text

__all__ = ["CARD_FIELDS", "card", "export_card", "model_card", "render_card"]

CARD_FIELDS = ("kind", "learner", "learner_params", "featurizer", "featurizer_params", "classes",
               "n_features", "corpus", "accuracy", "n_train", "n_test", "textcw_version", "python",
               "dependencies", "plugins", "created_at", "format_version", "sha256", "digest_ok",
               "signed", "signature")


def model_card(path: str | os.PathLike, *, max_bytes: int | None = None) -> dict:
    """What the model file or export at ``path`` says it is, without unpickling or building it.

    Returns a dict with the keys :data:`CARD_FIELDS`; what the file does not record is ``None``
    (files saved before format 3 record no classes, feature count or creation time). ``sha256``
    is the payload's digest (model files) or the whole file's (exports), ``digest_ok`` whether
    the payload matches its manifest, ``signed`` whether a signature is present and
    ``signature`` its state: ``"valid"``, ``"another key"``, ``"invalid"`` (checked against the
    configured key), ``"unchecked"`` (no key configured) or ``"unsigned"``. An export is read
    with the bounds of :func:`textcw.portable.import_model` (``max_bytes``, its default).
    """
    path = Path(path)
    try:
        raw, manifest, payload, signature = read_parts(path)
    except ModelFileError as model_error:
        if is_export(path):
            return export_card(path, **({} if max_bytes is None else {"max_bytes": max_bytes}))
        raise model_error
    digest = hashlib.sha256(payload).hexdigest()
    status = signature_status(signing_key(), signature, raw, digest, path)
    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    components = manifest.get("components") if isinstance(manifest.get("components"), dict) else {}
    info = manifest.get("info") if isinstance(manifest.get("info"), dict) else {}

    def component(kind, key):
        value = components.get(kind)
        return value.get(key) if isinstance(value, dict) else None

    return card(
        kind="model file",
        learner=model.get("learner") or component("learner", "name"),
        learner_params=model.get("params") or component("learner", "params"),
        featurizer=model.get("featurizer") or component("featurizer", "name"),
        featurizer_params=component("featurizer", "params"),
        classes=model.get("classes"), n_features=model.get("n_features"),
        corpus=info.get("corpus", components.get("corpus")), accuracy=info.get("accuracy"),
        n_train=info.get("n_train"), n_test=info.get("n_test"),
        textcw_version=manifest.get("textcw_version"), python=manifest.get("python"),
        dependencies=manifest.get("dependencies"), plugins=manifest.get("plugins"),
        created_at=manifest.get("created_at") or _file_time(path),
        format_version=manifest.get("format_version"),
        sha256=digest, digest_ok=digests_equal(digest, manifest["payload"]["sha256"]),
        signed=signature is not None, signature=status,
    )


def export_card(path: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The model card (:func:`model_card`) of an export (:mod:`textcw.portable`), read with the
    bounds of :func:`textcw.portable.import_model` and without building anything: only
    ``model.json`` and the learner's label array are read. An export records no training
    figures; those are ``None``."""
    path = Path(path)
    archive, infos = open_export(path, max_bytes)
    with archive:
        document = read_description(archive, infos[0], path, max_bytes)
        steps = document.get("steps") if isinstance(document.get("steps"), list) else []
        by_kind = {s.get("step"): s for s in steps if isinstance(s, dict)}
        learner, featurizer = by_kind.get("learner", {}), by_kind.get("featurizer", {})
        state = learner.get("state_dict", {}).get("__dict__", {}) if isinstance(learner.get("state_dict"), dict) \
            else learner.get("attributes", {}).get("__dict__", {}) if isinstance(learner.get("attributes"), dict) else {}
        state = state if isinstance(state, dict) else {}
        classes = state.get("classes", state.get("classes_"))
        labels = None
        if isinstance(classes, dict) and isinstance(classes.get("__array__"), int) \
                and 0 <= classes["__array__"] < len(infos) - 1:
            labels = read_array(archive, infos[classes["__array__"] + 1], path).tolist()
        n_features = state.get("n_features_in", state.get("n_features_in_"))
    components = document.get("components", {})
    components = components.get("__dict__", {}) if isinstance(components, dict) else {}
    components = components if isinstance(components, dict) else {}

    def params(step):
        value = step.get("params", {}).get("__dict__") if isinstance(step.get("params"), dict) else None
        return value if isinstance(value, dict) else None

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return card(
        kind="export", learner=learner.get("name"), learner_params=params(learner),
        featurizer=featurizer.get("name"), featurizer_params=params(featurizer), classes=labels,
        n_features=n_features if isinstance(n_features, int) else None,
        corpus=components.get("corpus") if isinstance(components.get("corpus"), str) else None,
        textcw_version=document.get("textcw_version"), format_version=document.get("format_version"),
        sha256=digest.hexdigest(), signed=False, signature="unsigned",
    )


def _file_time(path: Path) -> str | None:
    """When the file was written, for a manifest that records no creation time (saves are
    byte-for-byte repeatable, so the time is not in the file): the modification time, which an
    atomic save sets to the moment of writing, marked as such."""
    try:
        moment = datetime.datetime.fromtimestamp(path.stat().st_mtime, tz=datetime.timezone.utc)
    except (OSError, ValueError, OverflowError):
        return None
    return f"{moment.isoformat(timespec='seconds')} (file time)"


def card(**fields) -> dict:
    """A model card with every field of :data:`CARD_FIELDS` (missing ones ``None``)."""
    unknown = set(fields) - set(CARD_FIELDS)
    if unknown:
        raise TypeError(f"not model-card fields: {sorted(unknown)}")
    return {name: fields.get(name) for name in CARD_FIELDS}


def render_card(card: dict) -> str:
    """``card`` (from :func:`model_card`) as plain text, one ``field: value`` line each.

    Every value passes through :func:`safe_text`, so nothing in the file can reach the terminal
    as a control sequence; missing values read ``unknown``.
    """
    lines = []
    for name in CARD_FIELDS:
        value = card.get(name)
        if value is None:  # a model trained with no test split (test=0) measured nothing: not unknown
            shown = "none: no test split" if name == "accuracy" and card.get("n_test") == 0 else "unknown"
        elif isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, float):
            shown = f"{value:.6g}"
        elif isinstance(value, dict):
            shown = ", ".join(f"{safe_text(k, 60)}={safe_text(v, 80)}" for k, v in sorted(value.items(), key=str)) \
                or "none"
        elif isinstance(value, list):
            shown = f"{len(value)}: " + ", ".join(safe_text(v, 60) for v in value[:20]) + \
                (f", ... ({len(value) - 20} more)" if len(value) > 20 else "")
        else:
            shown = safe_text(value)
        lines.append(f"{name.replace('_', ' ')}: {safe_text(shown, 2000)}")
    return "\n".join(lines) + "\n"
