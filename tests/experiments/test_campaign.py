"""Campaigns: grid expansion, local processes and Dask, the SQLite store, resume."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from experiments.campaign import CampaignError, bundled_campaigns, load_campaign, parse_campaign
from experiments.cli import main
from experiments.runner import run_campaign
from experiments.store import Store, StoreError
from heuristic.core.registry import make_policy
from instances.generators.power import lay_idle, lay_power_off
from instances.generators.prices import lay_prices
from instances.generators.suite import suite_instance
from validation.evaluate import evaluate
from validation.scenario import scenario_instance
from validation.simulator import simulate

SMALL = """
name = "small"
policies = ["sts", "edf", "fifo"]
seeds = 2
[[scenarios]]
generator = "synthetic"
nodes = 2
jobs = 5
epochs = [3, 8]
[scenarios.grid]
rate = ["high", "low"]
"""


def _parse(text: str):
    return parse_campaign(text, base=Path("."), default_name="t")


def test_the_grid_expands_scenarios_x_seeds_x_policies():
    c = _parse(SMALL)
    assert [s.label for s in c.scenarios] == ["synthetic[rate=high]", "synthetic[rate=low]"]
    runs = c.runs()
    assert len(runs) == 2 * 2 * 3 and len({r.key for r in runs}) == len(runs)
    inst = c.scenarios[0].instance(1)
    assert len(inst.jobs) == 5 and inst.name == "synthetic[rate=high]-s1"
    # tuple fields take TOML arrays
    assert all(3 <= j.max_epochs <= 8 for j in inst.jobs)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('name="x"\npolicies=["sts"]\nseed=1\n[[scenarios]]\ngenerator="synthetic"', "seed"),
        ('policies=["nope"]\n[[scenarios]]\ngenerator="synthetic"', "policies = 'nope'"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="synth"', "scenarios[0].generator"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="synthetic"\nrte=1', "scenarios[0].rte"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="synthetic"\nrate="medium"', "rate"),
        ('policies=["sts"]\nseeds=0\n[[scenarios]]\ngenerator="synthetic"', "seeds = 0"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="suite"\ninstances=["x"]', "instances"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="suite"\nrelaunch="some"', "relaunch"),
        ('policies=["sts"]\n[[scenarios]]\ngenerator="file"', "scenarios[0].path"),
        # a key given fixed and in the grid: the grid's silently won
        (
            'policies=["sts"]\n[[scenarios]]\ngenerator="synthetic"\nnodes=2\n'
            "[scenarios.grid]\nnodes=[3]",
            "scenarios[0].grid.nodes = [3]: nodes is given outside the grid too",
        ),
        (
            'policies=["sts"]\n[[scenarios]]\ngenerator="file"\npath="missing.json"\n'
            '[scenarios.grid]\npath=["other.json"]',
            "scenarios[0].grid.path",
        ),
        # the suite's instances in the grid were ignored (every instance ran)
        (
            'policies=["sts"]\n[[scenarios]]\ngenerator="suite"\n'
            '[scenarios.grid]\ninstances=["suite-excl-2n4j-s1"]',
            "scenarios[0].grid.instances",
        ),
        ('policies=["sts"', "not valid TOML"),
        ('policies=["sts"]\ntime_limit=nan\n[[scenarios]]\ngenerator="synthetic"', "time_limit"),
        ('policies=["sts"]\ntime_limit=-1\n[[scenarios]]\ngenerator="synthetic"', "time_limit"),
        ('name="../../x"\npolicies=["sts"]\n[[scenarios]]\ngenerator="synthetic"', "name"),
        ('name="/tmp/x"\npolicies=["sts"]\n[[scenarios]]\ngenerator="synthetic"', "name"),
        ('name=""\npolicies=["sts"]\n[[scenarios]]\ngenerator="synthetic"', "name"),
    ],
)
def test_bad_campaign_files_name_the_field(text, field):
    with pytest.raises(CampaignError, match=field.replace("[", r"\[").replace("]", r"\]")):
        _parse(text)


def test_a_suite_scenario_may_set_the_relaunch_overheads():
    """The suite's seed-1 half has no overheads; ``relaunch`` gives them, or takes the
    seed-2 half's away, without changing anything else of the instance."""
    text = 'policies=["sts"]\n[[scenarios]]\ngenerator="suite"\ninstances=["%s"]\n'
    grid = '[scenarios.grid]\nrelaunch=["measured", "none"]'
    for name in ("suite-excl-2n4j-s1", "suite-excl-2n4j-s2"):
        plain = _parse(text % name).scenarios[0].instance(0)
        measured, none = (sc.instance(0) for sc in _parse(text % name + grid).scenarios)
        assert all(j.relaunch_hours is None for j in none.jobs)
        assert all(j.relaunch_hours and j.relaunch_hours > 0 for j in measured.jobs)
        assert plain in (measured, none)
        for a, b in zip(measured.jobs, none.jobs, strict=True):
            assert (a.id, a.release, a.epoch_times) == (b.id, b.release, b.epoch_times)


