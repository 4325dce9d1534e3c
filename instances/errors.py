"""The one error type for bad problem data, and the one for bad plans."""

from __future__ import annotations

from typing import Any


class InstanceError(ValueError):
    """Bad instance data. The message names the field path and the offending value.

    ``path`` is a dotted/indexed path such as ``jobs[3].distribution.probabilities``;
    wrapping code (the JSON reader, the Instance constructor) prefixes it with the
    location of the object it was building, so the user sees where in the file it is.
    """

    def __init__(self, path: str, value: Any, reason: str) -> None:
        self.path = path
        self.value = value
        self.reason = reason
        super().__init__(self._text())

    def _text(self) -> str:
        try:
            shown = repr(self.value)
        except ValueError:  # an integer of more digits than Python will print
            shown = f"<an integer of {self.value.bit_length()} bits>"
        if len(shown) > 120:
            shown = shown[:117] + "..."
        where = self.path or "<instance>"
        return f"{where} = {shown}: {self.reason}"

    def within(self, prefix: str) -> InstanceError:
        """The same error, located inside ``prefix`` (e.g. ``jobs[3]``)."""
        if not prefix:
            return self
        if not self.path:
            path = prefix
        elif self.path.startswith("["):
            path = prefix + self.path
        else:
            path = f"{prefix}.{self.path}"
        return InstanceError(path, self.value, self.reason)


class PlanError(ValueError):
    """A plan that cannot be read or evaluated (malformed, or infeasible).

    ``violations`` holds every feasibility violation found, not only the first.
    """

    def __init__(self, message: str, violations: tuple[Any, ...] = ()) -> None:
        self.violations = violations
        if violations:
            lines = "\n".join(f"  - {v}" for v in violations[:50])
            more = f"\n  ... and {len(violations) - 50} more" if len(violations) > 50 else ""
            message = f"{message}\n{lines}{more}"
        super().__init__(message)
