"""The sampling dialog: what the person sees, and Approve / edit / Decline / close."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.core.agent.sampling import SamplingPrompt
from app.core.tools.providers.mcp.server_requests import SamplingMessage, SamplingRequest
from app.ui.dialogs.sampling import SamplingDialog


def _prompt(max_tokens: int = 300, cap: int = 1000) -> SamplingPrompt:
    request = SamplingRequest(
        messages=(
            SamplingMessage("user", ({"type": "text", "text": "First question"},)),
            SamplingMessage("assistant", ({"type": "text", "text": "First answer"},)),
            SamplingMessage("user", ({"type": "text", "text": "Summarise \x1b[31mthis"},
                                     {"type": "image", "data": "AAAA",
                                      "mimeType": "image/png"})),
        ),
        max_tokens=max_tokens, system_prompt="Be brief.", model_hints=("claude-3-haiku",),
        priorities={"speedPriority": 0.8})
    return SamplingPrompt("weather", request, "claude-sonnet-4-5", min(max_tokens, cap), cap,
                          "no rule matched")


def _dialog(qtbot, prompt: SamplingPrompt | None = None) -> SamplingDialog:
    dialog = SamplingDialog(prompt or _prompt())
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_shows_server_messages_model_hints_cap_and_system_prompt(qtbot):
    dialog = _dialog(qtbot)
    assert "weather" in dialog.windowTitle()
    assert "claude-sonnet-4-5" in dialog.model_label.text()
    assert "claude-3-haiku" in dialog.model_label.text()
    assert "speed priority 0.8" in dialog.model_label.text()
    assert dialog.system_view.toPlainText() == "Be brief."
    transcript = dialog.messages_view.toPlainText()
    assert "First question" in transcript and "First answer" in transcript
    assert "\x1b" not in dialog.user_text.toPlainText()  # escapes are made visible
    assert dialog.attachments_label.text() == "It also sends: image (image/png)"
    assert dialog.attachments_label.isVisibleTo(dialog)
    assert dialog.max_tokens.value() == 300 and dialog.max_tokens.maximum() == 1000
    assert not dialog.approve_button.isDefault() and not dialog.approve_button.autoDefault()


def test_the_proposal_never_exceeds_the_cap(qtbot):
    dialog = _dialog(qtbot, _prompt(max_tokens=5000, cap=200))
    assert dialog.max_tokens.value() == 200
    dialog.max_tokens.setValue(10_000)
    assert dialog.max_tokens.value() == 200


def test_approve_unchanged(qtbot):
    dialog = _dialog(qtbot, _prompt())
    with qtbot.waitSignal(dialog.finished):
        qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    approval = dialog.approval()
    assert approval is not None
    assert (approval.max_tokens, approval.last_user_text) == (300, None)


def test_approve_with_the_text_edited_and_the_cap_lowered(qtbot):
    dialog = _dialog(qtbot)
    dialog.user_text.setPlainText("Summarise only the first part")
    dialog.max_tokens.setValue(50)
    with qtbot.waitSignal(dialog.finished):
        qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    approval = dialog.approval()
    assert approval is not None
    assert (approval.max_tokens, approval.last_user_text) == (50,
                                                              "Summarise only the first part")


def test_decline_close_and_escape_all_decline(qtbot):
    for finish in ("decline", "close", "escape"):
        dialog = _dialog(qtbot)
        with qtbot.waitSignal(dialog.finished):
            if finish == "decline":
                qtbot.mouseClick(dialog.decline_button, Qt.MouseButton.LeftButton)
            elif finish == "close":
                dialog.close()
            else:
                qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        assert dialog.approval() is None, finish


def test_enter_does_not_approve(qtbot):
    dialog = _dialog(qtbot)
    dialog.max_tokens.setFocus()
    qtbot.keyClick(dialog.max_tokens, Qt.Key.Key_Return)
    assert dialog.isVisible()
    assert dialog.approval() is None