def test_a_suite_scenario_takes_the_energy_layers_as_generate_suite_does():
    """docs/model.md: the suite takes ``prices``, ``carbon_price``, ``idle`` and
    ``power_off`` as every generator does (campaign files refused them as unknown
    parameters); the instance is the one ``generate suite`` lays them on, and a bad
    value is refused when the file is read, naming the field."""
    name = "suite-share-3n6j-s2"
    text = f'policies=["sts"]\n[[scenarios]]\ngenerator="suite"\ninstances=["{name}"]\n'
    layers = 'prices="au-nsw-2023:17"\ncarbon_price=90.0\nidle="low"\npower_off="0.5,0.1"\n'
    inst = _parse(text + layers).scenarios[0].instance(0)
    want = suite_instance(name)
    want = lay_power_off(lay_idle(lay_prices(want, "au-nsw-2023:17", 90.0), "low"), "0.5,0.1")
    assert inst == want and inst.prices is not None and inst.power_off is not None
    assert _parse(text).scenarios[0].instance(0) == suite_instance(name)
    for bad, field in (
        ('idle="2,50"', "idle = '2,50'"),
        ("carbon_price=5.0", "carbon_price = 5.0: prices a carbon series"),
        ('power_off="soon"', "power_off = 'soon'"),
        ('prices="mars:1"', "prices = 'mars'"),
    ):
        with pytest.raises(CampaignError, match=field):
            _parse(text + bad)


def test_a_file_name_that_is_no_plain_name_gives_a_plain_campaign_name(tmp_path):
    path = tmp_path / "my rates (v2).toml"
    path.write_text('policies=["sts"]\n[[scenarios]]\ngenerator="synthetic"\njobs=3\nnodes=2')
    assert load_campaign(path).name == "my-rates-v2"


def test_bundled_campaigns_load():
    names = bundled_campaigns()
    assert {"thesis-rates", "thesis-realdata", "sharing", "bound", "seed-systems"} <= set(names)
    for name in names:
        assert load_campaign(name).runs()


def test_local_run_fills_the_store_and_a_rerun_skips_everything(tmp_path):
    c = _parse(SMALL)
    store = tmp_path / "s.sqlite"
    out = run_campaign(c, store, workers=2, progress=False)
    assert (out.total, out.skipped, out.ran, out.errors) == (12, 0, 12, ())
    again = run_campaign(c, store, workers=2, progress=False)
    assert (again.skipped, again.ran) == (12, 0)
    with Store(store) as s:
        runs = s.runs("small")
        assert len(runs) == 12 and (runs["status"] == "ok").all()
        key = runs["key"].iloc[0]
        assert len(s.jobs("small", key)) == 5
        inst, plan = s.plan_of("small", key)
        assert len(inst.jobs) == 5 and len(plan) > 0


