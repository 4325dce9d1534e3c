"""Campaign files no loader should trust: each is refused before any run, naming the
file, the line or the field, with exit status 2 from the command and no store written;
never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.campaign import CampaignError, load_campaign, parse_campaign
from experiments.campaign_file import MAX_CAMPAIGN_BYTES
from experiments.cli import main
from tests.conftest import DATA

HEAD = 'policies = ["fifo"]\n'
SYNTHETIC = HEAD + '[[scenarios]]\ngenerator = "synthetic"\n'
TINY = str(Path(DATA).parents[1] / "instances" / "data" / "tiny.json")


def _refused(text: str) -> str:
    with pytest.raises(CampaignError) as err:
        parse_campaign(text, base=Path("."), default_name="c")
    return str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the TOML parser's own failures
        (HEAD + "x = " + "[" * 100_000 + "]" * 100_000, "nested too deep (at most 32 levels)"),
        (SYNTHETIC + "[scenarios.grid]\nrate = " + "[" * 40 + "]" * 40, "nested deeper than 32"),
        (HEAD + "seeds = " + "9" * 5000 + SYNTHETIC[len(HEAD) - 1 :], "line 2: an integer of"),
        (SYNTHETIC + "nodes = " + "9" * 5000, "line 4: an integer of thousands of digits"),
        (HEAD + "seeds = " + "9" * 1000 + "\n" + SYNTHETIC[len(HEAD) :], "seeds = 99999"),
        (SYNTHETIC + "slot = 1e400", "scenarios[0].slot = inf: must be a finite number"),
        # finite, and too large for any field: not called infinite
        (SYNTHETIC + "slot = 1e300", "slot = 1e+300: must be a number of at most 1e15 in size"),
        # values no run could use
        (SYNTHETIC + "slot = 0", "slot = 0: must be in [0.001, 1000]"),
        (SYNTHETIC + "slot = 0.0", "slot = 0.0: must be in [0.001, 1000]"),
        (HEAD + '[[scenarios]]\ngenerator = "suite"\nslot = 0', "slot = 0: must be a positive"),
        (HEAD + f'[[scenarios]]\ngenerator = "file"\npath = "{TINY}"\nslot = 0', "slot = 0"),
        (HEAD + f'[[scenarios]]\ngenerator = "file"\npath = "{TINY}"\nslot = "x"', "slot = 'x'"),
        (HEAD + '[[scenarios]]\ngenerator = "file"\npath = "none.json"', "path = 'none.json'"),
        (SYNTHETIC + "tightness = [3.0, 1.0]", "tightness = [3.0, 1.0]: a range must be"),
        (SYNTHETIC + "epochs = [30, 5]", "epochs = [30, 5]: a range must be [low, high]"),
        (SYNTHETIC + "tightness = [-1.0, 2.0]", "tightness = [-1.0, 2.0]: each must be in (0,"),
        (SYNTHETIC + "epochs = [0, 5]", "epochs = [0, 5]: each must be in [1, "),
        (SYNTHETIC + "max_share = 0", "max_share = 0: must be in [1, 64]"),
        (HEAD + '[[scenarios]]\ngenerator = "liquid"\ntightness = [3.0, 1.0]', "tightness"),
        (
            HEAD + '[[scenarios]]\ngenerator = "realdata"\nmin_hours = 9.0\nmax_hours = 1.0',
            "at most",
        ),
        # physically meaningless: sharing faster than owning the GPU, more GPUs slower
        # (or more than proportionally faster), an epoch of no time
        (
            SYNTHETIC + "interference = [0.5, 1.5]",
            "interference = [0.5, 1.5]: each must be in (0, 1]",
        ),
        (SYNTHETIC + "interference = [0.0, 0.5]", "interference = [0.0, 0.5]: each must be in (0"),
        (SYNTHETIC + "scaling = [0.5, 1.5]", "scaling = [0.5, 1.5]: each must be in [0, 1]"),
        (SYNTHETIC + "scaling = [-0.5, 0.5]", "scaling = [-0.5, 0.5]: each must be in [0, 1]"),
        (SYNTHETIC + "epoch_hours_k80 = [0.0, 1.0]", "epoch_hours_k80 = [0.0, 1.0]: each must"),
        (SYNTHETIC + "memory_gb = [0.0]", "memory_gb = [0.0]: each must be in (0,"),
        (HEAD + '[[scenarios]]\ngenerator = "realdata"\ntime_scale = -1.0', "time_scale = -1.0"),
        (HEAD + '[[scenarios]]\ngenerator = "liquid"\noversubscription = 0.5', "oversubscription"),
        (
            HEAD + '[[scenarios]]\ngenerator = "realdata"\nnodes = [["h100", 4]]',
            "nodes[0] = ['h100'",
        ),
        # a policy that is not a name: a list or a table in the list (was a TypeError
        # from the look-up of retired names)
        (
            'policies = [["fifo"]]\n[[scenarios]]\ngenerator = "synthetic"',
            "policies = ['fifo']: each policy is a name (a string)",
        ),
        (
            'policies = [{fifo = 1}]\n[[scenarios]]\ngenerator = "synthetic"',
            "policies = {'fifo': 1}: each policy is a name (a string)",
        ),
        # a run listed twice: refused at load, not after computing it
        (
            'policies = ["fifo", "edf", "fifo"]\n[[scenarios]]\ngenerator = "synthetic"',
            "policies = 'fifo': listed twice",
        ),
        (HEAD + "seeds = [3, 1, 3]\n" + SYNTHETIC[len(HEAD) :], "seeds = 3: listed twice"),
        (SYNTHETIC + '[scenarios.grid]\nrate = ["low", "low"]', "two scenarios have this label"),
        # the old name of both traces
        (
            HEAD + '[[scenarios]]\ngenerator = "trace"\ntrace = "alibaba"',
            "'philly-week' or 'alibaba'",
        ),
        (
            HEAD + '[[scenarios]]\ngenerator = "alibaba"\ntrace = "philly-week"',
            "scenarios[0].trace",
        ),
        # a scenario's name labels its rows in the store and the report
        (HEAD + '[[scenarios]]\nname = 5\ngenerator = "synthetic"', "scenarios[0].name = 5"),
        (HEAD + '[[scenarios]]\nname = ""\ngenerator = "synthetic"', "scenarios[0].name = ''"),
        (
            HEAD + '[[scenarios]]\nname = "a\\u0007b"\ngenerator = "synthetic"',
            "must be a non-empty line of text",
        ),
        # text for people: a number was shown as Python writes it, an escape reached
        # the terminal through --list
        ("description = 5\n" + SYNTHETIC, "description = 5: must be text"),
        ('description = ["a"]\n' + SYNTHETIC, "description = ['a']: must be text"),
        ('description = "a\\u001b[2Jb"\n' + SYNTHETIC, "holds the control character '\\x1b'"),
        ('description = "' + "x" * 10_001 + '"\n' + SYNTHETIC, "at most 10,000 characters"),
        # an option no run could use: refused at load, not by a run's traceback
        (
            "seeds = 1\n[policies]\nsts = {lead_hours = 1e308}\n"
            '[[scenarios]]\ngenerator = "synthetic"',
            "lead_hours = 1e+308: must be a number of hours in [0, 100000]",
        ),
    ],
)
def test_a_hostile_campaign_is_refused_naming_what_is_wrong(text, message):
    assert message in _refused(text)


def test_a_campaign_file_of_bad_bytes_is_refused_naming_the_file(tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes(SYNTHETIC.encode() + b'name = "caf\xe9"\n')
    with pytest.raises(CampaignError, match=r"latin.toml'?: not UTF-8 text: byte 0xe9 on line 4"):
        load_campaign(latin)
    big = tmp_path / "big.toml"
    big.write_bytes(SYNTHETIC.encode() + b"#" * MAX_CAMPAIGN_BYTES)
    with pytest.raises(CampaignError, match="over 1024 KiB"):
        load_campaign(big)
    with pytest.raises(CampaignError, match="not a regular file"):
        load_campaign(tmp_path)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + SYNTHETIC.encode())
    assert load_campaign(bom).policies == ("fifo",)


@pytest.mark.parametrize(
    "content",
    [
        b'policies = ["fifo"]\nname = "\xff"\n',
        ('policies = ["fifo"]\nx = ' + "[" * 50_000 + "]" * 50_000).encode(),
        ('policies = ["fifo"]\nseeds = ' + "1" * 5000).encode(),
        ('policies = ["fifo", "fifo"]\n' + SYNTHETIC[len(HEAD) :]).encode(),
        (SYNTHETIC + "interference = [0.5, 2.0]").encode(),
    ],
)
def test_the_command_refuses_it_with_status_2_and_writes_no_store(tmp_path, capsys, content):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(content)
    store = tmp_path / "s.sqlite"
    assert main(["campaign", str(cfg), "--store", str(store), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpusched: error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not store.exists()


def test_list_names_the_bundled_campaigns_and_takes_no_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["campaign", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bundled campaigns: ") and "contended" in out and "prices" in out
    # a file beside --list was ignored without a word
    assert main(["campaign", "contended", "--list"]) == 2
    captured = capsys.readouterr()
    assert "config = 'contended': --list takes no campaign" in captured.err
    assert captured.out == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("key", ["path", "stops"])
def test_a_file_the_os_cannot_open_is_refused_naming_the_scenarios_field(tmp_path, key):
    """A loop of symbolic links and a name longer than the OS takes, as a scenario's
    instance or stopping fit: refused naming the field, not a traceback (the loop raised
    RuntimeError from Path.resolve) nor the OS's message alone."""
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    scenario = (
        '[[scenarios]]\ngenerator = "file"\npath = "{}"\n'
        if key == "path"
        else '[[scenarios]]\ngenerator = "philly-week"\nhours = 1.0\nstops = "{}"\n'
    )
    cases = (("a.json", "cannot read it (Symlink loop"), ("x" * 300, "File name too long"))
    for name, why in cases:
        text = HEAD + scenario.format(name)
        with pytest.raises(CampaignError) as err:
            parse_campaign(text, base=tmp_path, default_name="c")
        assert str(err.value).startswith(f"scenarios[0].{key} = '{name[:20]}")
        assert why in str(err.value)
