"""Saving and loading models: a joblib file plus a JSON manifest, both written atomically.

``save(model, "m.joblib")`` writes ``m.joblib`` (the fitted scikit-learn Pipeline, readable by
plain ``joblib.load``) and ``m.joblib.json``: versions, the plugins the model needs, the
components' registry names and parameters, and the sha256 of the joblib file. :func:`load` reads
the manifest first and refuses a file whose digest does not match, so a truncated or tampered
file is never unpickled. Pickles can run code when loaded: load only files you trust.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import tempfile
import warnings
from pathlib import Path

import joblib

from textcw.errors import ModelFileError

FORMAT = "textcw-model"
FORMAT_VERSION = 1
MANIFEST_SUFFIX = ".json"
_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "joblib")


def manifest_path(path: str | os.PathLike) -> Path:
    return Path(f"{os.fspath(path)}{MANIFEST_SUFFIX}")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _atomic_write(path: Path, write) -> None:
    """Write through ``write(fileobj)`` to a temporary file beside ``path``, then rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def save(model, path: str | os.PathLike, *, info: dict | None = None) -> Path:
    """Save ``model`` to ``path`` (joblib) and its manifest to ``path + ".json"``.

    Parameters
    ----------
    model : estimator or Pipeline
        Typically the ``Pipeline`` returned by :func:`textcw.pipeline.train`.
    info : dict, optional
        Extra JSON-able facts to record (corpus, metrics).
    """
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"{path} is a folder; give a file name such as {path / 'model.joblib'}")
    if not path.parent.exists():
        raise ModelFileError(f"folder {path.parent} does not exist; create it first")
    from textcw import __version__

    components = getattr(model, "textcw_components_", {})
    plugins = sorted({c["provider"] for c in components.values()
                      if isinstance(c, dict) and c.get("provider") not in (None, "textcw")})
    _atomic_write(path, lambda fh: joblib.dump(model, fh))
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "textcw_version": __version__,
        "python": platform.python_version(),
        "dependencies": {d: _version(d) for d in _DEPENDENCIES},
        "plugins": {p: _version(p) for p in plugins},
        "components": components,
        "info": info or {},
        "file": path.name,
        "size": path.stat().st_size,
        "sha256": _sha256(path),
    }
    text = json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n"
    _atomic_write(manifest_path(path), lambda fh: fh.write(text.encode("utf-8")))
    return path


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the model at ``path``, checked for form (not yet against the file)."""
    path = Path(path)
    mpath = manifest_path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    if not mpath.is_file():
        raise ModelFileError(
            f"{path} has no manifest {mpath.name} beside it, so its integrity cannot be checked; "
            "save models with textcw.save (or `textcw train --out`)"
        )
    try:
        manifest = json.loads(mpath.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"manifest {mpath} is not valid JSON ({exc}); it is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{mpath} is not a textcw model manifest")
    return manifest


def load(path: str | os.PathLike):
    """Load a model saved by :func:`save`, after checking its manifest and digest.

    Refuses a missing, truncated, tampered or foreign file with :class:`ModelFileError`, and a
    model that needs a plugin which is not installed. Warns when the model was saved by another
    textcw version.
    """
    from textcw import __version__

    path = Path(path)
    manifest = read_manifest(path)
    size = path.stat().st_size
    if size != manifest.get("size"):
        raise ModelFileError(
            f"{path} is {size} bytes but its manifest records {manifest.get('size')}: the file is "
            "truncated or was replaced; refusing to load it"
        )
    digest = _sha256(path)
    if digest != manifest.get("sha256"):
        raise ModelFileError(
            f"{path} does not match the sha256 in its manifest (file {digest[:16]}…, manifest "
            f"{str(manifest.get('sha256'))[:16]}…): it was modified after saving; refusing to load it"
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
        return joblib.load(path)
    except Exception as exc:  # unpickling runs arbitrary constructors; report, don't leak
        raise ModelFileError(f"cannot unpickle {path}: {type(exc).__name__}: {exc}") from None