def test_a_different_campaign_under_the_same_name_is_refused(tmp_path):
    store = tmp_path / "s.sqlite"
    run_campaign(_parse(SMALL), store, workers=1, progress=False)
    with pytest.raises(StoreError, match="different configuration") as err:
        run_campaign(_parse(SMALL.replace("seeds = 2", "seeds = 3")), store, progress=False)
    # the message says where (a comment changed counts: the files are compared as text)
    line = SMALL.splitlines().index("seeds = 2") + 1
    assert f"line {line}: 'seeds = 3', the store's 'seeds = 2'" in str(err.value)
    with pytest.raises(StoreError, match=r"has \d+ lines, the store's \d+"):
        run_campaign(_parse(SMALL + "\n# a note\n"), store, progress=False)


def test_failed_runs_are_recorded_with_their_error(tmp_path, capsys):
    # the rolling MILP needs slots; this instance has none
    cfg = tmp_path / "c.toml"
    cfg.write_text(SMALL.replace('["sts", "edf", "fifo"]', '["sts", "milp"]'))
    code = main(["campaign", str(cfg), "--store", str(tmp_path / "s.sqlite"), "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert "failed: synthetic[rate=high]/milp/seed=0: MilpError:" in err
    assert "has no slot length" in err
    with Store(tmp_path / "s.sqlite") as s:
        runs = s.runs()
    failed = runs[runs["status"] == "error"]
    assert set(failed["policy"]) == {"milp"} and len(failed) == 4
    assert failed["error"].str.contains("MilpError").all()
    assert (runs[runs["policy"] == "sts"]["status"] == "ok").all()


def _figures(store: Path) -> list[tuple]:
    with Store(store) as s:
        df = s.runs()
    cols = ["key", "energy_cost", "tardiness_cost", "total_cost", "missed", "utilisation"]
    return sorted(map(tuple, df[cols].itertuples(index=False)))


def test_dask_cluster_gives_the_same_results_as_local_processes(tmp_path):
    from distributed import LocalCluster

    cfg = tmp_path / "c.toml"
    cfg.write_text(SMALL)
    local, remote = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    assert main(["campaign", str(cfg), "--store", str(local), "--quiet"]) == 0
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        addr = cluster.scheduler_address
        assert addr.startswith("tcp://")
        args = ["campaign", str(cfg), "--store", str(remote), "--scheduler", addr, "--quiet"]
        assert main(args) == 0
    with Store(remote) as s:
        workers = set(s.runs()["worker"])
    assert len(workers) >= 1 and all(":" in w for w in workers)
    assert _figures(local) == _figures(remote)  # same seeds, same figures


def test_a_killed_campaign_resumes_and_loses_no_run(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        SMALL.replace("seeds = 2", "seeds = 6")
        .replace('["sts", "edf", "fifo"]', '["pr", "rg", "sts"]')
        .replace("jobs = 5", "jobs = 14")
    )
    store = tmp_path / "s.sqlite"
    total = 2 * 6 * 3
    cmd = [sys.executable, "-m", "experiments.cli", "campaign", str(cfg), "--store", str(store)]
    proc = subprocess.Popen(
        [*cmd, "--workers", "1", "--quiet"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def count() -> int:
        if not store.exists():
            return 0
        try:
            with sqlite3.connect(store) as conn:
                return conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        except sqlite3.OperationalError:  # tables not created yet
            return 0

    deadline = time.monotonic() + 120
    while count() < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the campaign and its worker processes
    proc.wait()
    before = count()
    assert 3 <= before < total, "kill the campaign while it runs"
    with Store(store) as s:
        kept = s.runs()[["key", "finished_at", "total_cost"]]

    done = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{before} were already in the store" in done.stdout
    with Store(store) as s:
        runs = s.runs()
    assert len(runs) == total and runs["key"].is_unique and (runs["status"] == "ok").all()
    # the runs finished before the kill are the same rows, not rerun
    merged = kept.merge(runs, on="key", suffixes=("", "_after"))
    assert (merged["finished_at"] == merged["finished_at_after"]).all()
    assert len(merged) == before


def test_a_scenario_the_generator_cannot_build_is_refused_before_running():
    text = (
        'policies=["sts"]\n[[scenarios]]\ngenerator="realdata"\njobs=60\n'
        "[scenarios.grid]\nstart=[0, 300]"
    )
    with pytest.raises(CampaignError, match=r"scenario realdata\[start=300\].*Philly jobs"):
        _parse(text)


def test_a_store_of_another_layout_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (key TEXT, campaign TEXT)")
    with pytest.raises(StoreError, match="another version of gpusched"):
        Store(path)
    (tmp_path / "junk.sqlite").write_text("not a database at all, just text " * 20)
    with pytest.raises(StoreError, match="not a gpusched results store"):
        Store(tmp_path / "junk.sqlite")


def test_the_philly_week_campaign_runs_a_window_on_a_dask_cluster(tmp_path):
    """The bundled campaign, its window cut to an hour and two seeds: the same figures
    on a real LocalCluster as in local processes."""
    from distributed import LocalCluster

    text = resources.files("experiments.campaigns").joinpath("philly-week.toml").read_text()
    line = 'generator = "philly-week"'
    assert line in text and "seeds = 5" in text
    cfg = tmp_path / "philly-week.toml"
    cfg.write_text(
        text.replace("seeds = 5", "seeds = 2").replace(line, f"{line}\nstart = 30.0\nhours = 1.0")
    )
    camp = load_campaign(cfg)
    assert len(camp.runs()) == 2 * 5
    local, remote = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    assert main(["campaign", str(cfg), "--store", str(local), "--quiet"]) == 0
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        args = ["campaign", str(cfg), "--store", str(remote), "--scheduler"]
        assert main([*args, cluster.scheduler_address, "--quiet"]) == 0
    assert _figures(local) == _figures(remote)
    with Store(remote) as s:
        runs = s.runs()
    assert set(runs["policy"]) == {"sts", "sts-full", "edf", "fifo", "static"}
    assert (runs["status"] == "ok").all() and (runs["jobs"] > 5).all()


def test_a_bad_trace_window_in_a_campaign_is_refused_before_any_run(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'name = "t"\npolicies = ["edf"]\nseeds = 1\n[[scenarios]]\ngenerator = "philly-week"\n'
        "hours = -2.0\n"
    )
    with pytest.raises(CampaignError, match=r"hours = -2\.0"):
        load_campaign(cfg)


def test_a_trace_scenario_reads_a_fit_file_relative_to_the_campaign(tmp_path, capsys):
    """``stops = "fit.json"`` in a trace scenario: the jobs stop as that fit says, as
    ``gpusched generate ... --stops`` gives them; a missing or broken fit, or one with
    another early-stopping family, is refused when the campaign is loaded."""
    from instances.generators.traces import TraceSpec, trace_instance

    fits = tmp_path / "fits"
    fits.mkdir()
    assert main(["fit-stops", "alibaba", "--recent", "72", "--out", str(fits / "f.json")]) == 0
    capsys.readouterr()
    head = 'name = "t"\npolicies = ["edf"]\nseeds = 1\n[[scenarios]]\ngenerator = "philly-week"\n'
    window = "hours = 2.0\n"
    cfg = tmp_path / "c.toml"
    cfg.write_text(head + window + 'stops = "fits/f.json"\n')
    (spec,) = load_campaign(cfg).runs()
    inst = spec.scenario.instance(0)
    plain = trace_instance(TraceSpec(hours=2.0), 0)
    assert [j.epoch_times for j in inst.jobs] == [j.epoch_times for j in plain.jobs]
    assert [j.distribution for j in inst.jobs] != [j.distribution for j in plain.jobs]
    cfg.write_text(head + window + 'grid = { stops = ["fits/f.json"] }\n')
    (gridded,) = load_campaign(cfg).runs()
    assert gridded.scenario.label == "philly-week[stops=f]"
    assert gridded.scenario.instance(0).jobs == inst.jobs
    for extra, field in (
        ('stops = "fits/none.json"\n', "stops"),
        ('stops = "fits/f.json"\nearly_stopping = "helios"\n', "stops"),
        ("stops = 3\n", "stops"),
    ):
        cfg.write_text(head + window + extra)
        with pytest.raises(CampaignError, match=field):
            load_campaign(cfg)
    (fits / "bad.json").write_text('{"classes": {}}')
    cfg.write_text(head + window + 'stops = "fits/bad.json"\n')
    with pytest.raises(CampaignError, match="classes"):
        load_campaign(cfg)


POLICY_TABLES = """
name = "options"
seeds = 1
[policies]
fifo = {}
sts = { reserve = 0.3, urgency = "slack" }
[[scenarios]]
generator = "synthetic"
nodes = 2
jobs = 4
"""


def test_policies_as_tables_carry_their_options_to_the_runs(tmp_path):
    c = _parse(POLICY_TABLES)
    assert c.policies == ("fifo", "sts")
    options = {r.policy: dict(r.options) for r in c.runs()}
    assert options == {"fifo": {}, "sts": {"reserve": 0.3, "urgency": "slack"}}
    out = run_campaign(c, tmp_path / "o.sqlite", workers=1, progress=False)
    assert out.errors == ()
    # the run used them: STS in the thesis's order costs what make_policy's does
    inst = c.scenarios[0].instance(0)
    want = simulate(inst, make_policy("sts", reserve=0.3, urgency="slack"), mode="sampled", seed=0)
    runs = Store(tmp_path / "o.sqlite").runs("options").set_index("policy")
    cost = evaluate(scenario_instance(inst, want.epochs), want.plan).total_cost
    assert runs.at["sts", "total_cost"] == pytest.approx(cost, rel=1e-12)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("sts = { resrve = 0.3 }", "policies.sts = {'resrve': 0.3}: policy 'sts': unknown option"),
        ("sts = { reserve = 2.0 }", "policies.sts = {'reserve': 2.0}: policy 'sts': reserve = 2.0"),
        ('sts = { urgency = "edd" }', "urgency = 'edd'"),
        ("sts = 3", "policies.sts = 3: give a table"),
        ("clairvoyant = { x = 1 }", "a reference takes no options"),
        ("nope = {}", "policies = 'nope': unknown policy"),
        # a file written before a rename names the policy's new name (docs/benchmarks.md)
        ("sts-incremental = {}", "policies = 'sts-incremental': now 'sts', which decides"),
    ],
)
def test_bad_policy_options_are_refused_naming_them(table, message):
    text = f"[policies]\n{table}\n[[scenarios]]\ngenerator = 'synthetic'\n"
    with pytest.raises(CampaignError) as err:
        _parse(text)
    assert message in str(err.value)


def test_a_resume_after_the_instance_file_changed_is_refused(tmp_path):
    """The campaign's text names the file, not its contents: a resume after an edit
    put runs of two different instances side by side in one report (found by a probe
    of interrupted campaigns, 2026-12-04)."""
    from instances import read_instance, write_instance
    from instances.bundled import bundled

    write_instance(bundled("tiny"), tmp_path / "t.json")
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'name = "e"\npolicies = ["fifo", "edf"]\nseeds = 1\n\n[[scenarios]]\n'
        'name = "f"\ngenerator = "file"\npath = "t.json"\n'
    )
    store = tmp_path / "s.sqlite"
    run_campaign(load_campaign(cfg), store, workers=1, progress=False)
    with sqlite3.connect(store) as conn:  # as if interrupted before the edf run
        conn.execute("DELETE FROM runs WHERE policy = 'edf'")
        conn.execute("DELETE FROM jobs WHERE key LIKE '%/edf/%'")
    inst = read_instance(tmp_path / "t.json")
    write_instance(inst.replace(energy_price=2.0), tmp_path / "t.json")
    with pytest.raises(CampaignError, match=r"f\.path = .*t\.json': the file changed since"):
        run_campaign(load_campaign(cfg), store, workers=1, progress=False)
    write_instance(inst, tmp_path / "t.json")  # restored: the resume goes on
    out = run_campaign(load_campaign(cfg), store, workers=1, progress=False)
    assert (out.skipped, out.ran) == (1, 1)


def _tiny_campaign(tmp_path: Path) -> Path:
    from instances import write_instance
    from instances.bundled import bundled

    write_instance(bundled("tiny"), tmp_path / "t.json")
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'name = "e"\npolicies = ["fifo", "edf"]\nseeds = 1\n\n[[scenarios]]\n'
        'name = "f"\ngenerator = "file"\npath = "t.json"\n'
    )
    return cfg


