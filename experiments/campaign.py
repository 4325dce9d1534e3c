"""Campaign files: a TOML grid of scenarios × policies × seeds, expanded into runs.

```toml
name = "rates"
policies = ["sts", "edf"]          # registered policies, or "clairvoyant" (MILP bound)
seeds = 5                          # 0..4, or a list such as [3, 7]
time_limit = 10.0                  # seconds per MILP solve (milp, clairvoyant)

[[scenarios]]
name = "synthetic"                 # label prefix (default: the generator)
generator = "synthetic"            # a name of GENERATORS (instances/generators), file or suite
nodes = 10                         # fixed parameters of the generator's spec
jobs = 60
[scenarios.grid]                   # every combination of these values is one scenario
rate = ["high", "exponential", "low"]
```

A seed fixes the generated instance (synthetic, realdata) and the sampled stops of the
online run, so every policy of a scenario and seed meets the same jobs and the same
stops. ``file`` reads ``path`` (relative to the campaign file); ``suite`` takes the
bundled MILP suite instances named in ``instances`` (or ``"all"``), with their own
relaunch overheads unless ``relaunch`` ("measured" or "none") says otherwise, and the
energy layers every generator takes (``prices``, ``carbon_price``, ``idle``,
``power_off``) laid over them as ``gpusched generate suite`` lays them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import milp  # noqa: F401  (registers the rolling-horizon MILP policy "milp")
from experiments.campaign_file import CampaignError, listed_once, parse_toml, read_text
from experiments.paths import plain_name
from heuristic.core.options import OptionError
from heuristic.core.registry import policy_names, policy_options, renamed_to
from instances import Instance, InstanceError, read_instance
from instances.fields import SEEDS, is_number
from instances.generators import GENERATORS
from instances.generators.stops_fit import read_fit
from instances.generators.suite import LAYERS as SUITE_LAYERS
from instances.generators.suite import suite_instance, suite_spec, suite_specs

# runs that are not a policy in the engine but a reference solved per scenario
REFERENCES = ("clairvoyant",)
MAX_TIME_LIMIT = 86_400.0  # a day per MILP solve
# a grid is expanded in memory before anything runs: beyond these it is a typo
MAX_SEEDS = 10_000
MAX_SCENARIOS = 10_000
_TOP_KEYS = {"name", "description", "policies", "seeds", "time_limit", "scenarios"}
_OWN_KEYS = {"name", "generator", "grid"}
_EXTRA_KEYS = {"file": {"path", "slot"}, "suite": {"instances", "slot", *SUITE_LAYERS}}


@dataclass(frozen=True)
class Scenario:
    """One point of the grid: a generator and its parameters (JSON values)."""

    label: str
    generator: str
    params: tuple[tuple[str, Any], ...]

    @property
    def params_json(self) -> str:
        return json.dumps(dict(self.params), sort_keys=True)

    def instance(self, seed: int) -> Instance:
        """The scenario's instance for ``seed`` (generators use it; files ignore it)."""
        p = dict(self.params)
        if self.generator in GENERATORS:
            return GENERATORS[self.generator].instance(p, seed, f"{self.label}-s{seed}")
        if self.generator == "file":
            inst = read_instance(p["path"])
        else:
            layers = {k: p[k] for k in SUITE_LAYERS if k in p}
            inst = suite_instance(p["instance"], **layers)
        return inst.replace(slot=p["slot"]) if p.get("slot") is not None else inst


@dataclass(frozen=True)
class RunSpec:
    """One run: a policy (or reference) on one scenario with one seed."""

    campaign: str
    scenario: Scenario
    policy: str
    seed: int
    time_limit: float
    position: int  # in the campaign's grid: reports list runs in this order
    options: tuple[tuple[str, Any], ...] = ()  # the policy's, from the campaign file

    @property
    def key(self) -> str:
        return f"{self.scenario.label}/{self.policy}/seed={self.seed}"


