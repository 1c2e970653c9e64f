"""Where the values a call passes came from: the person, or content nobody vouches for.

A prompt injection works by making the model reuse a value it read — a host, an account, a
recipient, a link — in a call the person never asked for, often with a tool the person trusts
("Always allow" on ``send_money`` for their own payment). Rules about the tool cannot tell the
two calls apart; where their *arguments* came from can. The conversation therefore keeps two
sets of values:

- **untrusted**: identifier-like values found in untrusted results (web pages, search results,
  MCP and custom tool results, files of a project the person has not marked trusted), each with
  the first source it came from;
- **vouched for**: the same kind of values in what the person wrote (their prompts) and in what
  trusted sources said (files of a trusted project, the tools' own schemas).

A value of a call's input is *chosen by untrusted content* when it is in the first set and not
in the second. ``chosen_values`` answers that for the flow guard
(``app.core.permissions.guards``), which asks the person for a call that sends data out or acts
outside the project with such a value — under an allow rule too.

What counts as a value, so that ordinary words do not make every call ask, is the business of
``app.core.permissions.provenance_values``: URLs, hosts, e-mail addresses, handles, account- and
id-like tokens (also written in groups), in a short argument its uncommon words, and for a
third-party tool an argument that is a number (an amount, a code, an id).

An injection need not show a value as the call will carry it: it can spell a host out ("x dot
com"), encode an address (base64, backwards) or split an account into pieces, and the model
puts it together. So for a third-party tool (``third_party``) an *identifier* that neither the
person wrote nor anything the conversation read holds as it stands is chosen too: a URL or
e-mail address anywhere in the input, a ``www.`` host, in a short argument any host or id
token. Only what the model may well make up itself stays out: dates and times, file names,
words and plain numbers. A date that untrusted content wrote and the person did not is chosen
all the same, in whatever spelling ("the first of June" in a review, "2024-06-01" in the
booking): dates are compared by month and day (app.core.permissions.provenance_dates).
A URL is the person's when they wrote it, with or without its scheme; naming only its host
does not vouch for other pages there (reading a site is not posting to it).

A web request to a URL that appeared verbatim in what the conversation read carries nothing of
the person's: that page offered the link. ``chosen_values`` leaves such a URL alone when told
(``verbatim_urls_ok``), so following a search result does not ask.

Bounded: at most ``MAX_VALUES`` untrusted values are kept (the first ones); what is learnt from
one text is capped at ``MAX_LEARNT_CHARS``. Values are kept in memory only; a conversation
reopened after untrusted content was read has none, so until it learns again every candidate
value the person did not write counts as chosen (fail closed, ``complete=False``).

Thread-safe: learning happens on the event loop, ``chosen_values`` in the permission service's
worker threads; every update swaps a whole dict in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from app.core.permissions.provenance_dates import DATE_PREFIX
from app.core.permissions.provenance_values import (
    BARE_URL,
    NUMBER_PREFIX,
    URL,
    argument_values,
    bare_url,
    candidate_values,
    destination,
    learnable_values,
    normal_url,
)

__all__ = ["ChosenValue", "ValueProvenance", "candidate_values"]

MAX_VALUES = 200_000
MAX_LEARNT_CHARS = 512 * 1024
MAX_LEAF_CHARS = 4096  # of one argument string, scanned for values
UNKNOWN_SOURCE = "content read before this conversation was reopened"
UNSEEN_SOURCE = ("no message of yours, and nothing this conversation read holds it as it "
                 "stands (untrusted content may have spelt it out or encoded it)")


@dataclass(frozen=True)
class ChosenValue:
    """One argument value that came from untrusted content: where in the input, what, from
    where."""

    field: str
    value: str
    source: str

    def describe(self) -> str:
        value = self.value.removeprefix(NUMBER_PREFIX)
        if value.startswith(DATE_PREFIX):
            value = f"the date {value.removeprefix(DATE_PREFIX)} (month-day)"
        shown = value if len(value) <= 60 else value[:57] + "…"
        return f"{shown!r} in {self.field} came from {self.source}"


def _leaves(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(field path, string) for every string (and number) in a tool input."""
    if isinstance(value, str):
        yield where or "input", value[:MAX_LEAF_CHARS]
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        yield where or "input", str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:200]):
            yield from _leaves(item, f"{where}[{i}]")


