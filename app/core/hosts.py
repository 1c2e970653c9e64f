"""The one canonical spelling of a host, for permission subjects and host rule patterns.

Why: a rule on a host must hold for every spelling that reaches the same place. ``EXAMPLE.com.``
is ``example.com``; ``[::ffff:7f00:1]``, ``2130706433``, ``0x7f.1``, ``127.1`` and ``0177.0.0.1``
are all ``127.0.0.1``; ``bücher.de`` is ``xn--bcher-kva.de``. If a subject kept its spelling, a
deny on ``127.0.0.1`` would miss ``[::ffff:127.0.0.1]`` and an allow on ``example.com`` would
miss nothing dangerous but confuse people; so both sides of every comparison go through here.

The forms follow what the address means when connected to, which is what the rule is about:

* IPv4 numbers are read as ``inet_aton``/the WHATWG URL standard read them (1–4 parts, each
  decimal, octal with a leading ``0`` or hex with ``0x``; the last part fills the remaining
  bytes). The OS resolver turns such a host into exactly that address, and browsers do too.
  web_fetch's network guard refuses these spellings before any traffic; the canonical form only
  makes sure a rule sees the address they stand for.
* An IPv4-mapped IPv6 address (``::ffff:a.b.c.d``) is an IPv4 connection, so it becomes
  ``a.b.c.d``; other IPv6 addresses take their compressed form, without brackets.
* Names are lower-cased, lose one trailing root dot and take their ASCII (IDNA, ``xn--``) form,
  as httpx encodes them for the connection; UTS #46 mapping also folds full-width and other
  compatibility spellings (``ｅｘａｍｐｌｅ.com``) that httpx refuses but resolvers may accept.

Pure standard library plus ``idna`` (imported only for non-ASCII names), so the permission
service can use it without loading the HTTP stack.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

__all__ = ["canonical_host", "canonical_host_pattern", "parse_ipv4_number"]

_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_OCTAL = re.compile(r"0[0-7]*")


def parse_ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host stands for, None if it is a name.

    WHATWG rule: a host whose last label is a number is an IPv4 address (and an invalid one if
    its parts do not fit); a host whose last label is not a number is a domain name.
    Raises ValueError for a number-ending host that is not a valid address (``1.2.3.4.5``,
    ``09.1``, ``256.0.0.1``), which no resolver turns into an address either.
    """
    labels = host.split(".")
    if labels and labels[-1] == "" and len(labels) > 1:
        labels.pop()  # one trailing root dot
    if not labels or not _is_number_label(labels[-1]):
        return None
    if len(labels) > 4:
        raise ValueError(f"{host!r} has more than four numeric parts")
    numbers = [_parse_ipv4_part(label, host) for label in labels]
    *head, last = numbers
    if any(n > 255 for n in head):
        raise ValueError(f"{host!r}: a part is larger than 255")
    if last >= 256 ** (5 - len(numbers)):
        raise ValueError(f"{host!r}: the last part is too large")
    value = last
    for index, n in enumerate(head):
        value += n * 256 ** (3 - index)
    return ipaddress.IPv4Address(value)


def _is_number_label(label: str) -> bool:
    return bool(_DIGITS.fullmatch(label) or _HEX.fullmatch(label))


def _parse_ipv4_part(label: str, host: str) -> int:
    if not label:
        raise ValueError(f"{host!r} has an empty numeric part")
    if _HEX.fullmatch(label):
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        if not _OCTAL.fullmatch(label):
            raise ValueError(f"{host!r}: {label!r} is not an octal number")
        return int(label, 8)
    if not _DIGITS.fullmatch(label):
        raise ValueError(f"{host!r}: {label!r} is not a number")
    return int(label)


def canonical_host(host: str) -> str:
    """The canonical spelling of ``host`` (see the module docstring); ValueError if invalid.

    Accepts what httpx leaves in ``URL.raw_host`` as well as what a person types in a rule:
    brackets around IPv6, any case, a trailing dot, Unicode or percent-encoded names.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if "%" in text:
        text = unquote(text)  # WHATWG percent-decodes hosts (an IPv6 zone id's %25 too)
    if not text:
        raise ValueError("empty host")
    if ":" in text:
        try:
            v6 = ipaddress.IPv6Address(text)
        except ValueError:
            raise ValueError(f"{host!r} is not a valid IPv6 address") from None
        mapped = v6.ipv4_mapped
        return str(mapped) if mapped is not None else str(v6)  # str() is the compressed form
    if len(text) > 1 and text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    text = text.lower()
    if not text.isascii():
        text = _idna(text, host)
    v4 = parse_ipv4_number(text)
    if v4 is not None:
        return str(v4)
    return text


def _idna(text: str, original: str) -> str:
    import idna  # a dependency of httpx; only needed for the rare non-ASCII name

    try:
        return idna.encode(text, uts46=True).decode("ascii").lower()
    except idna.IDNAError as exc:
        raise ValueError(f"{original!r} is not a valid international host name ({exc})") from None


def canonical_host_pattern(pattern: str) -> str:
    """A host rule's input pattern in the same spelling as the subjects it is matched against.

    A pattern without ``*`` is a host: it takes its canonical form (one that is not a valid
    host is only lower-cased, so it still matches the same text it did before). With ``*``,
    each label without a wildcard is canonicalised as a name (case, IDNA), and the whole loses
    its brackets and trailing dot; numeric labels are left alone, since ``10.*`` is not an
    address but a prefix of dotted-decimal ones.
    """
    if "*" not in pattern:
        try:
            return canonical_host(pattern)
        except ValueError:
            return pattern.strip().lower()
    text = pattern.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    labels = []
    for label in text.lower().split("."):
        if "*" not in label and label and not label.isascii():
            try:
                label = _idna(label, pattern)
            except ValueError:
                pass
        labels.append(label)
    return ".".join(labels)
