"""Saving and loading models: one file holding a JSON manifest and the joblib payload.

``save(model, "m.joblib")`` writes a single ZIP archive (stored, not compressed) with two
members: ``manifest.json`` (versions, the plugins the model needs, the components' registry names
and parameters, and the size and sha256 of the payload) and ``model.joblib`` (the fitted
scikit-learn ``Pipeline``). One file, written atomically (:mod:`textcw._atomic`), means a crash
or a concurrent save can only ever leave the old model or the new one, never a new payload beside
an old manifest. :func:`load` reads the manifest first and refuses a file whose payload does not
match it, so a truncated or damaged file is never unpickled; :func:`read_manifest` reads it
without unpickling anything.

A digest detects damage, not malice: whoever can rewrite the payload can rewrite the manifest.
Unpickling runs code, so load only models from people you trust, and exchange models with
anyone else through :mod:`textcw.portable` (``textcw export`` / ``textcw import``), which holds
arrays and JSON only. ``docs/security.md`` explains the threat model.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import io
import json
import os
import platform
import warnings
import zipfile
from pathlib import Path

import joblib
from sklearn.pipeline import Pipeline

from textcw._atomic import atomic_output, check_output_path
from textcw.errors import ModelFileError

FORMAT = "textcw-model"
FORMAT_VERSION = 2
MANIFEST_MEMBER = "manifest.json"
PAYLOAD_MEMBER = "model.joblib"
_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "joblib")
# A fixed timestamp for both members: the same model saved twice gives the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_MAX_MANIFEST_BYTES = 16 << 20  # a manifest is a few kB; refuse to parse a huge one


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def zip_member(name: str, *, compress: bool = False) -> zipfile.ZipInfo:
    """A ZIP member with a fixed timestamp: the same content always gives the same bytes."""
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    return info


def check_destination(path: Path, example: str) -> None:
    """Refuse a destination that cannot receive the model before any work: a folder, a device,
    a FIFO, a symbolic link, a missing or read-only folder (:func:`textcw._atomic.check_output_path`)."""
    check_output_path(path, "model file", example=example, error=ModelFileError)


def _reproducible(model):
    """``model`` without state that differs between identical runs, so that saving is repeatable.

    scikit-learn's text vectorizers cache ``id(stop_words)`` (a memory address, different in
    every process) in ``_stop_words_id``, only to skip re-checking the stop words; dropping it
    from the saved copy changes nothing but makes the same command save a byte-identical file.
    Shallow copies: the caller's objects are not modified.
    """
    def clean(step):
        if hasattr(step, "_stop_words_id"):
            step = copy.copy(step)
            del step._stop_words_id
        return step

    if isinstance(model, Pipeline):
        cleaned = [(name, clean(step)) for name, step in model.steps]
        if any(a[1] is not b[1] for a, b in zip(cleaned, model.steps)):
            model = copy.copy(model)
            model.steps = cleaned
        return model
    return clean(model)


def save(model, path: str | os.PathLike, *, info: dict | None = None) -> Path:
    """Save ``model`` to the single file ``path``; returns the path.

    Parameters
    ----------
    model : estimator or Pipeline
        Typically the ``Pipeline`` returned by :func:`textcw.pipeline.train`.
    info : dict, optional
        Extra JSON-able facts to record in the manifest (corpus, metrics).
    """
    path = Path(path)
    check_destination(path, "model.joblib")
    from textcw import __version__

    buffer = io.BytesIO()
    joblib.dump(_reproducible(model), buffer)
    payload = buffer.getvalue()
    components = getattr(model, "textcw_components_", {})
    plugins = sorted({c["provider"] for c in components.values()
                      if isinstance(c, dict) and c.get("provider") not in (None, "textcw")})
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "textcw_version": __version__,
        "python": platform.python_version(),
        "dependencies": {d: _version(d) for d in _DEPENDENCIES},
        "plugins": {p: _version(p) for p in plugins},
        "components": components,
        "info": info or {},
        "payload": {"member": PAYLOAD_MEMBER, "size": len(payload),
                    "sha256": hashlib.sha256(payload).hexdigest()},
    }
    text = json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n"
    try:
        with atomic_output(path) as fh, zipfile.ZipFile(fh, "w") as archive:
            archive.writestr(zip_member(MANIFEST_MEMBER), text.encode("utf-8"))
            archive.writestr(zip_member(PAYLOAD_MEMBER), payload)
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    return path


def _open(path: Path) -> zipfile.ZipFile:
    if not path.exists():
        raise ModelFileError(f"model file {path} does not exist")
    if path.is_dir():
        raise ModelFileError(f"{path} is a folder, not a model file; give the file saved by textcw.save "
                             "(or `textcw train --out`)")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head == b"PK\x03\x04":
            raise ModelFileError(f"{path} is truncated or damaged (its archive directory is missing "
                                 "or unreadable); save the model again") from None
        raise ModelFileError(f"{path} is not a textcw model file (save models with textcw.save or "
                             "`textcw train --out`; a shared model is read with `textcw import`)") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    names = archive.namelist()
    if names != [MANIFEST_MEMBER, PAYLOAD_MEMBER]:
        archive.close()
        raise ModelFileError(f"{path} is an archive but not a textcw model file (members {names[:4]}, "
                             f"expected {[MANIFEST_MEMBER, PAYLOAD_MEMBER]})")
    return archive


def _read(archive: zipfile.ZipFile, name: str, path: Path, limit: int | None = None) -> bytes:
    info = archive.getinfo(name)
    if limit is not None and info.file_size > limit:
        raise ModelFileError(f"{path}: {name} is {info.file_size} bytes, more than a manifest can be; "
                             "the file is damaged or not a textcw model")
    try:
        return archive.read(info)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:  # CRC errors, cut-off data
        raise ModelFileError(f"{path} is damaged or was modified after saving ({exc}); refusing to "
                             "load it") from None


def _parse_manifest(archive: zipfile.ZipFile, path: Path) -> dict:
    raw = _read(archive, MANIFEST_MEMBER, path, limit=_MAX_MANIFEST_BYTES)
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"the manifest of {path} is not valid JSON ({exc}); the file is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{path} holds no textcw model manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        from textcw import __version__

        raise ModelFileError(
            f"{path} uses model format {version!r}, newer than this textcw ({__version__}, format "
            f"{FORMAT_VERSION}) reads; upgrade textcw to load it"
        )
    payload = manifest.get("payload")
    if not (isinstance(payload, dict) and isinstance(payload.get("size"), int)
            and isinstance(payload.get("sha256"), str)):
        raise ModelFileError(f"the manifest of {path} does not describe its payload; the file is damaged")
    return manifest


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the model file at ``path``; nothing is unpickled."""
    path = Path(path)
    with _open(path) as archive:
        return _parse_manifest(archive, path)


