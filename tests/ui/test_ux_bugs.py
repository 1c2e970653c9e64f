"""Issue 20's bugs 1, 2, 7 and 8: Markdown keeps its blocks, a key without an OS keyring,
readable command output in tool cards, escaped tool descriptions in Configure."""

from __future__ import annotations

import json

import keyring
import pytest
from keyring.backends.fail import Keyring as NoKeyring
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument

from app.core import secrets
from app.core.agent.credentials import get_api_key, key_source

ANSWER = """Here is a **Markdown** check.

## A heading

```python
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)
```

- one
- two
- three

> a quote

| a | b |
|---|---|
| 1 | 2 |

1. first
2. second

Last *para*.
"""


def _blocks(document: QTextDocument) -> list[tuple[str, int, bool, bool, int]]:
    """(text, heading level, code, in a list, quote level) of every block but an empty line
    in a table cell: Qt's reader puts one into the first cell of a table that follows a quote
    or code, which the streamed rendering does not copy."""
    out = []
    block = document.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if not block.text() and QTextCursor(block).currentTable() is not None:
            block = block.next()
            continue
        out.append((block.text(), fmt.headingLevel(),
                    fmt.hasProperty(QTextBlockFormat.Property.BlockCodeFence),
                    block.textList() is not None,
                    int(fmt.property(QTextBlockFormat.Property.BlockQuoteLevel) or 0)))
        block = block.next()
    return out


def _reference(text: str) -> QTextDocument:
    document = QTextDocument()
    document.setMarkdown(text)
    return document


# -- 1. Markdown keeps its blocks ---------------------------------------------------------------


def test_markdown_answer_keeps_its_blocks_like_set_markdown(qtbot):
    from app.ui.widgets.transcript_view import MessageView

    view = MessageView(ANSWER)  # as a reloaded conversation shows it
    qtbot.addWidget(view)
    reference = _reference(ANSWER)
    assert _blocks(view.document()) == _blocks(reference)
    lines = view.toPlainText().splitlines()  # what Copy gives
    assert lines[:3] == ["Here is a Markdown check.", "A heading", "def fib(n: int) -> int:"]
    # The same lines, but for the empty one Qt's reader adds to the table after the quote.
    assert view.toPlainText() == reference.toPlainText().replace("a quote\n\n", "a quote\n")


@pytest.mark.parametrize("step", [1, 5, 37])
def test_streamed_markdown_keeps_its_blocks(qtbot, step):
    from app.ui.widgets.transcript_view import MessageView

    view = MessageView("", "assistant")
    qtbot.addWidget(view)
    for start in range(0, len(ANSWER), step):
        view.append(ANSWER[start:start + step])
        view.render_markdown()
    assert _blocks(view.document()) == _blocks(_reference(ANSWER))
    headings = [b for b in _blocks(view.document()) if b[1]]
    assert headings == [("A heading", 2, False, False, 0)]


def test_markdown_stream_matches_set_markdown_for_each_construct(qtbot):
    from app.ui.widgets.markdown_stream import MarkdownStream

    samples = ["## Starts with a heading\n\ntext\n", "- a\n- b\n\npara", "1. x\n2. y\n",
               "| h |\n|---|\n| v |\n\nafter", "> q1\n> q2\n\n---\n\nend",
               "text\n\n\n\nmore\n\n```\ncode\n\nmore code\n```\n\ntail"]
    for text in samples:
        for step in (1, 4, len(text)):
            document = QTextDocument()
            stream = MarkdownStream(document)
            for end in range(step, len(text) + step, step):
                stream.render(text[:end])
            assert _blocks(document) == _blocks(_reference(text)), (text, step)


def test_a_long_paragraph_cut_while_streaming_stays_one_paragraph(qtbot):
    from app.ui.widgets.markdown_stream import MarkdownStream

    words = " ".join(f"word{i}" for i in range(2000))
    lines = "\n".join(f"line {i} of one paragraph" for i in range(300))
    for text in (words, lines):
        document = QTextDocument()
        stream = MarkdownStream(document)
        for end in range(40, len(text) + 40, 40):
            stream.render(text[:end])
        assert document.blockCount() == 1
        assert document.toPlainText() == _reference(text).toPlainText()


def test_streaming_replaces_only_the_tail(qtbot):
    """Frozen parts are inserted once: what a tick removes is bounded by the tail, however
    long the answer is (no re-render of the whole document per delta)."""
    from app.ui.widgets.markdown_stream import MAX_TAIL_CHARS, MarkdownStream

    text = "\n\n".join(f"Paragraph {i} with **bold** and `code` in it." for i in range(400))
    document = QTextDocument()
    removed: list[int] = []
    document.contentsChange.connect(lambda _pos, gone, _added: removed.append(gone))
    stream = MarkdownStream(document)
    for end in range(25, len(text) + 25, 25):
        removed.clear()
        stream.render(text[:end])
        assert sum(removed) <= 2 * MAX_TAIL_CHARS
    assert document.toPlainText() == _reference(text).toPlainText()


# -- 2. An API key without an OS keyring --------------------------------------------------------


