"""What a rule is, as data: its options, severity, fix availability and the
metadata the steps before parsing need (:class:`RuleInfo`).  Plain types
with no dependencies, so the rule base, the catalog, the cache and the
settings can all use them without importing one another."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Optional, Tuple, Union

if TYPE_CHECKING:
    from torchlint.analysis.queries import Query

OptionValue = Union[str, int, float, bool, Tuple[str, ...]]


class FixAvailability(str, enum.Enum):
    """Whether a rule's findings come with a fix (per rule, like Ruff)."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NONE = "none"


class Severity(str, enum.Enum):
    """How a finding is shown where tools grade them (GitHub annotations, SARIF).

    ``ERROR`` for a defect; ``WARNING`` for advice whose right answer
    depends on the machine or the project (a suggestion, not a bug).
    """

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Option:
    """A per-rule setting with its type, default and one-line description."""

    default: OptionValue
    description: str
    minimum: Optional[int] = None
    """The smallest value a numeric option accepts (checked when settings load)."""
    words: Tuple[str, ...] = ()
    """Strings a non-string option also accepts (``num-workers = "slurm"``)."""

    @property
    def kind(self) -> type:
        """The Python type a configured value must have."""
        return tuple if isinstance(self.default, tuple) else type(self.default)


@dataclass(frozen=True)
class RuleInfo:
    """A rule's metadata, as the steps before parsing need it."""

    code: str
    name: str
    aliases: Tuple[str, ...] = ()
    default_enabled: bool = True
    severity: Severity = Severity.ERROR
    options: Mapping[str, Option] = field(default_factory=dict, compare=False)
    queries: "Tuple[Query, ...]" = ()
    """What the rule asks across files (``Rule.project_queries``)."""
