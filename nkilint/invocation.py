"""How nkilint was run: what SARIF's ``invocations[0]`` records."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def utc_text(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, as SARIF's date-time properties want."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Invocation:
    arguments: tuple[str, ...]  # after the program name
    working_directory: Path
    start: datetime
    end: datetime | None = None
    exit_code: int | None = None

    @property
    def command_line(self) -> str:
        return shlex.join(("nkilint", *self.arguments))

    @property
    def successful(self) -> bool:
        """Exit 2 (usage, configuration or internal error, a crashed rule)
        is an unsuccessful run; 0 and 1 (findings) are successful."""
        return self.exit_code != 2
