"""The tools list: a checkbox per tool (enabled for the profile), grouped, with Configure….

A tool that starts programs also says whether they run in the OS sandbox: "sandboxed" or
"not sandboxed" in its own column (shortened when the panel is narrow), the whole reason in
the tooltip, and once below the list when there is no working sandbox (what to install or
change). A tool that starts no programs shows nothing there."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.store.profiles import ToolSetting
from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.core.tools.containment import ProgramContainment, program_containment
from app.ui.tones import Tone, on_palette_change, tone, view_check_boxes
from app.ui.widgets.orchestration_choice import OrchestrationChoice

# The tool-config dialog is imported by the first Configure…, not at start-up (the app loads it
# in a worker thread once the window is ready; see app.ui.deferred_imports.DEFERRED_UI_MODULES).
if TYPE_CHECKING:
    from app.core.services import Services
    from app.ui.dialogs.tool_config import ToolConfigDialog

ToolNameRole = Qt.ItemDataRole.UserRole + 1
# Shorter forms of the sandbox column's text, for a narrow panel (longest first).
ShortTextsRole = Qt.ItemDataRole.UserRole + 2
# A cell's tone (app.ui.tones): its colour is looked up again when the palette changes.
ToneRole = Qt.ItemDataRole.UserRole + 3
COL_TOOL, COL_RISK, COL_SANDBOX, COL_CONFIGURE = range(4)
SANDBOXED_TONE = Tone.SUCCESS
UNSANDBOXED_TONE = Tone.CAUTION


def _set_tone(item: QTreeWidgetItem, column: int, name: Tone) -> None:
    item.setData(column, ToneRole, name)
    item.setForeground(column, tone(name).text)


def _recolour(tree: QTreeWidget) -> None:
    """Every toned cell in the colours of the palette now in use (quietly: a changed cell
    would otherwise look like a tool ticked or unticked)."""
    items = [item for i in range(tree.topLevelItemCount())
             if (item := tree.topLevelItem(i)) is not None]
    blocked = tree.blockSignals(True)
    try:
        while items:
            item = items.pop()
            items += [child for i in range(item.childCount())
                      if (child := item.child(i)) is not None]
            for column in range(tree.columnCount()):
                name = item.data(column, ToneRole)
                if name and item.foreground(column).color() != tone(Tone(name)).text:
                    item.setForeground(column, tone(Tone(name)).text)
    finally:
        tree.blockSignals(blocked)


class _FittingTextDelegate(QStyledItemDelegate):
    """Shows the item's text, or the longest of its ``ShortTextsRole`` forms that fits the
    column ("not sandboxed" → "✗ no" → "✗"), rather than an elided "not s…"."""

    def initStyleOption(self, option: QStyleOptionViewItem,
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        shorter = index.data(ShortTextsRole)
        # No cell yet (the column's size hint): the whole text, so the column can be as wide.
        if not option.text or not shorter or option.rect.width() <= 0:
            return
        room = option.rect.width() - 8
        metrics = option.fontMetrics
        for text in (option.text, *shorter):
            if metrics.horizontalAdvance(text) <= room:
                option.text = text
                return
        option.text = shorter[-1]


class _ColumnFitter(QObject):
    """Keeps Risk, Sandbox and Configure in view however long a tool's name is: the name
    column takes the room left (its text elided, the whole name in the tooltip); the sandbox
    column is as wide as its text when the names leave room for it, else narrower, down to
    its shortest form."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self._tree = tree
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_TOOL, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_RISK, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_SANDBOX, QHeaderView.ResizeMode.Fixed)
        # Item widgets do not count for ResizeToContents: size the Configure column by hand.
        header.setSectionResizeMode(COL_CONFIGURE, QHeaderView.ResizeMode.Fixed)
        probe = QToolButton()
        probe.setText("Configure…")
        tree.setColumnWidth(COL_CONFIGURE, probe.sizeHint().width() + 4)
        tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        tree.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def fit(self) -> None:
        tree = self._tree
        room = (tree.viewport().width() - tree.columnWidth(COL_RISK)
                - tree.columnWidth(COL_CONFIGURE))
        whole = max(tree.sizeHintForColumn(COL_SANDBOX),
                    tree.header().sectionSizeHint(COL_SANDBOX))
        shortest = tree.fontMetrics().horizontalAdvance("✗") + 12
        left = room - tree.sizeHintForColumn(COL_TOOL)
        tree.setColumnWidth(COL_SANDBOX, max(shortest, min(whole, left)))


