"""What models' answers contain, as Markdown cases for the rendering tests, and the two
readings compared: markdown-it-py's (the reference, CommonMark + GFM tables/strikethrough)
and the rendered QTextDocument's, each reduced to the same outline of blocks."""

from __future__ import annotations

from markdown_it import MarkdownIt
from PySide6.QtGui import QTextBlockFormat, QTextDocument, QTextFormat

CORPUS: dict[str, str] = {
    "nested_bullets": "- one\n  - one.a\n    - one.a.i\n- two\n",
    "nested_mixed": ("1. first\n   - sub bullet\n   - another\n"
                     "2. second\n   1. sub one\n   2. sub two\n"),
    "ordered_from_3": "3. three\n4. four\n5. five\n",
    "ordered_then_bullets": "1. Run `git add`.\n2. Run `git commit`.\n\n- a bullet\n- another\n",
    "list_paragraph_list": "- a\n- b\n\nA paragraph between.\n\n- c\n- d\n",
    "loose_list": "- first\n\n- second\n\n- third\n",
    "tight_list": "- first\n- second\n- third\n",
    "code_in_list": "1. Install:\n\n   ```bash\n   pip install x\n   ```\n\n2. Run it.\n",
    "quote_list_code": "> Note:\n> - item one\n> - item two\n>\n> ```python\n> print(1)\n> ```\n",
    "nested_quotes": "> outer\n>\n> > inner\n> >\n> > > innermost\n",
    "table_aligned": ("| Left | Centre | Right |\n|:-----|:------:|------:|\n"
                      "| a | b | c |\n| dd | ee | ff |\n"),
    "table_inline_code": "| Name | Use |\n|---|---|\n| `ls` | list |\n| `a \\| b` | pipe |\n",
    "table_wide": ("| " + " | ".join(f"column{i}" for i in range(12)) + " |\n|"
                   + "---|" * 12 + "\n| " + " | ".join(f"value{i}" for i in range(12)) + " |\n"),
    "task_list": "- [ ] todo\n- [x] done\n",
    "strike": "This is ~~gone~~ kept.\n",
    "headings": "".join(f"{'#' * n} Heading {n}\n\n" for n in range(1, 7)),
    "setext": "Title\n=====\n\nSub\n---\n\nbody\n",
    "hard_break_spaces": "line one  \nline two\n",
    "hard_break_backslash": "line one\\\nline two\n",
    "rules": "above\n\n---\n\nbelow\n\n***\n\nend\n",
    "inline_backticks": "Use ``a `tick` inside`` here.\n",
    "links": "See [the docs](https://example.com/docs) and <https://example.org>.\n",
    "image": "Look: ![a chart](http://127.0.0.1:9/chart.png) done.\n",
    "raw_html": "Text <b>bold?</b> and <script>alert(1)</script> end.\n",
    "footnote_ish": "A claim[^1].\n\n[^1]: The source.\n",
    "emoji_cjk_rtl": "Emoji 🎉✅, 日本語のテキスト, עברית מימין לשמאל, العربية.\n",
    "long_word": "x" * 400 + "\n",
    "code_python": "```python\ndef f(x):\n    return x * 2\n```\n",
    "code_unknown_lang": "```nosuchlang\nsome code\n```\n",
    "code_no_lang": "```\nplain\n  indented\n```\n",
    "code_tilde": "~~~js\nlet a = 1;\n~~~\n",
    "emphasis": "*italic* **bold** ***both*** `code`\n",
    "paragraphs": "First paragraph.\n\nSecond paragraph\ncontinues here.\n",
    "heading_then_list": "## Steps\n\n1. one\n2. two\n",
    "list_then_heading": "- a\n- b\n\n## Next\n\ntext\n",
    "quote_then_paragraph": "> quoted\n\nnot quoted\n",
    "code_then_list": "```\nx = 1\n```\n\n- after code\n",
    "bullets_star_plus": "* star\n* star two\n\n+ plus\n+ plus two\n",
    "ordered_paren": "1) one\n2) two\n",
    "deep_nesting": "- l1\n  - l2\n    - l3\n  - l2b\n- l1b\n",
    "list_item_paragraphs": "- item\n\n  more of the item\n- next\n",
    "task_then_code": "- [x] done\n```\ncode after a checked item\n```\n",
    "indented_code": "para\n\n    indented code\n    line two\n\nafter\n",
}