def load(path: str | os.PathLike):
    """Load a model saved by :func:`save`, after checking its manifest and digest.

    Refuses a missing, truncated, damaged or foreign file with :class:`ModelFileError` before
    unpickling anything, and a model that needs a plugin which is not installed. Warns when the
    model was saved by another textcw version.
    """
    from textcw import __version__

    path = Path(path)
    with _open(path) as archive:
        manifest = _parse_manifest(archive, path)
        expected = manifest["payload"]
        size = archive.getinfo(PAYLOAD_MEMBER).file_size
        if size != expected["size"]:
            raise ModelFileError(
                f"the model in {path} is {size} bytes but its manifest records {expected['size']}: "
                "the file was modified after saving; refusing to load it"
            )
        payload = _read(archive, PAYLOAD_MEMBER, path)
    digest = hashlib.sha256(payload).hexdigest()
    if digest != expected["sha256"]:
        raise ModelFileError(
            f"the model in {path} does not match the sha256 in its manifest (payload {digest[:16]}…, "
            f"manifest {expected['sha256'][:16]}…): it was modified after saving; refusing to load it"
        )
    for plugin, version in manifest.get("plugins", {}).items():
        if _version(plugin) is None:
            raise ModelFileError(
                f"{path} needs the plugin {plugin!r} (version {version} when saved), which is not "
                f"installed; install it (pip install {plugin}) and try again"
            )
    if manifest.get("textcw_version") != __version__:
        warnings.warn(
            f"{path} was saved by textcw {manifest.get('textcw_version')}; this is textcw "
            f"{__version__}; check its predictions before relying on them",
            stacklevel=2,
        )
    try:
        return joblib.load(io.BytesIO(payload))
    except Exception as exc:  # unpickling runs arbitrary constructors; report, don't leak
        raise ModelFileError(f"cannot unpickle the model in {path}: {type(exc).__name__}: {exc}") from None
