"""Browse the running MCP servers' resources and attach one to the next message.

Servers → their resources (name, URI, type, size) and resource templates (a form asks for the
template's variables); a filter box narrows the list by name or URI. "Attach" reads the
resource (on the event loop, never blocking the GUI thread), turns it into an attachment (a
text document or an image, within the attachments' size limits) and hands it to ``attach``
with the server and URI it came from (so the tray can follow the resource's updates).
Every failure — a server that cannot list or read, content too large or not attachable — is
shown in the dialog, which stays open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.attachments import Attachment, AttachmentError, format_size
from app.core.agent.mcp_context import (
    MAX_RESOURCE_BYTES,
    PromptArgument,
    expand_template,
    resource_attachment,
    running_servers,
    template_variables,
)
from app.core.tools.providers.mcp.resources import McpRequestError
from app.ui.task_set import TaskSet

if TYPE_CHECKING:
    from app.core.tools.providers.mcp.provider import McpProvider

log = logging.getLogger(__name__)
ROLE = Qt.ItemDataRole.UserRole
NAME, URI, TYPE, SIZE = range(4)


class McpResourceBrowser(QDialog):
    """``load()`` fills the tree; ``attach(attachment, server, uri)`` receives what the
    person attaches."""

    def __init__(self, provider: McpProvider, attach: Callable[[Attachment, str, str], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcp-resource-browser")
        self.setWindowTitle("Attach MCP resource")
        self.resize(720, 420)
        self.provider = provider
        self._attach = attach
        self._tasks = TaskSet("MCP resource browser", lambda error: self.status.setText(
            f"Something went wrong: {error}"))
        self.filter = QLineEdit()
        self.filter.setObjectName("resource-filter")
        self.filter.setPlaceholderText("Filter by name or URI")
        self.filter.textChanged.connect(self.apply_filter)
        self.tree = QTreeWidget()
        self.tree.setObjectName("resource-tree")
        self.tree.setHeaderLabels(["Name", "URI", "Type", "Size"])
        self.tree.setColumnWidth(NAME, 200)
        self.tree.setColumnWidth(URI, 280)
        self.tree.currentItemChanged.connect(self._update_buttons)
        self.tree.itemDoubleClicked.connect(lambda *_: self.attach_selected())
        self.status = QLabel("Loading…")
        self.status.setObjectName("resource-status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.attach_button = QPushButton("Attach")
        self.attach_button.setObjectName("resource-attach")
        self.attach_button.setEnabled(False)
        self.buttons.addButton(self.attach_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.attach_button.clicked.connect(self.attach_selected)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.busy = False
        self.loaded = False  # every running server has answered (or failed)

    # -- listing -------------------------------------------------------------------------------

    def load(self) -> asyncio.Future[None]:
        return self._tasks.run(self._load())

    async def _load(self) -> None:
        self.loaded = False
        self.tree.clear()
        servers = running_servers(self.provider)
        problems: list[str] = []
        count = 0
        for server in servers:
            top = QTreeWidgetItem([server])
            top.setFirstColumnSpanned(True)
            self.tree.addTopLevelItem(top)
            try:
                resources = await self.provider.list_resources(server)
                templates = await self.provider.list_resource_templates(server)
            except McpRequestError as exc:
                problems.append(str(exc))
                self._add_note(top, f"⚠ {exc}")
                continue
            for resource in resources:
                if isinstance(resource.get("uri"), str):
                    self._add_resource(top, resource)
                    count += 1
            for template in templates:
                if isinstance(template.get("uriTemplate"), str):
                    self._add_template(top, template)
                    count += 1
            if top.childCount() == 0:
                self._add_note(top, "no resources")
            top.setExpanded(True)
        if not servers:
            self.status.setText("No MCP server is running (Settings → MCP servers).")
        elif problems:
            self.status.setText("\n".join(problems))
        else:
            self.status.setText(f"{count} resources and templates on {len(servers)} servers.")
        self.apply_filter()
        self.loaded = True

    def _add_resource(self, top: QTreeWidgetItem, resource: dict[str, Any]) -> None:
        size = resource.get("size")
        item = QTreeWidgetItem([_str(resource.get("title")) or _str(resource.get("name"))
                                or resource["uri"], resource["uri"],
                                _str(resource.get("mimeType")),
                                format_size(size) if isinstance(size, int) else ""])
        item.setData(NAME, ROLE, ("resource", top.text(NAME), resource))
        item.setToolTip(NAME, _str(resource.get("description")))
        top.addChild(item)

    def _add_template(self, top: QTreeWidgetItem, template: dict[str, Any]) -> None:
        name = _str(template.get("title")) or _str(template.get("name")) or "template"
        item = QTreeWidgetItem([f"{name} (template)", template["uriTemplate"],
                                _str(template.get("mimeType")), ""])
        item.setData(NAME, ROLE, ("template", top.text(NAME), template))
        item.setToolTip(NAME, _str(template.get("description")))
        top.addChild(item)

    def _add_note(self, top: QTreeWidgetItem, text: str) -> None:
        note = QTreeWidgetItem([text])
        note.setFirstColumnSpanned(True)
        note.setFlags(Qt.ItemFlag.NoItemFlags)
        top.addChild(note)
        top.setExpanded(True)

    def apply_filter(self) -> None:
        needle = self.filter.text().strip().lower()
        for top in self._servers():
            shown = 0
            for child in _children(top):
                hit = not needle or needle in child.text(NAME).lower() or \
                    needle in child.text(URI).lower()
                child.setHidden(not hit)
                shown += hit
            top.setHidden(bool(needle) and shown == 0)

    def visible_uris(self) -> list[str]:
        """The URIs (and templates) the list shows now, in order."""
        return [child.text(URI) for top in self._servers() for child in _children(top)
                if not child.isHidden() and not top.isHidden() and child.text(URI)]

    def _servers(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item for item in items if item is not None]

    def select_uri(self, uri: str) -> bool:
        flags = Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive
        for item in self.tree.findItems(uri, flags, URI):
            self.tree.setCurrentItem(item)
            return True
        return False

    # -- attaching -----------------------------------------------------------------------------

    def _selected(self) -> tuple[str, str, dict[str, Any]] | None:
        item = self.tree.currentItem()
        data = item.data(NAME, ROLE) if item is not None else None
        return data if isinstance(data, tuple) else None

    def _update_buttons(self) -> None:
        self.attach_button.setEnabled(self._selected() is not None and not self.busy)

    def attach_selected(self) -> None:
        selected = self._selected()
        if selected is None or self.busy:
            return
        kind, server, entry = selected
        if kind == "resource":
            self._tasks.run(self._read(server, entry["uri"], entry.get("size")))
            return
        variables = template_variables(entry["uriTemplate"])
        if not variables:
            self._tasks.run(self._read(server, entry["uriTemplate"], None))
            return
        from app.ui.dialogs.mcp_prompt_form import McpPromptForm

        form = McpPromptForm(f"Resource {entry['uriTemplate']}", _str(entry.get("description")),
                             [PromptArgument(v, required=True) for v in variables], self,
                             ok_text="Attach")
        self.template_form = form

        def chosen() -> None:
            uri = expand_template(entry["uriTemplate"], form.values())
            self._tasks.run(self._read(server, uri, None))

        form.accepted.connect(chosen)
        form.open()

    async def _read(self, server: str, uri: str, listed_size: object) -> None:
        if isinstance(listed_size, int) and listed_size > MAX_RESOURCE_BYTES:
            self.status.setText(f"{uri} is too large to attach ({format_size(listed_size)}).")
            return
        self._set_busy(True)
        self.status.setText(f"Reading {uri}…")
        try:
            contents = await self.provider.read_resource(server, uri)
            attachment = await asyncio.to_thread(resource_attachment, uri, contents)
        except (McpRequestError, AttachmentError) as exc:
            self.status.setText(str(exc))
            return
        finally:
            self._set_busy(False)
        self._attach(attachment, server, uri)
        self.status.setText(f"Attached {uri}.")
        self.accept()

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._update_buttons()

    # -- tasks ---------------------------------------------------------------------------------

    def done(self, result: int) -> None:
        self._tasks.cancel_all()
        super().done(result)


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    children = (item.child(i) for i in range(item.childCount()))
    return [child for child in children if child is not None]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
