"""The model client an AgentSession talks to: built on first use (off the event loop's
thread, as keyring lookups may block), kept while the profile's provider and base URL stay
the same, rebuilt after ``invalidate()`` (a new API key) and closed with the session."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from app.core.agent.models import ModelProvider
from app.core.store.profiles import AgentProfile
from app.core.warmup import warm_up

log = logging.getLogger(__name__)

ClientFactory = Callable[[AgentProfile], ModelProvider]


class ModelClient:
    """The cached model client, built by ``factory(profile)``; or, given another
    ``ModelClient``, that one's client, borrowed (a sub-agent's: no second HTTP client and TLS
    set-up per child, and closing the child never closes its parent's)."""

    def __init__(self, factory: ClientFactory | ModelClient) -> None:
        self._lender = factory if isinstance(factory, ModelClient) else None
        self._factory: ClientFactory = factory if not isinstance(factory, ModelClient) \
            else factory._factory
        self._provider: ModelProvider | None = None
        self._provider_key: tuple[str, str | None] | None = None

    def invalidate(self) -> None:
        """Build a new model client on the next run (call after the API key changed)."""
        self._provider_key = None

    async def provider_for(self, profile: AgentProfile) -> ModelProvider:
        """The client for ``profile``: the kept one, unless its provider or base URL
        changed (or it was invalidated)."""
        key = (profile.provider, profile.base_url)
        if self._lender is not None and self._provider is None:
            return await self._lender.provider_for(profile)
        if self._provider is not None and self._provider_key == key:
            return self._provider
        await self.aclose()
        # The SDK and the tools' libraries are imported off the GUI thread (usually already
        # done when the person started typing; app.core.warmup).
        await warm_up()
        self._provider = await asyncio.to_thread(self._factory, profile)
        self._provider_key = key
        return self._provider

    async def aclose(self) -> None:
        """Close the client (and release its HTTP connections); the next run builds one."""
        provider, self._provider, self._provider_key = self._provider, None, None
        if provider is not None:
            try:
                await provider.aclose()
            except Exception:
                log.exception("closing the model client failed")
