"""The update log's format: records round-trip, a torn last write is dropped, damage is refused."""

from __future__ import annotations

import pytest

from textcw_serve import journal
from textcw_serve.journal import HEADER_BYTES, LogDamagedError, LogWriter, encode_record, read_log

RECORDS = [(1, ["orbit rocket"], ["space"]), (2, ["doctor", "mo\u00f6n \udce9"], ["medicine", 3]),
           (3, ["x" * 150], ["space"])]


def write_log(path, records=RECORDS) -> list[bytes]:
    frames = [encode_record(*r) for r in records]
    path.write_bytes(b"".join(frames))
    return frames


def test_records_round_trip_any_text(tmp_path):
    write_log(tmp_path / "log")
    contents = read_log(tmp_path / "log")
    assert [(r.seq, r.documents, r.labels) for r in contents.records] == RECORDS
    assert contents.dropped_bytes == 0 and contents.valid_bytes == (tmp_path / "log").stat().st_size


def test_a_missing_log_is_empty(tmp_path):
    contents = read_log(tmp_path / "none")
    assert contents.records == [] and contents.valid_bytes == 0


def test_a_log_cut_anywhere_in_its_last_record_keeps_exactly_the_records_before(tmp_path):
    frames = write_log(tmp_path / "log")
    whole = b"".join(frames)
    start = len(whole) - len(frames[-1])
    for cut in range(start, len(whole)):  # every length a torn last write can leave
        (tmp_path / "log").write_bytes(whole[:cut])
        contents = read_log(tmp_path / "log")
        assert [r.seq for r in contents.records] == [1, 2]
        assert contents.valid_bytes == start and contents.dropped_bytes == cut - start


@pytest.mark.parametrize("position", [0, 5, HEADER_BYTES, HEADER_BYTES + 7, -1])
def test_a_corrupted_last_record_is_dropped(tmp_path, position):
    frames = write_log(tmp_path / "log")
    data = bytearray(b"".join(frames))
    data[len(data) - len(frames[-1]) + position if position >= 0 else position] ^= 0x40
    (tmp_path / "log").write_bytes(bytes(data))
    assert [r.seq for r in read_log(tmp_path / "log").records] == [1, 2]


def test_damage_before_more_than_one_write_group_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "MAX_GROUP_BYTES", 100)
    frames = write_log(tmp_path / "log")  # the records after the first are over 100 bytes
    data = bytearray(b"".join(frames))
    data[HEADER_BYTES + 2] ^= 0x01  # inside the first record's payload
    (tmp_path / "log").write_bytes(bytes(data))
    with pytest.raises(LogDamagedError, match="damaged record at byte 0 followed by .* more than one write group"):
        read_log(tmp_path / "log")


def test_a_gap_in_the_record_numbers_is_refused(tmp_path):
    write_log(tmp_path / "log", [RECORDS[0], (5, ["a"], ["space"])])
    with pytest.raises(LogDamagedError, match="jumps from record 1 to 5"):
        read_log(tmp_path / "log")


def test_the_writer_cuts_a_torn_tail_before_appending(tmp_path):
    frames = write_log(tmp_path / "log")
    torn = b"".join(frames[:2]) + frames[2][:10]
    (tmp_path / "log").write_bytes(torn)
    contents = read_log(tmp_path / "log")
    writer = LogWriter(tmp_path / "log", contents.valid_bytes)
    writer.append([encode_record(3, ["new"], ["space"]), encode_record(4, ["newer"], ["medicine"])])
    writer.close()
    after = read_log(tmp_path / "log")
    assert [(r.seq, r.documents) for r in after.records][2:] == [(3, ["new"]), (4, ["newer"])]
    assert after.dropped_bytes == 0


def test_reset_empties_the_log(tmp_path):
    write_log(tmp_path / "log")
    writer = LogWriter(tmp_path / "log", (tmp_path / "log").stat().st_size)
    writer.reset()
    writer.append([encode_record(4, ["a"], ["space"])])
    writer.close()
    assert [r.seq for r in read_log(tmp_path / "log").records] == [4]
