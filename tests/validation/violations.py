"""What the checker finds wrong with a plan, by kind (the tests' shorthand)."""

from __future__ import annotations

from collections.abc import Iterable

from instances import Instance, Plan, Segment
from validation.check import check_plan


def kinds(inst: Instance, plan: Plan | Iterable[Segment]) -> list[str]:
    """The kinds of the checker's violations of ``plan`` (or of a plan of these
    segments), each once, sorted."""
    plan = plan if isinstance(plan, Plan) else Plan(tuple(plan))
    return sorted({v.kind for v in check_plan(inst, plan)})
