"""History files a user may hand ``gpusched fit-stops``: line ends of every system are
read; hostile bytes (a field past the csv module's limit, a line of gigabytes, a corrupt
or truncated gzip body, a small gzip that expands without end, bytes that are not
UTF-8) are refused naming the file or the row, exit status 2, no fit written."""

from __future__ import annotations

import csv
import gzip
import tracemalloc

import pytest

import instances.files
from experiments.cli import main
from instances import InstanceError
from instances.generators.histories import MAX_LINE_CHARS, csv_history
from instances.generators.stops_fit import fit_stops

ROWS = "2,Pass,1\n1,Killed,1\n3,Pass,2\n0.5,Running,1\n" * 10
LF = "hours,status,gpus\n" + ROWS


@pytest.mark.parametrize(
    "ends",
    [
        lambda t: t,
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t.replace("\n", "\r"),  # classic Mac OS
        # a mix, as files pasted together from several systems have
        lambda t: "".join(
            line + ("\r\n", "\r", "\n")[k % 3] for k, line in enumerate(t.splitlines())
        ),
    ],
)
def test_every_line_end_gives_the_same_history(tmp_path, ends):
    p = tmp_path / "h.csv"
    p.write_bytes(ends(LF).encode())
    plain = tmp_path / "plain.csv"
    plain.write_text(LF)
    got, want = csv_history(p), csv_history(plain)
    assert len(got.hours) == 40
    assert list(got.hours) == list(want.hours) and list(got.status) == list(want.status)
    assert fit_stops(got).to_dict()["classes"] == fit_stops(want).to_dict()["classes"]


def test_a_gzip_history_is_read_by_its_content_not_its_name(tmp_path):
    zipped = tmp_path / "h.csv"  # no .gz: the bytes say gzip
    zipped.write_bytes(gzip.compress(LF.encode()))
    plain = tmp_path / "h.csv.gz"  # .gz: the bytes say text
    plain.write_text(LF)
    assert list(csv_history(zipped).hours) == list(csv_history(plain).hours)


# mtime=0: the bytes are test ids, and pytest-xdist's workers must collect the same ids
# (with the clock's time in the header, two workers a second apart did not)
def _gzip_cut(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)[:-12]


def _gzip_corrupt(text: str) -> bytes:
    body = bytearray(gzip.compress(text.encode(), mtime=0))
    body[20:40] = b"\xff" * 20
    return bytes(body)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            ("hours,status,gpus,note\n2,Pass,1," + "x" * 200_000 + "\n").encode(),
            "rows[0] = 'h.csv': a field longer than 131,072 characters (line 2)",
        ),
        (
            (LF + "2,Pass,1," + "x" * (MAX_LINE_CHARS + 10)).encode(),
            "rows[40] = 'h.csv': a line longer than 1,048,576 characters (line 42)",
        ),
        (_gzip_corrupt(LF), "trace = 'h.csv': the gzip history file is corrupt"),
        (_gzip_cut(LF), "trace = 'h.csv': the gzip history file is cut short"),
        (gzip.compress(LF.encode(), mtime=0) + b"\x00junk", "the gzip history file is corrupt"),
        (
            (LF + "2,P\xe9ss,1\n").encode("latin-1"),
            "rows[40] = 'h.csv': not UTF-8 text: byte 0xe9 (line 42)",
        ),
        (LF.encode("utf-16"), "trace = 'h.csv': not UTF-8 text: byte 0xff (line 1)"),
        (b"", "needs CSV columns hours, status, gpus"),
        # which of the two is meant is not ours to guess (read the first, before)
        (b"hours,hours,status,gpus\n1,500,Pass,1\n", "has the CSV column hours twice"),
        ((LF + '2,"Pass,1\n').encode(), "rows[40] = '2,': hours and gpus must be numbers"),
        (("hours,status,gpus\n2,Pass," + "9" * 5000 + "\n").encode(), "rows[0]"),
        ((b"hours,status,gpus\n1e400,Pass,1\n"), "rows[0].hours = inf"),
        ((b"hours,status,gpus\n2e5,Pass,1\n"), "rows[0].hours = 200000.0"),
        ((b"hours,status,gpus\n2,Pass,1000000000\n"), "rows[0].gpus = 1000000000"),
        ((b"hours,status,gpus\n2,Pass\x00,1\n"), "rows[0].status"),
        # Python reads these as 10 and 3; no spreadsheet or CSV reader does
        ((b"hours,status,gpus\n1_0,Pass,1\n"), "rows[0] = '1_0,1': hours and gpus must be"),
        (("hours,status,gpus\n2,Pass,\u0663\n").encode(), "rows[0] = '2,\u0663': hours and gpus"),
        ((b"hours,status,gpus\n2,Pass,-1\n"), "rows[0].gpus = -1: must be from 1"),
    ],
)
def test_a_hostile_history_is_refused_naming_the_file_or_row(tmp_path, capsys, content, message):
    p = tmp_path / "h.csv"
    p.write_bytes(content)
    with pytest.raises(InstanceError) as err:
        csv_history(p)
    assert message in str(err.value).replace(str(tmp_path) + "/", "")
    out = tmp_path / "fit.json"
    assert main(["fit-stops", str(p), "--out", str(out)]) == 2
    cli = capsys.readouterr().err
    assert cli.startswith("gpusched: error: ") and len(cli.strip().splitlines()) == 1
    assert not out.exists()


def test_a_directory_or_device_is_refused(tmp_path):
    for path in (tmp_path, "/dev/zero"):
        with pytest.raises(InstanceError, match="not a regular file"):
            csv_history(path)


def test_a_small_gzip_expanding_past_the_bound_is_streamed_and_refused(tmp_path, monkeypatch):
    """A 100 kB gzip file of 64 MiB of valid rows: refused where the text passes the
    bound (lowered to 8 MiB here; 512 MiB in use), with memory bounded by the stream,
    not the file's text."""
    monkeypatch.setattr(instances.files, "MAX_FILE_BYTES", 8 << 20)
    row = "2,Pass,1," + "n" * 100_000 + "\n"
    p = tmp_path / "bomb.csv"
    with gzip.open(p, "wt", compresslevel=9) as f:
        f.write("hours,status,gpus,note\n")
        for _ in range(64 * 1024 * 1024 // len(row)):
            f.write(row)
    assert p.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(InstanceError, match="the history file expands to over 8 MiB"):
            csv_history(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"peak {peak >> 20} MiB: the text was not streamed"
    assert csv.field_size_limit() == 131_072  # the module's default, not raised for us
