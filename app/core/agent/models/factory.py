"""Which provider a profile gets: building it, with its base URL and API key resolved.

``create_provider(profile)`` picks the provider from the profile (``anthropic`` or
``openai_compatible``), resolving the API key from the environment or the OS keyring.
``list_models(profile)`` asks the API which models exist; ``list_model_infos`` adds their
release dates and lifecycle, from which app.core.agent.models.catalog picks defaults and warns.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

from app.core.agent.credentials import get_api_key
from app.core.agent.models.base import ModelProvider, ProviderAuthError, ProviderError
from app.core.agent.models.catalog import ModelInfo
from app.core.secrets import ANTHROPIC_API_KEY, missing_key_message
from app.core.store.profiles import DEFAULT_MODEL, AgentProfile

log = logging.getLogger(__name__)

# The OpenAI-compatible default is Ollama on this machine: a local model needs no key and no
# traffic leaves the computer unless the person configures another URL.
DEFAULT_OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"
DEFAULT_MAX_RETRIES = 2
# An Anthropic-compatible server on this machine (Ollama, llama.cpp's server): the profile
# preset's base URL. A loopback server needs no key, and nothing leaves the computer.
LOCAL_ANTHROPIC_BASE_URL = "http://127.0.0.1:11434"
LOCAL_SERVER_KEY = "local-server-needs-no-key"
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_loopback_url(url: str | None) -> bool:
    """Whether ``url`` names a server on this computer."""
    if not url:
        return False
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return False
    if host in _LOOPBACK_HOSTS:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback  # 127.x.y.z, never a name
    except ValueError:
        return False


def resolve_base_url(profile: AgentProfile) -> str | None:
    """The profile's base URL, else the provider's environment variable, else None (default)."""
    if profile.base_url and profile.base_url.strip():
        return profile.base_url.strip()
    env = "ANTHROPIC_BASE_URL" if profile.provider == "anthropic" else "OPENAI_BASE_URL"
    value = os.environ.get(env, "").strip()
    return value or None


def create_provider(profile: AgentProfile, *, api_key: str | None = None,
                    base_url: str | None = None,
                    max_retries: int = DEFAULT_MAX_RETRIES,
                    timeout: float | None = None) -> ModelProvider:
    """The provider a profile asks for. Raises ProviderAuthError when Anthropic has no key, so
    the run ends with a clear event instead of a request that must fail."""
    url = base_url or resolve_base_url(profile)
    if profile.provider == "openai_compatible":
        # Imported here, as the Anthropic provider below: each loads its own HTTP stack only
        # when a profile asks for it.
        from app.core.agent.models.openai_compat import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            base_url=url or DEFAULT_OPENAI_BASE_URL,
            api_key=api_key if api_key is not None else get_api_key("openai_compatible"),
            max_retries=max_retries, timeout=timeout)
    key = api_key or get_api_key("anthropic")
    if not key and is_loopback_url(url):
        key = LOCAL_SERVER_KEY  # a local server (Ollama, llama.cpp) ignores the key
    if not key:
        raise ProviderAuthError(missing_key_message(ANTHROPIC_API_KEY, "Anthropic API key",
                                                    "Settings → Provider"))
    from app.core.agent.models.anthropic import AnthropicProvider

    return AnthropicProvider(api_key=key, base_url=url, max_retries=max_retries, timeout=timeout)


def default_client_factory(profile: AgentProfile) -> ModelProvider:
    """What ``AgentSession`` uses when it is given no ``client_factory``."""
    return create_provider(profile)


def client_factory(*, api_key: str | None = None, base_url: str | None = None,
                   max_retries: int = DEFAULT_MAX_RETRIES, timeout: float | None = None
                   ) -> Callable[[AgentProfile], ModelProvider]:
    """A ``client_factory`` with fixed overrides (tests: a loopback base URL, few retries)."""

    def factory(profile: AgentProfile) -> ModelProvider:
        return create_provider(profile, api_key=api_key, base_url=base_url,
                               max_retries=max_retries, timeout=timeout)

    return factory


async def list_model_infos(profile: AgentProfile | None = None, *, api_key: str | None = None,
                           base_url: str | None = None) -> list[ModelInfo]:
    """The models the API offers, with release date, line and lifecycle where the provider
    gives them (Anthropic; an OpenAI-compatible server gives ids only). Empty without a key
    (Anthropic) or when the API cannot be asked: callers keep their built-in default."""
    if profile is None:
        profile = AgentProfile(name="(models)")
    # Both off the event loop: keyring backends may block, and the first import of the
    # provider's HTTP stack takes tens of ms.
    if profile.provider == "anthropic" and not (
            api_key or await asyncio.to_thread(get_api_key, "anthropic")):
        return []
    try:
        provider = await asyncio.to_thread(create_provider, profile, api_key=api_key,
                                           base_url=base_url, max_retries=1, timeout=15.0)
    except ProviderError:
        return []
    try:
        infos = await provider_model_infos(provider)
    except ProviderError as exc:
        log.warning("listing models failed: %s", type(exc).__name__)
        return []
    finally:
        await provider.aclose()
    return infos


async def provider_model_infos(provider: ModelProvider) -> list[ModelInfo]:
    """What ``provider`` lists; its ProviderError propagates (Settings' Test connection
    reports it)."""
    # Providers that know more than ids (created_at, lifecycle) say so; the rest give ids.
    detailed = getattr(provider, "list_model_infos", None)
    if detailed is not None:
        infos: list[ModelInfo] = await detailed()
        return infos
    return [ModelInfo(model_id) for model_id in await provider.list_models()]


async def list_models(profile: AgentProfile | None = None, *, api_key: str | None = None,
                      base_url: str | None = None) -> list[str]:
    """Model ids the API offers. Without a key (Anthropic) or when the API cannot be asked,
    the default model (or the profile's) so the model box is never empty."""
    fallback = [profile.model] if profile is not None and profile.model else [DEFAULT_MODEL]
    if (profile is None or profile.provider == "anthropic") and not (
            api_key or await asyncio.to_thread(get_api_key, "anthropic")):
        return [DEFAULT_MODEL]
    infos = await list_model_infos(profile, api_key=api_key, base_url=base_url)
    return [m.id for m in infos] or fallback
