"""The URL consent dialog: an MCP server asks the person to open a web page (URL-mode
elicitation, ``app.core.tools.providers.mcp.url_elicitation``).

It names the server, shows the server's message as plain text, the page's host large (in its
ASCII spelling, so a look-alike name shows as ``xn--…``) and the full URL, wrapped and
selectable. Nothing opens by itself: "Open in browser" opens the page (``QDesktopServices``)
and answers accept; Decline says no; Cancel, Escape and the close button cancel. No button is
the default, so Enter never opens anything. The address is parsed again the way Qt hands it to
the browser, and a page whose host Qt reads differently is not opened.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QTextOption
from PySide6.QtWidgets import QDialog, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from app.core.tools.providers.mcp.server_requests import ElicitAction, ElicitationReply
from app.core.tools.providers.mcp.url_elicitation import UrlElicitation
from app.core.visible_text import make_visible
from app.ui.dialogs.answer_buttons import answer_buttons
from app.ui.markup import escape
from app.ui.tones import Tone, tone_text

UrlOpener = Callable[[QUrl], bool]


class UrlElicitationDialog(QDialog):
    def __init__(self, server: str, request: UrlElicitation, parent: QWidget | None = None,
                 *, open_url: UrlOpener | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self._open_url = open_url or QDesktopServices.openUrl
        self._action: ElicitAction = "cancel"
        self.setWindowTitle(f"MCP server {server!r} asks you to open a web page")
        self.resize(560, 420)
        layout = QVBoxLayout(self)
        intro = QLabel(f"The MCP server <b>{escape(make_visible(server))}</b> asks you to open "
                       "a web page in your browser:")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.message_label = QLabel(make_visible(request.message) or "(no explanation given)")
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        layout.addWidget(self.message_label)

        layout.addWidget(QLabel("Site:"))
        self.host_label = QLabel(request.ascii_host)
        self.host_label.setObjectName("url-elicitation-host")
        self.host_label.setTextFormat(Qt.TextFormat.PlainText)
        self.host_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.host_label.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.5)
        self.host_label.setFont(font)
        layout.addWidget(self.host_label)
        if request.ascii_host != request.host:
            spelt = QLabel(f"The server wrote it as {make_visible(request.host)}; the line "
                           "above is how the browser will spell it.")
            spelt.setTextFormat(Qt.TextFormat.PlainText)
            spelt.setWordWrap(True)
            layout.addWidget(spelt)

        layout.addWidget(QLabel("Full address:"))
        self.url_view = QPlainTextEdit(request.url)
        self.url_view.setObjectName("url-elicitation-url")
        self.url_view.setReadOnly(True)
        self.url_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.url_view.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.url_view.setMaximumHeight(90)
        layout.addWidget(self.url_view)
        note = QLabel("Tebiki opens nothing by itself. What you enter on that page goes to that "
                      "site, not through Tebiki or the model.")
        note.setWordWrap(True)
        layout.addWidget(note)
        self.problem_label = QLabel("")
        tone_text(self.problem_label, Tone.DANGER)
        self.problem_label.setWordWrap(True)
        self.problem_label.hide()
        layout.addWidget(self.problem_label)
        layout.addStretch(1)

        self.cancel_button, self.decline_button, self.open_button = answer_buttons(
            layout, "Cancel", "Decline", "Open in browser")
        self.cancel_button.clicked.connect(self.reject)
        self.decline_button.clicked.connect(lambda: self._answer("decline"))
        self.open_button.clicked.connect(self._open)

    def reply(self) -> ElicitationReply:
        """The answer once the dialog has finished (no content: the page is the person's
        business); cancel unless Open or Decline was used."""
        accepted = self.result() == QDialog.DialogCode.Accepted
        return ElicitationReply(self._action if accepted else "cancel")

    def _answer(self, action: ElicitAction) -> None:
        self._action = action
        self.accept()

    def _open(self) -> None:
        url = QUrl(self.request.url, QUrl.ParsingMode.StrictMode)
        host = url.host(QUrl.ComponentFormattingOption.FullyEncoded).lower()
        if not url.isValid() or host != self.request.ascii_host.lower():
            self._problem("Tebiki will not open this address: the browser would read its site "
                          "differently from what is shown here.")
            return
        if not self._open_url(url):
            self._problem("The browser could not be started. Copy the address above into "
                          "your browser, or Decline.")
            return
        self._answer("accept")

    def _problem(self, text: str) -> None:
        self.problem_label.setText(text)
        self.problem_label.show()
