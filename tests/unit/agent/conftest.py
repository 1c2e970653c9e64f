"""Fixtures for the agent loop: the fake Anthropic server, an isolated keyring, a harness."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.core.permissions.service import ToolPermissionService
from app.core.services import profile_defaults
from app.core.store.profiles import ProfileRepository
from app.core.tools.default_registry import builtin_provider
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures used by the tests here)
    FakeAnthropicServer,
    MemoryKeyring,
    fake_anthropic,
    fake_anthropic_env,
    isolated_keyring,
)
from tests.fakes.reviewer_server import reviewer_servers  # noqa: F401  (fixture)
from tests.unit.agent.helpers import Harness, RecordTool, SlowTool


@pytest.fixture(autouse=True)
def _no_real_keyring(isolated_keyring: MemoryKeyring) -> MemoryKeyring:  # noqa: F811
    """No agent test may read or write the developer's keyring."""
    return isolated_keyring


@pytest.fixture
def project_outside_tmp(visible: Path) -> Path:
    """A project folder outside /tmp: the sandbox's /tmp is private, which must not pass for
    protection (a test's project there would be out of reach for that reason alone)."""
    root = visible / "project"
    root.mkdir()
    return root


@pytest.fixture
async def harness(db, project: Path, fake_anthropic: FakeAnthropicServer  # noqa: F811
                  ) -> AsyncIterator[Harness]:
    record, slow = RecordTool(), SlowTool()
    registry = ToolRegistry([builtin_provider(),
                             StaticProvider([record, slow], id="test", display_name="Test",
                                            priority=0)])
    permissions = ToolPermissionService(db, registry, project_root=project)
    profiles = ProfileRepository(db)
    profile = profiles.ensure_default(**profile_defaults(registry.specs()))
    assert profile.id is not None
    h = Harness(db, project, fake_anthropic, registry, permissions, profile.id, record, slow)
    h.enable("record")
    h.enable("slow")
    yield h
    for session in h.sessions:  # release HTTP clients inside the test's event loop
        await session.aclose()
    permissions.close()


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The providers' retry waits asked for, in order; none is actually waited."""
    from app.core.agent.models import http_retry

    asked: list[float] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(http_retry, "sleep", sleep)
    return asked
