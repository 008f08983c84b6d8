"""Hostile exports and model files that try to exhaust memory or the stack: each is refused
with a clear error before the allocation it asks for. The memory cases run in a subprocess
under an address-space limit (RLIMIT_AS) far below what the file asks for, so a refusal that
came after the allocation would fail as a MemoryError instead of the expected message."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import textcw
from textcw.errors import ModelFileError
from textcw.model_card import model_card
from textcw.persist import MANIFEST_MEMBER, PAYLOAD_MEMBER, read_manifest
from textcw.portable import JSON_MEMBER, export_model, import_model, read_document

from test_portable import edit, npy, pipeline, state_array
from hang import HANG_SECONDS

LIMIT_MB = 700  # textcw, numpy, scikit-learn and numba need about 200 MB of it


def run_limited(code: str) -> str:
    """Run ``code`` in a fresh interpreter limited to LIMIT_MB of address space; its stdout."""
    program = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({LIMIT_MB} << 20, {LIMIT_MB} << 20))
        import textcw.portable, textcw.persist
        from textcw.plugins import default_registries
        default_registries()
        try:
    """) + textwrap.indent(textwrap.dedent(code), "    ") + textwrap.dedent("""
        except MemoryError:
            print("MemoryError")
        except Exception as exc:
            print(type(exc).__name__ + ": " + str(exc))
    """)
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture
def exported(tmp_path):
    return export_model(pipeline("binary-bow", "cw-stdev"), tmp_path / "m.textcw")


def document_of(path):
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(JSON_MEMBER))


@pytest.mark.parametrize("learner,params,features", [
    ("cw-stdev", {}, 10**9),                            # diagonal: 2 x 8 GB of template
    ("cw-stdev", {"covariance": "full"}, 40_000),       # full: a 12.8 GB identity matrix
    ("arow", {"fit_intercept": True}, 2 * 10**9),
    ("averaged-perceptron", {}, 10**9),
])
def test_huge_declared_feature_count_is_refused_before_allocating(tmp_path, learner, params, features):
    path = export_model(pipeline("binary-bow", learner, params), tmp_path / "m.textcw")
    edit(path, change_document=lambda d: d["steps"][1]["state_dict"]["__dict__"].update(n_features_in=features))
    assert path.stat().st_size < 32_000  # kilobytes (stored, not even compressed) ask for gigabytes
    out = run_limited(f"textcw.portable.import_model({str(path)!r})")
    assert out.startswith("ModelFileError: ") and "has shape" in out and f"with {features} features" in out, out


@pytest.mark.parametrize("learner", ["pa", "cw-stdev", "sop"])
def test_learner_is_never_asked_about_the_declared_size(tmp_path, monkeypatch, learner):
    """In process: the import refuses the shapes before the learner works out (or allocates) a
    state of the declared size; its state layout is only probed at tiny sizes."""
    cls = type(textcw.make_learner(learner))
    sizes = []
    original = cls.state_shapes

    def recording(self, n_rows, n_labels):
        sizes.append(n_rows)
        return original(self, n_rows, n_labels)

    monkeypatch.setattr(cls, "state_shapes", recording)
    path = export_model(pipeline("binary-bow", learner), tmp_path / "m.textcw")
    sizes.clear()
    edit(path, change_document=lambda d: d["steps"][1]["state_dict"]["__dict__"].update(n_features_in=10**12))
    with pytest.raises(ModelFileError, match=r"state array '\w+' has shape \(\d+,\); with 1000000000000 features"):
        import_model(path)
    assert sizes and max(sizes) < 100


def test_zero_size_dtype_cannot_declare_a_huge_array(exported):
    doc = document_of(exported)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<U0", "fortran_order": False, "shape": (10**12,)})
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"), header.getvalue()))
    out = run_limited(f"textcw.portable.import_model({str(exported)!r})")
    assert out.startswith("ModelFileError: ") and "holds an array of dtype <U0, which an export never has" in out, out


