"""The default model and deprecation warnings, against the installed SDK's own tables."""

from __future__ import annotations

import typing
from datetime import UTC, date, datetime

import anthropic.types
from anthropic._data import DEPRECATED_MODELS as DATA_DEPRECATED
from anthropic.resources.messages.messages import DEPRECATED_MODELS as MESSAGES_DEPRECATED

from app.core.agent.models import list_model_infos, list_models
from app.core.agent.models.catalog import (
    ModelInfo,
    default_model,
    deprecation,
    model_deprecation,
    newest_in_family,
    sdk_deprecations,
    sdk_model_ids,
)
from app.core.store.profiles import DEFAULT_MODEL, AgentProfile
from tests.fakes.anthropic_server import FakeAnthropicServer

TODAY = date(2026, 11, 23)
SECRET = "sk-ant-test-models"


def test_the_source_read_tables_equal_the_sdks_own_objects() -> None:
    # Read without importing the SDK; this is what keeps the two from drifting apart.
    expected = {**MESSAGES_DEPRECATED, **DATA_DEPRECATED}
    assert set(sdk_deprecations()) == set(expected)
    assert sdk_deprecations()["claude-sonnet-4-5"] == date(2026, 11, 30)
    assert sdk_deprecations()["claude-2.1"] == date(2025, 7, 21)
    literal = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    assert sdk_model_ids() == literal


def test_the_default_is_the_newest_sonnet_the_sdk_names_and_not_deprecated() -> None:
    assert DEFAULT_MODEL in sdk_model_ids()
    assert DEFAULT_MODEL not in sdk_deprecations()
    # The SDK lists newest first: a newer Sonnet in a later SDK asks for the default to move.
    assert next(m for m in sdk_model_ids() if "sonnet" in m) == DEFAULT_MODEL
    assert model_deprecation(DEFAULT_MODEL, TODAY) is None
    assert AgentProfile(name="p").model == DEFAULT_MODEL


def test_a_deprecated_model_is_warned_about_with_date_and_replacement() -> None:
    text = model_deprecation("claude-sonnet-4-5", TODAY)
    assert text is not None
    assert "2026-11-30" in text and "in 7 days" in text
    assert "deprecated" in text
    assert f"Suggested replacement: {DEFAULT_MODEL}." in text
    assert model_deprecation("claude-sonnet-4-5-20250929", date(2026, 11, 29)) is not None
    assert "(tomorrow)" in str(model_deprecation("claude-sonnet-4-5", date(2026, 11, 29)))


def test_a_model_past_its_end_of_life_says_requests_fail() -> None:
    text = model_deprecation("claude-sonnet-4-5", date(2026, 12, 1))
    assert text is not None and "reached its end of life on 2026-11-30" in text
    text = model_deprecation("claude-3-5-haiku-20241022", TODAY)
    assert text is not None and "2026-02-19" in text
    # The replacement stays in the family when the SDK names a current model of it.
    assert text.endswith("Suggested replacement: claude-haiku-5-5.")
    text = model_deprecation("claude-2.1", TODAY)
    assert text is not None and text.endswith(f"Suggested replacement: {DEFAULT_MODEL}.")


def test_current_and_unknown_models_get_no_warning() -> None:
    for model in ("claude-opus-4-8", "claude-haiku-4-5", "llama3.2", "", "  "):
        assert model_deprecation(model, TODAY) is None


def _info(model_id: str, created: str, **kw: object) -> ModelInfo:
    return ModelInfo(model_id, created_at=datetime.fromisoformat(created).replace(
        tzinfo=UTC), **kw)  # type: ignore[arg-type]


