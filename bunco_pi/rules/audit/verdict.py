"""The audit's verdict on a record, as people and machines read it (the ``bunco-pi audit``
command and the console's download say the same)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Verdict:
    record: str  # what the record is called (its file, or the night's name)
    rules: str  # the house rules' name it was checked against
    problems: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.clean:
            return f"{self.record}: the record agrees with the {self.rules} rules"
        count = len(self.problems)
        return (f"{self.record}: {count} problem{'s' if count != 1 else ''} against the "
                f"{self.rules} rules")

    def text(self) -> str:
        """Each problem on a line of its own, then the summary."""
        return "".join(f"{p}\n" for p in self.problems) + self.summary() + "\n"

    def as_json(self) -> dict[str, Any]:
        return {"record": self.record, "rules": self.rules, "clean": self.clean,
                "problems": list(self.problems)}
