"""Saving and loading models: one file holding a JSON manifest and the joblib payload.

``save(model, "m.textcw-model")`` writes a single ZIP archive (stored, not compressed) with the
members ``manifest.json`` (versions, the plugins the model needs, the components' registry
names and parameters, what the model is: learner, classes, feature count, and the size and
sha256 of the payload), ``model.joblib`` (the fitted scikit-learn ``Pipeline``) and, when a
signing key is configured, ``signature.json``. One file, written atomically
(:mod:`textcw.atomic`), means a crash or a concurrent save can only ever leave the old model or
the new one, never a new payload beside an old manifest. :func:`load` reads the manifest first
and refuses a file whose payload does not match it, so a truncated or damaged file is never
unpickled; :func:`read_manifest` and :func:`textcw.model_card.model_card` read it without unpickling anything.

The suffix: ``.textcw-model`` (:data:`SUFFIX`)
    The file is a ZIP archive, not a joblib pickle, so a ``.joblib`` name told ``joblib.load``
    users something false (it fails on the file). The other way out, a file that ``joblib.load``
    can read (the pickle first, the archive after it), was rejected: every ``joblib.load`` of it
    would skip the digest and the signature, the two checks that must come before unpickling, so
    the format would invite exactly the use it is meant to prevent. Files keep working under any
    name, ``.joblib`` included; only the name suggested in messages and docs changes. Inside, the
    payload member is still plain joblib for those who need it.

Signing (optional)
    With ``TEXTCW_SIGNING_KEY`` (the key itself) or ``TEXTCW_SIGNING_KEY_FILE`` (a file holding it)
    set, :func:`save` adds an HMAC-SHA256 of the manifest's exact bytes and the payload's sha256,
    so the manifest that ``textcw inspect`` shows is covered too, and :func:`load` refuses, before
    unpickling, a file that is unsigned, signed with another key, or changed after signing
    (digests compared in constant time). Without a key, files load as before, signed or not. A
    signature proves the file comes from someone holding the key; it does not make a pickle from
    anyone else safe.

A digest alone detects damage, not malice: whoever can rewrite the payload can rewrite the
manifest. Unpickling runs code, so load only models from people you trust (or signed with your
key), and exchange models with anyone else through :mod:`textcw.portable` (``textcw export`` /
``textcw import``), which holds arrays and JSON only. ``docs/security.md`` explains the threat
model.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import io
import json
import numbers
import os
import platform
import warnings
import zipfile
from pathlib import Path
from typing import BinaryIO

import joblib
from sklearn.pipeline import Pipeline

from textcw.atomic import atomic_output, check_output_path
from textcw._sklearn_compat import STOP_WORDS_CHECK_ATTRIBUTE
from textcw._version import __version__
from textcw.errors import InputError, ModelFileError
from textcw.model_manifest import FORMAT, FORMAT_VERSION, MAX_MANIFEST_BYTES, check_manifest_numbers, parse_manifest
from textcw.signing import digests_equal, require_signature, signature_document, signature_status, signing_key
from textcw.trust import UntrustedLocationError, open_regular_file
from textcw.untrusted import (
    check_printable,
    distribution_name,
    install_advice,
    read_member,
    safe_text,
)

__all__ = [
    "FORMAT", "FORMAT_VERSION", "MANIFEST_MEMBER", "PAYLOAD_MEMBER", "SIGNATURE_MEMBER", "SUFFIX",
    "check_destination", "load", "load_vouched", "read_manifest", "read_manifest_bytes", "read_parts", "save", "zip_member"
]

MANIFEST_MEMBER = "manifest.json"
PAYLOAD_MEMBER = "model.joblib"
SIGNATURE_MEMBER = "signature.json"
SUFFIX = ".textcw-model"
_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "joblib")
# A fixed timestamp for both members: the same model saved twice gives the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_MAX_SIGNATURE_BYTES = 4096


def _version(dist: str) -> str | None:
    try:
        import importlib.metadata  # here: loading a model without plugins does not read metadata

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
    a FIFO, a symbolic link, a missing or read-only folder (:func:`textcw.atomic.check_output_path`)."""
    check_output_path(path, "model file", example=example, error=ModelFileError)


