"""Reopening a stored conversation shows its images as thumbnails again, and a damaged stored
message (hand-edited database, a crash mid-write in an old version) never stops the rest of
the conversation from showing."""

from __future__ import annotations

import base64
from pathlib import Path

from app.core.services import Services
from app.ui.widgets.tool_card import ToolCard
from app.ui.widgets.transcript_view import MessageView
from tests.ui.conftest import make_ai_panel

# A 1×1 PNG.
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d1f4e30000000049454e44ae426082"
)).decode()


def test_reload_shows_thumbnails_and_survives_damaged_blocks(qtbot, services: Services,
                                                             project: Path) -> None:
    repo = services.conversations
    conv = repo.create(title="damaged", project_root=str(project))
    repo.append(conv.id, "user", [{"type": "text", "text": "look at the chart"}])
    repo.append(conv.id, "assistant", [
        "not a block",
        {"type": "tool_use", "name": "read_file"},  # no id
        {"type": "tool_use", "id": "toolu_img", "name": "read_file", "input": {"path": "a.png"}},
    ])
    repo.append(conv.id, "user", [
        {"type": "tool_result", "tool_use_id": "toolu_img", "content": [
            {"type": "text", "text": "the chart"}, 7,
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": PNG}}]},
    ])
    repo.append(conv.id, "assistant", [{"type": "text", "text": "It rises."}])
    panel = make_ai_panel(qtbot, services, project)

    panel.conversations.open(conv.id)

    texts = [w.source_text() if hasattr(w, "source_text") else w.toPlainText()
             for w in panel.transcript.items() if isinstance(w, MessageView)]
    assert any("It rises." in t for t in texts)
    cards = [w for w in panel.transcript.items() if isinstance(w, ToolCard)]
    assert [c.tool_use_id for c in cards] == ["toolu_img"]
    assert cards[0].thumbnails is not None and len(cards[0].thumbnails.labels) == 1
