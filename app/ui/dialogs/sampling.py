"""The sampling dialog: an MCP server asks Tebiki's model to answer some messages.

Shown (not modal, by ``app.ui.server_requests``) with the server, the messages (text; images
and other content named, never rendered), the system prompt the server wants, the model that
will answer (with the server's model hints, which Tebiki does not follow), and a token cap the
person can lower (never above the setting). The last user message is editable, so the person
can take out what they do not want sent. Approve is a deliberate click: nothing is the default
button. Decline, Escape and the close button all decline.

Everything from the server passes through ``make_visible``: escapes or bidi overrides in its
text must not change what the person reads compared with what is sent.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.sampling import SamplingApproval, SamplingPrompt
from app.core.visible_text import make_visible
from app.ui.markup import escape


class SamplingDialog(QDialog):
    def __init__(self, prompt: SamplingPrompt, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt = prompt
        self._approved = False
        request = prompt.request
        self.setWindowTitle(f"MCP server {prompt.server!r} asks the model")
        self.resize(640, 560)
        layout = QVBoxLayout(self)

        intro = QLabel(
            f"The MCP server <b>{escape(make_visible(prompt.server))}</b> wants your model to "
            "answer the messages below. Its answer goes back to the server, not to your "
            "conversation. Approve only if you are happy to send this text.")
        intro.setWordWrap(True)
        layout.addWidget(intro)

        form = QFormLayout()
        model_text = make_visible(prompt.model)
        wishes = [make_visible(h) for h in request.model_hints]
        wishes += [f"{name.removesuffix('Priority')} priority {value:g}"
                   for name, value in request.priorities.items()]
        if wishes:
            model_text += f"  (the server's preferences: {', '.join(wishes)}; not followed)"
        self.model_label = QLabel(model_text)
        self.model_label.setWordWrap(True)
        form.addRow("Model:", self.model_label)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, max(1, prompt.max_tokens_cap))
        self.max_tokens.setValue(max(1, min(prompt.max_tokens, prompt.max_tokens_cap)))
        cap_note = QLabel(f"the server asked for {request.max_tokens}; your limit is "
                          f"{prompt.max_tokens_cap}")
        tokens_row = QHBoxLayout()
        tokens_row.addWidget(self.max_tokens)
        tokens_row.addWidget(cap_note, 1)
        form.addRow("Max tokens:", tokens_row)
        if prompt.why:
            why = QLabel(make_visible(prompt.why))
            why.setWordWrap(True)
            form.addRow("Asked because:", why)
        layout.addLayout(form)

        layout.addWidget(QLabel("System prompt from the server:"))
        self.system_view = QPlainTextEdit(make_visible(request.system_prompt) or "(none)")
        self.system_view.setReadOnly(True)
        self.system_view.setMaximumHeight(70)
        layout.addWidget(self.system_view)

        self._last_user = max((i for i, m in enumerate(request.messages) if m.role == "user"),
                              default=-1)
        layout.addWidget(QLabel("Messages:"))
        self.messages_view = QPlainTextEdit(self._transcript())
        self.messages_view.setReadOnly(True)
        layout.addWidget(self.messages_view, 2)
        layout.addWidget(QLabel("Last user message (edit what is sent):"))
        original = request.messages[self._last_user].text if self._last_user >= 0 else ""
        self._original_text = make_visible(original)
        self.user_text = QPlainTextEdit(self._original_text)
        self.user_text.setEnabled(self._last_user >= 0)
        layout.addWidget(self.user_text, 1)
        attachments = request.messages[self._last_user].attachments() \
            if self._last_user >= 0 else []
        # Named, never rendered: the person sees that an image goes along, not its pixels.
        self.attachments_label = QLabel("It also sends: " + ", ".join(attachments))
        self.attachments_label.setVisible(bool(attachments))
        layout.addWidget(self.attachments_label)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.decline_button = QPushButton("Decline")
        self.approve_button = QPushButton("Approve and send")
        for button in (self.decline_button, self.approve_button):
            button.setAutoDefault(False)
            button.setDefault(False)
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.decline_button.clicked.connect(self.reject)
        self.approve_button.clicked.connect(self._approve)

    def _transcript(self) -> str:
        parts = []
        for index, message in enumerate(self.prompt.request.messages):
            if index == self._last_user:
                continue  # shown in the editable box below
            text = make_visible(message.text)
            extra = message.attachments()
            if extra:
                text += ("\n" if text else "") + "[" + ", ".join(extra) + "]"
            parts.append(f"— {message.role}:\n{text}")
        return "\n\n".join(parts) or "(only the message below)"

    def _approve(self) -> None:
        self._approved = True
        self.accept()

    def approval(self) -> SamplingApproval | None:
        """The person's answer once the dialog has finished: None unless approved."""
        if not self._approved or self.result() != QDialog.DialogCode.Accepted:
            return None
        text = self.user_text.toPlainText()
        edited = text if self._last_user >= 0 and text != self._original_text else None
        return SamplingApproval(max_tokens=min(self.max_tokens.value(),
                                               self.prompt.max_tokens_cap),
                                last_user_text=edited)
