"""benchmarks.idle: each row names its case, policy and idle level."""

from benchmarks import idle
from instances.bundled import bundled


def test_each_row_names_its_case(monkeypatch):
    # the case's name was overwritten by the policy's until 2026-12-07
    tiny = bundled("small")
    monkeypatch.setattr(idle, "cases", lambda seeds: iter([("suite", "small-s0", tiny)]))
    df = idle.measure(1, ["sts-idle-blind", "edf"])
    assert list(df["case"].unique()) == ["small-s0"]
    assert sorted(set(zip(df.policy, df.idle, strict=True))) == sorted(
        (p, level) for p in ("sts-idle-blind", "edf") for level in idle.LEVELS
    )