@dataclass(frozen=True)
class Campaign:
    name: str
    description: str
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    scenarios: tuple[Scenario, ...]
    time_limit: float
    text: str  # the file as given, kept in the store
    # each policy's options (``[policies.NAME]`` tables; absent: its defaults)
    options: Mapping[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)

    def runs(self) -> list[RunSpec]:
        """Scenario-major order, so the first finished runs already compare policies."""
        grid = itertools.product(self.scenarios, self.seeds, self.policies)
        return [
            RunSpec(self.name, sc, pol, seed, self.time_limit, k, self.options.get(pol, ()))
            for k, (sc, seed, pol) in enumerate(grid)
        ]


def bundled_campaigns() -> tuple[str, ...]:
    files = resources.files("experiments.campaigns").iterdir()
    return tuple(sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml")))


def load_campaign(source: str | Path) -> Campaign:
    """A campaign file, or the name of a bundled one (``gpusched campaign --list``)."""
    path = Path(source)
    if not path.exists() and str(source) in bundled_campaigns():
        res = resources.files("experiments.campaigns") / f"{source}.toml"
        return parse_campaign(res.read_text(), base=Path("."), default_name=str(source))
    return parse_campaign(read_text(path), base=path.parent, default_name=path.stem)


def parse_campaign(text: str, *, base: Path, default_name: str) -> Campaign:
    doc = parse_toml(text, default_name)
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise CampaignError(
            unknown[0], doc[unknown[0]], f"unknown field; known: {sorted(_TOP_KEYS)}"
        )
    policies, options = _policies(doc.get("policies"))
    seeds = _seeds(doc.get("seeds", 1))
    listed_once("policies", policies)
    listed_once("seeds", seeds)
    time_limit = doc.get("time_limit", 10.0)
    # comparisons, not float(): 10**400 seconds is refused, not an OverflowError
    number = is_number(time_limit)
    if not number or not 0 < time_limit <= MAX_TIME_LIMIT:
        raise CampaignError(
            "time_limit", time_limit, f"must be a number of seconds in (0, {MAX_TIME_LIMIT:g}]"
        )
    raw = doc.get("scenarios")
    if not isinstance(raw, list) or not raw:
        raise CampaignError("scenarios", raw, "give at least one [[scenarios]] table")
    scenarios = [sc for i, table in enumerate(raw) for sc in _expand(i, table, base)]
    labels = Counter(s.label for s in scenarios)
    dup = next((x for x, n in labels.items() if n > 1), None)
    if dup is not None:
        raise CampaignError("scenarios.name", dup, "two scenarios have this label; name them")
    for sc in scenarios:  # an instance that cannot be built fails here, not in the runs
        try:
            sc.instance(seeds[0])
        except InstanceError as exc:
            raise CampaignError(f"scenario {sc.label}", dict(sc.params), str(exc)) from None
    return Campaign(
        name=_name(doc.get("name"), default_name),
        description=_description(doc.get("description", "")),
        policies=policies,
        seeds=seeds,
        scenarios=tuple(scenarios),
        time_limit=float(time_limit),
        text=text,
        options=options,
    )


def _description(text: Any) -> str:
    """Text for people, shown by ``--list`` and the report: a number or a table would be
    shown as Python writes it, and a control character (an ANSI escape) would reach the
    terminal."""
    if not isinstance(text, str) or len(text) > 10_000:
        raise CampaignError("description", text, "must be text of at most 10,000 characters")
    bad = next((c for c in text if unicodedata.category(c) == "Cc" and c not in "\n\t"), None)
    if bad is not None:
        raise CampaignError("description", text[:60], f"holds the control character {bad!r}")
    return text


# a campaign's name names its default store file: one plain file name, no path
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _name(value: Any, default: str) -> str:
    """The campaign's name: as given, or the file's stem made a plain name."""
    if value is None:
        return plain_name(default, 64, "campaign")
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise CampaignError(
            "name",
            value,
            "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit "
            "(it names the store file)",
        )
    return value


def _policies(value: Any) -> tuple[tuple[str, ...], dict[str, tuple[tuple[str, Any], ...]]]:
    """The policies, as a list of names or as ``[policies.NAME]`` tables of options
    (an empty table: the defaults), and each one's options, checked by name, type and
    range against the policy's options dataclass."""
    known = (*policy_names(small_only=True), *REFERENCES)
    if isinstance(value, dict) and value:
        names, tables = list(value), value
    elif isinstance(value, list) and value:
        names, tables = value, {}
    else:
        raise CampaignError("policies", value, f"give a list of names from {list(known)}")
    for name in names:
        if not isinstance(name, str):
            raise CampaignError("policies", name, "each policy is a name (a string)")
        if name not in known:
            retired = renamed_to(name)
            why = f"now {retired}" if retired else f"unknown policy; known: {list(known)}"
            raise CampaignError("policies", name, why)
    options = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise CampaignError(f"policies.{name}", table, "give a table of the policy's options")
        if table and name in REFERENCES:
            raise CampaignError(f"policies.{name}", table, "a reference takes no options")
        if table:
            try:
                policy_options(name, **table)
            except OptionError as exc:
                raise CampaignError(f"policies.{name}", table, str(exc)) from None
            options[name] = tuple(sorted(table.items()))
    return tuple(names), options


def _seeds(value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SEEDS:
        return tuple(range(value))
    if (
        isinstance(value, list)
        and 1 <= len(value) <= MAX_SEEDS
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < SEEDS for s in value)
    ):
        return tuple(value)
    raise CampaignError(
        "seeds",
        value,
        f"a count (1 to {MAX_SEEDS}) or a list of at most {MAX_SEEDS} integers in [0, 2**32)",
    )


def _expand(i: int, table: Any, base: Path) -> list[Scenario]:
    where = f"scenarios[{i}]"
    if not isinstance(table, dict):
        raise CampaignError(where, table, "must be a table")
    gen = table.get("generator")
    allowed = _allowed_keys(gen, where)
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise CampaignError(f"{where}.grid", grid, "must be a table of lists")
    fixed = {k: v for k, v in table.items() if k not in _OWN_KEYS}
    for key in [*fixed, *grid]:
        if key not in allowed:
            raise CampaignError(
                f"{where}.{key}",
                table.get(key, grid.get(key)),
                f"unknown parameter of generator {gen!r}; known: {sorted(allowed)}",
            )
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise CampaignError(f"{where}.grid.{key}", values, "must be a non-empty list")
        if key in fixed:  # one would silently win over the other
            raise CampaignError(
                f"{where}.grid.{key}",
                values,
                f"{key} is given outside the grid too ({fixed[key]!r}): give it in one place",
            )
    if gen == "suite" and "instances" in grid:  # each named instance is a scenario already
        raise CampaignError(
            f"{where}.grid.instances",
            grid["instances"],
            'name the suite\'s instances outside the grid: instances = [...] or "all"',
        )
    size = math.prod(len(v) for v in grid.values())
    if size > MAX_SCENARIOS:
        raise CampaignError(
            f"{where}.grid", size, f"combinations: at most {MAX_SCENARIOS} scenarios per table"
        )
    if gen == "suite":
        grid = {"instance": _suite_names(where, fixed.pop("instances", "all")), **grid}
    if gen == "file":
        grid, fixed = _files(where, "path", "the instance file's", grid, fixed, base, _a_file)
    if gen in GENERATORS and "stops" in GENERATORS[gen].fields and "stops" in [*fixed, *grid]:
        # read now, so that a missing or broken fit is refused before any run
        grid, fixed = _files(where, "stops", "a fit file's", grid, fixed, base, read_fit)
    gen = str(gen)  # checked by _allowed_keys
    prefix = table.get("name", gen)
    if not (isinstance(prefix, str) and prefix.strip() and prefix.isprintable()):
        raise CampaignError(f"{where}.name", prefix, "must be a non-empty line of text")
    if len(prefix) > 64:
        raise CampaignError(f"{where}.name", prefix, "must be at most 64 characters")
    out = []
    for combo in itertools.product(*grid.values()):
        chosen = dict(zip(grid, combo, strict=True))
        params = {**fixed, **chosen}
        label = prefix
        if chosen:
            label += "[" + ",".join(f"{k}={_short(k, v)}" for k, v in chosen.items()) + "]"
        sc = Scenario(label, gen, tuple(sorted(params.items())))
        # refuse bad values now, not in a worker an hour later
        try:
            if gen in GENERATORS:
                GENERATORS[gen].spec_of(params)
            elif gen == "suite":
                layers = {k: params[k] for k in SUITE_LAYERS if k in params}
                suite_spec(params["instance"], **layers)
        except (InstanceError, TypeError, ValueError) as exc:
            raise CampaignError(where, params, str(exc)) from None
        out.append(sc)
    return out


def _suite_names(where: str, wanted: Any) -> list[str]:
    """The suite instances a scenario names (``"all"``, or a list of names)."""
    names = [n for n, _, _ in suite_specs()]
    wanted = names if wanted == "all" else wanted
    if wanted == []:
        raise CampaignError(f"{where}.instances", wanted, 'name at least one, or "all"')
    bad = [w for w in wanted if w not in names] if isinstance(wanted, list) else [wanted]
    if bad:
        raise CampaignError(f"{where}.instances", bad[0], "not a suite instance name")
    return list(wanted)


def _a_file(path: Path) -> None:
    """An instance file's path names a file (read, whole, when the scenario is built)."""
    if not path.is_file():
        raise InstanceError("", str(path), "no such file, or not a regular file")


def _files(
    where: str,
    key: str,
    what: str,
    grid: dict[str, Any],
    fixed: dict[str, Any],
    base: Path,
    check: Callable[[Path], object] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario's ``key`` (fixed or a grid of them): paths relative to the campaign
    file, made absolute; each passed to ``check``, whose :class:`InstanceError` is
    refused naming the scenario's field."""
    values = grid[key] if key in grid else [fixed.get(key)]
    resolved = []
    for v in values:
        if not isinstance(v, str) or not v or "\x00" in v:  # the OS takes no NUL in a path
            raise CampaignError(f"{where}.{key}", v, f"give {what} path")
        try:
            path = (base / v).resolve()
            if check is not None:
                check(path)
        except InstanceError as exc:
            # a fault of the file as a whole (unreadable, not JSON) names the file
            why = str(exc) if exc.path else f"{exc.reason} ({exc.value})"
            raise CampaignError(f"{where}.{key}", v, why) from None
        except (OSError, RuntimeError) as exc:
            # a path the OS refuses (too long) or a loop of symbolic links, which
            # Python 3.11's resolve() raises as RuntimeError
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise CampaignError(f"{where}.{key}", v, f"cannot read it ({why})") from None
        resolved.append(str(path))
    if key in grid:
        return {**grid, key: resolved}, fixed
    return grid, {**fixed, key: resolved[0]}  # a missing key was refused above


def _short(key: str, value: Any) -> str:
    return Path(value).stem if key in ("path", "stops") else str(value)


def _allowed_keys(gen: Any, where: str) -> set[str]:
    known = [*GENERATORS, *_EXTRA_KEYS]
    if gen == "trace":  # the name campaign files gave both traces before
        raise CampaignError(
            f"{where}.generator", gen, "give the trace's own name: 'philly-week' or 'alibaba'"
        )
    if isinstance(gen, str) and gen in GENERATORS:
        return set(GENERATORS[gen].fields)
    if isinstance(gen, str) and gen in _EXTRA_KEYS:
        return _EXTRA_KEYS[gen]
    raise CampaignError(f"{where}.generator", gen, f"one of {known}")