@pytest.fixture(autouse=True)
def _forget_session_keys(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(secrets, "_session", {}, raising=False)  # none leaks to other tests


@pytest.fixture
def no_keyring(memory_keyring):
    previous = keyring.get_keyring()
    keyring.set_keyring(NoKeyring())
    yield
    keyring.set_keyring(previous)


def _settings(qtbot, services):
    from app.ui.dialogs.settings import SettingsDialog

    profile = services.profiles.ensure_default()
    dialog = SettingsDialog(services, profile.id)
    qtbot.addWidget(dialog)
    return dialog, profile.id


def _fill(tab) -> None:
    tab.api_key.setText("sk-ant-session")
    tab.model.setCurrentText("claude-test-model")
    tab.base_url.setText("http://127.0.0.1:9/")


def test_settings_without_keyring_offer_a_session_key_and_save_the_rest(qtbot, services,
                                                                       no_keyring):
    from PySide6.QtWidgets import QDialog

    dialog, profile_id = _settings(qtbot, services)
    tab = dialog.provider_tab
    # Said up front, with how to get a keyring; the session-only choice is already made.
    assert tab.session_only.isChecked()
    note = tab.keyring_note.text()
    assert not tab.keyring_note.isHidden() and "NoKeyringError" in note
    assert "install" in note.lower() and "GNOME Keyring" in note
    assert "keyrings.alt" not in note  # never a plain-text file of keys
    _fill(tab)
    dialog._save()
    assert dialog.result() == QDialog.DialogCode.Accepted
    profile = services.profiles.get(profile_id)
    assert (profile.model, profile.base_url) == ("claude-test-model", "http://127.0.0.1:9/")
    assert get_api_key() == "sk-ant-session" and key_source() == "session"


def test_a_keyring_failing_at_save_keeps_the_key_for_the_session(qtbot, services,
                                                                memory_keyring):
    dialog, profile_id = _settings(qtbot, services)
    tab = dialog.provider_tab
    assert not tab.session_only.isChecked() and tab.keyring_note.isHidden()
    _fill(tab)
    keyring.set_keyring(NoKeyring())  # the keyring went away (locked, D-Bus gone)
    try:
        dialog._save()
    finally:
        keyring.set_keyring(memory_keyring)
    profile = services.profiles.get(profile_id)
    assert (profile.model, profile.base_url) == ("claude-test-model", "http://127.0.0.1:9/")
    assert get_api_key() == "sk-ant-session"
    assert tab.session_only.isChecked() and "NoKeyringError" in tab.keyring_note.text()
    assert "session only" in tab.status.text()
    assert not memory_keyring.values


def test_with_a_keyring_the_key_is_stored_there(qtbot, services, memory_keyring):
    from PySide6.QtWidgets import QDialog

    dialog, _ = _settings(qtbot, services)
    _fill(dialog.provider_tab)
    dialog._save()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert memory_keyring.values[("tebiki", "anthropic_api_key")] == "sk-ant-session"
    assert key_source() == "keyring"


# -- 7. Command output as text ------------------------------------------------------------------


def _shell_card(content: str, is_error: bool = False):
    from app.ui.widgets.tool_card import ToolCard

    card = ToolCard("toolu_1", "shell_exec", "builtin", {"command": "git status"}, "allow",
                    "allowed by rule")
    card.finish("executed", is_error, 42, content)
    return card


def test_shell_exec_result_shows_stdout_stderr_and_exit_code_as_text(qtbot):
    content = json.dumps({"command": "git status", "exit_code": 1,
                          "stdout": "On branch main\nnothing to commit\n",
                          "stderr": "warning: \"x\" <y>\n", "duration_ms": 12,
                          "success": False, "sandboxed": True}, indent=2)
    card = _shell_card(content)
    qtbot.addWidget(card)
    shown = card.result_section.body.toPlainText()
    assert "\\n" not in shown and "{" not in shown
    assert "On branch main\nnothing to commit" in shown
    assert 'warning: "x" <y>' in shown
    assert "exit code 1" in shown and "$ git status" in shown
    assert shown.index("stdout") < shown.index("On branch") < shown.index("stderr")
    assert card.result_content == content  # what the model got, unchanged


def test_other_results_are_shown_as_they_are(qtbot):
    card = _shell_card("The command was not run. ls is not allowed", is_error=True)
    qtbot.addWidget(card)
    assert card.result_section.body.toPlainText() == \
        "The command was not run. ls is not allowed"
    listing = json.dumps({"entries": ["a", "b"]}, indent=2)
    other = _shell_card(listing)
    qtbot.addWidget(other)
    assert other.result_section.body.toPlainText() == listing


# -- 8. Tool descriptions escaped in Configure --------------------------------------------------


def test_configure_shows_the_whole_shell_exec_description(qtbot, project):
    from PySide6.QtWidgets import QLabel

    from app.core.tools.builtin.shell_exec import ShellExecTool
    from app.ui.dialogs.tool_config import ToolConfigDialog

    spec = ShellExecTool().spec
    dialog = ToolConfigDialog(spec, {}, project)
    qtbot.addWidget(dialog)
    shown = []
    for label in dialog.findChildren(QLabel):
        for text in (label.text(), label.toolTip()):
            document = QTextDocument()
            document.setHtml(text)  # as Qt renders rich text
            shown.append(document.toPlainText())
    whole = " ".join(shown)
    assert "redirection (>, <), subshells, loops and & are refused" in whole
    assert "use shell_jobs to read their output or stop them." in whole
