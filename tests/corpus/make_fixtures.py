"""Write the synthetic RCV1 and Enron fixtures under ``corpora/<name>/fixture/``.

The real files are not redistributable (and not available to the project), so the loaders are
tested on tiny made-up files in exactly the published formats. Run from the repository root::

    python tests/corpus/make_fixtures.py

The output is byte-for-byte reproducible (gzip and tar timestamps are fixed), so the committed
fixtures can be checked against this script. The counts the tests assert are documented here.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "corpora"

# ----------------------------------------------------------------------------- RCV1 (LYRL2004)
# docid -> (industry codes, topic codes, tokens). Every listed document is in a token file.
RCV1_DOCS: dict[int, tuple[tuple[str, ...], tuple[str, ...], str]] = {}


def _rcv1_corpus() -> None:
    words = {
        "I82002": "life polici annuiti insur premium",
        "I82003": "motor properti casualti insur claim",
        "I81000": "bank deposit loan lend branch",
        "I83000": "broker fund asset invest advis",
        "I65400": "store retail special shop chain",
        "I65600": "supermarket depart mix retail store",
    }
    topic_words = {"CCAT": "compani profit", "ECAT": "economi inflat", "GCAT": "govern elect",
                   "MCAT": "market price"}
    # (docid, industries, topics): train ids 2286-2313, test ids in four later ranges.
    plan = []
    ids = [2286 + i for i in range(28)] + [30000 + i for i in range(6)] + \
          [300000 + i for i in range(6)] + [500000 + i for i in range(6)] + [700000 + i for i in range(6)]
    industries = (["I82002"] * 8 + ["I82003"] * 8 + ["I81000"] * 6 + ["I83000"] * 6
                  + ["I65400"] * 5 + ["I65600"] * 5 + ["I34000"] * 14)
    topics = ["CCAT", "ECAT", "GCAT", "MCAT"]
    for k, docid in enumerate(ids):
        codes = (industries[k],)
        if k == 3:  # carries both insurance codes: in neither class of the insurance task
            codes = ("I82002", "I82003")
        tops = (topics[k % 4], "C15") if k % 4 == 0 else (topics[k % 4],)
        if k % 9 == 5:  # two top-level topics: not in the 4-topic task
            tops = ("ECAT", "MCAT")
        plan.append((docid, codes, tops))
    for docid, codes, tops in plan:
        tokens = " ".join([words.get(c, "manufactur plant output") for c in codes]
                          + [topic_words.get(t, "") for t in tops] + [f"doc{docid}"])
        RCV1_DOCS[docid] = (codes, tops, " ".join(tokens.split()))


def _gzip_bytes(text: str) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
        gz.write(text.encode("ascii"))
    return buffer.getvalue()


def _token_file(docids: list[int]) -> str:
    out = []
    for docid in docids:
        tokens = RCV1_DOCS[docid][2].split()
        # the published files wrap a document's tokens over several lines
        lines = [" ".join(tokens[i:i + 6]) for i in range(0, len(tokens), 6)]
        out.append(f".I {docid}\n.W\n" + "\n".join(lines) + "\n\n")
    return "".join(out)


def write_rcv1() -> None:
    _rcv1_corpus()
    folder = ROOT / "rcv1" / "fixture"
    folder.mkdir(parents=True, exist_ok=True)
    ids = sorted(RCV1_DOCS)
    bounds = {"train": (0, 30000), "test_pt0": (30000, 300000), "test_pt1": (300000, 500000),
              "test_pt2": (500000, 700000), "test_pt3": (700000, 10**9)}
    parts = {part: [d for d in ids if low <= d < high] for part, (low, high) in bounds.items()}
    for part, docids in parts.items():
        (folder / f"lyrl2004_tokens_{part}.dat.gz").write_bytes(_gzip_bytes(_token_file(docids)))
    for name, index in (("topics", 1), ("industries", 0)):
        lines = [f"{code} {docid} 1" for docid in ids for code in sorted(RCV1_DOCS[docid][index])]
        (folder / f"rcv1-v2.{name}.qrels.gz").write_bytes(_gzip_bytes("\n".join(lines) + "\n"))


# ----------------------------------------------------------------------------- Enron (CMU maildir)
ENRON_FOLDERS = {
    "farmer-d": {
        # archival: the 10 largest are kept (ties by name), dominion and calpine dropped
        "logistics": 9, "wellhead": 8, "tufco": 7, "personal": 6, "entex": 5, "industrials": 5,
        "aep": 4, "ces": 4, "bammel": 3, "kinder": 3, "dominion": 2, "calpine": 1,
        # non-archival, all larger than some kept folders
        "inbox": 12, "deleted_items": 11, "discussion_threads": 10, "sent": 10, "all_documents": 12,
        "_sent_mail": 9, "notes_inbox": 9, "sent_items": 9, "calendar": 2, "contacts": 1,
    },
    "kaminski-v": {
        "resumes": 8, "projects": 7, "universities": 6, "conferences": 6, "personnel": 5,
        "research": 5, "london": 4, "enron_research": 4, "rice": 3, "stanford": 3, "trips": 1,
        "inbox": 10, "sent": 8, "deleted_items": 7,
    },
    "allen-p": {"inbox": 3, "projects": 3},
}
SUBFOLDER = {("farmer-d", "logistics"): "tenaska", ("kaminski-v", "projects"): "var"}


def _message(user: str, folder: str, n: int) -> bytes:
    topic = folder.strip("_").replace("_", " ")
    body = f"Notes about {topic} item {n}.\nThe {topic} numbers for week {n} are attached.\n"
    if (user, folder, n) == ("farmer-d", "personal", 1):
        body += "Caf\xe9 at noon?\n"  # Latin-1, not UTF-8: the loader falls back
    header = (
        f"Message-ID: <{zlib.crc32(f'{user}/{folder}/{n}'.encode())}.1075840000000.JavaMail.evans@thyme>\n"
        f"Date: Mon, 14 May 2001 16:{n:02d}:00 -0700 (PDT)\n"
        f"From: {user.split('-')[0]}@enron.com\n"
        "To: pat.clynes@enron.com\n"
        f"Subject: {topic} update {n}\n"
        "Mime-Version: 1.0\n"
        "Content-Type: text/plain; charset=us-ascii\n"
        "Content-Transfer-Encoding: 7bit\n"
        f"X-From: {user}\n"
        "X-To: Pat Clynes\n"
        "X-cc: \nX-bcc: \n"
        f"X-Folder: \\{user}\\Notes Folders\\{folder}\n"
        f"X-Origin: {user}\n"
        f"X-FileName: {user}.nsf\n\n"
    )
    return (header + body).encode("latin-1")


def write_enron() -> None:
    folder = ROOT / "enron" / "fixture"
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for user, folders in ENRON_FOLDERS.items():
            for name, count in folders.items():
                for n in range(1, count + 1):
                    path = f"maildir/{user}/{name}"
                    if (user, name) in SUBFOLDER and n <= 2:  # sub-folders count for their parent
                        path += f"/{SUBFOLDER[(user, name)]}"
                    data = _message(user, name, n)
                    info = tarfile.TarInfo(f"{path}/{n}.")
                    info.size, info.mtime, info.mode = len(data), 0, 0o644
                    tar.addfile(info, io.BytesIO(data))
    (folder / "enron_mail_20150507.tar.gz").write_bytes(buffer.getvalue())


if __name__ == "__main__":
    write_rcv1()
    write_enron()
