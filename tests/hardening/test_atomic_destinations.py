"""Output destinations an atomic write must not replace: devices, FIFOs, symbolic links, folders,
missing or read-only folders, the input file itself; and no temporary file left on any exit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from textcw.atomic import atomic_output, atomic_write_bytes, check_output_folder, check_output_path
from textcw.errors import ModelFileError, OutputError
from textcw.persist import check_destination
from hang import HANG_SECONDS

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs and symbolic links")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def place(tmp_path):
    """Make one kind of destination in ``tmp_path``; returns its path."""
    target = tmp_path / "target.bin"
    target.write_bytes(b"the target")

    def make(kind: str) -> Path:
        path = tmp_path / "out.bin"
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "link-to-file":
            path.symlink_to(target)
        elif kind == "link-to-dev-null":
            path.symlink_to(os.devnull)
        elif kind == "dangling-link":
            path.symlink_to(tmp_path / "not-there.bin")
        elif kind == "folder":
            path.mkdir()
        return path

    return make


REFUSED = {
    "fifo": "is a FIFO (named pipe), not a regular file",
    "link-to-file": "is a symbolic link (to ",
    "link-to-dev-null": f"is a symbolic link (to {os.devnull})",
    "dangling-link": "is a symbolic link (to ",
    "folder": "is a folder; give a file name in it",
}


@posix_only
@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_non_regular_destinations_are_refused_and_left_alone(place, tmp_path, kind):
    path = place(kind)
    before = os.lstat(path)
    with pytest.raises(OutputError) as err:
        check_output_path(path, "--out")
    assert str(err.value).startswith(f"--out {path} {REFUSED[kind]}")
    assert "\n" not in str(err.value)
    # the library's own writes refuse it too (a caller that skipped the check)
    with pytest.raises(OutputError) as err:
        atomic_write_bytes(path, b"new content")
    assert str(err.value).startswith(f"{path} {REFUSED[kind]}")
    after = os.lstat(path)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert (tmp_path / "target.bin").read_bytes() == b"the target"
    assert leftovers(tmp_path) == []


@posix_only
def test_link_error_names_the_target_to_use_instead(place, tmp_path):
    path = place("link-to-file")
    with pytest.raises(OutputError, match="give the link's target as the file name, or remove the link"):
        check_output_path(path, "--out")
    assert os.readlink(path) == str(tmp_path / "target.bin")


def test_dev_null_is_never_turned_into_a_file():
    # As root a rename over /dev/null would succeed and break every program on the machine.
    before = os.stat(os.devnull)
    with pytest.raises(OutputError, match=r"is a character device, not a regular file.*leave the option out"):
        check_output_path(os.devnull, "--json-out")
    with pytest.raises(OutputError, match="is a character device"):
        atomic_write_bytes(os.devnull, b"x")
    with pytest.raises(ModelFileError, match=f"model file {os.devnull} is a character device"):
        check_destination(Path(os.devnull), "model.joblib")
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert not list(Path(os.devnull).parent.glob(".null.*"))


def test_regular_file_and_new_file_are_accepted(tmp_path):
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert check_output_path(existing, "--out") == existing
    assert check_output_path(str(tmp_path / "new.json"), "--out") == tmp_path / "new.json"


def test_missing_folder_and_file_as_folder_are_refused(tmp_path):
    with pytest.raises(OutputError, match=f"^--plot: folder {tmp_path / 'no'} does not exist; create it first$"):
        check_output_path(tmp_path / "no" / "fig.png", "--plot")
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=f"folder {tmp_path / 'file'} is not a folder; create it first"):
        check_output_path(tmp_path / "file" / "fig.png", "--plot")
    with pytest.raises(OutputError, match="cannot create .*check that the folder .* exists and is writable"):
        atomic_write_bytes(tmp_path / "no" / "fig.png", b"x")


def test_model_destination_keeps_its_error_class_and_example(tmp_path):
    with pytest.raises(ModelFileError, match=f"is a folder; give a file name such as {tmp_path / 'model.joblib'}"):
        check_destination(tmp_path, "model.joblib")


@posix_only
def test_same_file_as_the_input_is_refused(tmp_path):
    model = tmp_path / "m.joblib"
    model.write_bytes(b"model")
    with pytest.raises(OutputError, match=f"^export destination {model} is the input file {model}; "
                                          "writing it would destroy the input"):
        check_output_path(model, "export destination", not_same_as=model)
    hard = tmp_path / "hard.joblib"
    os.link(model, hard)  # another name for the same file
    with pytest.raises(OutputError, match="is the input file"):
        check_output_path(hard, "export destination", not_same_as=model)
    (tmp_path / "via-link.joblib").symlink_to(model)  # the input named through a link
    with pytest.raises(OutputError, match="is the input file"):
        check_output_path(model, "export destination", not_same_as=tmp_path / "via-link.joblib")
    other = tmp_path / "copy.joblib"
    other.write_bytes(b"model")  # same bytes, different file: fine
    assert check_output_path(other, "export destination", not_same_as=model) == other
    assert check_output_path(tmp_path / "new.textcw", "export destination", not_same_as=model)


CHECK_AS_OTHER_USER = """
import sys
from textcw.atomic import check_output_path
from textcw.errors import OutputError
try:
    check_output_path(sys.argv[1], "--out")
    print("accepted")
