"""Agent profiles and their per-tool settings."""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.core.orchestration_mode import Orchestration
from app.core.permission_mode import PermissionMode
from app.core.store.db import store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

# The newest Sonnet the installed SDK names and does not list as deprecated (claude-sonnet-4-5,
# the previous default, reaches end of life on 2026-11-30). Used offline and before the
# provider's list is known; with the list, app.core.agent.models.catalog.default_model picks the
# newest Sonnet the provider offers. Saved profiles keep their model: the profile UI warns instead.
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_PROFILE_NAME = "Default"

class ProfileError(ValueError):
    pass


@dataclass(frozen=True)
class ToolSetting:
    tool_name: str
    enabled: bool = False
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentProfile:
    name: str
    model: str = DEFAULT_MODEL
    system_prompt: str = ""
    provider: str = "anthropic"
    base_url: str | None = None
    temperature: float = 1.0
    max_tokens: int = 8192
    max_iterations: int = 20
    id: int | None = None
    # What happens to a call no permission rule decides (app.core.permission_mode).
    permission_mode: PermissionMode = PermissionMode.ASK
    # Quorum review (app.core.review): reviewer models see a call before the person is asked,
    # and the model's plan before its first state-changing call of a run.
    review_before_asking: bool = False
    review_plan: bool = False
    # Reasoning and cost (ModelRequest options): adaptive thinking or off, how its text is
    # shown (None: the API's default), effort (None: the model's default), prompt caching and
    # the cache's lifetime ("5m" or "1h").
    thinking: str = "off"
    thinking_display: str | None = None
    effort: str | None = None
    prompt_cache: bool = True
    cache_ttl: str = "5m"
    # Whether the agent may start sub-agents (app.core.agent.sub_agents), and whether each
    # waits for the person first.
    orchestration: Orchestration = Orchestration.NONE

    def validated(self) -> AgentProfile:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ProfileError("profile name must not be empty")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ProfileError("model must not be empty")
        if self.provider not in ("anthropic", "openai_compatible"):
            raise ProfileError(f"unknown provider {self.provider!r}")
        if not isinstance(self.temperature, int | float) or not 0 <= self.temperature <= 2:
            raise ProfileError("temperature must be between 0 and 2")
        for name in ("max_tokens", "max_iterations"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ProfileError(f"{name} must be a positive integer")
        for name, allowed in (("thinking", THINKING_CHOICES),
                              ("thinking_display", THINKING_DISPLAY_CHOICES),
                              ("effort", EFFORT_CHOICES), ("cache_ttl", CACHE_TTL_CHOICES)):
            if getattr(self, name) not in allowed:
                raise ProfileError(f"{name} must be one of "
                                   f"{', '.join(str(a) for a in allowed)}")
        try:
            mode = PermissionMode(self.permission_mode)
        except ValueError:
            raise ProfileError(f"unknown permission mode {self.permission_mode!r}") from None
        try:
            orchestration = Orchestration(self.orchestration)
        except ValueError:
            raise ProfileError(f"unknown orchestration {self.orchestration!r}") from None
        return replace(self, name=self.name.strip(), temperature=float(self.temperature),
                       permission_mode=mode, orchestration=orchestration)


_COLUMNS = ("id", "name", "model", "system_prompt", "provider", "base_url", "temperature",
            "max_tokens", "max_iterations", "permission_mode", "review_before_asking",
            "review_plan", "thinking", "thinking_display", "effort", "prompt_cache", "cache_ttl",
            "orchestration")
# Accepted values of the reasoning options (the table's CHECK constraints say the same).
THINKING_CHOICES = ("off", "adaptive")
THINKING_DISPLAY_CHOICES = (None, "summarized", "omitted")
EFFORT_CHOICES = (None, "low", "medium", "high", "xhigh", "max")
CACHE_TTL_CHOICES = ("5m", "1h")


def _profile(row: tuple[Any, ...]) -> AgentProfile:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["permission_mode"] = PermissionMode.parse(values["permission_mode"])
    values["review_before_asking"] = bool(values["review_before_asking"])
    values["review_plan"] = bool(values["review_plan"])
    values["prompt_cache"] = bool(values["prompt_cache"])
    values["orchestration"] = Orchestration.parse(values["orchestration"])
    return AgentProfile(**values)


class ProfileRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    def list(self) -> list[AgentProfile]:
        with self.store.lock:
            rows = self.db.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM agent_profiles ORDER BY id").fetchall()
        return [_profile(r) for r in rows]

    def get(self, profile_id: int) -> AgentProfile:
        with self.store.lock:
            row = self.db.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM agent_profiles WHERE id = ?",
                (profile_id,)).fetchone()
        if row is None:
            raise KeyError(profile_id)
        return _profile(row)

    def create(self, profile: AgentProfile) -> AgentProfile:
        p = profile.validated()
        now = utc_now()
        with self.store.transaction() as conn:
            if conn.execute("SELECT 1 FROM agent_profiles WHERE name = ?", (p.name,)).fetchone():
                raise ProfileError(f"a profile named {p.name!r} already exists")
            cur = conn.execute(
                "INSERT INTO agent_profiles (name, model, system_prompt, provider, base_url,"
                " temperature, max_tokens, max_iterations, permission_mode,"
                " review_before_asking, review_plan, thinking, thinking_display, effort,"
                " prompt_cache, cache_ttl, orchestration, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (p.name, p.model, p.system_prompt, p.provider, p.base_url, p.temperature,
                 p.max_tokens, p.max_iterations, p.permission_mode.value,
                 int(p.review_before_asking), int(p.review_plan), p.thinking,
                 p.thinking_display, p.effort, int(p.prompt_cache), p.cache_ttl,
                 p.orchestration.value, now, now))
        assert cur.lastrowid is not None  # set by every successful INSERT
        return replace(p, id=cur.lastrowid)

    def update(self, profile: AgentProfile) -> AgentProfile:
        if profile.id is None:
            raise ProfileError("cannot update a profile that was never saved")
        p = profile.validated()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE agent_profiles SET name = ?, model = ?, system_prompt = ?, provider = ?,"
                " base_url = ?, temperature = ?, max_tokens = ?, max_iterations = ?,"
                " permission_mode = ?, review_before_asking = ?, review_plan = ?,"
                " thinking = ?, thinking_display = ?, effort = ?, prompt_cache = ?,"
                " cache_ttl = ?, orchestration = ?, updated_at = ? WHERE id = ?",
                (p.name, p.model, p.system_prompt, p.provider, p.base_url, p.temperature,
                 p.max_tokens, p.max_iterations, p.permission_mode.value,
                 int(p.review_before_asking), int(p.review_plan), p.thinking,
                 p.thinking_display, p.effort, int(p.prompt_cache), p.cache_ttl,
                 p.orchestration.value, utc_now(), p.id))
            if cur.rowcount == 0:
                raise KeyError(p.id)
        return p

    def set_permission_mode(self, profile_id: int, mode: PermissionMode) -> None:
        """Switch one profile's mode (the toolbar's chooser) without rewriting the rest."""
        self._set_choice(profile_id, "permission_mode", PermissionMode(mode).value)

    def set_orchestration(self, profile_id: int, orchestration: Orchestration) -> None:
        """Switch one profile's orchestration (the AI panel's chooser) alone."""
        self._set_choice(profile_id, "orchestration", Orchestration(orchestration).value)

    def _set_choice(self, profile_id: int, column: str, value: str) -> None:
        assert column in ("permission_mode", "orchestration")  # never a caller's text
        with self.store.transaction() as conn:
            cur = conn.execute(f"UPDATE agent_profiles SET {column} = ?, updated_at = ?"
                               " WHERE id = ?", (value, utc_now(), profile_id))
            if cur.rowcount == 0:
                raise KeyError(profile_id)

    def delete(self, profile_id: int) -> None:
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM agent_profiles WHERE id = ?", (profile_id,))

    def ensure_default(self, enabled: Iterable[str] = (),
                       configs: Mapping[str, Mapping[str, Any]] | None = None) -> AgentProfile:
        """The first profile, created on first run with the given tools enabled and configs.

        The values come from the tool specs (``default_enabled``, ``default_config``), passed
        in by the composition root (app.core.services): the store never imports tools. The
        default is no tool at all, which is safe.
        """
        profiles = self.list()
        if profiles:
            return profiles[0]
        profile = self.create(AgentProfile(name=DEFAULT_PROFILE_NAME))
        assert profile.id is not None
        enabled_set = set(enabled)
        configs = configs or {}
        for tool_name in sorted(enabled_set | set(configs)):
            self.set_tool(profile.id, ToolSetting(tool_name, tool_name in enabled_set,
                                                  dict(configs.get(tool_name, {}))))
        return profile

    # -- per-tool settings -----------------------------------------------------------------

    def tool_settings(self, profile_id: int) -> dict[str, ToolSetting]:
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT tool_name, is_enabled, config FROM agent_tool_permissions"
                " WHERE agent_id = ?", (profile_id,)).fetchall()
        return {name: ToolSetting(name, bool(enabled), json.loads(config) if config else {})
                for name, enabled, config in rows}

    def enabled_tools(self, profile_id: int) -> builtins.list[str]:
        return sorted(n for n, s in self.tool_settings(profile_id).items() if s.enabled)

    def set_tool(self, profile_id: int, setting: ToolSetting) -> None:
        if not isinstance(setting.config, dict):
            raise ProfileError("tool config must be a JSON object")
        now = utc_now()
        # Hand-written rather than sqlite-utils' upsert, which sets every column it is given on
        # conflict: it would overwrite created_at each time a tool is switched on or off.
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO agent_tool_permissions (agent_id, tool_name, is_enabled, config,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(agent_id, tool_name) DO UPDATE SET is_enabled = excluded.is_enabled,"
                " config = excluded.config, updated_at = excluded.updated_at",
                (profile_id, setting.tool_name, int(setting.enabled),
                 json.dumps(setting.config, ensure_ascii=False), now, now))

    def set_enabled(self, profile_id: int, tool_name: str, enabled: bool) -> None:
        current = self.tool_settings(profile_id).get(tool_name, ToolSetting(tool_name))
        self.set_tool(profile_id, replace(current, enabled=enabled))
