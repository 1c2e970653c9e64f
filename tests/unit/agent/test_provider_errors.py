"""The providers package: its layering (the OpenAI-compatible path never loads the Anthropic
SDK) and ``map_exception``, the one mapping from library exceptions to ProviderError classes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anthropic
import httpx
import httpx2
import pytest

from app.core.agent.providers import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderRateLimited,
    map_exception,
)

ROOT = Path(__file__).resolve().parents[3]


def _loaded_after(code: str) -> dict[str, bool]:
    """Which libraries a fresh interpreter has loaded after running ``code`` (this test
    session has imported everything already)."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        print(json.dumps({name: name in sys.modules for name in ("anthropic", "httpx2")}))
    """)
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_openai_compatible_path_does_not_load_the_anthropic_sdk():
    loaded = _loaded_after("""
        import asyncio
        from app.core.agent.providers import create_provider
        from app.core.agent.providers.openai_compat import OpenAICompatibleProvider
        from app.core.store.profiles import AgentProfile

        profile = AgentProfile(name="local", provider="openai_compatible", model="llama3.2")
        provider = create_provider(profile, api_key="", base_url="http://127.0.0.1:9/v1")
        assert isinstance(provider, OpenAICompatibleProvider)
        asyncio.run(provider.aclose())
    """)
    assert loaded == {"anthropic": False, "httpx2": False}


def test_the_anthropic_path_does_load_it():
    # The positive control for the test above: the probe sees the SDK when it is imported.
    loaded = _loaded_after("import app.core.agent.providers.anthropic")
    assert loaded["anthropic"] is True


def _status_error(status: int, error_type: str) -> anthropic.APIStatusError:
    request = httpx2.Request("POST", "https://api.example/v1/messages")
    body = {"type": "error", "error": {"type": error_type, "message": "nope"}}
    response = httpx2.Response(status, request=request, json=body)
    return anthropic.APIStatusError("nope", response=response, body=body)


@pytest.mark.parametrize(("exc", "expected"), [
    (_status_error(401, "authentication_error"), ProviderAuthError),
    (_status_error(429, "rate_limit_error"), ProviderRateLimited),
    (_status_error(529, "overloaded_error"), ProviderOverloaded),
    (anthropic.APIConnectionError(request=httpx2.Request("GET", "https://a.example")),
     ProviderConnectionError),
    (anthropic.APITimeoutError(request=httpx2.Request("GET", "https://a.example")),
     ProviderConnectionError),
    (httpx.ConnectError("refused"), ProviderConnectionError),
    (httpx2.ReadError("reset"), ProviderConnectionError),
], ids=["401", "429", "529", "sdk-connection", "sdk-timeout", "httpx", "httpx2"])
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