class ToolsPanel(QWidget):
    tool_toggled = Signal(str, bool)
    config_saved = Signal(str)

    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None,
                 *, populate: bool = True):
        """``populate=False`` leaves the list empty until the first ``rebuild()`` (the main
        window rebuilds it once the project is open, so it is not built twice at start)."""
        super().__init__(parent)
        self.services = services
        self.profile_id = profile_id
        self.project_root: Path | None = None
        self.tree = QTreeWidget()
        self.tree.setObjectName("tools-tree")
        self.tree.setAccessibleName("Tools")
        on_palette_change(self.tree, lambda: _recolour(self.tree))
        view_check_boxes(self.tree)  # the tools' boxes, visible on a dark theme too
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Tool", "Risk", "Sandbox", ""])
        self.tree.setItemDelegateForColumn(COL_SANDBOX, _FittingTextDelegate(self.tree))
        self.tree.headerItem().setToolTip(
            COL_SANDBOX, "Whether the programs a tool starts run in the OS sandbox")
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        # When the panel is narrow the sandbox column gives way first (shortened to "✓ yes" /
        # "✗ no"; its tooltip and the notice below say it all), then the tool names (elided).
        self._columns = _ColumnFitter(self.tree)
        title = QLabel("<b>Tools</b>")
        self.reload_button = QToolButton()
        self.reload_button.setText("Reload tools")
        self.reload_button.setToolTip("Re-read tools.toml (yours and the project's) and look "
                                      "for ripgrep/fd again")
        self.reload_button.clicked.connect(self.reload_tools)
        header_row = QHBoxLayout()
        header_row.addWidget(title)
        header_row.addStretch(1)
        header_row.addWidget(self.reload_button)
        hint = QLabel("Checked tools are offered to the AI.")
        hint.setStyleSheet("color: palette(placeholder-text);")
        self.notices = QLabel()
        self.notices.setObjectName("tool-notices")
        self.notices.setWordWrap(True)
        self.notices.setTextFormat(Qt.TextFormat.PlainText)  # reasons quote other programs
        self.notices.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notices.setStyleSheet("QLabel { background: palette(alternate-base); "
                                   "border-radius: 6px; padding: 6px; }")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.setMinimumWidth(300)
        # Above the tools: whether the agent may hand work to sub-agents.
        self.orchestration = OrchestrationChoice(services.profiles, lambda: self.profile_id)
        layout.addWidget(self.orchestration)
        layout.addLayout(header_row)
        layout.addWidget(hint)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.notices)
        self._items: dict[str, QTreeWidgetItem] = {}
        self.tree.itemChanged.connect(self._on_item_changed)
        if populate:
            self.rebuild()

    def set_profile(self, profile_id: int) -> None:
        self.profile_id = profile_id
        self.orchestration.refresh()
        self.rebuild()

    def rebuild(self) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        self._items.clear()
        settings = self.services.profiles.tool_settings(self.profile_id)
        groups: dict[str, QTreeWidgetItem] = {}
        specs = sorted(self.services.registry.specs(),
                       key=lambda s: (s.server_id != "builtin", s.server_id,
                                      list(ToolCategory).index(s.category), s.name))
        bold = QFont()
        bold.setBold(True)
        for spec in specs:
            if spec.category is ToolCategory.ORCHESTRATION:  # the Orchestration choice's
                continue
            group_name = spec.category.label if spec.server_id == "builtin" else \
                f"Server: {spec.server_id}"
            group = groups.get(group_name)
            if group is None:
                group = QTreeWidgetItem(self.tree, [group_name])
                group.setFirstColumnSpanned(True)
                group.setFont(0, bold)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                group.setExpanded(True)
                groups[group_name] = group
            item = QTreeWidgetItem(group, [spec.name, spec.risk.value])
            item.setData(0, ToolNameRole, spec.name)
            item.setToolTip(0, spec.description)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable |
                          Qt.ItemFlag.ItemIsSelectable)
            enabled = settings.get(spec.name, ToolSetting(spec.name)).enabled
            item.setCheckState(0, Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
            _set_tone(item, COL_RISK, Tone.DANGER if spec.risk == RiskLevel.HIGH
                      else Tone.SUCCESS)
            provider = self.services.registry.provider_of(spec.name)
            if provider is not None and provider.id != "builtin":
                item.setToolTip(0, f"{spec.description}\n\nServed by {provider.display_name}")
            custom = self.services.custom_tools
            problem = custom.unavailable().get(spec.name) if custom is not None and \
                provider is custom else None
            mcp = self.services.mcp
            if mcp is not None and provider is mcp:
                hints = ", ".join(f"{k}={v}" for k, v in spec.annotations.items()
                                  if k.endswith("Hint"))
                if hints:
                    item.setToolTip(0, f"{spec.description}\n\nServer hints (not trusted): "
                                       f"{hints}")
                if not mcp.tool_available(spec.name):
                    problem = (f"{mcp.server_status(spec.server_id).message}\nRestart it in "
                               "Settings → MCP servers.")
            if problem:
                _set_tone(item, COL_TOOL, Tone.MUTED)
                item.setToolTip(0, problem)
            # The name may be elided in its column (_ColumnFitter): whole above the rest.
            item.setToolTip(0, f"{spec.name}\n\n{item.toolTip(0)}")
            self._show_containment(item, spec)
            self._items[spec.name] = item
            self.tree.setItemWidget(item, COL_CONFIGURE, self._configure_button(spec))
        self.tree.expandAll()
        self.tree.blockSignals(False)
        self._columns.fit()
        self._show_notices(self._sandbox_notices(specs) + self.services.tool_notices())

    def reload_tools(self) -> None:
        self.services.reload_tools()
        self.rebuild()

    def containment(self, spec: ToolSpec) -> ProgramContainment:
        return program_containment(spec, self.services.sandbox)

    def _show_containment(self, item: QTreeWidgetItem, spec: ToolSpec) -> None:
        """"sandboxed" / "not sandboxed" for a tool that starts programs; nothing otherwise."""
        found = self.containment(spec)
        if not found.runs_programs:
            return
        item.setText(COL_SANDBOX, "sandboxed" if found.contained else "not sandboxed")
        item.setData(COL_SANDBOX, ShortTextsRole,
                     ["✓ yes", "✓"] if found.contained else ["✗ no", "✗"])
        _set_tone(item, COL_SANDBOX, SANDBOXED_TONE if found.contained else UNSANDBOXED_TONE)
        tip = found.label[:1].upper() + found.label[1:]
        if found.contained:
            tip += (": its programs run in the OS sandbox, which decides where they can write "
                    "and whether they reach the network.")
        item.setToolTip(COL_SANDBOX, tip)

    def _sandbox_notices(self, specs: list[ToolSpec]) -> list[str]:
        """One line below the list when programs would run without the sandbox."""
        sandbox = self.services.sandbox
        if sandbox.status.available or not any(s.runs_programs for s in specs):
            return []
        reason = sandbox.status.reason.rstrip(".")
        if sandbox.required:
            return [f"Programs are refused: \"Require the sandbox\" is on (Settings) and there "
                    f"is no working sandbox: {reason}."]
        return [f"Programs run without a sandbox: {reason}."]

    def _show_notices(self, notices: list[str]) -> None:
        self.notices.setText("\n".join(f"• {n}" for n in notices))
        self.notices.setVisible(bool(notices))

    def _configure_button(self, spec: ToolSpec) -> QWidget:
        button = QToolButton()
        button.setText("Configure…")
        button.setToolTip(f"Capabilities of {spec.name}: what it can do at all")
        button.setObjectName(f"configure-{spec.name}")
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.open_configure(spec.name))
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(button)
        return holder

    def item(self, tool_name: str) -> QTreeWidgetItem:
        return self._items[tool_name]

    def enabled_tools(self) -> list[str]:
        return [name for name, item in self._items.items()
                if item.checkState(0) == Qt.CheckState.Checked]

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        name = item.data(0, ToolNameRole)
        if column != 0 or not name:
            return
        enabled = item.checkState(0) == Qt.CheckState.Checked
        self.services.profiles.set_enabled(self.profile_id, name, enabled)
        self.tool_toggled.emit(name, enabled)

    def open_configure(self, tool_name: str) -> ToolConfigDialog:
        from app.ui.dialogs.tool_config import ToolConfigDialog

        tool = self.services.registry.get(tool_name)
        assert tool is not None
        current = self.services.profiles.tool_settings(self.profile_id).get(
            tool_name, ToolSetting(tool_name))
        dialog = ToolConfigDialog(tool.spec, current.config, self.project_root, self,
                                  sandbox=self.services.sandbox.status)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            config = dialog.config()
            if code and config is not None:
                latest = self.services.profiles.tool_settings(self.profile_id).get(
                    tool_name, ToolSetting(tool_name))
                self.services.profiles.set_tool(
                    self.profile_id, ToolSetting(tool_name, latest.enabled, config))
                self.config_saved.emit(tool_name)
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()
        return dialog
