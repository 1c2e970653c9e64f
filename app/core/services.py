"""The long-lived objects of one app instance, built once and handed to the UI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from app.core.permissions.service import ToolPermissionService
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.profiles import ProfileRepository
from app.core.store.settings import SettingsRepository
from app.core.tools.builtin import default_registry
from app.core.tools.registry import ToolRegistry


@dataclass
class Services:
    db: sqlite_utils.Database
    data_dir: Path
    registry: ToolRegistry
    permissions: ToolPermissionService
    profiles: ProfileRepository
    conversations: ConversationRepository
    audit: AuditRepository
    settings: SettingsRepository

    def set_project_root(self, root: Path | None) -> None:
        self.permissions.working_dir = root.resolve() if root is not None else None


def build_services(db: sqlite_utils.Database, data_dir: Path,
                   project_root: Path | None = None,
                   registry: ToolRegistry | None = None) -> Services:
    registry = registry or default_registry()
    profiles = ProfileRepository(db)
    profiles.ensure_default()
    return Services(
        db=db,
        data_dir=data_dir,
        registry=registry,
        permissions=ToolPermissionService(db, registry=registry, working_dir=project_root),
        profiles=profiles,
        conversations=ConversationRepository(db),
        audit=AuditRepository(db),
        settings=SettingsRepository(db),
    )
