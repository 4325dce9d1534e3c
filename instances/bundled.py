"""The small instance files shipped in the package (see ``instances/data/README.md``)."""

from __future__ import annotations

import json
from importlib import resources

from instances.io import instance_from_dict
from instances.model import Instance


def bundled_names() -> tuple[str, ...]:
    files = resources.files("instances.data")
    return tuple(
        sorted(p.name[: -len(".json")] for p in files.iterdir() if p.name.endswith(".json"))
    )


def bundled(name: str) -> Instance:
    """Load a bundled instance by name (``tiny``, ``small``, ``medium``, ...)."""
    if name not in bundled_names():
        raise ValueError(f"no bundled instance {name!r}; bundled: {', '.join(bundled_names())}")
    text = resources.files("instances.data").joinpath(f"{name}.json").read_text()
    return instance_from_dict(json.loads(text))
