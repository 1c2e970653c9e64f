"""Benchmark: the overhead of an MCP tool call through Tebiki over the raw SDK session
(prints `name: value` lines).

Run: .venv/bin/python tests/bench/bench_mcp_overhead.py [--calls N]

The same server (tests/mcp_servers/modern_server.py over stdio, its ``echo`` tool with a 2 KB
text) is called N times through the SDK's own ClientSession (the baseline, negotiated the same
way) and N times through ``McpProvider.call`` (the call path the agent loop uses: the
connection's state, the reconnecting call, the result turned into a ToolResult). Both run in
the same process and the same run, alternating in rounds so a busy machine hurts both alike.
Goal: the median Tebiki call ≤ 1.2 × the median raw call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider

GOAL_RATIO = 1.2
SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "modern_server.py"
TEXT = "x" * 2048


async def bench(calls: int, rounds: int) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from app.core.tools.providers.mcp.revision import negotiate

    provider = McpProvider(parse_mcp_config({"mcpServers": {"bench": {
        "command": sys.executable, "args": [str(SERVER)]}}}).servers)
    await provider.start()
    ctx = ToolContext(project_root=Path(tempfile.gettempdir()))
    raw_times: list[float] = []
    tebiki_times: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await negotiate(session)
            for _ in range(3):  # warm both paths up
                await session.call_tool("echo", {"text": TEXT})
                await provider.call("bench", "echo", {"text": TEXT}, ctx)
            for _ in range(rounds):
                for _ in range(calls // rounds):
                    start = time.perf_counter()
                    raw = await session.call_tool("echo", {"text": TEXT})
                    raw_times.append(time.perf_counter() - start)
                    assert not raw.is_error
                for _ in range(calls // rounds):
                    start = time.perf_counter()
                    result = await provider.call("bench", "echo", {"text": TEXT}, ctx)
                    tebiki_times.append(time.perf_counter() - start)
                    assert not result.is_error, result.content
    finally:
        await provider.aclose()
    raw_ms = statistics.median(raw_times) * 1000
    tebiki_ms = statistics.median(tebiki_times) * 1000
    return {"raw_ms": raw_ms, "tebiki_ms": tebiki_ms, "ratio": tebiki_ms / raw_ms}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    found = asyncio.run(bench(args.calls, args.rounds))
    print(f"mcp_call_raw_sdk_median_ms: {found['raw_ms']:.3f}")
    print(f"mcp_call_tebiki_median_ms: {found['tebiki_ms']:.3f}")
    print(f"mcp_call_overhead_ratio: {found['ratio']:.3f}")
    print(f"mcp_call_overhead_goal_ratio: {GOAL_RATIO}")
    print(f"mcp_call_overhead_goal_met: {'yes' if found['ratio'] <= GOAL_RATIO else 'no'}")


if __name__ == "__main__":
    main()
