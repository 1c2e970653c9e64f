"""Turning fetched bytes into text a model can read: type sniffing, charsets, HTML → Markdown.

HTML is parsed by Lexbor (``selectolax``) and converted by the Rust ``html-to-markdown`` library;
no hand-written tag stripping. Conversion is *budgeted*: the tool returns at most 100,000
characters, so converting a whole 5 MB page and throwing 98 % away would waste a core for a
quarter of a second. The converter walks the parsed tree in document order, converts a prefix
that is comfortably larger than the budget, and grows it only when the Markdown came out short.
Small pages are converted completely and report their exact length; when a big page is cut, the
total is estimated from the visible text of the part that was not converted (said so in the
result).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from typing import Literal

from html_to_markdown import ConversionOptions, PreprocessingOptions
from html_to_markdown import convert as _h2m_convert
from selectolax.lexbor import LexborHTMLParser, LexborNode

ContentKind = Literal["html", "text", "binary"]

# Never shown to the model: code, styling, vector art, embedded apps, form widgets.
JUNK_TAGS = frozenset({
    "script", "style", "noscript", "svg", "template", "iframe", "object", "embed", "canvas",
    "link", "meta", "base", "head", "title", "select", "button", "input", "textarea",
    "video", "audio", "source", "track", "map", "dialog",
})
# Page chrome dropped by main-content extraction (header/footer only outside the content).
BOILERPLATE_TAGS = frozenset({"nav", "aside", "form", "header", "footer", "menu"})
BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search",
                               "menu", "menubar", "dialog", "alert"})
# Elements with no Markdown meaning of their own: the walk may look inside them.
CONTAINER_TAGS = frozenset({"html", "body", "div", "main", "article", "section", "header",
                            "footer", "nav", "aside", "form", "fieldset", "center", "hgroup",
                            "search"})
# Elements whose text (raw text in Lexbor's tree) would inflate a visible-text count.
_ESTIMATE_SKIP = "script,style,noscript,template"

_TEXT_MIME_PREFIXES = ("text/",)
_TEXT_MIMES = frozenset({
    "application/json", "application/ld+json", "application/xml", "application/javascript",
    "application/ecmascript", "application/x-javascript", "application/yaml",
    "application/x-yaml", "application/toml", "application/x-ndjson", "application/graphql",
    "application/x-sh", "application/sql", "application/csv", "application/markdown",
})
_HTML_MIMES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# WHATWG: these labels mean windows-1252 on the web.
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
                    "us-ascii": "cp1252", "ascii": "cp1252", "iso8859-1": "cp1252",
                    "x-user-defined": "cp1252", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8"}


# -- content types ------------------------------------------------------------------------------

def parse_content_type(header: str | None) -> tuple[str, str | None]:
    """``text/html; charset=UTF-8`` → (``text/html``, ``UTF-8``)."""
    if not header:
        return "", None
    parts = header.split(";")
    mime = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return mime, charset


def classify(mime: str, head: bytes) -> ContentKind:
    """Decide how to treat a body from its declared type, sniffing when the type is missing."""
    if mime in _HTML_MIMES:
        return "html"
    if (mime.startswith(_TEXT_MIME_PREFIXES) or mime in _TEXT_MIMES
            or mime.endswith(("+json", "+xml"))):
        return "text"
    if mime and mime not in ("application/octet-stream", "binary/octet-stream", "unknown/unknown"):
        return "binary"
    # Missing or generic type: look at the bytes like a browser would.
    sample = head[:1024].lstrip().lower()
    if sample.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "html"
    if head.startswith(tuple(bom for bom, _ in _BOMS)):
        return "text"
    if b"\x00" in head[:8192]:
        return "binary"
    try:
        head[:8192].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head[:8192]) - 4:  # not just a character cut at the sample's end
            return "binary"
    return "text"


# -- charsets -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decoded:
    text: str
    charset: str
    notes: tuple[str, ...] = ()
    # The body itself when it is valid UTF-8: Lexbor parses bytes ~15 % faster than a str.
    utf8: bytes | None = None


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_body(body: bytes, header_charset: str | None, kind: ContentKind) -> Decoded:
    """Decode with BOM > Content-Type charset > <meta charset> > UTF-8 > windows-1252."""
    notes: list[str] = []
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return Decoded(body.decode(bom_codec, errors="replace"), bom_codec)
    codec = _codec(header_charset)
    if header_charset and codec is None:
        notes.append(f"The server declared an unknown charset {header_charset!r}; "
                     "the text was decoded by other means.")
    if codec is None and kind == "html":
        match = _META_CHARSET.search(body[:4096])
        if match:
            label = match.group(1).decode("ascii", "replace")
            codec = _codec(label)
            if codec is None:
                notes.append(f"The page declared an unknown charset {label!r} in <meta>.")
    if codec is not None:
        try:
            raw = body if codec == "utf-8" else None
            return Decoded(body.decode(codec), codec, tuple(notes), raw)
        except UnicodeDecodeError:
            notes.append(f"Some bytes were not valid {codec}; they are shown as \ufffd.")
            return Decoded(body.decode(codec, errors="replace"), codec, tuple(notes))
    try:
        return Decoded(body.decode("utf-8"), "utf-8", tuple(notes), body)
    except UnicodeDecodeError as exc:
        if exc.start >= len(body) - 3:  # cut mid-character by the size cap
            return Decoded(body.decode("utf-8", errors="replace"), "utf-8", tuple(notes))
    notes.append("No charset was declared and the bytes are not UTF-8; decoded as windows-1252.")
    return Decoded(body.decode("cp1252", errors="replace"), "cp1252", tuple(notes))


# -- HTML → Markdown ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Converted:
    text: str                 # at most ``limit`` characters
    total_chars: int          # length of the whole page as Markdown
    total_is_estimate: bool   # True when the tail was not converted (see module docstring)
    title: str | None = None
    main_content: bool = False  # True when only the main content was kept
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def truncated(self) -> bool:
        return self.total_chars > len(self.text)


def _options(base_url: str | None) -> ConversionOptions:
    return ConversionOptions(
        heading_style="atx",
        extract_metadata=False,
        preprocessing=PreprocessingOptions(enabled=False),  # we prune ourselves, predictably
        exclude_selectors=sorted(JUNK_TAGS - {"head"}),
        inline_data_media="alt_text_only",  # never dump base64 images into the context
        hidden_content="drop",
        base_url=base_url,
        autolinks=False,
    )


def _open_tag(node: LexborNode) -> str:
    attrs = "".join(f' {k}' if v is None else f' {k}="{escape(v)}"'
                    for k, v in node.attributes.items())
    return f"<{node.tag}{attrs}>"


@dataclass
class _Walk:
    """Document-order HTML fragments of a subtree, skipping junk (and chrome in main mode).

    Containers (``div``, ``section``…) are entered rather than copied whole, so the caller can
    stop anywhere; ``open_tags`` lists the closing tags needed to make the prefix well-formed.
    """

    skip_tags: frozenset[str]
    main_content: bool = False
    content_depth: int = 0  # inside <main>/<article>/<section>: their header/footer are content
    text_chars: int = 0  # visible text of the fragments emitted so far
    open_tags: list[str] = field(default_factory=list)

    def events(self, root: LexborNode) -> Iterator[str]:
        # Iterative DFS so very deep pages cannot hit the recursion limit.
        stack: list[LexborNode | str] = list(reversed(list(_children(root))))
        while stack:
            item = stack.pop()
            if isinstance(item, str):  # a closing tag
                self.open_tags.pop()
                if item in _CONTENT_CLOSERS:
                    self.content_depth -= 1
                yield item
                continue
            node = item
            if node.is_text_node:
                text = node.text_content or ""
                self.text_chars += len(text.strip())
                yield escape(text, quote=False)
                continue
            if not node.is_element_node or self._skipped(node):
                continue
            tag = node.tag
            if tag in CONTAINER_TAGS:
                closer = f"</{tag}>"
                self.open_tags.append(closer)
                if closer in _CONTENT_CLOSERS:
                    self.content_depth += 1
                stack.append(closer)
                stack.extend(reversed(list(_children(node))))
                yield _open_tag(node)
                continue
            self.text_chars += len(node.text(deep=True))
            yield node.html or ""

    def _skipped(self, node: LexborNode) -> bool:
        tag = node.tag
        if tag in self.skip_tags:
            return True
        if not self.main_content:
            return False
        if tag in BOILERPLATE_TAGS and not (tag in ("header", "footer") and self.content_depth):
            return True
        role = node.attributes.get("role")
        return bool(role and role.strip().lower() in BOILERPLATE_ROLES)


_CONTENT_CLOSERS = frozenset({"</main>", "</article>", "</section>"})


def _children(node: LexborNode) -> Iterator[LexborNode]:
    return node.iter(include_text=True)


def _visible_text_chars(root: LexborNode, skip_selector: str) -> int:
    total = len(root.text(deep=True))
    for junk in root.css(skip_selector):
        total -= len(junk.text(deep=True))
    return max(total, 0)


def _pick_root(tree: LexborHTMLParser, main_content: bool) -> LexborNode:
    body = tree.body or tree.root
    assert body is not None
    if not main_content:
        return body
    for selector in ("main", "[role=main]"):
        node = tree.css_first(selector)
        if node is not None:
            return node
    articles = tree.css("article")
    if len(articles) == 1:
        return articles[0]
    return body


def _title(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("head > title") or tree.css_first("title")
    if node is None:
        return None
    title = " ".join(node.text().split())
    return title or None


def html_to_markdown(html: str | bytes, *, limit: int, main_content: bool = False,
                     base_url: str | None = None) -> Converted:
    """Markdown of ``html``: the first ``limit`` characters and the (estimated) total length.

    ``html`` may be UTF-8 bytes (see ``Decoded.utf8``). CPU-bound; run it in a worker thread
    from async code.
    """
    depth = excessive_nesting(html)
    if depth is not None:
        if isinstance(html, bytes):
            html = html.decode("utf-8", errors="replace")
        # Lexbor's tree builder is quadratic in block nesting depth; html-to-markdown's own
        # parser is linear and stops descending at its depth limit. Convert with it alone.
        markdown = _md(html, _options(base_url))
        note = (f"The page nests block elements at least {depth:,} levels deep, a sign of broken "
                "or hostile markup; it was converted without main-content extraction and "
                "deeply nested text may be missing.")
        return Converted(markdown[:limit], len(markdown), False, None, False, (note,))
    tree = LexborHTMLParser(html)
    result = _convert_tree(tree, limit=limit, main_content=main_content, base_url=base_url)
    kept = len(result.text.strip())
    if main_content and not result.truncated and kept < 200:
        # Landmark extraction kept almost nothing (e.g. a page that is one big <nav>): show all.
        full = _convert_tree(tree, limit=limit, main_content=False, base_url=base_url)
        if len(full.text.strip()) > max(3 * kept, 500):
            return full
    return result


# Opening one of these makes an HTML5 tree builder look down the stack of open elements for a
# <p> to close, so parse time grows with the square of their nesting depth (Lexbor, measured on
# 20,000 nested <div>: ~0.5-1 s; 40,000: ~2.5 s; a 5 MB page of them would take many minutes).
_DEEP_BLOCK_TAG = re.compile(
    r"<(/?)(?:address|article|aside|blockquote|center|details|dialog|dir|div|dl|fieldset|"
    r"figcaption|figure|footer|header|hgroup|listing|main|menu|nav|ol|pre|search|section|"
    r"summary|ul)[\s/>]")
MAX_BLOCK_DEPTH = 1_000  # browsers cap their DOM depth near 512
# Depth needs at least one "<" per level. Pages with fewer than one "<" per this many characters
# skip the exact scan (at 5 MB that bounds the depth below 131,000: tens of seconds of one core
# at worst instead of an hour); denser pages pay ~15-25 ms per 5 MB for an exact count.
_TAG_DENSITY_GATE = 40


def excessive_nesting(html: str | bytes) -> int | None:
    """The block nesting depth if it exceeds ``MAX_BLOCK_DEPTH``, else None."""
    lt_count = html.count(b"<") if isinstance(html, bytes) else html.count("<")
    if lt_count * _TAG_DENSITY_GATE < len(html) or len(html) < 5 * MAX_BLOCK_DEPTH:
        return None
    if isinstance(html, bytes):
        html = html.decode("utf-8", errors="replace")
    depth = 0
    for match in _DEEP_BLOCK_TAG.finditer(html.lower()):
        if match.group(1):
            depth = max(depth - 1, 0)
        else:
            depth += 1
            if depth > MAX_BLOCK_DEPTH:
                return depth
    return None


def _convert_tree(tree: LexborHTMLParser, *, limit: int, main_content: bool,
                  base_url: str | None) -> Converted:
    root = _pick_root(tree, main_content)
    # A <main>/<article> root is content already: its own header and footer are kept.
    walk = _Walk(JUNK_TAGS, main_content, content_depth=int(root.tag != "body"))
    options = _options(base_url)
    parts: list[str] = []
    html_chars = 0
    # HTML of text-heavy pages is ~1.2x its Markdown; typical pages (<96 KB of content HTML)
    # are converted in one go and get an exact total.
    threshold = max(limit + limit // 2, 98_304)
    markdown = ""
    converted_parts = -1
    complete = True
    for fragment in walk.events(root):
        parts.append(fragment)
        html_chars += len(fragment)
        if html_chars >= threshold:
            markdown = _md("".join(parts) + "".join(reversed(walk.open_tags)), options)
            converted_parts = len(parts)
            if len(markdown) > limit:
                complete = False
                break
            # Too short: grow towards the size the observed HTML/Markdown ratio predicts.
            threshold = int(html_chars * min(max(1.3 * limit / max(len(markdown), 1), 1.5), 8))
    if complete and converted_parts != len(parts):
        markdown = _md("".join(parts), options)
    title = _title(tree)
    if complete:
        return Converted(markdown[:limit], len(markdown), False, title, main_content)
    # Cut early: count the visible text of the part not converted as Markdown of the same
    # length (links and markup make real Markdown a little longer: the total is "about").
    skip = _ESTIMATE_SKIP + (",nav,aside,form,menu" if main_content else "")
    remaining_text = max(_visible_text_chars(root, skip) - walk.text_chars, 0)
    estimate = len(markdown) + remaining_text
    return Converted(markdown[:limit], estimate, True, title, main_content)


_BLANK_RUNS = re.compile(r"\n{3,}")


def _md(html: str, options: ConversionOptions) -> str:
    content = _h2m_convert(html, options).content or ""
    return _BLANK_RUNS.sub("\n\n", content).strip()