def _texts(value: Any) -> int:
    """How many non-empty strings a tool input holds (numbers and flags apart)."""
    if isinstance(value, str):
        return 1 if value.strip() else 0
    if isinstance(value, Mapping):
        return sum(_texts(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_texts(item) for item in value[:200])
    return 0


class ValueProvenance:
    """The untrusted and the vouched-for values of one conversation (module docstring)."""

    def __init__(self, *, complete: bool = True) -> None:
        self._lock = threading.Lock()
        self._untrusted: dict[str, str] = {}
        self._vouched: frozenset[str] = frozenset()
        self._seen_urls: frozenset[str] = frozenset()
        # URLs the model itself wrote into a call before anything showed them: reading them
        # back (a file it wrote, a command's echo) is no page offering the link.
        self._authored_urls: frozenset[str] = frozenset()
        # False: untrusted content was read before these sets existed (a reopened
        # conversation), so a value not vouched for may have come from it.
        self.complete = complete

    def __len__(self) -> int:
        return len(self._untrusted)

    def learn_untrusted(self, text: str, source: str) -> None:
        text = text[:MAX_LEARNT_CHARS]
        new: dict[str, str] = {}
        urls = {normal_url(m.group()) for m in URL.finditer(text)}
        for value in learnable_values(text):
            new.setdefault(value, source)
        with self._lock:
            merged = dict(self._untrusted)
            for value, where in new.items():
                if len(merged) >= MAX_VALUES:
                    break
                merged.setdefault(value, where)
            self._untrusted = merged
            self._seen_urls = self._seen_urls | urls

    def learn_vouched(self, text: str) -> None:
        """Values the person wrote, or a trusted source said."""
        text = text[:MAX_LEARNT_CHARS]
        values = set(learnable_values(text))
        urls = {normal_url(m.group()) for m in URL.finditer(text)}
        for match in (*URL.finditer(text), *BARE_URL.finditer(text)):
            bare = bare_url(match.group())
            if bare is not None:
                values.add(bare)
        with self._lock:
            self._vouched = self._vouched | values
            self._seen_urls = self._seen_urls | urls

    def learn_authored(self, text: str) -> None:
        """``text`` is what the model put in a call's input: a URL in it that nothing showed
        yet never counts as seen (``seen_url``), whatever reads it back later."""
        urls = {normal_url(m.group()) for m in URL.finditer(text[:MAX_LEARNT_CHARS])}
        with self._lock:
            new = urls - self._seen_urls
            if new:
                self._authored_urls = self._authored_urls | new

    def clear(self) -> None:
        with self._lock:
            self._untrusted = {}
            self._seen_urls = frozenset()
            self._authored_urls = frozenset()
            self.complete = True

    def vouched(self, value: str) -> bool:
        """Did the person (or a trusted source) name ``value`` (lower case)?"""
        value = value.lower()
        return value in self._vouched or (value.startswith("www.") and value[4:] in self._vouched)

    def seen_url(self, url: str) -> bool:
        """Was ``url`` (without its fragment) in something the conversation read or the
        person wrote, and not first written by the model itself?"""
        url = normal_url(url)
        return url in self._seen_urls and url not in self._authored_urls

    def chosen_values(self, tool_input: Mapping[str, Any], *, verbatim_urls_ok: bool = False,
                      third_party: bool = False, limit: int = 5) -> list[ChosenValue]:
        """The values of ``tool_input`` that came from untrusted content (at most ``limit``).

        ``verbatim_urls_ok``: a whole argument that is a URL the conversation saw as it is
        (a link a page offered) is not a choice of that page's. ``third_party``: the input
        goes to a tool of a server Tebiki cannot see into, where a whole-argument number is
        a value (an amount, an id) and an identifier the person never wrote counts as chosen
        even when nothing read holds it as it stands (module docstring); there a link is
        only followed when the call carries no other text: beside a body, a message or a
        file, the page's link is the page's choice of where they go."""
        untrusted, vouched, complete = self._untrusted, self._vouched, self.complete
        if not untrusted and complete:
            return []
        out: list[ChosenValue] = []
        seen: set[str] = set()
        if third_party and _texts(tool_input) > 1:
            verbatim_urls_ok = False
        for field, text in _leaves(tool_input):
            stripped = text.strip()
            if verbatim_urls_ok and URL.fullmatch(stripped) and self.seen_url(stripped):
                continue
            for value, identifier in argument_values(stripped, numbers=third_party):
                if value in seen or value in vouched:
                    continue
                seen.add(value)
                source = untrusted.get(value)
                if source is None and not complete:
                    source = UNKNOWN_SOURCE
                if source is None and identifier and third_party and \
                        not _vouched_url(value, vouched):
                    source = UNSEEN_SOURCE
                if source is not None:
                    out.append(ChosenValue(field, value, source))
                    if len(out) >= limit:
                        return out
        return out

    def unnamed_destinations(self, command: str, template: str,
                             tool_input: Mapping[str, Any]) -> list[ChosenValue]:
        """The destinations (host and port) of the URLs in a program's ``command`` line that
        neither the person named nor the tool's own ``template`` writes: its parameters
        put them together, maybe from a port a page spelt out in words, so no value of the
        input matches the page's. A link the conversation saw as it stands is followed
        only when the call carries no other text (``chosen_values``)."""
        template = template.lower()
        followed_ok = _texts(tool_input) <= 1
        out: list[ChosenValue] = []
        for match in URL.finditer(command[:MAX_LEAF_CHARS]):
            url = match.group()
            host = destination(url)
            if not host or self.vouched(host) or host in template or \
                    (followed_ok and self.seen_url(url)):
                continue
            out.append(ChosenValue("the command line", host, UNSEEN_SOURCE))
        return out[:5]


def _vouched_url(value: str, vouched: frozenset[str]) -> bool:
    """Is ``value`` a URL the person wrote (with or without its scheme)?"""
    if not URL.fullmatch(value):
        return False
    bare = bare_url(value)
    return bare is not None and bare in vouched
