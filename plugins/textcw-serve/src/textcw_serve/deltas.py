"""Incremental checkpoints: the state rows the updates touched since the last checkpoint.

A full checkpoint (:meth:`textcw_serve.state.StateFolder.write_checkpoint`) writes the whole
model: 23 MB and 0.4-0.6 s for a 20-class model hashed into 2^20 columns, however few updates it
holds. A delta writes only what changed. For the diagonal Gaussian learners, an update on a
document ``x`` changes ``mu`` and the diagonal ``Sigma`` only in the rows of ``x``'s non-zero
features (and the intercept's): ``mu += alpha y Sigma x``, and ``1/s_j += c x_j^2`` or
``s_j -= beta (s_j x_j)^2`` (CW-stdev: Crammer, Dredze and Pereira, "Confidence-weighted linear
classification for text categorization", JMLR 2012, eq. 31, with its diagonal forms; the same
form for AROW, Crammer, Kulesza and Dredze, "Adaptive regularization of weight vectors", Machine
Learning 2013, and for SCW), with one row of ``K`` labels per feature. So the rows of every
state array that the updates since the last checkpoint touched, with their values now, and the
per-call counters they appended (``mistakes_``, ``n_updates_``, the learner's ``run_counters``),
turn the model of that checkpoint into the model now, bit for bit (tested against an offline
``partial_fit``, and that no other row moves).

A delta file ``delta-SEQ.npz`` (numpy's ``.npz``, read with ``allow_pickle=False``: no pickle) holds
``rows`` (the touched row numbers, increasing), ``array.NAME`` (those rows of each state array)
and ``header`` (UTF-8 JSON: the record number it holds, the one it applies to, the service's
counters, the model file's sha256, and the counters' new entries). Deltas form a chain from the
newest full checkpoint: start-up loads it, applies each delta whose sha256 is the one recorded
in ``checkpoints.sha256`` and whose ``after`` is the record number reached so far, and replays
the log. A full checkpoint is written instead when the chain is long (``--full-every``,
:data:`FULL_EVERY`) or the chain with this delta would take no fewer bytes than the last full
checkpoint; it removes the deltas. Learners whose updates may change other rows (averaged
weights, full covariances, a plugin's own update, a learner still tuning its hyperparameters)
always get full checkpoints. With a signing key set (``TEXTCW_SIGNING_KEY``), a delta carries a
``signature`` made as :func:`textcw.save` makes one, and only deltas signed with it are loaded.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import io
import json
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from textcw.atomic import atomic_output
from textcw.errors import DataError, InputError
from textcw.learners.gaussian import GaussianLinearClassifier
from textcw.signing import require_signature, signature_document, signature_status, signing_key
from textcw.trust import open_trusted_file

DELTA_PATTERN = re.compile(r"^delta-(\d{12})\.npz$")
FORMAT = 1
# Every FULL_EVERY-th checkpoint is full (``--full-every``): start-up reads each delta after it.
FULL_EVERY = 32
_MAX_HEADER_BYTES = 1 << 24


def delta_name(seq: int) -> str:
    return f"delta-{seq:012d}.npz"


def supports_deltas(learner) -> bool:
    """Whether an update of ``learner`` changes only its state rows of the document's non-zero
    features (and the intercept's): the library's diagonal Gaussian learners with the library's
    update rules and kernels, without averaging (the average moves every row) and not tuning
    themselves (their candidates' states change too)."""
    if not (isinstance(learner, GaussianLinearClassifier) and hasattr(learner, "state_dict")):
        return False
    if learner.averaged or not learner.form.diagonal or "_tuner" in learner.__dict__:
        return False
    if learner.rule_code() is None or type(learner).epoch_kernel is not GaussianLinearClassifier.epoch_kernel:
        return False  # a variant's own kernels: which rows they write is theirs to say
    rows = int(learner.n_features_in_) + int(learner.fit_intercept)
    return all(a.ndim >= 1 and a.shape[0] == rows for a in learner.state_dict()["arrays"].values())


def _lists(learner) -> dict[str, list]:
    """The per-call counter lists a ``partial_fit`` call appends to, by ``state_dict`` key."""
    found = {"mistakes": learner.mistakes_, "n_updates": learner.n_updates_}
    for name in getattr(learner, "run_counters", ()):
        if hasattr(learner, name + "_"):
            found["counters." + name] = getattr(learner, name + "_")
    return found


@dataclass
class Delta:
    """A delta read back (:func:`read_deltas`), checked and ready to apply."""

    seq: int
    after: int
    path: Path
    header: dict
    rows: np.ndarray
    values: dict[str, np.ndarray]
    size: int


class DeltaTracker:
    """The rows touched since the last checkpoint, and when a delta is worth writing."""

    def __init__(self, learner, *, chain: int = 0, chain_bytes: int = 0, full_bytes: int = 0,
                 max_chain: int = FULL_EVERY - 1):
        self.learner, self.max_chain = learner, max_chain
        n_features = int(learner.n_features_in_)
        self.touched = np.zeros(n_features + int(learner.fit_intercept), dtype=bool)
        if learner.fit_intercept:
            self.touched[n_features] = True  # every update moves the intercept's row
        self.lengths = {k: len(v) for k, v in _lists(learner).items()}
        self.chain, self.chain_bytes, self.full_bytes = chain, chain_bytes, full_bytes
        state = learner.state_dict()["arrays"]
        self._row_bytes = 8 + sum(a[0].nbytes for a in state.values())  # the row number and its values

    def mark(self, X) -> None:
        """The rows of the features of ``X`` (the documents just learned) are touched."""
        if getattr(X, "format", None) != "csr":  # the featurizers give CSR: converted otherwise
            X = sp.csr_matrix(X)
        self.touched[X.indices] = True

    def mark_columns(self, columns: np.ndarray) -> None:
        """The rows ``columns`` (the features of the documents just learned) are touched."""
        self.touched[columns] = True

    def _persisted(self) -> None:
        """A checkpoint (full or delta) now holds the model: nothing is touched since."""
        self.touched[: len(self.touched) - int(self.learner.fit_intercept)] = False
        self.lengths = {k: len(v) for k, v in _lists(self.learner).items()}

    def full_checkpoint_written(self, size: int) -> None:
        self._persisted()
        self.chain, self.chain_bytes, self.full_bytes = 0, 0, size

    def delta_written(self, size: int) -> None:
        self._persisted()
        self.chain, self.chain_bytes = self.chain + 1, self.chain_bytes + size

    def delta_due(self) -> bool:
        """A delta rather than a full checkpoint: the chain is short and the delta smaller than
        the last full checkpoint (past that a full one costs less, to write and to load)."""
        estimate = int(np.count_nonzero(self.touched)) * self._row_bytes
        return self.chain < self.max_chain and self.chain_bytes + estimate < max(self.full_bytes, 1)

    def encode(self, counters, *, seq_after: int, base_sha256: str, created_at: str) -> bytes:
        """The delta file's bytes: the touched rows of every state array as they are now (called
        with the model lock held, so no update is half in them)."""
        state = self.learner.state_dict()
        rows = np.flatnonzero(self.touched).astype(np.int64)
        tails = {k: [int(v) for v in values[self.lengths.get(k, 0):]] for k, values in _lists(self.learner).items()}
        header = {"format": FORMAT, "seq": counters.seq, "after": seq_after, "base_sha256": base_sha256,
                  "created_at": created_at,
                  "counters": {"seq": counters.seq, "documents": counters.documents, "mistakes": counters.mistakes,
                               "changes": counters.changes},
                  "n_rows": len(self.touched), "lengths": self.lengths, "appended": tails}
        header_bytes = json.dumps(header).encode()
        arrays = {"rows": rows, "header": np.frombuffer(header_bytes, dtype=np.uint8)}
        for name, array in state["arrays"].items():
            arrays["array." + name] = np.ascontiguousarray(array[rows])
        key = signing_key()
        if key is not None:  # signed as textcw.save signs a checkpoint
            document = signature_document(key, header_bytes, _payload_sha256(arrays))
            arrays["signature"] = np.frombuffer(document, dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()


def _payload_sha256(arrays: dict[str, np.ndarray]) -> str:
    """sha256 of the row numbers and every state array's rows, by name (what a signature covers
    with the header)."""
    digest = hashlib.sha256(arrays["rows"].tobytes())
    for name in sorted(k for k in arrays if k.startswith("array.")):
        digest.update(b"\0" + name.encode() + b"\0" + arrays[name].tobytes())
    return digest.hexdigest()


def write_delta(folder, data: bytes, seq: int, record_digest) -> Path:
    """Write ``data`` as ``delta-SEQ.npz`` in the state folder ``folder`` (atomically, ``0600``,
    fsynced with its folder; never over anything but a regular file), then record its sha256 with
    ``record_digest(name, sha256)``. A crash before the record leaves a delta that is not loaded."""
    path = Path(folder) / delta_name(seq)
    with atomic_output(path, private=True) as fh:
        fh.write(data)
    record_digest(path.name, hashlib.sha256(data).hexdigest())
    return path


def write_checkpoint(state, model, counters, lock, tracker: DeltaTracker | None, last):
    """The checkpoint of record ``counters.seq`` in the state folder ``state``: a delta of the rows
    touched since ``last`` (the newest checkpoint) when one is due, else the whole model; each
    read under ``lock`` held shared (predictions go on; the caller makes the changes)."""
    if tracker is not None and last is not None and tracker.delta_due():
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
        with lock.shared():
            data = tracker.encode(counters, seq_after=last.seq, base_sha256=state.base_sha256, created_at=now)
        path = write_delta(state.folder, data, counters.seq, state.record_digest)
        tracker.delta_written(len(data))
        return type(last)(counters.seq, path, now)  # a textcw_serve.state.Checkpoint
    with lock.shared():
        written = state.write_checkpoint(model, counters)
    if tracker is not None:
        tracker.full_checkpoint_written(written.path.stat().st_size)
    return written


def delta_files(folder: Path) -> list[tuple[int, Path]]:
    """``(seq, path)`` of the regular delta files in ``folder``, oldest first."""
    found = []
    for entry in os.scandir(folder):
        match = DELTA_PATTERN.match(entry.name)
        if match and entry.is_file(follow_symlinks=False):
            found.append((int(match.group(1)), Path(entry.path)))
    return sorted(found)


def read_deltas(folder: Path, recorded: dict[str, str], after: int, base_sha256: str, log) -> list[Delta]:
    """The chain of deltas after the checkpoint of record ``after``: each recorded (its sha256 in
    ``recorded``, compared with the bytes read), each applying to the record the one before it
    reached. A delta whose digest was never recorded (a crash while it was written: the log still
    holds its records) is skipped with a warning."""
    chain, reached = [], after
    for seq, path in delta_files(folder):
        if seq <= after:
            continue  # older than the full checkpoint (a crash before they were removed)
        expected = recorded.get(path.name)
        if expected is None:
            log.warning("ignoring %s: its digest is not recorded in checkpoints.sha256 (the service stopped "
                        "while writing it); the update log holds its updates", path.name)
            continue
        with open_trusted_file(path, "the service delta checkpoint") as fh:
            data = fh.read()
        actual = hashlib.sha256(data).hexdigest()
        if not hmac.compare_digest(actual, expected):
            raise DataError(f"{path} is not the delta this service wrote (sha256 {actual[:12]}..., recorded "
                            f"{expected[:12]}...); refusing to load it. Restore it, or remove the state folder's "
                            "deltas and log to start from its full checkpoint")
        delta = _parse(path, data, seq, base_sha256)
        if delta.after != reached:
            raise DataError(f"{path} applies to record {delta.after}, but the checkpoints before it reach record "
                            f"{reached}: a delta is missing; the state folder {folder} was edited by hand")
        chain.append(delta)
        reached = seq
    return chain


def _parse(path: Path, data: bytes, seq: int, base_sha256: str) -> Delta:
    def bad(what: str) -> DataError:
        return DataError(f"{path} is not a delta of textcw serve ({what}); remove it and the deltas after it, "
                         "with the log, to start from the full checkpoint")

    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        header_bytes = arrays.pop("header").tobytes()
        header = json.loads(header_bytes.decode("utf-8"))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise bad(f"it cannot be read: {exc}") from None
    signature = arrays.pop("signature", None)
    key = signing_key()
    if key is not None:  # the rule of textcw.load: with a key set, only what it signed is loaded
        require_signature(signature_status(key, None if signature is None else signature.tobytes(), header_bytes,
                                           _payload_sha256(arrays), path), path)
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise bad("no header of format 1")
    if header.get("base_sha256") != base_sha256:
        raise InputError(f"{path} belongs to another model; give this model its own --state folder")
    if header.get("seq") != seq or not isinstance(header.get("after"), int) or not 0 <= header["after"] < seq:
        raise bad("its record numbers do not match its name")
    rows = arrays.pop("rows", None)
    if rows is None or rows.dtype != np.int64 or rows.ndim != 1 or not isinstance(header.get("n_rows"), int) or (
            rows.size and (rows[0] < 0 or rows[-1] >= header["n_rows"] or np.any(np.diff(rows) <= 0))):
        raise bad("its row numbers are not increasing row numbers of the model")
    values = {}
    for key, array in arrays.items():
        if not key.startswith("array.") or array.dtype != np.float64 or array.ndim < 1 or array.shape[0] != rows.size:
            raise bad(f"entry {key!r} is not one float64 row per row number")
        values[key[len("array."):]] = array
    return Delta(seq, header["after"], path, header, rows, values, len(data))


def apply_deltas(learner, chain: list[Delta]) -> None:
    """Write each delta's rows into the learner's state and append the counters it recorded,
    then hand the result to ``load_state_dict``, which checks it (shapes, finite values, the
    learner's own constraints) before it becomes the learner's state."""
    if not chain:
        return
    state = learner.state_dict()
    arrays = {name: np.array(a, order="C", copy=True) if not a.flags.writeable else a
              for name, a in state["arrays"].items()}
    lists = {"mistakes": list(state["mistakes"]), "n_updates": list(state["n_updates"]),
             **{"counters." + k: list(v) for k, v in state.get("counters", {}).items()}}
    for delta in chain:
        n_rows = next(iter(arrays.values())).shape[0]
        if set(delta.values) != set(arrays) or delta.header["n_rows"] != n_rows:
            raise DataError(f"{delta.path} holds the arrays {sorted(delta.values)} of {delta.header['n_rows']} rows; "
                            f"the model has {sorted(arrays)} of {n_rows}: it is not a delta of this model")
        lengths, appended = delta.header.get("lengths"), delta.header.get("appended")
        if not (isinstance(lengths, dict) and isinstance(appended, dict) and set(appended) <= set(lists)
                and all(lengths.get(k) == len(lists[k]) for k in appended)):
            raise DataError(f"{delta.path} continues other counters than the model's; the state folder was "
                            "edited by hand")
        for name, values in delta.values.items():
            if values.shape[1:] != arrays[name].shape[1:]:
                raise DataError(f"{delta.path}: array {name!r} has rows of shape {values.shape[1:]}, the model "
                                f"{arrays[name].shape[1:]}")
            arrays[name][delta.rows] = values
        for key, tail in appended.items():
            lists[key].extend(tail)
    rebuilt = {**state, "arrays": arrays, "mistakes": lists.pop("mistakes"), "n_updates": lists.pop("n_updates")}
    if lists:
        rebuilt["counters"] = {k[len("counters."):]: v for k, v in lists.items()}
    learner.load_state_dict(rebuilt)
