"""Early stopping fitted from history: the competing-risks Kaplan-Meier fit."""

import json
import math

import numpy as np
import pytest

from instances import InstanceError
from instances.generators.histories import History, alibaba_history, csv_history
from instances.generators.stops_fit import CLASSES, StopsFit, bundled_fit, fit_stops


def history(rows, source="test"):
    hours, status, gpus = zip(*rows, strict=True)
    return History(np.array(hours, float), np.array(status), np.array(gpus), source)


def test_a_hand_computed_fit():
    """One job completes at 2 h, one stops at 1 h (x 10 each, to fill the class). L is
    2 h surely; X stops half the jobs at 1 h: P(F > f) = 1 below 1/2, 1/2 from it."""
    fit = fit_stops(history([(2.0, "complete", 1), (1.0, "stopped", 1)] * 10))
    c = fit.for_gpus(1)
    assert c.plan_hours == (2.0,) and c.plan_mass == pytest.approx((1.0,))
    assert c.beyond(0.0) == 1.0 and c.beyond(0.49) == 1.0
    assert c.beyond(0.5) == pytest.approx(0.5) and c.completion() == pytest.approx(0.5)
    d = c.distribution(4, 4)  # checkpoints 1, 2, 3, 4 epochs
    assert d.stops == (1.0, 2.0, 3.0, 4.0)
    assert d.probabilities == pytest.approx((0.0, 0.5, 0.0, 0.5))


def test_no_stop_ever_means_every_job_runs_to_its_end():
    fit = fit_stops(history([(h, "complete", 1) for h in (1.0, 2.0, 3.0)] * 10))
    d = fit.for_gpus(1).distribution(10, 5)
    assert d.probabilities[-1] == pytest.approx(1.0)


def test_the_fit_recovers_known_latent_times_under_censoring():
    """Plans of 1, 2 or 4 h, exponential stopping (mean 3 h), uniform censoring: the
    fit's P(F > f) matches E_L[exp(-f L / 3)] (a wrong censoring rule misses it)."""
    rng = np.random.default_rng(5)
    n = 6000
    plan = rng.choice([1.0, 2.0, 4.0], size=n)
    stop = rng.exponential(3.0, size=n)
    cut = rng.uniform(0.0, 8.0, size=n)
    ran = np.minimum(np.minimum(plan, stop), cut)
    status = np.where(
        cut < np.minimum(plan, stop), "censored", np.where(plan <= stop, "complete", "stopped")
    )
    fit = fit_stops(History(ran, status, np.ones(n, int), "synthetic"))
    c = fit.for_gpus(1)
    for f in (0.2, 0.5, 0.8):
        truth = np.mean([math.exp(-f * L / 3.0) for L in (1.0, 2.0, 4.0)])
        assert c.beyond(f) == pytest.approx(truth, abs=0.03)
    assert c.completion() == pytest.approx(
        np.mean([math.exp(-L / 3.0) for L in (1.0, 2.0, 4.0)]), abs=0.03
    )
    # ignoring the censoring (reading a cut job as completed) is visibly wrong
    naive = fit_stops(
        History(ran, np.where(status == "censored", "complete", status), np.ones(n, int), "x")
    )
    assert abs(naive.for_gpus(1).completion() - c.completion()) > 0.05


def test_a_small_class_borrows_the_pooled_fit():
    rows = [(2.0, "complete", 1), (1.0, "stopped", 1)] * 10 + [(3.0, "complete", 4)] * 3
    fit = fit_stops(history(rows))
    assert (
        fit.classes[CLASSES[1]].plan_hours
        == fit_stops(history(rows)).classes[CLASSES[1]].plan_hours
    )
    pooled = fit.for_gpus(8)
    assert pooled.label == CLASSES[1] and pooled.counts["complete"] == 13


def test_the_fit_round_trips_through_json():
    fit = bundled_fit()
    back = StopsFit.from_dict(json.loads(json.dumps(fit.to_dict())))
    assert back.classes == fit.classes
    for c in CLASSES:
        for f in (0.1, 0.5, 0.9):
            assert back.classes[c].beyond(f) == pytest.approx(fit.classes[c].beyond(f))


@pytest.mark.parametrize(
    "doc, field",
    [
        ({}, "classes = None: must map the job classes"),
        # an instance given as the fit showed "classes = 'dict'", in no file
        ({"classes": [1]}, r"classes = \[1\]: must map"),
        ([], "stopping_fit = 'list': must be a JSON object"),
        ({"classes": {}}, "classes"),
        ({"classes": {c: {"jobs": {}} for c in CLASSES}}, "classes.1 GPU"),
        ({**bundled_fit().to_dict(), "souce": "x"}, "souce"),
        ({"classes": {**bundled_fit().to_dict()["classes"], "3 GPUs": {}}}, "classes.3 GPUs"),
    ],
)
def test_a_broken_fit_file_is_refused_naming_the_field(doc, field):
    with pytest.raises(InstanceError, match=field):
        StopsFit.from_dict(doc)


