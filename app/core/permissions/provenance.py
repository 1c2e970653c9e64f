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

What counts as a value, so that ordinary words do not make every call ask: URLs and their
hosts, e-mail addresses, handles (``@name``, ``#channel``), and tokens of six or more letters,
digits, ``_`` or ``-`` with a digit in them (accounts, IBANs, phone numbers, ids); in a short
argument (a name, a recipient, a channel: at most ``SHORT_VALUE_WORDS`` words) every word of
three or more letters that is not a common English word as well.

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

import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ChosenValue", "ValueProvenance", "candidate_values"]

MAX_VALUES = 200_000
MAX_LEARNT_CHARS = 512 * 1024
SHORT_VALUE_WORDS = 6
MAX_LEAF_CHARS = 4096  # of one argument string, scanned for values
UNKNOWN_SOURCE = "content read before this conversation was reopened"

_URL = re.compile(r"https?://[^\s\"'<>()\[\]{}`\\]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_HOST = re.compile(r"\b(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}\b")
_HANDLE = re.compile(r"(?<![\w@#])[@#][A-Za-z0-9][\w.-]{2,}")
_ID = re.compile(r"(?<![\w-])(?=[\w-]*\d)[\w-]{6,}(?![\w-])")
_WORD = re.compile(r"[^\W\d_]{3,}")

# Common words that say nothing about who chose a value ("send the report to …").
_COMMON = frozenset({
    "about", "account", "add", "after", "all", "also", "amount", "and", "any", "are", "back",
    "balance", "been", "body", "both", "boy", "but", "can", "change", "channel", "channels",
    "check", "com", "come", "content", "could", "create", "data", "date", "day", "dear", "delete",
    "did", "each", "edit", "email", "every", "false", "file", "files", "find", "first", "for",
    "from", "get", "good", "had", "has", "have", "hello", "her", "here", "him", "his", "how",
    "html", "http", "https", "info", "information", "into", "item", "items", "its", "json",
    "just", "know", "let", "like", "link", "links", "list", "long", "made", "mail", "make", "man",
    "many", "meeting", "message", "messages", "money", "more", "most", "much", "name", "names",
    "net", "new", "none", "not", "note", "notes", "now", "null", "number", "old", "one", "only",
    "open", "org", "other", "our", "out", "over", "page", "pages", "payment", "please", "post",
    "put", "read", "remove", "reply", "report", "same", "say", "search", "see", "send", "sent",
    "set", "she", "should", "show", "some", "subject", "such", "summary", "take", "team", "text",
    "than", "thank", "thanks", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "time", "title", "today", "tomorrow", "too", "transfer", "true", "two",
    "update", "use", "user", "users", "value", "values", "very", "want", "was", "way", "well",
    "were", "what", "when", "where", "which", "while", "who", "will", "with", "would", "write",
    "www", "year", "yes", "yesterday", "you", "your",
})
# Hosts so common in pages that a call naming them says nothing about an injection.
_TRIVIAL_HOSTS = frozenset({"example.com", "localhost"})


@dataclass(frozen=True)
class ChosenValue:
    """One argument value that came from untrusted content: where in the input, what, from
    where."""

    field: str
    value: str
    source: str

    def describe(self) -> str:
        shown = self.value if len(self.value) <= 60 else self.value[:57] + "…"
        return f"{shown!r} in {self.field} came from {self.source}"


def _url_values(url: str) -> Iterator[str]:
    url = url.rstrip(".,;:!?")
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return
    if host:
        yield host
        if host.startswith("www."):
            yield host[4:]
    yield _normal_url(url)


def _normal_url(url: str) -> str:
    """A URL without its fragment, scheme and host in lower case."""
    url = url.split("#", 1)[0].rstrip(".,;:!?")
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower(),
                          fragment="").geturl()


def candidate_values(text: str, *, short: bool = False) -> Iterator[str]:
    """The identifier-like values in ``text`` (lower case; see the module docstring)."""
    for match in _URL.finditer(text):
        yield from _url_values(match.group())
    for match in _EMAIL.finditer(text):
        yield match.group().lower()
    for match in _HOST.finditer(text):
        host = match.group().lower()
        if host not in _TRIVIAL_HOSTS and not host.replace(".", "").isdigit():
            yield host
            if host.startswith("www."):
                yield host[4:]
    for match in _HANDLE.finditer(text):
        yield match.group().lower()
    for match in _ID.finditer(text):
        token = match.group()
        if not token.isdigit() or len(token) >= 6:
            yield token.lower()
    if short:
        for match in _WORD.finditer(text):
            word = match.group().lower()
            if word not in _COMMON:
                yield word


def _learnable(text: str) -> Iterator[str]:
    """Every value a later argument could be checked against: the candidates of ``text`` as
    a short value would have them (words included)."""
    yield from candidate_values(text, short=True)


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


class ValueProvenance:
    """The untrusted and the vouched-for values of one conversation (module docstring)."""

    def __init__(self, *, complete: bool = True) -> None:
        self._lock = threading.Lock()
        self._untrusted: dict[str, str] = {}
        self._vouched: frozenset[str] = frozenset()
        self._seen_urls: frozenset[str] = frozenset()
        # False: untrusted content was read before these sets existed (a reopened
        # conversation), so a value not vouched for may have come from it.
        self.complete = complete

    def __len__(self) -> int:
        return len(self._untrusted)

    def learn_untrusted(self, text: str, source: str) -> None:
        text = text[:MAX_LEARNT_CHARS]
        new: dict[str, str] = {}
        urls = {_normal_url(m.group()) for m in _URL.finditer(text)}
        for value in _learnable(text):
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
        values = set(_learnable(text[:MAX_LEARNT_CHARS]))
        urls = {_normal_url(m.group()) for m in _URL.finditer(text)}
        with self._lock:
            self._vouched = self._vouched | values
            self._seen_urls = self._seen_urls | urls

    def clear(self) -> None:
        with self._lock:
            self._untrusted = {}
            self._seen_urls = frozenset()
            self.complete = True

    def vouched(self, value: str) -> bool:
        """Did the person (or a trusted source) name ``value`` (lower case)?"""
        value = value.lower()
        return value in self._vouched or (value.startswith("www.") and value[4:] in self._vouched)

    def seen_url(self, url: str) -> bool:
        """Was ``url`` (without its fragment) in something the conversation read or the
        person wrote?"""
        return _normal_url(url) in self._seen_urls

    def chosen_values(self, tool_input: Mapping[str, Any], *, verbatim_urls_ok: bool = False,
                      limit: int = 5) -> list[ChosenValue]:
        """The values of ``tool_input`` that came from untrusted content (at most ``limit``).

        ``verbatim_urls_ok``: a whole argument that is a URL the conversation saw as it is
        (a link a page offered) is not a choice of that page's."""
        untrusted, vouched, complete = self._untrusted, self._vouched, self.complete
        if not untrusted and complete:
            return []
        out: list[ChosenValue] = []
        seen: set[str] = set()
        for field, text in _leaves(tool_input):
            stripped = text.strip()
            if verbatim_urls_ok and _URL.fullmatch(stripped) and self.seen_url(stripped):
                continue
            if _URL.fullmatch(stripped):  # an address: its host and itself, not its words
                values: Iterator[str] = _url_values(stripped)
            else:
                values = candidate_values(stripped,
                                          short=len(stripped.split()) <= SHORT_VALUE_WORDS)
            for value in values:
                if value in seen or value in vouched:
                    continue
                seen.add(value)
                source = untrusted.get(value)
                if source is None and not complete:
                    source = UNKNOWN_SOURCE
                if source is not None:
                    out.append(ChosenValue(field, value, source))
                    if len(out) >= limit:
                        return out
        return out
