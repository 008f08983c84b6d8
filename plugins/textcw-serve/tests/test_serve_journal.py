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


ELEVEN = [(seq, [f"document {seq} " + "w" * (seq * 7)], ["space" if seq % 2 else "medicine"]) for seq in range(1, 12)]


@pytest.mark.parametrize("damaged", [1, 3, 6, 10])
@pytest.mark.parametrize("where", ["length", "crc", "seq", "payload"])
def test_damage_inside_the_log_keeps_every_intact_record_after_it(tmp_path, damaged, where):
    frames = write_log(tmp_path / "log", ELEVEN)
    data = bytearray(b"".join(frames))
    start = sum(len(f) for f in frames[:damaged - 1])
    data[start + {"length": 1, "crc": 5, "seq": 14, "payload": HEADER_BYTES + 3}[where]] ^= 0x10
    (tmp_path / "log").write_bytes(bytes(data))
    contents = read_log(tmp_path / "log")
    assert [r.seq for r in contents.records] == [s for s in range(1, 12) if s != damaged]
    assert [(r.documents, r.labels) for r in contents.records] == [(d, lab) for s, d, lab in ELEVEN if s != damaged]
    assert contents.damage == [journal.Damage(start, len(frames[damaged - 1]), damaged - 1 or None, damaged + 1)]
    assert contents.valid_bytes == len(data) and contents.dropped_bytes == 0 and contents.damaged_within


def test_several_damaged_stretches_and_a_damaged_end_are_each_reported(tmp_path):
    frames = write_log(tmp_path / "log", ELEVEN)
    data = bytearray(b"".join(frames))
    offsets = [sum(len(f) for f in frames[:i]) for i in range(12)]
    for seq in (2, 3, 7, 11):  # records 2-3 together, 7 alone, and the last one
        data[offsets[seq - 1] + HEADER_BYTES + 1] ^= 0x01
    (tmp_path / "log").write_bytes(bytes(data))
    contents = read_log(tmp_path / "log")
    assert [r.seq for r in contents.records] == [1, 4, 5, 6, 8, 9, 10]
    assert [(d.after, d.before) for d in contents.damage] == [(1, 4), (6, 8), (10, None)]
    assert contents.valid_bytes == offsets[10] and contents.dropped_bytes == len(frames[10])


def test_a_record_opening_inside_a_document_is_not_taken_for_a_record(tmp_path):
    # a document holding the bytes a payload starts with: the search finds them, the checks refuse
    fake = '{"documents":["x"],"labels":["space"]}'
    frames = write_log(tmp_path / "log", [(1, ["a"], ["space"]), (2, [fake * 3], ["space"]), (3, ["b"], ["space"])])
    data = bytearray(b"".join(frames))
    data[len(frames[0]) + 2] ^= 0x01  # record 2's length
    (tmp_path / "log").write_bytes(bytes(data))
    contents = read_log(tmp_path / "log")
    assert [r.seq for r in contents.records] == [1, 3]


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


def test_a_group_is_made_durable_by_one_data_sync(tmp_path, monkeypatch):
    """One fdatasync per appended group where the system has it (the data and the new length;
    not the file's times), fsync elsewhere; the group reads back whole."""
    import os

    assert journal.SYNC == ("fdatasync" if hasattr(os, "fdatasync") else "fsync")
    synced, real = [], getattr(os, journal.SYNC)
    monkeypatch.setattr(journal.os, journal.SYNC, lambda fd: (synced.append(fd), real(fd))[1])
    writer = LogWriter(tmp_path / "log", 0)
    try:
        writer.append([encode_record(*r) for r in RECORDS])
        assert len(synced) == 1
        writer.append([encode_record(4, ["more"], ["space"])])
        assert len(synced) == 2
    finally:
        writer.close()
    assert [r.seq for r in read_log(tmp_path / "log").records] == [1, 2, 3, 4]