@pytest.mark.parametrize("descr,shape,message", [
    ("<U0", (10,), "dtype <U0"),
    ("<U2000", (1,), "dtype <U2000"),
    (">f8", (4,), "dtype >f8"),
    ("<c16", (4,), "dtype <c16"),
    ("|S4", (4,), "dtype |S4"),
    ("<M8[s]", (4,), "dtype <M8"),
    ("<f8", (1, 1, 1, 1), "4-dimensional array"),
    ("<f8", (10**6, 10**6), "more data than it holds"),
])
def test_array_headers_outside_the_format_are_refused(exported, descr, shape, message):
    doc = document_of(exported)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": descr, "fortran_order": False, "shape": shape})
    edit(exported, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"), header.getvalue() + b"\0" * 64))
    with pytest.raises(ModelFileError, match=message):
        import_model(exported)


@given(st.lists(st.integers(0, 2**40), min_size=0, max_size=4),
       st.sampled_from(["<f8", "<i8", "<U3", "|b1", "<U0", "|O"]))
def test_any_header_is_read_or_refused_within_its_bytes(shape, descr):
    """Whatever shape and dtype a header declares, the import either reads an array no larger
    than the bytes present or refuses the file; it never allocates what the header claims."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = export_model(pipeline("binary-bow", "pa"), Path(folder) / "m.textcw")
        doc = document_of(path)
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": descr, "fortran_order": False, "shape": tuple(shape)})
        edit(path, change_arrays=lambda arrays: arrays.__setitem__(state_array(doc, "mu"),
                                                                    header.getvalue() + b"\0" * 256))
        with pytest.raises(ModelFileError):
            import_model(path)


def bomb_export(path, json_bytes: int):
    """An export whose model.json decompresses to ``json_bytes`` of whitespace (a few kB packed)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(JSON_MEMBER)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as fh:
            chunk = b" " * (1 << 20)
            for _ in range(json_bytes >> 20):
                fh.write(chunk)
            fh.write(b'{"format": "textcw-portable", "format_version": 1}')
    return path


def test_compressed_json_bomb_is_refused_by_inspect_and_import(tmp_path):
    path = bomb_export(tmp_path / "bomb.textcw", 1 << 30)  # 1 GiB of JSON in about 1 MB
    assert path.stat().st_size < 2 << 20
    for call in ("textcw.portable.read_document", "textcw.portable.import_model", "textcw.model_card.model_card"):
        out = run_limited(f"{call}({str(path)!r})")
        assert out.startswith("ModelFileError: ") and "the model description (model.json) is 1,073,741," in out \
            and "more than the limit of 134,217,728" in out, (call, out)


def test_json_member_that_unpacks_beyond_its_declared_size_stops_there(tmp_path, exported):
    data = bytearray(exported.read_bytes())
    directory = data.find(b"PK\x01\x02")  # the first central directory entry: model.json
    import struct

    struct.pack_into("<I", data, directory + 24, 50)  # declare 50 bytes
    exported.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=r"damaged or was modified after saving \(Bad CRC-32"):
        read_document(exported)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [150, 100_000])
def test_deeply_nested_json_is_a_clear_error(tmp_path, exported, depth):
    doc = document_of(exported)
    text = json.dumps(doc)[:-1] + f', "x": {nested(depth)}}}'
    with zipfile.ZipFile(exported, "w") as archive:
        archive.writestr(JSON_MEMBER, text)
    for read in (read_document, import_model, model_card):
        with pytest.raises(ModelFileError, match="nests its JSON more than 100 levels deep"):
            read(exported)
    model = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.textcw-model")
    with zipfile.ZipFile(model) as archive:
        manifest, payload = archive.read(MANIFEST_MEMBER).decode(), archive.read(PAYLOAD_MEMBER)
    with zipfile.ZipFile(model, "w") as archive:
        archive.writestr(MANIFEST_MEMBER, manifest.rstrip()[:-1] + f', "x": {nested(depth)}}}')
        archive.writestr(PAYLOAD_MEMBER, payload)
    for read in (read_manifest, textcw.load, model_card):
        with pytest.raises(ModelFileError, match="nests its JSON more than 100 levels deep"):
            read(model)


def test_model_file_members_must_be_stored_so_none_can_unpack_to_more_than_the_file(tmp_path):
    model = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.textcw-model")
    with zipfile.ZipFile(model) as archive:
        manifest, payload = archive.read(MANIFEST_MEMBER), archive.read(PAYLOAD_MEMBER)
    with zipfile.ZipFile(model, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST_MEMBER, manifest + b" " * (64 << 20))  # 64 MB of manifest in 64 kB
        archive.writestr(PAYLOAD_MEMBER, payload)
    for read in (read_manifest, textcw.load, model_card):
        with pytest.raises(ModelFileError, match="manifest.json is compressed or larger than the file"):
            read(model)


def test_huge_manifest_is_refused_before_parsing(tmp_path):
    model = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.textcw-model")
    with zipfile.ZipFile(model) as archive:
        manifest, payload = archive.read(MANIFEST_MEMBER), archive.read(PAYLOAD_MEMBER)
    with zipfile.ZipFile(model, "w") as archive:
        archive.writestr(MANIFEST_MEMBER, manifest + b" " * (5 << 20))
        archive.writestr(PAYLOAD_MEMBER, payload)
    with pytest.raises(ModelFileError, match=r"the manifest \(manifest.json\) is 5,\d{3},\d{3} bytes, more than the limit of 4,194,304"):
        read_manifest(model)
