"""Saving and loading models: one file holding a JSON manifest and the joblib payload.

``save(model, "m.textcw-model")`` writes a single ZIP archive (stored, not compressed) with the
members ``manifest.json`` (versions, the plugins the model needs, the components' registry
names and parameters, what the model is: learner, classes, feature count, and the size and
sha256 of the payload), ``model.joblib`` (the fitted scikit-learn ``Pipeline``) and, when a
signing key is configured, ``signature.json``. One file, written atomically
(:mod:`textcw._atomic`), means a crash or a concurrent save can only ever leave the old model or
the new one, never a new payload beside an old manifest. :func:`load` reads the manifest first
and refuses a file whose payload does not match it, so a truncated or damaged file is never
unpickled; :func:`read_manifest` and :func:`model_card` read it without unpickling anything.

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
import hmac
import importlib.metadata
import io
import json
import numbers
import os
import platform
import unicodedata
import warnings
import zipfile
from pathlib import Path

import joblib
from sklearn.pipeline import Pipeline

from textcw._atomic import atomic_output, check_output_path
# Characters that would split a line or drive the terminal: the rule for folder: corpus labels.
from textcw.corpus.folder import UNPRINTABLE_IN_LABELS as _UNPRINTABLE
from textcw.errors import InputError, ModelFileError

FORMAT = "textcw-model"
FORMAT_VERSION = 3  # 3: the "model" description, created_at, the optional signature member
MANIFEST_MEMBER = "manifest.json"
PAYLOAD_MEMBER = "model.joblib"
SIGNATURE_MEMBER = "signature.json"
SUFFIX = ".textcw-model"
SIGNING_KEY_ENV = "TEXTCW_SIGNING_KEY"
SIGNING_KEY_FILE_ENV = "TEXTCW_SIGNING_KEY_FILE"
SIGNATURE_ALGORITHM = "hmac-sha256"
MIN_KEY_BYTES = 16
_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "joblib")
# A fixed timestamp for both members: the same model saved twice gives the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# A manifest is a few kB. Parsed JSON takes up to ~25 times its size in Python objects
# ("[{},{},...]"), so the bound on the text is a bound on memory too.
_MAX_MANIFEST_BYTES = 4 << 20
_MAX_SIGNATURE_BYTES = 4096
_MAX_KEY_FILE_BYTES = 64 << 10
MAX_JSON_DEPTH = 100  # exports nest about 20 deep; the json module recurses without a clear error


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


# ---------------------------------------------------------------------------- untrusted text
def safe_text(value, limit: int = 300) -> str:
    """``value`` as one printable line, for showing strings that come from a file.

    Control characters (escape sequences, line breaks), other unprintable characters and lone
    surrogates are escaped as Python does (``\\x1b``, ``\\n``, ``\\udce9``), via
    :func:`textcw.corpus.base.show_path`; text longer than ``limit`` characters is cut with
    ``...``. Use it for every label, version or name read from a model file or an export before
    printing it.
    """
    from textcw.corpus.base import show_path

    text = show_path(value if isinstance(value, str) else str(value))
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


def _unprintable(text: str) -> str | None:
    return next((c for c in text if unicodedata.category(c) in _UNPRINTABLE), None)


def check_printable(value, what: str, error=ModelFileError) -> None:
    """Raise ``error`` if a string in ``value`` (a str, or lists and dicts of them, keys too)
    holds a control character or a line break: the rule of ``folder:`` corpus labels
    (:func:`textcw.corpus.folder.label_of`), for strings that will be printed one per line."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str):
            bad = _unprintable(item)
            if bad is not None:
                kind = "a line break" if len(f"a{bad}b".splitlines()) > 1 else "a control character"
                raise error(f"{what} holds {kind} (U+{ord(bad):04X}) in {safe_text(item, 60)!r}; such "
                            "text would garble the terminal when printed, so it is refused")


# ---------------------------------------------------------------------------- bounded reading
def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limit: int, what: str) -> bytes:
    """The bytes of one archive member, refusing more than ``limit`` before reading them.

    The declared size is checked first; the read itself stops at ``limit + 1`` bytes whatever
    the archive claims, so a member that decompresses to more than it declares cannot fill memory.
    """
    if info.file_size > limit:
        raise ModelFileError(f"{path}: {what} ({info.filename}) is {info.file_size:,} bytes, more than the "
                             f"limit of {limit:,}; the file is damaged, hostile, or needs a higher limit")
    try:
        with archive.open(info) as fh:
            data = fh.read(limit + 1)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
        # CRC errors, cut-off data, unsupported compression
        raise ModelFileError(f"{path} is damaged or was modified after saving ({exc}); refusing to "
                             "read it") from None
    if len(data) > limit:
        raise ModelFileError(f"{path}: {info.filename} holds more than its {limit:,} bytes; the file is damaged")
    return data


