"""What a conversation has read: its flow labels, and the secrets it has seen.

Deciding call by call cannot see an exfiltration chain: reading ``~/.aws/credentials`` is one
call, sending it to a web page another, and each looks harmless alone. The conversation keeps
*labels* instead — it read a sensitive file (which, when), it read outside the project, it took
in untrusted content (web pages, search results, MCP and custom tool results, files of a
project the person has not marked trusted) — and the permission service's flow guard uses them
to *raise* a decision, never to lower it: once a secret was read, every call that can send data
out asks, whatever rule allowed it (a rule may opt out, explicitly, with ``ignore_flow``).

The labels are persisted with the conversation (``conversations.flow``), so a reopened
conversation keeps them. The secret values themselves are not: they live in memory only, in a
``SecretMatcher`` the egress check scans outgoing inputs with; so does what the conversation
sent to each destination (``egress``, an ``EgressHistory``: a secret split over several calls
to one destination is seen joined).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from app.core.permissions.egress import SecretMatcher
from app.core.permissions.egress_history import EgressHistory
from app.core.permissions.flow_labels import CLEAN, FlowLabel
from app.core.permissions.provenance import ValueProvenance

# FlowLabel is defined (with its texts) in flow_labels; it is part of this module's API too,
# since FlowState is read and updated by label.
__all__ = ["FlowLabel", "FlowSource", "FlowState"]

# Sources kept per label: enough to say where a secret came from, bounded for a long run.
MAX_SOURCES_PER_LABEL = 50
UNREADABLE_SOURCE = "(labels stored with this conversation could not be read)"


@dataclass(frozen=True)
class FlowSource:
    """One reason for a label: what was read (a path, a URL, a server) by which tool, when."""

    label: FlowLabel
    source: str
    tool: str
    at: str  # ISO 8601 UTC

    def describe(self) -> str:
        return f"{self.source} ({self.tool}, {self.local_time()})"

    def local_time(self) -> str:
        try:
            return datetime.fromisoformat(self.at).astimezone().strftime("%H:%M")
        except ValueError:
            return self.at

    def to_json(self) -> dict[str, str]:
        return {"label": self.label.value, "source": self.source, "tool": self.tool,
                "at": self.at}


class FlowState:
    """The labels of one conversation. Updated on the event loop after each call, read by
    ``ToolPermissionService.decide`` in worker threads: every update swaps in a new tuple, so a
    reader sees the labels before or after it, never half of it."""

    def __init__(self, sources: Iterable[FlowSource] = (),
                 secrets: SecretMatcher | None = None) -> None:
        self._sources: tuple[FlowSource, ...] = tuple(sources)
        self._lock = threading.Lock()
        # Values of the sensitive files this conversation read (memory only).
        self.secrets = secrets if secrets is not None else SecretMatcher()
        # Which argument values came from untrusted content (memory only): stored labels
        # that say untrusted content was read leave it incomplete, so it fails closed.
        self.provenance = ValueProvenance(
            complete=not any(s.label is FlowLabel.UNTRUSTED for s in self._sources))
        # What went out, per destination (memory only).
        self.egress = EgressHistory()
        # A quarantined sub-agent's parent: the untrusted content it reads labels both.
        self._untrusted_to: FlowState | None = None

    def child_for_quarantine(self) -> FlowState:
        """The labels a quarantined sub-agent starts with: this conversation's, in a state of
        its own, so the secrets and outside files it reads label only it (its result carries
        no free text back). Untrusted content it reads labels this conversation too: a few
        bits are enough to choose a port, an amount or a menu entry, and that choice comes
        back. The secret values, the provenance of values and the egress history stay
        shared: what it learns there only makes this conversation's scans stricter."""
        child = FlowState(self._sources, self.secrets)
        child.provenance = self.provenance
        child.egress = self.egress
        child._untrusted_to = self
        return child

    # -- reading ---------------------------------------------------------------------------

    @property
    def sources(self) -> tuple[FlowSource, ...]:
        return self._sources

    @property
    def labels(self) -> frozenset[FlowLabel]:
        return frozenset(s.label for s in self._sources)

    def has(self, label: FlowLabel) -> bool:
        return any(s.label is label for s in self._sources)

    def sources_of(self, label: FlowLabel) -> list[FlowSource]:
        return [s for s in self._sources if s.label is label]

    def summary(self) -> str:
        """The chip's text: the most serious label, or "clean"."""
        for label in FlowLabel.by_seriousness():
            if self.has(label):
                return label.label
        return CLEAN

    def sensitive_reads(self) -> str:
        """"~/.aws/credentials at 10:32, .env at 10:35": for the flow guard's reason."""
        reads: list[FlowSource] = []
        named: set[str] = set()
        for source in self.sources_of(FlowLabel.READ_SENSITIVE):
            # "x (in the result)" is the same file as "x": named once, first time first.
            name = source.source.removesuffix(" (in the result)")
            if name not in named:
                named.add(name)
                reads.append(replace(source, source=name))
        shown = ", ".join(f"{s.source} at {s.local_time()}" for s in reads[:3])
        return shown + (f" and {len(reads) - 3} more" if len(reads) > 3 else "")

    # -- updating --------------------------------------------------------------------------

    def record_egress(self, destination: str, tool_input: Any) -> None:
        """A call that went out sent ``tool_input`` to ``destination`` (a key from
        ``egress_history.egress_destination``): later calls there are scanned joined to it."""
        self.egress.record(destination, tool_input)

    def add(self, label: FlowLabel, source: str, tool: str, at: str | None = None) -> bool:
        """Record one source of ``label``; False when it was already known (nothing
        changed)."""
        source = source[:500]
        with self._lock:
            current = self._sources
            if any(s.label is label and s.source == source for s in current):
                return False
            added = FlowSource(label, source, tool, at or _now())
            same = [s for s in current if s.label is label]
            if len(same) >= MAX_SOURCES_PER_LABEL:  # keep the first ones: they started it
                return False
            self._sources = (*current, added)
        if label is FlowLabel.UNTRUSTED and self._untrusted_to is not None:
            self._untrusted_to.add(label, source, tool, added.at)
        return True

    def clear(self) -> None:
        """Forget the labels (the person's "Reset" on the chip, for a new task)."""
        with self._lock:
            self._sources = ()
            self.secrets = SecretMatcher()
            self.provenance.clear()
            self.egress = EgressHistory()

    # -- persistence -----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "sources": [s.to_json() for s in self._sources]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> FlowState:
        """The stored labels (None: a conversation that never stored any). A damaged entry
        fails closed: it reads as a sensitive read of unknown origin, so the guard keeps
        asking rather than forgetting what the conversation saw."""
        if data is None:
            return cls()
        sources: list[FlowSource] = []
        damaged = not isinstance(data, Mapping) or not isinstance(data.get("sources"), list)
        items = data.get("sources") if not damaged else []
        for item in items:  # type: ignore[union-attr]
            try:
                label = FlowLabel(item.get("label"))
                source, tool, at = item["source"], item["tool"], item["at"]
                if not all(isinstance(v, str) for v in (source, tool, at)):
                    raise TypeError
            except (AttributeError, KeyError, TypeError, ValueError):
                damaged = True
                continue
            sources.append(FlowSource(label, source, tool, at))
        if damaged:
            sources.append(FlowSource(FlowLabel.READ_SENSITIVE, UNREADABLE_SOURCE, "tebiki",
                                      _now()))
        return cls(sources)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
