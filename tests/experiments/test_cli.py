import json
import os

import pytest

from experiments.cli import main
from instances import read_instance, read_plan
from instances.bundled import bundled
from tests.conftest import DATA
from validation.evaluate import evaluate


def test_demo_prints_the_cost_table(capsys):
    assert main(["demo", "tiny", "--mc", "200"]) == 0
    out = capsys.readouterr().out
    assert "TOTAL" in out and "missed due dates" in out and "contains the exact" in out


def test_generate_solve_evaluate_round_trip(tmp_path, capsys):
    inst = tmp_path / "i.json"
    plan = tmp_path / "p.json"
    assert (
        main(
            [
                "generate",
                "synthetic",
                "--nodes",
                "3",
                "--jobs",
                "6",
                "--seed",
                "2",
                "--out",
                str(inst),
            ]
        )
        == 0
    )
    assert main(["solve", str(inst), "--policy", "fifo", "--out", str(plan)]) == 0
    solved = capsys.readouterr().out
    assert main(["evaluate", str(inst), str(plan)]) == 0
    evaluated = capsys.readouterr().out
    # the same table, from the same evaluator
    assert solved.split("TOTAL")[1].split("\n")[0] == evaluated.split("TOTAL")[1].split("\n")[0]
    assert json.loads(plan.read_text())["policy"] == "fifo"
    assert len(read_plan(plan)) > 0


def test_generate_synthetic_with_the_thesis_calibration(tmp_path, capsys):
    from instances.generators import SyntheticSpec, synthetic

    args = ["generate", "synthetic", "--nodes", "3", "--jobs", "6", "--seed", "2"]
    out = tmp_path / "c.json"
    assert main([*args, "--calibration", "thesis-peak", "--out", str(out)]) == 0
    spec = SyntheticSpec(nodes=3, jobs=6, calibration="thesis-peak")
    assert read_instance(out) == synthetic(spec, seed=2, name=read_instance(out).name)
    with pytest.raises(SystemExit) as exc:
        main([*args, "--calibration", "thesis", "--out", str(tmp_path / "t.json")])
    assert exc.value.code == 2 and "--calibration" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def test_generate_synergy_writes_its_setting_and_refuses_a_bad_rate(tmp_path, capsys):
    out = tmp_path / "s.json"
    args = ["generate", "synergy", "--nodes", "2", "--jobs", "5", "--seed", "1"]
    assert main([*args, "--shape", "alibaba", "--out", str(out)]) == 0
    inst = read_instance(out)
    assert all(n.cpu_cores == 96 and n.dram_gb == 768.0 for n in inst.nodes)
    assert all(c.cpus for j in inst.jobs for c in j.epoch_times)
    assert main(["solve", str(out), "--policy", "synergy"]) == 0
    assert "TOTAL" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main([*args, "--jobs-per-hour", "nan", "--out", str(tmp_path / "t.json")])
    assert exc.value.code == 2
    assert "--jobs-per-hour" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def test_generate_liquid_writes_a_topology_that_liquid_solves_and_the_milp_refuses(
    tmp_path, capsys
):
    out = tmp_path / "q.json"
    assert main(["generate", "liquid", "--jobs", "6", "--seed", "2", "--out", str(out)]) == 0
    inst = read_instance(out)
    assert inst.topology is not None and len(inst.topology.racks) == 4
    assert any(c.distributed for j in inst.jobs for c in j.epoch_times)
    for policy in ("liquid", "first-fit"):
        assert main(["solve", str(out), "--policy", policy]) == 0
        assert "TOTAL" in capsys.readouterr().out
    report = tmp_path / "gap"
    assert main(["gap", str(out), "--slot", "0.25", "--time-limit", "5", "--out", str(report)]) == 2
    err = capsys.readouterr().err
    assert "distributed configurations" in err and "Traceback" not in err


def test_bad_instance_is_a_clean_error(capsys):
    assert main(["solve", str(DATA / "due_before_release.json")]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].due = 3.0" in err and "Traceback" not in err


