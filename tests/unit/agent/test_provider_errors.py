"""The providers package: its layering (no path loads the Anthropic SDK; the Anthropic path is
covered in test_anthropic_transport.py) and ``map_exception``, the one mapping from library
exceptions to ProviderError classes."""

from __future__ import annotations

import httpx
import pytest

from app.core.agent.models import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    map_exception,
)
from tests.unit.agent.helpers import sdk_modules_loaded_after


def test_the_openai_compatible_path_does_not_load_the_anthropic_sdk():
    loaded = sdk_modules_loaded_after("""
        import asyncio
        from app.core.agent.models import create_provider
        from app.core.agent.models.openai_compat import OpenAICompatibleProvider
        from app.core.store.profiles import AgentProfile

        profile = AgentProfile(name="local", provider="openai_compatible", model="llama3.2")
        provider = create_provider(profile, api_key="", base_url="http://127.0.0.1:9/v1")
        assert isinstance(provider, OpenAICompatibleProvider)
        asyncio.run(provider.aclose())
    """)
    assert loaded == {"anthropic": False, "httpx2": False}


def test_the_anthropic_provider_module_does_not_load_it():
    loaded = sdk_modules_loaded_after("import app.core.agent.models.anthropic")
    assert loaded == {"anthropic": False, "httpx2": False}


def test_the_probe_sees_the_sdk_when_it_is_imported():
    # The positive control for the tests above and in test_anthropic_transport.py.
    assert sdk_modules_loaded_after("import anthropic")["anthropic"] is True


@pytest.mark.parametrize(("exc", "expected"), [
    (httpx.ConnectError("refused"), ProviderConnectionError),
    (httpx.ConnectTimeout("slow"), ProviderConnectionError),
    (httpx.ReadError("reset"), ProviderConnectionError),
    (httpx.RemoteProtocolError("closed"), ProviderConnectionError),
    (httpx.DecodingError("bad gzip"), ProviderConnectionError),
], ids=["connect", "connect-timeout", "read", "protocol", "decoding"])
def test_library_exceptions_map_to_one_class_each(exc: BaseException,
                                                  expected: type[ProviderError]):
    mapped = map_exception(exc, "Test API")
    assert type(mapped) is expected
    assert mapped.retryable is expected.retryable
    assert mapped.message.startswith(("Test API", "Connection to Test API"))


def test_a_transport_error_mid_stream_says_the_answer_was_cut_off():
    mapped = map_exception(httpx.ReadError("reset"), "Test API", mid_stream=True)
    assert type(mapped) is ProviderConnectionError and "cut off" in mapped.message


def test_an_exception_that_is_no_librarys_is_not_mapped():
    # A bug must surface as itself, never pass for an API failure the person could retry.
    assert map_exception(ValueError("bug"), "Test API") is None
    assert map_exception(KeyError("bug"), "Test API") is None


def test_a_provider_error_maps_to_itself():
    error = ProviderAuthError("no key")
    assert map_exception(error, "Test API") is error