def _reproducible(model):
    """``model`` without state that differs between identical runs, so that saving is repeatable.

    scikit-learn's text vectorizers cache ``id(stop_words)`` (a memory address, different in
    every process) in a private attribute (:data:`textcw._sklearn_compat.STOP_WORDS_CHECK_ATTRIBUTE`),
    only to skip re-checking the stop words; dropping it from the saved copy changes nothing but
    makes the same command save a byte-identical file.
    Shallow copies: the caller's objects are not modified.
    """
    def clean(step):
        if hasattr(step, STOP_WORDS_CHECK_ATTRIBUTE):
            step = copy.copy(step)
            delattr(step, STOP_WORDS_CHECK_ATTRIBUTE)
        return step

    if isinstance(model, Pipeline):
        cleaned = [(name, clean(step)) for name, step in model.steps]
        if any(a[1] is not b[1] for a, b in zip(cleaned, model.steps)):
            model = copy.copy(model)
            model.steps = cleaned
        return model
    return clean(model)


# ---------------------------------------------------------------------------- save
def _describe(model) -> dict:
    """What the model is, for the manifest (and so the model card) without unpickling."""
    from textcw.train_result import jsonable_params

    final = model.steps[-1][1] if isinstance(model, Pipeline) else model
    components = getattr(model, "textcw_components_", {})
    components = components if isinstance(components, dict) else {}

    def registered(kind):
        info = components.get(kind)
        return info.get("name") if isinstance(info, dict) else None

    classes = getattr(final, "classes_", None)
    classes = None if classes is None else [c.item() if hasattr(c, "item") else c for c in list(classes)]
    if classes is not None:
        # Labels are printed one per line (textcw predict); the folder: corpus refuses such labels
        # when it reads them, load refuses such manifests: refuse them here, where they are ours.
        check_printable([c for c in classes if isinstance(c, str)], "a label of the model", error=InputError)
    n_features = getattr(final, "n_features_in_", None)
    n_features = int(n_features) if isinstance(n_features, numbers.Integral) else None
    params = final.get_params(deep=False) if hasattr(final, "get_params") else {}
    return {
        "learner": registered("learner") or type(final).__name__,
        "learner_class": f"{type(final).__module__}:{type(final).__qualname__}",
        "params": jsonable_params(params),
        "featurizer": registered("featurizer"),
        "classes": classes,
        "n_features": n_features,
    }


def _created_at(created_at) -> str | None:
    """ISO 8601 UTC time for the manifest: the one given, else ``SOURCE_DATE_EPOCH`` (the
    reproducible-builds convention), else none. Never the clock by default: the same command must
    save the same bytes (docs/security.md, determinism)."""
    if isinstance(created_at, datetime.datetime):
        moment = created_at if created_at.tzinfo else created_at.replace(tzinfo=datetime.timezone.utc)
        return moment.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")
    if created_at is not None:
        raise InputError(f"created_at must be a datetime; got {type(created_at).__name__}")
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return None
    try:
        moment = datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise InputError(f"SOURCE_DATE_EPOCH={safe_text(epoch)!r} is not a number of seconds since 1970") from None
    return moment.isoformat(timespec="seconds")


def save(model, path: str | os.PathLike, *, info: dict | None = None,
         created_at: datetime.datetime | None = None) -> Path:
    """Save ``model`` to the single file ``path``; returns the path.

    Parameters
    ----------
    model : estimator or Pipeline
        Typically the ``Pipeline`` returned by :func:`textcw.pipeline.train`.
    path : path
        Any name; ``.textcw-model`` (:data:`SUFFIX`) says what the file is.
    info : dict, optional
        Extra JSON-able facts to record in the manifest (corpus, accuracy, n_train, n_test).
    created_at : datetime, optional
        Recorded as the creation time; by default ``SOURCE_DATE_EPOCH`` if set, else none (so
        that saving stays byte-for-byte repeatable).

    Notes
    -----
    With a signing key configured (:func:`signing_key`) the file is signed.
    """
    path = Path(path)
    check_destination(path, f"model{SUFFIX}")
    key = signing_key()  # a misconfigured key fails before any work
    buffer = io.BytesIO()
    joblib.dump(_reproducible(model), buffer)
    payload = buffer.getvalue()
    payload_sha256 = hashlib.sha256(payload).hexdigest()
    manifest = _manifest(model, info, created_at, size=len(payload), sha256=payload_sha256)
    manifest_bytes = _manifest_bytes(manifest, path)
    try:
        with atomic_output(path, private=True) as fh, zipfile.ZipFile(fh, "w") as archive:
            archive.writestr(zip_member(MANIFEST_MEMBER), manifest_bytes)
            archive.writestr(zip_member(PAYLOAD_MEMBER), payload)
            if key is not None:
                archive.writestr(zip_member(SIGNATURE_MEMBER), signature_document(key, manifest_bytes, payload_sha256))
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    return path


def _manifest(model, info: dict | None, created_at, *, size: int, sha256: str) -> dict:
    """The manifest :func:`save` writes for ``model`` and a payload of ``size`` bytes."""
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
        "model": _describe(model),
        "info": info or {},
        "payload": {"member": PAYLOAD_MEMBER, "size": size, "sha256": sha256},
    }
    stamp = _created_at(created_at)
    if stamp is not None:
        manifest["created_at"] = stamp
    return manifest