def _broken(change) -> dict:
    doc = json.loads(json.dumps(bundled_fit().to_dict()))
    change(doc["classes"]["1 GPU"])
    return doc


@pytest.mark.parametrize(
    ("change", "field"),
    [
        # the survival is read by a sorted search: out of order it would be wrong silently
        (lambda c: c["stop_hours"].reverse(), "stop_hours[1]"),
        (lambda c: c["plan_hours"].reverse(), "plan_hours[1]"),
        (lambda c: c["stop_survival"].sort(), "stop_survival["),
        (lambda c: c.update(stop_survival=[True] * len(c["stop_survival"])), "stop_survival[0]"),
        (lambda c: c["jobs"].update(complete="4284"), "jobs.complete"),
        (lambda c: c["jobs"].update(stopped=-5), "jobs.stopped"),
        (lambda c: c["jobs"].update(censored=True), "jobs.censored"),
        (lambda c: c.update(plan_hours="1,2"), "plan_hours"),
        (lambda c: c.update(stop_hours=["1"] * len(c["stop_hours"])), "stop_hours[0]"),
        # a field the reader does not know (a misspelling) used to be ignored
        (lambda c: c.update(stop_survivals=[]), "stop_survivals"),
        (lambda c: c.update(plan_hours=[0.0, *c["plan_hours"][1:]]), "plan_hours[0]"),
        # the figures written for people must agree with the arrays read: an edit of
        # one and not the other used to be read by the arrays alone, unseen
        (lambda c: c.update(completion=2), "completion"),
        (lambda c: c.update(completion=c["completion"] + 1e-4), "completion"),
        (lambda c: c["beyond"].update({"0.5": 0.0}), "beyond.0.5"),
        (lambda c: c["beyond"].update({"0.5": "x"}), "beyond.0.5"),
        (lambda c: c["beyond"].update({"1.5": 0.0}), "beyond"),
        (lambda c: c.update(beyond=[]), "beyond"),
        (lambda c: c.update(stop_survival=[0.0] * len(c["stop_survival"])), "completion"),
    ],
)
def test_a_fit_out_of_order_or_of_the_wrong_type_is_refused(change, field):
    with pytest.raises(InstanceError) as err:
        StopsFit.from_dict(_broken(change))
    assert err.value.path.startswith(f"classes.1 GPU.{field}")


def test_the_bundled_alibaba_trace():
    hist = alibaba_history()
    assert len(hist.hours) == 6203  # the GPU pods that ran
    fit = bundled_fit()
    one = fit.for_gpus(1)
    assert one.counts == {"complete": 4284, "stopped": 1811, "censored": 34}
    assert 0.65 < one.completion() < 0.75  # near Helios' 62% of GPU jobs completed
    # reading a pod deleted while Running as killed leaves few completions
    assert bundled_fit("stopped").for_gpus(1).completion() < 0.05


def test_a_history_csv(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("hours,status,gpus\n" + "2,Pass,1\n1,Killed,1\n1.5,running,2\n" * 10)
    hist = csv_history(p)
    assert sorted(set(hist.status)) == ["censored", "complete", "stopped"]
    assert fit_stops(hist).for_gpus(1).completion() == pytest.approx(0.5)


@pytest.mark.parametrize(
    "body, field",
    [
        ("hours,status,gpus\n1,done?,1\n", r"rows\[0\]\.status"),
        ("hours,status,gpus\nnan,Pass,1\n", r"rows\[0\]\.hours"),
        ("hours,status,gpus\n-1,Pass,1\n", r"rows\[0\]\.hours"),
        ("hours,status,gpus\nx,Pass,1\n", r"rows\[0\]"),
        ("hours,status\n1,Pass\n", "trace"),
        # a field past the header's columns (csv would file it under None, unread)
        ("hours,status,gpus\n2,Pass,1\n1,Pass,1,2\n", r"rows\[1\] = '2'"),
        ("hours,status,gpus\n1,Killed,1\n", "history"),  # no job completed
        # with a window: creation times must be numbers, and a bad row outside the
        # window is still refused
        ("hours,status,gpus,created\n1,Pass,1,x\n", r"rows\[0\]\.created"),
        ("hours,status,gpus,created\n1,Pass,1,inf\n", r"rows\[0\]\.created"),
        ("hours,status,gpus,created\n1,done?,1,0\n1,Pass,1,100\n", r"rows\[0\]\.status"),
        ("hours,status,gpus\n1,Pass,1\n", "column created"),
        ("hours,status,gpus,created\n1,Pass,1,100\nnan,Pass,1,0\n", r"rows\[1\]\.hours"),
        ("hours,status,gpus,created\n1,Pass,1,100\n1,Pass,0,0\n", r"rows\[1\]\.gpus"),
    ],
)
def test_a_bad_history_is_refused_naming_the_row(tmp_path, body, field):
    p = tmp_path / "h.csv"
    p.write_text(body)
    recent = 24.0 if "created" in body or field == "column created" else None
    with pytest.raises(InstanceError, match=field):
        fit_stops(csv_history(p, recent=recent))
