"""MCP prompts and resources in the AI panel (issue 19).

- Typing ``/`` at the start of the prompt box lists the running servers' prompts (``/name``,
  or ``/server:name`` when two servers share a name, with the description); choosing one asks
  for its arguments (``McpPromptForm``) if it has any, fetches the prompt on the event loop and
  puts its messages into the prompt box in place of the ``/…`` — never sent from here: the
  person reviews and sends. Images and embedded resources of the prompt go to the attachment
  tray.
- An "MCP" button under Send has the same prompts as a menu ("Insert MCP prompt", inserted at
  the cursor) and "Attach MCP resource…" (``McpResourceBrowser``).

Failures (no server, a server error, content that cannot be attached) are shown — a status
message, or a message box for an action the person chose — never raised.

``McpPrompts`` works on the panel's prompt box and attachment tray; the panel places its
``button`` under Stop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, QRect, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from app.ui.controllers.checkpoints import loop_running
from app.ui.task_set import TaskSet

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from PySide6.QtGui import QStandardItemModel
    from PySide6.QtWidgets import QCompleter, QListView, QMessageBox

    # Imported on first use: the panel is ready without the MCP client's modules.
    from app.core.agent.attachments import Attachment
    from app.core.agent.mcp_context import PromptChoice
    from app.core.services import Services
    from app.core.tools.providers.mcp.provider import McpProvider
    from app.ui.ai_panel.ports import Status
    from app.ui.dialogs.mcp_prompt_form import CompleteArgument
    from app.ui.dialogs.mcp_resources import McpResourceBrowser
    from app.ui.widgets.attachments import AttachmentTray, PromptEdit
    from app.ui.widgets.resource_refresh import ResourceRefresh

log = logging.getLogger(__name__)
CHOICE_ROLE = Qt.ItemDataRole.UserRole + 1
COMPLETION_ROLE = Qt.ItemDataRole.UserRole + 2
_CHOOSE_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab)


def slash_token(text: str, cursor: int) -> str | None:
    """The ``/word`` being typed at the very start of ``text`` (the cursor inside it), or
    None when the prompt does not start with a prompt command being typed."""
    if not text.startswith("/"):
        return None
    end = next((i for i, ch in enumerate(text) if ch.isspace()), len(text))
    return text[:end] if 1 <= cursor <= end else None


class McpPrompts(QObject):
    """The ``/`` completer, the MCP menu and their fetches for one prompt box (which owns
    this, and over whose window the dialogs and message boxes are shown)."""

    def __init__(self, services: Services, prompt: PromptEdit, tray: AttachmentTray,
                 status: Status) -> None:
        super().__init__(prompt)
        self._services = services
        self._tray = tray
        self._status = status
        self.prompt = prompt
        self.choices: list[PromptChoice] = []
        self._loaded = False  # for this "/" being typed; cleared when the prompt leaves it
        self._loading: asyncio.Future[None] | None = None
        self._tasks = TaskSet("MCP prompt handling", lambda error: self._status(
            f"MCP prompt failed: {error}"))
        self.browser: McpResourceBrowser | None = None
        # Keeps attached resources current when their server updates them.
        self.resource_refresh: ResourceRefresh | None = None
        self.form: QWidget | None = None
        self.error_box: QMessageBox | None = None

        # The completer, its list and model: made by the first "/" (``_completion``), not
        # with the ready window (their PySide6 types and objects are ~2 ms of it).
        self._completion: tuple[QStandardItemModel, QCompleter, QListView] | None = None
        self.prompt.textChanged.connect(self._on_text_changed)

        self.prompt_menu = QMenu("Insert MCP prompt")
        self.prompt_menu.setObjectName("mcp-prompt-menu")
        self.prompt_menu.aboutToShow.connect(self._on_menu_about_to_show)
        self.button = QToolButton()
        self.button.setObjectName("mcp-button")
        self.button.setText("MCP")
        self.button.setToolTip("Insert a prompt or attach a resource of your MCP servers "
                               "(or type / at the start of the prompt)")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.button)
        self.insert_prompt_action = self.menu.addMenu(self.prompt_menu)
        self.insert_prompt_action.setText("Insert MCP prompt…")
        self.attach_resource_action = self.menu.addAction("Attach MCP resource…")
        self.attach_resource_action.setObjectName("attach-mcp-resource")
        self.attach_resource_action.triggered.connect(self.open_resource_browser)
        self.button.setMenu(self.menu)

    def _completion_parts(self) -> tuple[QStandardItemModel, QCompleter, QListView]:
        if self._completion is None:
            from PySide6.QtGui import QStandardItemModel
            from PySide6.QtWidgets import QCompleter, QListView

            model = QStandardItemModel(self)
            completer = QCompleter(model, self)
            completer.setObjectName("mcp-prompt-completer")
            completer.setWidget(self.prompt)
            completer.setCompletionRole(COMPLETION_ROLE)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
            completer.setMaxVisibleItems(12)
            popup = QListView()
            popup.setObjectName("mcp-prompt-popup")
            completer.setPopup(popup)
            # Installed after the completer's own filter, so it runs first: Enter chooses here
            # instead of also reaching the prompt box as a new line.
            popup.installEventFilter(self)
            activated = completer.activated[QModelIndex]  # type: ignore[index]
            activated.connect(self._choose_index)
            self._completion = (model, completer, popup)
        return self._completion

    @property
    def model(self) -> QStandardItemModel:
        return self._completion_parts()[0]

    @property
    def completer(self) -> QCompleter:
        return self._completion_parts()[1]

    @property
    def popup(self) -> QListView:
        return self._completion_parts()[2]

    async def provider(self) -> McpProvider | None:
        """The MCP client; the tools part is built off the GUI thread if it is not yet (the
        first "/" may come before the start-up built it)."""
        import asyncio

        services = self._services
        if not services.tools_built:
            await asyncio.to_thread(services.build_tools)
        return services.mcp

    # -- the "/" completer ---------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        token = slash_token(self.prompt.toPlainText(), self.prompt.textCursor().position())
        if token is None:
            self._loaded = False
            if self._completion is not None:  # else there is no list to hide
                self.popup.hide()
            return
        if self._loaded:
            self._show_popup(token)
        elif self._loading is None and loop_running():
            self._loading = self._tasks.run(self._load_for_completer())

    async def _load_for_completer(self) -> None:
        try:
            await self.load_choices()
        finally:
            self._loading = None
        token = slash_token(self.prompt.toPlainText(), self.prompt.textCursor().position())
        if token is not None:  # still typing it: the list is for this "/"
            self._loaded = True
            self._show_popup(token)

    async def load_choices(self) -> list[PromptChoice]:
        """The running servers' prompts, into the completer's model; a server that cannot
        list them is a status message (the others are still listed)."""
        from app.core.agent.mcp_context import list_prompt_choices

        provider = await self.provider()
        if provider is None:
            self.choices = []
            self._status("MCP servers are not available.")
        else:
            self.choices, errors = await list_prompt_choices(provider)
            for error in errors:
                self._status(error)
            if not self.choices and not errors:
                self._status("No running MCP server offers prompts.")
        from PySide6.QtGui import QStandardItem

        self.model.clear()
        for index, choice in enumerate(self.choices):
            shown = f"/{choice.label}"
            about = " ".join((choice.title or choice.description).split())
            item = QStandardItem(f"{shown}  —  {about}" if about else shown)
            item.setData(index, CHOICE_ROLE)
            item.setData(shown, COMPLETION_ROLE)
            item.setToolTip(choice.description or choice.label)
            item.setEditable(False)
            self.model.appendRow(item)
        return self.choices

    def _show_popup(self, token: str) -> None:
        self.completer.setCompletionPrefix(token)
        if self.completer.completionCount() == 0:
            self.popup.hide()
            return
        rect: QRect = self.prompt.cursorRect()
        rect.setWidth(max(320, self.popup.sizeHintForColumn(0) + 24))
        self.completer.complete(rect)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._completion is not None and watched is self.popup \
                and isinstance(event, QKeyEvent) \
                and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key in _CHOOSE_KEYS:
                index = self.popup.currentIndex()
                if not index.isValid():
                    index = self.completer.completionModel().index(0, 0)
                self.popup.hide()
                self._choose_index(index)
                return True
            if key == Qt.Key.Key_Escape:
                self.popup.hide()
                return True
        return super().eventFilter(watched, event)

    def _choose_index(self, index: QModelIndex) -> None:
        number = index.data(CHOICE_ROLE) if index.isValid() else None
        if not isinstance(number, int) or not 0 <= number < len(self.choices):
            return
        # The "/…" typed goes; the prompt's text takes its place.
        cursor = self.prompt.textCursor()
        token = slash_token(self.prompt.toPlainText(), cursor.position()) or ""
        cursor.setPosition(0)
        cursor.setPosition(len(token), cursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self.prompt.setTextCursor(cursor)
        self.choose(self.choices[number])

    # -- choosing a prompt ---------------------------------------------------------------------

    def choose(self, choice: PromptChoice) -> None:
        """Ask for ``choice``'s arguments if it has any, then fetch it into the prompt."""
        if not choice.arguments:
            self._tasks.run(self.insert_prompt(choice, {}))
            return
        from app.ui.dialogs.mcp_prompt_form import McpPromptForm

        form = McpPromptForm(f"/{choice.label}", choice.description, choice.arguments,
                             self.prompt, complete=self._completion_for(choice))
        self.form = form
        form.accepted.connect(lambda: self._tasks.run(self.insert_prompt(choice, form.values())))
        form.open()

    def _completion_for(self, choice: PromptChoice) -> CompleteArgument:
        """The server's suggestions for ``choice``'s arguments ([] without a provider)."""
        async def complete(argument: str, typed: str, filled: dict[str, str]) -> list[str]:
            provider = await self.provider()
            if provider is None:
                return []
            return await provider.queries.complete_prompt_argument(
                choice.server, choice.name, argument, typed, filled)
        return complete

    async def insert_prompt(self, choice: PromptChoice, values: dict[str, str]) -> bool:
        """prompts/get, its text into the prompt box at the cursor, its images and resources
        into the attachment tray. False (and a message) when the server fails."""
        from app.core.agent.mcp_context import expand_prompt
        from app.core.tools.providers.mcp.resources import McpRequestError

        provider = await self.provider()
        if provider is None:
            self.show_error("MCP servers are not available.")
            return False
        self._status(f"Fetching the MCP prompt {choice.label}…")
        try:
            result = await provider.get_prompt(choice.server, choice.name, values)
        except McpRequestError as exc:
            self.show_error(str(exc))
            return False
        expansion = expand_prompt(choice, result)
        if expansion.text:
            self.prompt.textCursor().insertText(expansion.text)
        for attachment in expansion.attachments:
            self.add_attachment(attachment)
        self.prompt.setFocus()
        self._status(
            "; ".join(expansion.problems) if expansion.problems else
            f"Inserted the MCP prompt {choice.label}: review it, then send.")
        return True

    async def refresh_prompt_menu(self) -> None:
        """The prompt menu lists the prompts (fetched each time it opens)."""
        self.prompt_menu.clear()
        loading = self.prompt_menu.addAction("Loading…")
        loading.setEnabled(False)
        if not loop_running():
            return
        await self._fill_prompt_menu()

    def _on_menu_about_to_show(self) -> None:
        self._tasks.run(self.refresh_prompt_menu())

    async def _fill_prompt_menu(self) -> None:
        choices = await self.load_choices()
        self.prompt_menu.clear()
        if not choices:
            self.prompt_menu.addAction("No prompts (no running MCP server offers any)") \
                .setEnabled(False)
        for choice in choices:
            action = self.prompt_menu.addAction(f"{choice.label}" + (
                f" — {choice.description}" if choice.description else ""))
            action.setData(choice.label)
            action.triggered.connect(lambda _checked=False, c=choice: self.choose(c))

    # -- resources -----------------------------------------------------------------------------

    def open_resource_browser(self) -> None:
        self._tasks.run(self._open_resource_browser())

    async def _open_resource_browser(self) -> None:
        provider = await self.provider()
        if provider is None:
            self.show_error("MCP servers are not available.")
            return
        from app.ui.dialogs.mcp_resources import McpResourceBrowser

        if self.browser is not None:
            self.browser.close()
        self.browser = McpResourceBrowser(provider, self._attached, self.prompt)
        self.browser.open()
        self.browser.load()

    def _attached(self, attachment: Attachment, server: str, uri: str) -> None:
        self.add_attachment(attachment)
        chip = self._tray.chips[-1] if self._tray.chips else None
        if chip is not None and chip.attachment is attachment and self.browser is not None:
            if self.resource_refresh is None:  # its module loads with the first resource
                from app.ui.widgets.resource_refresh import ResourceRefresh

                self.resource_refresh = ResourceRefresh(self._tray)
            self.resource_refresh.track(chip, self.browser.provider, server, uri)
        self._status(f"Attached {attachment.name} to your next message.")

    def add_attachment(self, attachment: Attachment) -> None:
        """Into the panel's tray, checked against the message's limits like any file."""
        self._tray.add_attachment(attachment)

    # -- errors and tasks ----------------------------------------------------------------------

    def show_error(self, message: str) -> None:
        """A message box the person closes (not modal to the app: nothing waits on it)."""
        self._status(message)
        from PySide6.QtWidgets import QMessageBox  # here: the ready window shows none

        box = QMessageBox(QMessageBox.Icon.Warning, "MCP", message,
                          QMessageBox.StandardButton.Ok, self.prompt)
        box.setObjectName("mcp-error")
        box.setTextFormat(Qt.TextFormat.PlainText)  # the server's text, not markup
        self.error_box = box
        box.open()