def parse_json(raw: bytes, what: str):
    """``raw`` parsed as JSON, or :class:`ModelFileError` naming ``what``: not UTF-8, not JSON,
    nested deeper than :data:`MAX_JSON_DEPTH` (which the json module would meet with a
    RecursionError), or a number too long to convert."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except RecursionError:
        value = None
        depth = MAX_JSON_DEPTH + 1
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, too many integer digits
        raise ModelFileError(f"{what} is not valid JSON ({exc}); the file is damaged") from None
    else:
        depth = _depth(value)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(f"{what} nests its JSON more than {MAX_JSON_DEPTH} levels deep, which no "
                             "textcw file does; the file is damaged or hostile")
    return value


def _depth(value) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level <= MAX_JSON_DEPTH:
                stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


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


# ---------------------------------------------------------------------------- signing
def signing_key() -> bytes | None:
    """The signing key from ``TEXTCW_SIGNING_KEY`` or ``TEXTCW_SIGNING_KEY_FILE``, else ``None``.

    A key is at least :data:`MIN_KEY_BYTES` bytes (``python -c "import secrets;
    print(secrets.token_hex(32))"`` makes one); a key file's trailing line break is not part of
    the key. Setting both variables, an empty or short key, or an unreadable key file is an error,
    never a silent fall-back to unsigned files.
    """
    text, file = os.environ.get(SIGNING_KEY_ENV), os.environ.get(SIGNING_KEY_FILE_ENV)
    if text is not None and file is not None:
        raise ModelFileError(f"both {SIGNING_KEY_ENV} and {SIGNING_KEY_FILE_ENV} are set; set only one")
    if text is None and file is None:
        return None
    if text is not None:
        key, source = text.encode("utf-8", "surrogateescape"), SIGNING_KEY_ENV
    else:
        source = f"the key file {safe_text(file)} ({SIGNING_KEY_FILE_ENV})"
        try:
            with open(file, "rb") as fh:
                key = fh.read(_MAX_KEY_FILE_BYTES + 1)
        except OSError as exc:
            raise ModelFileError(f"cannot read {source}: {exc.strerror or exc}") from None
        if len(key) > _MAX_KEY_FILE_BYTES:
            raise ModelFileError(f"{source} is larger than {_MAX_KEY_FILE_BYTES:,} bytes; it is not a key")
        key = key.rstrip(b"\r\n")
    if len(key) < MIN_KEY_BYTES:
        raise ModelFileError(
            f"the signing key in {source} has {len(key)} bytes; use at least {MIN_KEY_BYTES} random "
            "bytes, e.g. python -c \"import secrets; print(secrets.token_hex(32))\""
        )
    return key


def _same(a: str, b: str) -> bool:
    """``a == b`` in time independent of where they differ (hmac.compare_digest), for any text."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def _key_id(key: bytes) -> str:
    # Names the key in messages ("signed with another key") without revealing anything about it.
    return hmac.new(key, b"textcw signing key id", hashlib.sha256).hexdigest()[:16]


def _mac(key: bytes, manifest_bytes: bytes, payload_sha256: str) -> str:
    message = b"textcw-model signature 1\0" + manifest_bytes + b"\0" + payload_sha256.encode("ascii")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _signature_document(key: bytes, manifest_bytes: bytes, payload_sha256: str) -> bytes:
    document = {"algorithm": SIGNATURE_ALGORITHM, "key_id": _key_id(key),
                "mac": _mac(key, manifest_bytes, payload_sha256)}
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("ascii")


def _signature_status(key: bytes | None, signature: bytes | None, manifest_bytes: bytes,
                      payload_sha256: str, path: Path) -> str:
    """``"unsigned"``, ``"unchecked"`` (signed, no key configured), ``"valid"``,
    ``"another key"`` or ``"invalid"``; a malformed signature member raises."""
    if signature is None:
        return "unsigned"
    document = parse_json(signature, f"the signature of {path}")
    if not (isinstance(document, dict) and document.get("algorithm") == SIGNATURE_ALGORITHM
            and isinstance(document.get("key_id"), str) and isinstance(document.get("mac"), str)):
        raise ModelFileError(f"the signature of {path} is not an {SIGNATURE_ALGORITHM} signature made by "
                             "textcw; the file is damaged or was modified")
    if key is None:
        return "unchecked"
    if not _same(document["key_id"], _key_id(key)):
        return "another key"
    return "valid" if _same(document["mac"], _mac(key, manifest_bytes, payload_sha256)) else "invalid"


def _require_signature(status: str, path: Path) -> None:
    if status == "valid":
        return
    where = f"{SIGNING_KEY_ENV} or {SIGNING_KEY_FILE_ENV}"
    raise ModelFileError({
        "unsigned": f"{path} is not signed, and a signing key is set ({where}), so only models signed "
                    "with it are loaded; save the model again with the key set if you trust it",
        "another key": f"{path} is signed with another key than the one set in {where}; refusing to load it",
        "invalid": f"{path} was changed after it was signed (its manifest or payload does not match "
                   "the signature); refusing to load it",
    }[status])


# ---------------------------------------------------------------------------- save
def _describe(model) -> dict:
    """What the model is, for the manifest (and so :func:`model_card`) without unpickling."""
    from textcw.pipeline import _jsonable

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
        "params": _jsonable(params),
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

    With a signing key configured (:func:`signing_key`) the file is signed.
    """
    path = Path(path)
    check_destination(path, f"model{SUFFIX}")
    key = signing_key()  # a misconfigured key fails before any work
    from textcw import __version__

    buffer = io.BytesIO()
    joblib.dump(_reproducible(model), buffer)
    payload = buffer.getvalue()
    payload_sha256 = hashlib.sha256(payload).hexdigest()
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
        "payload": {"member": PAYLOAD_MEMBER, "size": len(payload), "sha256": payload_sha256},
    }
    stamp = _created_at(created_at)
    if stamp is not None:
        manifest["created_at"] = stamp
    manifest_bytes = (json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8")
    try:
        with atomic_output(path) as fh, zipfile.ZipFile(fh, "w") as archive:
            archive.writestr(zip_member(MANIFEST_MEMBER), manifest_bytes)
            archive.writestr(zip_member(PAYLOAD_MEMBER), payload)
            if key is not None:
                archive.writestr(zip_member(SIGNATURE_MEMBER), _signature_document(key, manifest_bytes, payload_sha256))
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    return path


# ---------------------------------------------------------------------------- reading
_MEMBER_LISTS = ([MANIFEST_MEMBER, PAYLOAD_MEMBER], [MANIFEST_MEMBER, PAYLOAD_MEMBER, SIGNATURE_MEMBER])


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
    if names not in _MEMBER_LISTS:
        archive.close()
        raise ModelFileError(f"{path} is an archive but not a textcw model file (members "
                             f"{[safe_text(n, 60) for n in names[:4]]}, expected {_MEMBER_LISTS[0]})")
    size = path.stat().st_size
    for info in archive.infolist():
        # save stores members uncompressed: then no member can unpack to more than the file holds
        if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
            archive.close()
            raise ModelFileError(f"{path} is not a model file written by textcw ({info.filename} is "
                                 "compressed or larger than the file); refusing to read it")
    return archive


def _parse_manifest(archive: zipfile.ZipFile, path: Path) -> tuple[bytes, dict]:
    """The manifest's exact bytes (what a signature covers) and its checked content."""
    raw = read_member(archive, archive.getinfo(MANIFEST_MEMBER), path, _MAX_MANIFEST_BYTES, "the manifest")
    manifest = parse_json(raw, f"the manifest of {path}")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{path} holds no textcw model manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        from textcw import __version__

        raise ModelFileError(
            f"{path} uses model format {safe_text(repr(version), 40)}, newer than this textcw ({__version__}, "
            f"format {FORMAT_VERSION}) reads; upgrade textcw to load it"
        )
    payload = manifest.get("payload")
    if not (isinstance(payload, dict) and isinstance(payload.get("size"), int)
            and isinstance(payload.get("sha256"), str)):
        raise ModelFileError(f"the manifest of {path} does not describe its payload; the file is damaged")
    _check_manifest_text(manifest, path)
    return raw, manifest


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


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the model file at ``path``; nothing is unpickled."""
    path = Path(path)
    with _open(path) as archive:
        return _parse_manifest(archive, path)[1]


def _read_parts(path: Path) -> tuple[bytes, dict, bytes, bytes | None]:
    """``(manifest bytes, manifest, payload, signature or None)``, sizes checked, nothing unpickled."""
    with _open(path) as archive:
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


def load(path: str | os.PathLike):
    """Load a model saved by :func:`save`, after checking its manifest, signature and digest.

    Refuses a missing, truncated, damaged or foreign file with :class:`ModelFileError` before
    unpickling anything, and a model that needs a plugin which is not installed. With a signing
    key configured (:func:`signing_key`), also refuses, before unpickling, a file that is
    unsigned, signed with another key, or changed since it was signed. Warns when the model was
    saved by another textcw version.
    """
    from textcw import __version__

    path = Path(path)
    key = signing_key()
    raw, manifest, payload, signature = _read_parts(path)
    digest = hashlib.sha256(payload).hexdigest()
    if key is not None:
        _require_signature(_signature_status(key, signature, raw, digest, path), path)
    expected = manifest["payload"]["sha256"]
    if not _same(digest, expected):
        raise ModelFileError(
            f"the model in {path} does not match the sha256 in its manifest (payload {digest[:16]}…, "
            f"manifest {safe_text(expected[:16])}…): it was modified after saving; refusing to load it"
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


# ---------------------------------------------------------------------------- model card
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
        raw, manifest, payload, signature = _read_parts(path)
    except ModelFileError as model_error:
        from textcw.portable import export_card, is_export

        if is_export(path):
            return export_card(path, **({} if max_bytes is None else {"max_bytes": max_bytes}))
        raise model_error
    digest = hashlib.sha256(payload).hexdigest()
    status = _signature_status(signing_key(), signature, raw, digest, path)
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
        sha256=digest, digest_ok=_same(digest, manifest["payload"]["sha256"]),
        signed=signature is not None, signature=status,
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
        if value is None:
            shown = "unknown"
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
