"""What counts as a value in a text, for ``app.core.permissions.provenance``: which strings of
a tool result or a prompt are learnt, and which of a call's input are checked against them.

URLs and their hosts, e-mail addresses, handles (``@name``, ``#channel``), tokens of six or more
letters, digits, ``_`` or ``-`` with a digit in them (accounts, IBANs, phone numbers, ids) and
such identifiers written in groups ("DE44 5001 0517 …", joined); in a short argument (at most
``SHORT_VALUE_WORDS`` words: a name, a recipient, a channel) also every word of three or more
letters that is not a common English word. Numbers (written in digits, "1,180.00" being 1180,
or spelt out in English words) are learnt by value and checked where a whole argument is one;
dates, in any spelling, by month and day (app.core.permissions.provenance_dates), checked in
the arguments of third-party tools.

Each value of an input is *typed*: an identifier is a value the model would not make up itself
(a URL or e-mail address anywhere, a ``www.`` host, in a short argument any host, handle or id token
that is no date, time or file name), so one that nobody wrote or showed was spelt out to it.
All values are lower case; numbers are kept as ``NUMBER_PREFIX`` + the number, a URL the person
wrote as ``URL_PREFIX`` + the URL without its scheme (``bare_url``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from urllib.parse import SplitResult, urlsplit

from app.core.permissions.provenance_dates import argument_dates, text_dates

__all__ = ["BARE_URL", "NUMBER_PREFIX", "SHORT_VALUE_WORDS", "URL", "argument_values",
           "bare_url", "candidate_values", "destination", "learnable_values",
           "normal_url", "told_destination"]

SHORT_VALUE_WORDS = 6

URL = re.compile(r"https?://[^\s\"'<>()\[\]{}`\\]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_HOST = re.compile(r"\b(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}\b")
_HANDLE = re.compile(r"(?<![\w@#])[@#][A-Za-z0-9][\w.-]{2,}")
_ID = re.compile(r"(?<![\w-])(?=[\w-]*\d)[\w-]{6,}(?![\w-])")
_WORD = re.compile(r"[^\W\d_]{3,}")
# An identifier written in groups: "DE44 5001 0517 5407 3249 31", "4532 0151 1283 0366".
MIN_GROUPED_DIGITS = 6
_GROUPED = re.compile(r"(?<![\w-])[A-Z0-9]{1,6}(?: [A-Z0-9]{1,6}){1,11}(?![\w-])")
# A number: "1,180.00", "35.50", "7291" (not part of a token: "LH2231", "v2").
_NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w|[.,]\d)")
_WHOLE_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
NUMBER_PREFIX = "="  # numbers are kept as "=1180": no other value starts with it
_DATE_OR_TIME = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:t\d{1,2}(?::\d{2}){0,2})?|"
                           r"\d{1,2}[./-]\d{1,2}[./-]\d{2,4}")
BARE_URL = re.compile(_HOST.pattern + r"(?:/[^\s\"'<>()\[\]{}`\\]*)?")
URL_PREFIX = "url:"  # a URL as the person wrote it, without its scheme (and "www.")
# Names that look like hosts but name files: never a destination the model has to be told.
_FILE_SUFFIXES = frozenset({
    "cfg", "csv", "doc", "docx", "gif", "htm", "html", "ini", "jpeg", "jpg", "js", "json",
    "log", "md", "pdf", "png", "ppt", "pptx", "py", "sh", "svg", "toml", "ts", "txt", "xls",
    "xlsx", "xml", "yaml", "yml", "zip",
})
_NUMBER_WORDS = {word: n for n, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen"))}
_NUMBER_WORDS.update({word: 10 * n for n, word in enumerate((
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), start=2)})
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_SPELT_WORD = "(?:" + "|".join(sorted((*_NUMBER_WORDS, *_SCALES), key=len, reverse=True)) + \
    r")\b"
# Matched in lower case (an IGNORECASE alternation is several times slower).
_SPELT_NUMBER = re.compile(rf"(?<![a-z]){_SPELT_WORD}(?:[\s-]+(?:and[\s-]+)?{_SPELT_WORD})*")

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
        if (origin := _origin(parts)) != host:  # another port is another destination
            yield origin
    yield normal_url(url)


def _origin(parts: SplitResult) -> str:
    """The host and, when the URL names one, its port ("127.0.0.1:8123"), lower case: what
    a request goes to. A port the person named does not vouch for another on that host."""
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        return host
    return f"{host}:{port}" if port else host


def told_destination(url: str) -> bool:
    """Does ``url`` go to a port it names or to an IP address: a destination a model does
    not know by itself, only from what it was told?"""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return True
    host = (parts.hostname or "").strip("[]")
    return bool(port) or host.replace(".", "").isdigit() or ":" in host


def destination(url: str) -> str:
    """``url``'s host with its port if it names one (``_origin``); "" if it has none."""
    try:
        return _origin(urlsplit(url.strip()))
    except ValueError:
        return ""


def normal_url(url: str) -> str:
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
    for value, _identifier in _typed_values(text, short):
        yield value
    if short:
        yield from _words(text)