def test_infeasible_plan_is_a_clean_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "format": "gpusched-plan/1",
                "segments": [
                    {
                        "job": "a",
                        "start": 0,
                        "end": 1,
                        "config": {"gpu_type": "v100"},
                        "gpus": [["nowhere", 0]],
                    }
                ],
            }
        )
    )
    assert main(["evaluate", str(DATA / "base.json"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "unknown node 'nowhere'" in err


def test_compare_lists_every_policy(capsys):
    from heuristic.core.registry import policy_names

    assert main(["compare", "small"]) == 0
    out = capsys.readouterr().out
    for name in policy_names():
        assert f"\n{name} " in out
    assert "total_cost" in out and "missed" in out


def test_online_prints_one_row_per_policy_with_realised_costs(capsys):
    from instances.bundled import bundled
    from validation.online import run_online

    assert main(["online", "small", "--policy", "sts,edf", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "stops of seed 4" in out
    sts = run_online(bundled("small"), "sts", seed=4).summary()["total_cost"]
    row = next(line for line in out.splitlines() if line.startswith("sts "))
    assert f"{sts:.4g}" in row


def test_online_refuses_a_policy_named_twice_before_any_run(capsys):
    # the table has one row per name: the second run's figures were lost without a word
    assert main(["online", "tiny", "--policy", "edf,fifo,edf", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "--policy: 'edf' named more than once" in captured.err
    assert captured.out == "" and "Traceback" not in captured.err


@pytest.mark.parametrize("command", ["online", "solve", "compare", "demo", "bound", "improve"])
def test_a_seed_past_32_bits_is_refused_by_name_before_any_run(command, capsys):
    """``liquid-forest`` passed a seed of 2**32 to scikit-learn, whose refusal came as
    a traceback after the other policies had run (a hostile-input hunt, 2026-12-07);
    every command's seed now has the campaign file's bound."""
    with pytest.raises(SystemExit) as exc:
        main([command, "tiny", "--seed", str(2**32)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"--seed: expected a seed from 0 to {2**32 - 1}, got {2**32}" in err
    assert "Traceback" not in err


def test_the_largest_seed_runs_the_forest(capsys):
    assert main(["online", "tiny", "--policy", "liquid-forest", "--seed", str(2**32 - 1)]) == 0
    assert "liquid-forest" in capsys.readouterr().out


def test_a_plan_made_for_another_instance_is_refused_naming_both(tmp_path, capsys):
    # seed 0's plan fits seed 1's instance (the same ids) but its due dates and stops
    # differ: it used to be costed there without a word
    files = {}
    for seed in (0, 1):
        files[seed] = str(tmp_path / f"s{seed}.json")
        args = ["generate", "synthetic", "--nodes", "2", "--jobs", "4", "--seed", str(seed)]
        assert main([*args, "--out", files[seed]]) == 0
    plan = str(tmp_path / "p.json")
    assert main(["solve", files[0], "--policy", "sts", "--out", plan]) == 0
    capsys.readouterr()
    assert main(["evaluate", files[0], plan]) == 0
    assert main(["evaluate", files[1], plan]) == 2
    err = capsys.readouterr().err
    assert "instance = 'synthetic-exponential-2n4j-s0': the plan was made for" in err
    assert "not for 'synthetic-exponential-2n4j-s1'" in err and "Traceback" not in err
    assert main(["improve", files[1], "--plan", plan, "--time-limit", "1", "--quiet"]) == 2
    assert "the plan was made for that instance" in capsys.readouterr().err


def test_improve_writes_a_plan_the_evaluator_accepts_and_prints_certified_gaps(tmp_path, capsys):
    plan = tmp_path / "improved.json"
    args = ["improve", "tiny", "--time-limit", "5", "--quiet", "--search-evaluations", "10"]
    assert main([*args, "--out", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "certified gap" in out and "lower bound" in out and "improved" in out
    improved = float(out.split("improved")[1].split()[0])
    cost = evaluate(bundled("tiny"), read_plan(plan)).total_cost
    assert float(f"{cost:.6g}") == improved
    assert json.loads(plan.read_text())["policy"] == "improve"


def test_improve_by_column_generation_writes_a_plan_and_certifies_it(tmp_path, capsys):
    """``--method colgen``: branch-and-price from tuned STS on the bundled tiny instance
    proves its plan optimal; the plan file is the evaluator's figure."""
    plan = tmp_path / "colgen.json"
    args = ["improve", "tiny", "--method", "colgen", "--time-limit", "20"]
    assert main([*args, "--search-evaluations", "10", "--out", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "certified gap 0.0%" in out and "status          optimal" in out
    objective = float(out.split("objective")[1].split()[0])
    cost = evaluate(bundled("tiny"), read_plan(plan)).total_cost
    assert float(f"{cost:.6g}") == objective
    assert json.loads(plan.read_text())["policy"] == "colgen"


def test_improve_by_column_generation_under_a_price_series(tmp_path, capsys):
    """``--method colgen`` on an instance under the bundled series (its evening peak
    first): branch-and-price prices each slot at its own price and proves the compact
    MILP's optimum; the plan file is the evaluator's figure under the series."""
    from instances import write_instance
    from instances.generators.prices import lay_prices
    from instances.generators.suite import suite_instance
    from milp import solve as milp_solve

    path = tmp_path / "priced.json"
    write_instance(lay_prices(suite_instance("suite-share-2n4j-s1"), "au-nsw-2023:17"), path)
    inst = read_instance(path)
    plan = tmp_path / "colgen.json"
    args = ["improve", str(path), "--method", "colgen", "--time-limit", "60"]
    assert main([*args, "--search-evaluations", "10", "--out", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "certified gap 0.0%" in out and "status          optimal" in out
    cost = evaluate(inst, read_plan(plan)).total_cost
    assert float(f"{cost:.6g}") == float(out.split("objective")[1].split()[0])
    slots = int(out.split(" slots,")[0].split()[-1])  # the horizon it solved over
    exact = milp_solve(inst, slots=slots, time_limit=60)
    assert exact.optimal and cost == pytest.approx(exact.objective, rel=1e-6)


def test_improve_from_a_plan_that_does_not_fit_is_a_clean_error(tmp_path, capsys):
    plan = tmp_path / "p.json"
    assert main(["solve", "tiny", "--policy", "fifo", "--out", str(plan)]) == 0
    doc = json.loads(plan.read_text())
    doc["segments"] = doc["segments"][1:]  # a job left short of its epochs
    plan.write_text(json.dumps(doc))
    capsys.readouterr()
    out = tmp_path / "never.json"
    assert main(["improve", "tiny", "--plan", str(plan), "--quiet", "--out", str(out)]) == 2
    assert "initial plan is infeasible" in capsys.readouterr().err
    assert not out.exists()


def test_generate_a_trace_window_and_replay_it_online(tmp_path, capsys):
    out = tmp_path / "w.json.gz"
    args = ["generate", "philly-week", "--start", "30", "--hours", "1", "--out", str(out)]
    assert main(args) == 0
    assert "552 nodes" in capsys.readouterr().out
    assert main(["online", str(out), "--policy", "edf,sts", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "edf" in text and "sts" in text and "peak_jobs" in text
    assert main(["generate", "alibaba", "--start", "3200", "--hours", "1", "--out", str(out)]) == 0
    assert "1213 nodes" in capsys.readouterr().out


def test_online_shows_a_progress_bar_over_the_jobs(capsys):
    assert main(["online", "tiny", "--policy", "edf"]) == 0
    err = capsys.readouterr().err
    assert "edf" in err and "3/3" in err


def test_fit_stops(tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert main(["fit-stops", "alibaba", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "6203 jobs" in text and "1 GPU" in text and "2+ GPUs" in text
    assert json.loads(out.read_text())["classes"]["1 GPU"]["jobs"]["complete"] == 4284
    assert main(["fit-stops", "philly"]) == 2
    assert "records no job status" in capsys.readouterr().err
    bad = tmp_path / "h.csv"
    bad.write_text("hours,status,gpus\n1,finished?,1\n")
    assert main(["fit-stops", str(bad)]) == 2
    assert "rows[0].status" in capsys.readouterr().err


def test_fit_stops_recent_fits_only_the_last_hours(tmp_path, capsys):
    """``--recent H`` keeps the jobs created in the history's last H hours: on a CSV,
    by its ``created`` column (the old job that stopped early is left out, so the fit
    says every job completes); without that column, or with H not positive, the error
    names what is wrong and nothing is written."""
    hist = tmp_path / "h.csv"
    rows = ["hours,status,gpus,created", "2,Killed,1,0"]
    rows += [f"{h},Pass,1,{100 + h}" for h in (1, 2, 3, 4)]
    hist.write_text("\n".join(rows) + "\n")
    out = tmp_path / "fit.json"
    assert main(["fit-stops", str(hist), "--recent", "24", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "h.csv (last 24 h): 4 jobs" in text
    assert json.loads(out.read_text())["classes"]["1 GPU"]["jobs"] == {
        "complete": 4,
        "stopped": 0,
        "censored": 0,
    }
    assert main(["fit-stops", str(hist)]) == 0
    assert "5 jobs" in capsys.readouterr().out
    plain = tmp_path / "plain.csv"
    plain.write_text("hours,status,gpus\n1,Pass,1\n")
    other = tmp_path / "other.json"
    assert main(["fit-stops", str(plain), "--recent", "24", "--out", str(other)]) == 2
    assert "column created" in capsys.readouterr().err
    for bad in ("0", "nan", "-3"):
        assert main(["fit-stops", "alibaba", "--recent", bad, "--out", str(other)]) == 2
        assert "recent = " in capsys.readouterr().err
    assert not other.exists()
    # the bundled trace's last 168 hours: fewer jobs than the whole trace
    assert main(["fit-stops", "alibaba", "--recent", "168"]) == 0
    assert "last 168 h): 1676 jobs" in capsys.readouterr().out


def test_generate_a_trace_with_a_fit_from_a_file(tmp_path, capsys):
    """``--stops`` reads what ``fit-stops --out`` wrote: the jobs stop as that fit says,
    and nothing else about them changes."""
    from instances.generators.stops_fit import read_fit

    fit = tmp_path / "fit.json"
    assert main(["fit-stops", "alibaba", "--running", "stopped", "--out", str(fit)]) == 0
    window = ["generate", "philly-week", "--start", "30", "--hours", "2"]
    mine, default = tmp_path / "mine.json", tmp_path / "default.json"
    assert main([*window, "--stops", str(fit), "--out", str(mine)]) == 0
    assert main([*window, "--out", str(default)]) == 0
    a, b = read_instance(mine), read_instance(default)
    assert [(j.id, j.due, j.max_epochs) for j in a.jobs] == [
        (j.id, j.due, j.max_epochs) for j in b.jobs
    ]
    read = read_fit(fit)
    for job in a.jobs:
        want = read.for_gpus(job.requested.gpus).distribution(int(job.max_epochs), 5)
        assert job.distribution.probabilities == pytest.approx(want.probabilities, abs=1e-12)
    assert any(x.distribution != y.distribution for x, y in zip(a.jobs, b.jobs, strict=True))
    capsys.readouterr()
    # a broken fit is refused by field, and nothing is written
    doc = json.loads(fit.read_text())
    doc["classes"]["1 GPU"]["plan_mass"] = [2.0]
    fit.write_text(json.dumps(doc))
    out = tmp_path / "never.json"
    assert main([*window, "--stops", str(fit), "--out", str(out)]) == 2
    assert "classes.1 GPU.plan_mass" in capsys.readouterr().err
    assert not out.exists()
    # only the traces read a fit, and only with fitted early stopping
    assert main(["generate", "synthetic", "--stops", str(fit), "--out", str(out)]) == 2
    assert "--stops: only philly-week and alibaba" in capsys.readouterr().err
    uniform = [*window, "--early-stopping", "uniform", "--stops", str(fit), "--out", str(out)]
    assert main(uniform) == 2
    assert "a fit is read only with early_stopping = 'fitted'" in capsys.readouterr().err
    assert not out.exists()


def test_generate_refuses_a_fractional_realdata_start(tmp_path, capsys):
    assert main(["generate", "realdata", "--start", "1.5", "--out", str(tmp_path / "x")]) == 2
    assert "whole job index" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "tiny", "--policy", "sts-incremental"],
        ["demo", "tiny", "--policy", "sts-incremental"],
        ["online", "tiny", "--policy", "fifo,sts-incremental", "--quiet"],
    ],
)
def test_a_retired_policy_name_is_refused_naming_its_new_one(argv, capsys):
    """argparse's ``choices`` said only "invalid choice" for a name the docs and older
    scripts use (found by a check of the docs, 2026-12-05)."""

    def refused(args: list[str]) -> str:
        try:  # argparse exits (solve, demo); online's own check returns
            code = main(args)
        except SystemExit as exc:
            code = exc.code
        assert code == 2
        return capsys.readouterr().err

    err = refused(argv)
    assert "policy 'sts-incremental' is now 'sts', which decides incrementally" in err
    assert "unknown policy 'nope'; known: fifo, edf" in refused([*argv[:3], "nope"])


def test_solve_takes_policy_options_and_refuses_a_bad_one(capsys):
    assert main(["solve", "tiny", "--policy", "sts", "--option", "reserve=0.3"]) == 0
    assert "total" in capsys.readouterr().out
    assert main(["solve", "tiny", "--policy", "sts", "--option", "reserv=0.3"]) == 2
    err = capsys.readouterr().err
    options = (
        "lookahead, reserve, lead_hours, book_parts, urgency, work_share, scale_work, backfill,"
        " backfill_ahead, unstick, pull, pull_needed, pull_holds, timing, fine_shares,"
        " margin_recovers, loose_window, late_for_price, power_states, plan_boots,"
        " idle_tail, spare, stay_put, capped, displace_cost, mixed_types, shared_slots,"
        " full_below, calm_hours, alternative, rollout_below, rollout_quantile,"
        " weigh_sharing, burst_jobs, weigh_greedy, greedy_yields"
    )
    assert f"policy 'sts': unknown option 'reserv' (options: {options})" in err
    assert "Traceback" not in err
    code = main(
        ["solve", "tiny", "--policy", "sts", "--option", "reserve=1", "--option", "reserve=0"]
    )
    assert code == 2
    assert "--option: reserve is given twice" in capsys.readouterr().err


def test_generate_suite_writes_all_or_nothing(tmp_path, capsys):
    # a target that cannot be written (here a folder in its place) leaves no part of
    # the set; it once left the 23 instances written before it
    out = tmp_path / "suite"
    (out / "suite-excl-4n10j-s2.json").mkdir(parents=True)
    assert main(["generate", "suite", "--out", str(out)]) == 2
    assert "suite-excl-4n10j-s2.json: is a directory" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["suite-excl-4n10j-s2.json"]
    # a write that fails half-way into a folder made for it leaves no folder behind
    import experiments.cli.generate as generate

    written = []

    def failing(inst, path):
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        written.append(path)
        path.write_text("{}")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(generate, "write_instance", failing)
        assert main(["generate", "suite", "--out", str(tmp_path / "new" / "suite")]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert len(written) == 3 and not (tmp_path / "new").exists()
    # the carbon price is named as for every other kind
    args = ["generate", "suite", "--prices", "au-nsw-2023", "--carbon-price", "2e6"]
    assert main([*args, "--out", str(tmp_path / "c")]) == 2
    assert "--carbon-price: carbon_price = 2000000.0: must be in [0, 1e+06]" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "c").exists()


def test_generate_refuses_an_empty_name(tmp_path, capsys):
    args = ["generate", "synthetic", "--nodes", "2", "--jobs", "3", "--name", " "]
    assert main([*args, "--out", str(tmp_path / "x.json")]) == 2
    assert "--name: ' ' is empty" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_generate_suite_reads_relaunch_and_slot(tmp_path, capsys):
    """``generate suite --relaunch none`` writes the suite without overheads (it once
    wrote the default suite byte for byte); ``measured`` gives every instance its
    measured ones; without the option each half keeps its own."""
    from instances.generators.suite import milp_suite

    written = {}
    for mode in ("none", "measured", None):
        out = tmp_path / str(mode)
        extra = [] if mode is None else ["--relaunch", mode]
        assert main(["generate", "suite", *extra, "--out", str(out)]) == 0
        written[mode] = {p.name: read_instance(p) for p in sorted(out.iterdir())}
    assert len(written["none"]) == 24
    assert all(j.relaunch_hours is None for i in written["none"].values() for j in i.jobs)
    assert all(j.relaunch_hours for i in written["measured"].values() for j in i.jobs)
    assert written[None] == {f"{i.name}.json": i for i in milp_suite()}
    half = [n for n, i in written[None].items() if i.jobs[0].relaunch_hours]
    assert len(half) == 12 and all(n.endswith("-s2.json") for n in half)
    slotted = tmp_path / "slot"
    assert main(["generate", "suite", "--slot", "0.5", "--out", str(slotted)]) == 0
    assert {read_instance(p).slot for p in slotted.iterdir()} == {0.5}
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["suite", "--nodes", "3"], "--nodes: only synthetic, realdata, synergy, philly-week and "),
        (["suite", "--seed", "3"], "--seed: only synthetic, "),
        (["liquid", "--shape", "alibaba"], "--shape: only synergy read it, not liquid"),
        (["synergy", "--no-sharing"], "--no-sharing: only synthetic, realdata, liquid, "),
        (["synthetic", "--slot", "0"], "--slot: slot = 0.0: must be in [0.001, 1000]"),
        (["philly-week", "--start", "1e6"], "--start: start = 1000000.0: must be in [0, 100000]"),
    ],
)
def test_generate_refuses_an_option_its_kind_does_not_read_or_a_bad_value(
    tmp_path, capsys, argv, message
):
    out = tmp_path / "x"
    assert main(["generate", *argv, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_generate_and_campaigns_read_one_generator_table():
    """Every generator of the table is a kind of ``generate`` and a campaign generator,
    and every option ``generate`` maps sets a field of that generator's spec."""
    from pathlib import Path

    from experiments.campaign import parse_campaign
    from experiments.cli.generate import READS, SUITE
    from instances.generators import GENERATORS, GeneratorSpec

    assert set(READS) == {*GENERATORS, SUITE}
    for name, gen in GENERATORS.items():
        assert issubclass(gen.spec, GeneratorSpec)
        assert {f for f in READS[name].values() if f} <= set(gen.fields)
        text = f'policies = ["fifo"]\n[[scenarios]]\ngenerator = "{name}"\n'
        (scenario,) = parse_campaign(text, base=Path("."), default_name="t").scenarios
        assert scenario.generator == name


def test_generate_a_trace_on_a_cluster_at_a_load(tmp_path, capsys):
    from instances.generators import GENERATORS
    from instances.generators.clusters import instance_load

    out = tmp_path / "c.json"
    window = ["--start", "24", "--hours", "6", "--seed", "1"]
    args = ["generate", "philly-week", *window, "--cluster", "k80x4:2,p100x4:2,v100x8:2"]
    assert main([*args, "--load", "0.8", "--out", str(out)]) == 0
    inst = read_instance(out)
    params = {"start": 24.0, "hours": 6.0, "cluster": "k80x4:2,p100x4:2,v100x8:2", "load": 0.8}
    assert inst == GENERATORS["philly-week"].instance(params, 1, inst.name)
    assert instance_load(inst) == pytest.approx(0.8, rel=1e-4)
    assert sum(n.num_gpus for n in inst.nodes) == 32
    for bad, option in (
        (["--cluster", "k80x4"], "--cluster"),
        (["--cluster", "a100x8:2"], "--cluster"),
        (["--nodes", "4", "--cluster", "v100x8:1"], "--cluster"),
        (["--load", "0.5", "--time-scale", "2"], "--load"),
    ):
        try:  # argparse's own refusals exit, the command's return 2
            code = main(
                ["generate", "philly-week", *window, *bad, "--out", str(tmp_path / "t.json")]
            )
        except SystemExit as exc:
            code = exc.code
        assert code == 2 and option in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
    # realdata reads the whole week, and only realdata reads --source
    week = tmp_path / "w.json"
    argv = ["generate", "realdata", "--source", "week", "--start", "3000", "--jobs", "30"]
    assert main([*argv, "--out", str(week)]) == 0
    assert read_instance(week).jobs[0].id == "p3000"
    code = main(["generate", "synthetic", "--source", "week", "--out", str(tmp_path / "t.json")])
    assert code == 2 and "--source: only realdata read it" in capsys.readouterr().err
    # of three options it does not read, the first by name, in every process (it was
    # the first in a set's order, which the hash seed sets)
    argv = ["generate", "synthetic", "--source", "day", "--shape", "synergy", "--hours", "3"]
    assert main([*argv, "--out", str(tmp_path / "t.json")]) == 2
    assert "--hours: only philly-week and alibaba read it" in capsys.readouterr().err


def test_a_bad_highs_thread_count_stops_the_command_before_it_writes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPUSCHED_HIGHS_THREADS", "many")
    out = tmp_path / "plan.json"
    assert main(["solve", "tiny", "--policy", "fifo", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "GPUSCHED_HIGHS_THREADS" in err and "'many'" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "tiny", "--mc", "100000000000"],
        ["demo", "tiny", "--mc", "100001"],
        ["campaign", "tiny-never-read", "--scheduler", "bogus"],
        ["campaign", "tiny-never-read", "--scheduler", ""],
        ["campaign", "tiny-never-read", "--scheduler", "ftp://host:1"],
        ["campaign", "tiny-never-read", "--scheduler", "tcp://[::1"],
        ["campaign", "tiny-never-read", "--scheduler", "inproc://x"],
        ["campaign", "tiny-never-read", "--workers", "100000"],
        ["bound", "tiny", "--time-limit", "1e300"],
        ["solve", "tiny", "--out", ""],  # wrote nothing and said nothing
        ["report", "none.sqlite", "--out", " "],
    ],
)
def test_values_no_run_can_use_are_usage_errors_before_any_work(
    argv, tmp_path, capsys, monkeypatch
):
    """Monte Carlo scenarios past the cap (an array per scenario: 1e11 asked for 745 GiB),
    a scheduler address Dask cannot parse and an empty output path are refused by
    argparse, naming the value, before any file is read or any store made."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert repr(argv[-1]) in err or f"got {argv[-1]}" in err
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["improve", "{i}", "--out", "{d}/nodir/x.json"], "its folder"),
        (["solve", "{i}", "--policy", "fifo", "--out", "{d}"], "is a folder, not a file"),
        (["report", "{d}/none.sqlite", "--out", "{d}"], "is a folder, not a file"),
        (["gap", "{i}", "--out", "{d}/afile"], "is a file, not a folder"),
        (["gap", "{i}", "--out", "{d}/afile/sub"], "is a file, not a folder"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_work(tmp_path, capsys, argv, said):
    """Refused by the argument parser, not after minutes of solves whose results were
    then lost (a hostile-input hunt); nothing is written."""
    (tmp_path / "afile").write_text("mine")
    before = sorted(tmp_path.rglob("*"))
    args = [a.format(i=DATA / "base.json", d=tmp_path) for a in argv]
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2 and said in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before and (tmp_path / "afile").read_text() == "mine"


def test_generate_out_that_is_a_folder_or_cannot_be_written_names_it(tmp_path, capsys):
    """``generate KIND --out FOLDER`` said only ``FOLDER: Is a directory``, and a write
    that failed on a device (``/dev/full``) named no file (a hostile-input review,
    2026-12-07): now the option or the file is named, and nothing is written."""
    args = ["generate", "synthetic", "--nodes", "2", "--jobs", "2", "--out"]
    assert main([*args, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--out: {str(tmp_path)!r} is a folder, not a file" in err
    assert list(tmp_path.iterdir()) == []
    if os.path.exists("/dev/full"):  # Linux's always-full device
        assert main([*args, "/dev/full"]) == 2
        assert "/dev/full: No space left on device" in capsys.readouterr().err


def test_out_naming_a_file_the_command_reads_is_refused_and_the_file_kept(tmp_path, capsys):
    """``solve i.json --out i.json`` replaced the instance with the plan (and
    ``improve``, ``fit-stops`` and ``generate --stops`` their inputs the same way): now
    refused before any work, through another spelling or a link too."""
    inst = tmp_path / "i.json"
    inst.write_text((DATA / "base.json").read_text())
    (tmp_path / "link.json").symlink_to(inst)
    before = inst.read_bytes()
    fit = tmp_path / "fit.json"
    assert main(["fit-stops", "alibaba", "--out", str(fit)]) == 0
    fitted = fit.read_bytes()
    capsys.readouterr()
    calls = [
        (["solve", str(inst), "--policy", "fifo", "--out", str(inst)], "instance"),
        (
            ["solve", str(tmp_path / "link.json"), "--out", str(tmp_path / "." / "i.json")],
            "instance",
        ),
        (["improve", str(inst), "--slot", "0.5", "--out", str(inst)], "instance"),
        (
            ["generate", "philly-week", "--hours", "1", "--stops", str(fit), "--out", str(fit)],
            "stops",
        ),
        (["fit-stops", str(inst), "--out", str(inst)], "trace"),
    ]
    for argv, what in calls:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"is the {what} read (" in err and "name another file" in err, err
    assert inst.read_bytes() == before and fit.read_bytes() == fitted