def _manifest_bytes(manifest: dict, path: Path) -> bytes:
    """The manifest as written, refused (InputError) when :func:`load` would refuse the file."""
    try:  # load refuses what no saved model records: never write it
        check_manifest_numbers(manifest, path)
    except ModelFileError as exc:
        raise InputError(str(exc).replace(f"the manifest of {path} records", "the model's manifest would record")
                         .replace("the file is damaged or was modified", "fix the value given to save")) from None
    manifest_bytes = (json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8")
    if len(manifest_bytes) > MAX_MANIFEST_BYTES:  # load would refuse the file: do not write it
        raise InputError(f"the model's manifest would be {len(manifest_bytes):,} bytes, more than the "
                         f"{MAX_MANIFEST_BYTES:,} that load reads; keep the info and names short")
    return manifest_bytes


# ---------------------------------------------------------------------------- reading
_MEMBER_LISTS = ([MANIFEST_MEMBER, PAYLOAD_MEMBER], [MANIFEST_MEMBER, PAYLOAD_MEMBER, SIGNATURE_MEMBER])
# Why a model file may be unpickled although it is not the user's own: how to fix that.
_TRUST_FIX = ("textcw unpickles a model file only when nobody else can have written it "
              "(docs/security.md): if it is yours, fix that as said; a model from someone else is "
              "exchanged with `textcw export` / `textcw import`, or signed with your key "
              "(TEXTCW_SIGNING_KEY_FILE)")


def _open_file(path: Path) -> tuple[BinaryIO, str | None]:
    """The model file opened once, and what makes it untrusted (:func:`textcw.trust.open_regular_file`):
    a folder, a FIFO or a device is refused before it is opened, so nothing blocks."""
    if os.path.isdir(path):
        raise ModelFileError(f"{path} is a folder, not a model file; give the file saved by textcw.save "
                             "(or `textcw train --out`)")
    try:
        return open_regular_file(path, "model file", allow_root=True, follow_final=True)
    except UntrustedLocationError as exc:
        raise ModelFileError(str(exc).replace(" (textcw reads state", "; give the file saved by textcw.save "
                                              "(textcw reads state")) from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def _open_archive(fh: BinaryIO, path: Path) -> zipfile.ZipFile:
    """The archive in the open file ``fh`` (read from ``path``), its members checked."""
    try:
        archive = zipfile.ZipFile(fh)
    except zipfile.BadZipFile:
        fh.seek(0)
        if fh.read(4) == b"PK\x03\x04":
            raise ModelFileError(f"{path} is truncated or damaged (its archive directory is missing "
                                 "or unreadable); save the model again") from None
        raise ModelFileError(f"{path} is not a textcw model file (save models with textcw.save or "
                             "`textcw train --out`; a shared model is read with `textcw import`)") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    names = archive.namelist()
    if names not in _MEMBER_LISTS:
        archive.close()
        raise ModelFileError(f"{path} is an archive but not a textcw model file (members "
                             f"{[safe_text(n, 60) for n in names[:4]]}, expected {_MEMBER_LISTS[0]})")
    size = fh.seek(0, os.SEEK_END)
    for info in archive.infolist():
        # save stores members uncompressed: then no member can unpack to more than the file holds
        if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
            archive.close()
            raise ModelFileError(f"{path} is not a model file written by textcw ({info.filename} is "
                                 "compressed or larger than the file); refusing to read it")
    return archive


def _parse_manifest(archive: zipfile.ZipFile, path: Path) -> tuple[bytes, dict]:
    """The manifest's exact bytes (what a signature covers) and its checked content."""
    raw = read_member(archive, archive.getinfo(MANIFEST_MEMBER), path, MAX_MANIFEST_BYTES, "the manifest")
    return raw, parse_manifest(raw, path)


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the model file at ``path``; nothing is unpickled."""
    path = Path(path)
    fh, _ = _open_file(path)  # read as JSON only: the owner does not matter
    with fh, _open_archive(fh, path) as archive:
        return _parse_manifest(archive, path)[1]


def read_manifest_bytes(data: bytes, path: str | os.PathLike) -> dict:
    """The manifest of the model file whose bytes are ``data`` (read from ``path``); nothing is unpickled."""
    with _open_archive(io.BytesIO(data), Path(path)) as archive:
        return _parse_manifest(archive, Path(path))[1]


def _read_parts(fh: BinaryIO, path: Path) -> tuple[bytes, dict, bytes, bytes | None]:
    with _open_archive(fh, path) as archive:
        raw, manifest = _parse_manifest(archive, path)
        expected = manifest["payload"]
        info = archive.getinfo(PAYLOAD_MEMBER)
        if info.file_size != expected["size"]:
            raise ModelFileError(
                f"the model in {path} is {info.file_size} bytes but its manifest records {expected['size']}: "
                "the file was modified after saving; refusing to load it"
            )
        payload = read_member(archive, info, path, info.file_size, "the payload")
        signature = None
        if SIGNATURE_MEMBER in archive.namelist():
            signature = read_member(archive, archive.getinfo(SIGNATURE_MEMBER), path, _MAX_SIGNATURE_BYTES,
                                    "the signature")
    return raw, manifest, payload, signature


def read_parts(path: Path) -> tuple[bytes, dict, bytes, bytes | None]:
    """``(manifest bytes, manifest, payload, signature or None)``, sizes checked, nothing unpickled."""
    fh, _ = _open_file(Path(path))
    with fh:
        return _read_parts(fh, Path(path))


def load(path: str | os.PathLike, *, with_manifest: bool = False):
    """Load a model saved by :func:`save`, after checking where it lies, its manifest, signature
    and digest.

    The file is opened once (:func:`textcw.trust.open_regular_file`) and the payload whose digest
    is checked is the one unpickled. Refuses with :class:`ModelFileError`, before unpickling
    anything: a missing, truncated, damaged or foreign file; anything but a regular file (before
    opening it: a FIFO would block); a file somebody else could have written (owned by another
    user, writable by others, or reached through a folder or link of another user's: the rules of
    :mod:`textcw.trust`, a file of root's allowed) unless it is signed with the user's key; and a
    model that needs a plugin which is not installed. With a signing key configured
    (:func:`signing_key`), also refuses a file that is unsigned, signed with another key, or
    changed since it was signed. Warns when the model was saved by another textcw version.

    With ``with_manifest``, returns ``(model, manifest)``: the manifest read from the same bytes.
    """
    path = Path(path)
    key = signing_key()
    fh, problem = _open_file(path)
    with fh:
        raw, manifest, payload, signature = _read_parts(fh, path)
    return _unpickle(path, key, raw, manifest, payload, signature, problem, with_manifest)


def load_vouched(data: bytes, path: str | os.PathLike, *, with_manifest: bool = False):
    """:func:`load` for the bytes of a model file that the caller read from a trusted place
    (:func:`textcw.trust.open_trusted_file`) and checked as it needs (a service checks a
    checkpoint's recorded sha256 on exactly these bytes); ``path`` names it in messages."""
    path = Path(path)
    raw, manifest, payload, signature = _read_parts(io.BytesIO(data), path)
    return _unpickle(path, signing_key(), raw, manifest, payload, signature, None, with_manifest)


def _unpickle(path, key, raw, manifest, payload, signature, problem, with_manifest):
    digest = hashlib.sha256(payload).hexdigest()
    if key is not None:  # a file signed with the user's own key may come from anywhere
        require_signature(signature_status(key, signature, raw, digest, path), path)
    elif problem:
        raise ModelFileError(f"model file {path} {problem}; {_TRUST_FIX}")
    expected = manifest["payload"]["sha256"]
    if not digests_equal(digest, expected):
        raise ModelFileError(
            f"the model in {path} does not match the sha256 in its manifest (payload {digest[:16]}…, "
            f"manifest {safe_text(expected[:16])}…): it was modified after saving; refusing to load it"
        )
    plugins = manifest.get("plugins", {})
    for plugin, version in (plugins.items() if isinstance(plugins, dict) else ()):
        if not distribution_name(plugin):
            raise ModelFileError(f"{path} names the plugin {safe_text(plugin, 80)!r}, which is not a valid "
                                 "distribution name (PEP 508); the file is damaged or hostile")
        if _version(plugin) is None:
            raise ModelFileError(
                f"{path} needs the plugin {plugin!r} (version {safe_text(version, 40)} when saved), which is not "
                f"installed; {install_advice(plugin, vouched=key is not None)}"
            )
    if manifest.get("textcw_version") != __version__:
        warnings.warn(
            f"{path} was saved by textcw {manifest.get('textcw_version')}; this is textcw "
            f"{__version__}; check its predictions before relying on them",
            stacklevel=3,
        )
    try:
        model = joblib.load(io.BytesIO(payload))
    except Exception as exc:  # unpickling runs arbitrary constructors; report, don't leak
        raise ModelFileError(f"cannot unpickle the model in {path}: {type(exc).__name__}: {exc}") from None
    return (model, manifest) if with_manifest else model