def _plain_inline(token) -> str:
    out = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(" ")
        elif child.type == "hardbreak":
            out.append("\n")  # Qt's reader starts a new block there: split by the caller
        elif child.type == "image":
            out.append(f"[image: {child.content}]" if child.content else "[image]")
    return "".join(out)


def reference_outline(markdown: str) -> list[tuple]:
    """(kind, details..., text) per leaf block, by markdown-it-py (never by the code tested)."""
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)
    lists: list[tuple[bool, int]] = []   # (ordered, start) per open list
    quotes = 0
    outline: list[tuple] = []
    heading = 0
    in_cell = False
    for token in tokens:
        kind = token.type
        if kind == "bullet_list_open":
            lists.append((False, 1))
        elif kind == "ordered_list_open":
            lists.append((True, int(token.attrGet("start") or 1)))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "blockquote_open":
            quotes += 1
        elif kind == "blockquote_close":
            quotes -= 1
        elif kind == "heading_open":
            heading = int(token.tag[1])
        elif kind == "heading_close":
            heading = 0
        elif kind in ("th_open", "td_open"):
            in_cell = True
        elif kind in ("th_close", "td_close"):
            in_cell = False
        elif kind in ("fence", "code_block"):
            outline.append(("code", quotes, len(lists), token.content.rstrip("\n")))
        elif kind == "hr":
            outline.append(("rule",))
        elif kind == "inline":
            text = _plain_inline(token)
            if in_cell:
                outline.append(("cell", text.strip()))
            elif heading:
                outline.append(("heading", heading, text))
            else:
                ordered = lists[-1][0] if lists else False
                # A hard line break: Qt's reader starts a new block (same look, a line down).
                outline += [("text", quotes, len(lists), ordered, line)
                            for line in text.split("\n")]
    return outline


def rendered_outline(document: QTextDocument) -> list[tuple]:
    """The same outline read from a rendered document. Consecutive code-fence blocks are one
    code block; a table's cells come in order; a rule is its own block."""
    outline: list[tuple] = []
    block = document.begin()
    code: list[str] = []
    while block.isValid():
        block_format = block.blockFormat()
        text = block.text().replace("\u2028", "\n")
        text_list = block.textList()
        # A list item's own depth; a paragraph or code inside an item is indented as deep.
        depth = text_list.format().indent() if text_list is not None else block_format.indent()
        marker = block_format.marker()
        if marker == QTextBlockFormat.MarkerType.Checked:
            text = "[x] " + text
        elif marker == QTextBlockFormat.MarkerType.Unchecked:
            text = "[ ] " + text
        quote = block_format.intProperty(QTextFormat.Property.BlockQuoteLevel)
        cursor_table = _table_of(document, block)
        if _is_code(block_format):
            code.append(text)
            following = block.next()
            if not (following.isValid() and _is_code(following.blockFormat())):
                outline.append(("code", quote, depth, "\n".join(code)))
                code = []
        elif block_format.hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth):
            outline.append(("rule",))
        elif cursor_table:
            outline.append(("cell", text.strip()))
        elif block_format.headingLevel():
            outline.append(("heading", block_format.headingLevel(), text))
        elif text or text_list is not None:
            ordered = text_list is not None and text_list.format().style().value < -3
            outline.append(("text", quote, depth, ordered, text))
        block = block.next()
    return outline


def list_starts(document: QTextDocument) -> list[tuple[int, int, bool]]:
    """(indent, start, ordered) of each distinct list, in order of its first item."""
    seen: list = []
    out = []
    block = document.begin()
    while block.isValid():
        text_list = block.textList()
        if text_list is not None and not any(text_list is s for s in seen):
            seen.append(text_list)
            list_format = text_list.format()
            out.append((list_format.indent(), list_format.start(),
                        list_format.style().value < -3))
        block = block.next()
    return out


def reference_list_starts(markdown: str) -> list[tuple[int, int, bool]]:
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)
    depth = 0
    out = []
    for token in tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
            ordered = token.type == "ordered_list_open"
            out.append((depth, int(token.attrGet("start") or 1) if ordered else 1, ordered))
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
    return out


def _table_of(document: QTextDocument, block) -> bool:
    from PySide6.QtGui import QTextCursor
    cursor = QTextCursor(block)
    return cursor.currentTable() is not None


def _is_code(block_format: QTextBlockFormat) -> bool:
    """Fenced or indented code (Qt's reader marks both with a language, perhaps empty)."""
    return block_format.hasProperty(QTextFormat.Property.BlockCodeFence) or \
        block_format.hasProperty(QTextFormat.Property.BlockCodeLanguage)
