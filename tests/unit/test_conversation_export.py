"""Export of a stored conversation as Markdown (app.core.conversation_export), without Qt."""

from __future__ import annotations

from pathlib import Path

from app.core.conversation_export import (
    RESULT_MAX_LINES,
    conversation_markdown,
    suggested_filename,
)
from app.core.store.conversations import Conversation, ConversationRepository, StoredMessage


def _conversation(title: str = "Fix the parser") -> Conversation:
    return Conversation(7, title, None, "/home/me/project", "2026-11-20T09:05:00.000+00:00",
                        "2026-11-21T17:30:00.000+00:00")


def _message(role: str, content: object, id_: int = 1) -> StoredMessage:
    return StoredMessage(id_, role, content)  # type: ignore[arg-type]


def test_turns_tool_calls_and_results_in_order_without_thinking() -> None:
    messages = [
        _message("user", [{"type": "text", "text": "Read the **README** please"}]),
        _message("assistant", [
            {"type": "thinking", "thinking": "SECRET PLAN", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Reading it now."},
            {"type": "tool_use", "id": "tu_1", "name": "read_file",
             "input": {"path": "README.md", "limit": 20}},
        ]),
        _message("user", [{"type": "tool_result", "tool_use_id": "tu_1",
                           "content": [{"type": "text", "text": "# Title\nbody line"}]}]),
        _message("assistant", [{"type": "text", "text": "It has a title."}]),
    ]
    text = conversation_markdown(_conversation(), messages)

    assert text.startswith("# Fix the parser\n\nProject: `/home/me/project`")
    assert "Started: 2026-11-20 09:05 UTC" in text and "Updated: 2026-11-21 17:30 UTC" in text
    assert "SECRET PLAN" not in text and "opaque" not in text
    expected = (
        "## You\n\nRead the **README** please\n\n"
        "## Assistant\n\nReading it now.\n\n"
        "**Tool call:** `read_file`\n\n"
        '```json\n{\n  "path": "README.md",\n  "limit": 20\n}\n```\n\n'
        "**Result of** `read_file`\n\n```text\n# Title\nbody line\n```\n\n"
        "## Assistant\n\nIt has a title.\n"
    )
    assert text.endswith(expected)
    # A user turn holding only tool results has no "You" heading of its own.
    assert text.count("## You") == 1


def test_error_results_are_marked_and_long_results_summarised() -> None:
    long_output = "\n".join(f"line {n}" for n in range(RESULT_MAX_LINES + 25))
    messages = [
        _message("assistant", [{"type": "tool_use", "id": "a", "name": "shell_exec",
                                "input": {"command": "make"}},
                               {"type": "tool_use", "id": "b", "name": "grep",
                                "input": {"pattern": "x"}}]),
        _message("user", [
            {"type": "tool_result", "tool_use_id": "a", "content": "boom", "is_error": True},
            {"type": "tool_result", "tool_use_id": "b", "content": long_output},
        ]),
    ]
    text = conversation_markdown(_conversation(), messages)
    assert "**Result of** `shell_exec` (error)\n\n```text\nboom\n```" in text
    assert f"line {RESULT_MAX_LINES - 1}\n" in text
    assert f"line {RESULT_MAX_LINES}\n" not in text
    assert "… (25 more lines)" in text


def test_fences_are_longer_than_any_backticks_inside() -> None:
    messages = [
        _message("assistant", [{"type": "tool_use", "id": "w", "name": "write_file",
                                "input": {"content": "```python\nprint(1)\n```"}}]),
        _message("user", [{"type": "tool_result", "tool_use_id": "w",
                           "content": "````\nfour\n````"}]),
    ]
    text = conversation_markdown(_conversation(), messages)
    assert "````json\n" in text  # the input holds a run of 3
    assert "`````text\n````\nfour\n````\n`````" in text  # the result a run of 4


def test_malformed_stored_content_is_shown_not_raised() -> None:
    messages = [
        _message("user", "plain string content"),
        _message("assistant", [42, {"type": "text", "text": None}, {"type": "mystery"},
                               {"type": "image", "source": {}}]),
        _message("assistant", {"not": "a list"}),
        _message("user", [{"type": "tool_result", "tool_use_id": "unknown",
                           "content": [{"weird": True}, {"type": "image"}]}]),
    ]
    text = conversation_markdown(_conversation(""), messages)
    assert text.startswith("# Conversation 7\n")
    assert "plain string content" in text
    assert text.count("*[unreadable content]*") == 4  # 42, text None, mystery, the dict
    assert "*[image attached]*" in text
    assert "**Result**\n\n```text\n{\n  \"weird\": true\n}\n[image]\n```" in text


def test_titles_become_safe_file_names() -> None:
    assert suggested_filename(_conversation("Fix: the ../../parser!")) == "fix-the-parser.md"
    assert suggested_filename(_conversation("   ")) == "conversation-7.md"
    assert suggested_filename(_conversation("日本語")) == "conversation-7.md"


def test_exports_what_the_repository_stored(db, tmp_path: Path) -> None:
    repo = ConversationRepository(db)
    conv = repo.create(title="Stored", project_root=str(tmp_path))
    repo.append(conv.id, "user", [{"type": "text", "text": "hi there"}])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "hello"}])
    text = conversation_markdown(repo.get(conv.id), repo.messages(conv.id))
    assert "## You\n\nhi there\n\n## Assistant\n\nhello\n" in text


def test_a_compaction_marker_is_a_note_not_an_unreadable_block() -> None:
    from app.core.agent.compaction import marker_content

    messages = [
        _message("user", [{"type": "text", "text": "First question"}], 1),
        _message("assistant", [{"type": "text", "text": "First answer"}], 2),
        _message("user", marker_content("THE SUMMARY TEXT", 2), 3),
        _message("user", [{"type": "text", "text": "Second question"}], 4),
    ]
    text = conversation_markdown(_conversation(), messages)

    assert "compacted here" in text
    assert "unreadable" not in text.lower()
    assert "THE SUMMARY TEXT" not in text
    assert text.index("First answer") < text.index("compacted here") < text.index("Second")