def _words(text: str) -> list[str]:
    """The uncommon words of ``text`` (a list: learning a long text goes through them all)."""
    return [word for word in map(str.lower, _WORD.findall(text)) if word not in _COMMON]


def _typed_values(text: str, short: bool) -> Iterator[tuple[str, bool]]:
    """The candidates of ``text`` but its words, each with whether it is an *identifier*: a
    value the model would not make up itself, so that one nobody wrote or showed was spelt
    out to it."""
    for match in URL.finditer(text):
        yield from _url_typed(match.group())
    for match in _EMAIL.finditer(text):
        yield match.group().lower(), True
    for match in _HOST.finditer(text):
        host = match.group().lower()
        if host not in _TRIVIAL_HOSTS and not host.replace(".", "").isdigit():
            web = host.startswith("www.")
            yield host, (short or web) and host.rsplit(".", 1)[-1] not in _FILE_SUFFIXES
            if web:
                yield host[4:], False
    for match in _HANDLE.finditer(text):  # a recipient the model does not make up
        yield match.group().lower(), short
    for match in _ID.finditer(text):
        token = match.group().lower()
        if _DATE_OR_TIME.fullmatch(token):  # by its day, whatever the spelling
            for date in argument_dates(token):
                yield date, False
        elif not token.isdigit() or len(token) >= 6:
            yield token, short
    for joined in _grouped(text):
        yield joined, short


def _url_typed(url: str) -> Iterator[tuple[str, bool]]:
    """A URL's values: its host (as a value, not an identifier: the URL is one) and itself."""
    values = list(_url_values(url))
    if not values:  # not a URL urlsplit can read: nothing to match
        return
    for value in values[:-1]:
        yield value, False
    yield values[-1], True


def _grouped(text: str) -> Iterator[str]:
    """Identifiers written in groups, joined: every run of two or more neighbouring groups
    with at least ``MIN_GROUPED_DIGITS`` digits ("IBAN DE44 5001 …": with and without the
    word before it)."""
    for match in _GROUPED.finditer(text):
        groups = match.group().split(" ")
        for start in range(len(groups) - 1):
            for end in range(start + 2, len(groups) + 1):
                joined = "".join(groups[start:end])
                if sum(c.isdigit() for c in joined) >= MIN_GROUPED_DIGITS:
                    yield joined.lower()


def _number(token: str) -> str | None:
    """``token`` as a number value ("=1180" for "1,180.00"); None below two digits (a digit
    is in every text)."""
    try:
        value = Decimal(token.replace(",", "").lstrip("+")[:40])
    except InvalidOperation:
        return None
    shown = format(value.normalize(), "f")
    if len(shown.lstrip("-").replace(".", "").lstrip("0")) < 2:
        return None
    return NUMBER_PREFIX + shown


def _numbers(text: str) -> Iterator[str]:
    """The numbers of ``text``, written in digits or spelt out in English words."""
    for match in _NUMBER.finditer(text):
        number = _number(match.group())
        if number is not None:
            yield number
    for match in _SPELT_NUMBER.finditer(text.lower()):
        number = _number(str(_spelt_value(match.group())))
        if number is not None:
            yield number


def _spelt_value(words: str) -> int:
    """"three thousand nine hundred" → 3900."""
    total = current = 0
    for word in _WORD.findall(words):
        if word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        elif word == "hundred":
            current *= 100
        elif word in _SCALES:
            total, current = total + current * _SCALES[word], 0
    return total + current


def bare_url(url: str) -> str | None:
    """``url`` without its scheme, a leading "www.", its fragment and a final "/"."""
    text = url.split("#", 1)[0].rstrip(".,;:!?")
    try:
        parts = urlsplit(text if "://" in text else "//" + text)
        host = (parts.hostname or "").lower()
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    if not host:
        return None
    host = host[4:] if host.startswith("www.") else host
    query = f"?{parts.query}" if parts.query else ""
    return f"{URL_PREFIX}{host}{port}{parts.path.rstrip('/')}{query}"


def learnable_values(text: str) -> Iterator[str]:
    """Every value a later argument could be checked against: the candidates of ``text`` as
    a short value would have them (words included), and its numbers."""
    yield from candidate_values(text, short=True)
    yield from _numbers(text)
    yield from text_dates(text)


def argument_values(text: str, *, numbers: bool) -> Iterator[tuple[str, bool]]:
    """The values of one argument string (stripped), typed as in ``_typed_values``; with
    ``numbers``, the argument itself when it is a number."""
    if URL.fullmatch(text):  # an address: its host and itself, not its words
        yield from _url_typed(text)
        return
    if numbers and _WHOLE_NUMBER.fullmatch(text) and (number := _number(text)) is not None:
        yield number, False
    short = len(text.split()) <= SHORT_VALUE_WORDS
    if numbers and short:  # a date a third-party tool is given (a booking's days)
        for date in argument_dates(text):
            yield date, False
    yield from _typed_values(text, short)
    if short:
        for word in _words(text):
            yield word, False