def test_the_header_follows_the_stores_checks_and_counts_what_is_left(tmp_path, capsys):
    """A refused resume announced the whole campaign's runs first ('2 runs into ...'),
    then refused; the header now comes once the store has taken the campaign, and says
    how many runs it already holds."""
    from instances import read_instance, write_instance

    cfg, store = _tiny_campaign(tmp_path), tmp_path / "s.sqlite"
    args = ["campaign", str(cfg), "--store", str(store), "--quiet", "--workers", "1"]
    assert main(args) == 0
    assert "campaign 'e': 2 of 2 runs into" in capsys.readouterr().out
    with sqlite3.connect(store) as conn:  # as if interrupted before the edf run
        conn.execute("DELETE FROM runs WHERE policy = 'edf'")
    inst = read_instance(tmp_path / "t.json")
    write_instance(inst.replace(energy_price=2.0), tmp_path / "t.json")
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert "the file changed since" in err and "runs into" not in out
    write_instance(inst, tmp_path / "t.json")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "campaign 'e': 1 of 2 runs into" in out and "(1 already there)" in out


@pytest.mark.parametrize(
    ("delete", "said"),
    [(False, "all 2 runs are in the store"), (True, "the same command resumes it")],
)
def test_a_signal_after_the_last_run_does_not_ask_for_a_resume(
    tmp_path, capsys, monkeypatch, delete, said
):
    """SIGTERM that came after the last run was saved said 'the same command resumes
    it', which would have had nothing to do."""
    import experiments.runner
    from experiments.cli.campaign import _Signalled

    cfg, store = _tiny_campaign(tmp_path), tmp_path / "s.sqlite"
    args = ["campaign", str(cfg), "--store", str(store), "--quiet", "--workers", "1"]
    assert main(args) == 0
    if delete:
        with sqlite3.connect(store) as conn:
            conn.execute("DELETE FROM runs WHERE policy = 'edf'")
    real = experiments.runner.run_campaign

    def stopped(*a, **kw):  # at the end of the runs, or before the one left
        if not delete:
            real(*a, **kw)
        raise _Signalled(signal.SIGTERM)

    monkeypatch.setattr(experiments.runner, "run_campaign", stopped)
    capsys.readouterr()
    assert main(args) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert f"'e' stopped by SIGTERM; {said}" in err, err


def test_an_empty_store_path_is_refused(tmp_path, capsys, monkeypatch):
    """``--store ''`` ran into NAME.sqlite in the current folder and said nothing."""
    cfg = _tiny_campaign(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(SystemExit):
        main(["campaign", str(cfg), "--store", "", "--quiet", "--workers", "1"])
    assert "--store: expected a file or folder path, got ''" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