def test_the_newest_of_the_family_by_release_date() -> None:
    listed = [
        _info("claude-opus-9", "2026-10-01"),
        _info("claude-sonnet-7", "2026-09-01", line="sonnet"),
        _info("claude-sonnet-8", "2026-10-15", line="sonnet"),
        _info("claude-sonnet-9-preview", "2026-11-01", lifecycle="deprecated"),
        _info("claude-sonnet-4-5", "2027-01-01"),  # deprecated in the SDK's table
        _info("claude-haiku-9", "2026-11-20"),
    ]
    assert newest_in_family(listed) == "claude-sonnet-8"
    assert newest_in_family(listed, "haiku") == "claude-haiku-9"
    assert default_model(listed) == "claude-sonnet-8"
    assert default_model([_info("llama3.2", "2026-01-01")]) == DEFAULT_MODEL
    assert default_model() == DEFAULT_MODEL
    # The API's line wins over the id: a model named otherwise still counts as a Sonnet.
    assert newest_in_family([_info("claude-next", "2027-01-01", line="sonnet")]) == "claude-next"


def test_the_providers_lifecycle_and_retirement_date_are_used() -> None:
    listed = [_info("claude-sonnet-8", "2026-10-15"),
              ModelInfo("claude-sonnet-7", lifecycle="deprecated",
                        retires_at=date(2027, 2, 1))]
    text = model_deprecation("claude-sonnet-7", TODAY, listed)
    assert text is not None
    assert "2027-02-01" in text and "Suggested replacement: claude-sonnet-8." in text
    retired = [ModelInfo("claude-sonnet-6", lifecycle="retired")]
    text = model_deprecation("claude-sonnet-6", TODAY, retired)
    assert text is not None and "requests to it fail" in text


async def test_the_fake_servers_model_list_feeds_the_default(
        fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.models = [
        {"id": "claude-sonnet-4-5", "created_at": "2025-09-29T00:00:00Z", "line": "sonnet",
         "lifecycle": "deprecated", "retires_at": "2026-11-30T00:00:00Z"},
        {"id": "claude-sonnet-5-5", "created_at": "2026-08-01T00:00:00Z", "line": "sonnet"},
        {"id": "claude-sonnet-6", "created_at": "2026-11-10T00:00:00Z", "line": "sonnet"},
        {"id": "claude-opus-6", "created_at": "2026-11-20T00:00:00Z", "line": "opus"},
    ]
    profile = AgentProfile(name="p", model="claude-sonnet-4-5", base_url=fake_anthropic.base_url)
    infos = await list_model_infos(profile, api_key=SECRET)
    assert fake_anthropic.requests[-1].path.startswith("/v1/models")
    assert [m.id for m in infos][:2] == ["claude-sonnet-4-5", "claude-sonnet-5-5"]
    assert infos[0].lifecycle == "deprecated" and infos[0].retires_at == date(2026, 11, 30)
    assert default_model(infos) == "claude-sonnet-6"
    text = model_deprecation(profile.model, TODAY, infos)
    assert text is not None and "Suggested replacement: claude-sonnet-6." in text
    assert await list_models(profile, api_key=SECRET) == [m.id for m in infos]


async def test_without_a_key_or_when_listing_fails_there_is_no_list(
        fake_anthropic: FakeAnthropicServer) -> None:
    from tests.fakes.anthropic_server import Response

    profile = AgentProfile(name="p", base_url=fake_anthropic.base_url)
    assert await list_model_infos(profile) == []
    assert fake_anthropic.requests == []
    fake_anthropic.models_error = Response.error(401)
    assert await list_model_infos(profile, api_key=SECRET) == []
    assert default_model([]) == DEFAULT_MODEL


def test_the_short_form_for_the_toolbar_keeps_the_date_and_the_replacement() -> None:
    found = deprecation("claude-sonnet-4-5", TODAY)
    assert found is not None and not found.retired and found.days_left == 7
    assert found.short() == f"deprecated, retires 2026-11-30 · use {DEFAULT_MODEL}"
    gone = deprecation("claude-sonnet-4-5", date(2026, 11, 30))
    assert gone is not None and gone.retired
    assert gone.short() == f"retired 2026-11-30 · use {DEFAULT_MODEL}"