except OutputError as exc:
    print(exc)
"""


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="needs POSIX users")
def test_read_only_folder_is_refused():
    # chmod does not stop root, so as root the check runs in a child process as user "nobody".
    root = Path(tempfile.mkdtemp(prefix="textcw-ro-"))
    try:
        read_only, writable = root / "ro", root / "rw"
        read_only.mkdir(mode=0o555)
        writable.mkdir()
        os.chmod(root, 0o755)
        os.chmod(read_only, 0o555)
        os.chmod(writable, 0o777)
        outputs = {}
        for folder in (read_only, writable):
            if os.geteuid() == 0:
                try:
                    run = subprocess.run([sys.executable, "-c", CHECK_AS_OTHER_USER, str(folder / "r.json")],
                                         capture_output=True, text=True, user=65534, timeout=HANG_SECONDS)
                except (OSError, subprocess.SubprocessError) as exc:
                    pytest.skip(f"cannot run a process as another user here ({exc})")
                if run.returncode != 0:
                    pytest.skip(f"python cannot run as user 65534 here: {run.stderr.strip()[-200:]}")
                outputs[folder] = run.stdout.strip()
            else:
                try:
                    check_output_path(folder / "r.json", "--out")
                    outputs[folder] = "accepted"
                except OutputError as exc:
                    outputs[folder] = str(exc)
        assert outputs[writable] == "accepted"
        assert outputs[read_only] == (f"--out: folder {read_only} is not writable (read-only file system "
                                      "or no permission); choose another folder")
    finally:
        for folder in root.iterdir():
            os.chmod(folder, 0o755)
            folder.rmdir()
        root.rmdir()


@posix_only
@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_destination_swapped_during_the_write_is_not_replaced(tmp_path, swap):
    path = tmp_path / "report.json"
    path.write_text("old")
    target = tmp_path / "elsewhere.json"
    target.write_text("elsewhere")
    with pytest.raises(OutputError, match=f"^while it was being written, {path} is a .*nothing was written$"):
        with atomic_output(path) as fh:
            fh.write(b"new")
            path.unlink()  # another program puts something else there meanwhile
            os.mkfifo(path) if swap == "fifo" else path.symlink_to(target)
    assert stat.S_ISFIFO(os.lstat(path).st_mode) if swap == "fifo" else os.readlink(path) == str(target)
    assert target.read_text() == "elsewhere"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit, GeneratorExit, MemoryError, ValueError])
def test_any_exit_from_the_body_removes_the_temporary(tmp_path, exc):
    path = tmp_path / "m.joblib"
    path.write_bytes(b"old model")
    with pytest.raises(exc):
        with atomic_output(path) as fh:
            fh.write(b"half a new model")
            assert Path(fh.name).exists() and Path(fh.name).name.startswith(".m.joblib.")
            raise exc()
    assert path.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.joblib"]


def test_new_files_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write_bytes(tmp_path / "shared.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "shared.json").stat().st_mode) == 0o640


@posix_only
def test_output_folder_checks(tmp_path):
    figures = tmp_path / "figures"
    assert check_output_folder(figures, "--plot") == figures  # missing: created by the writer
    figures.mkdir()
    assert check_output_folder(figures, "--plot") == figures
    (tmp_path / "via-link").symlink_to(figures)  # a link to a folder: files go inside it
    assert check_output_folder(tmp_path / "via-link", "--plot") == tmp_path / "via-link"
    (tmp_path / "file.png").write_bytes(b"png")
    with pytest.raises(OutputError, match=f"^--plot {tmp_path / 'file.png'} is not a folder; give a folder"):
        check_output_folder(tmp_path / "file.png", "--plot")
    with pytest.raises(OutputError, match=f"^--plot {os.devnull} is not a folder"):
        check_output_folder(os.devnull, "--plot")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(OutputError, match="is a symbolic link to a missing folder"):
        check_output_folder(tmp_path / "dangling", "--plot")
    with pytest.raises(OutputError, match=f"^--plot: folder {tmp_path / 'no'} does not exist; create it first$"):
        check_output_folder(tmp_path / "no" / "figures", "--plot")
    os.mkfifo(figures / "curves.png")  # a figure name taken by a FIFO is refused when written
    with pytest.raises(OutputError, match="is a FIFO"):
        atomic_write_bytes(figures / "curves.png", b"png")
    assert stat.S_ISFIFO(os.lstat(figures / "curves.png").st_mode)
