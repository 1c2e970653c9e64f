"""Quorum review: overhead per call with instant reviewers, and parallel vs a single reviewer.

Run: ``.venv/bin/python tests/bench/bench_review.py`` (prints ``name: value`` lines).

Reviewers are loopback fake servers (tests/fakes/reviewer_server.py) speaking the Anthropic
Messages API over real HTTP. Overhead is the wall time of ``run_quorum`` when every reviewer
answers at once: prompt building, the HTTP round trips, strict validation and the decision.
It is measured with a shared httpx client (what the app keeps per session) and with a new
client per call (``run_quorum`` without ``transport``). Goal: ≤ 20 ms with a shared client.

Parallelism: the same request to 1 reviewer and to 3 reviewers that each take 200 ms to answer,
interleaved in the same run. Goal: 3 reviewers ≤ 1.3× one reviewer (the sum would be 3×).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.fakes, as a script

import httpx

from app.core.review import Review, ReviewerConfig, ReviewRequest, decide, run_quorum
from app.core.review.reviewer import (
    build_http_request,
    parse_anthropic,
    validate_verdict,
)
from tests.fakes.reviewer_server import Answer, FakeReviewerServer

OVERHEAD_GOAL_MS = 20.0
PARALLEL_GOAL = 1.3
OVERHEAD_RUNS = 200
SLOW_RUNS = 7
LATENCY_S = 0.2

REQUEST = ReviewRequest(
    tool_name="write_file", server_id="builtin",
    tool_input={"path": "src/app/config.py", "content": "DEBUG = False\n" * 200},
    preview="--- a/src/app/config.py\n+++ b/src/app/config.py\n" + "+DEBUG = False\n" * 200,
    deciding_rule="review: write_file src/**", flow_labels=("project",), contained=True,
    reversible=True, conversation_excerpt="user: turn debug off in the config\n" * 40)


def configs(servers: list[FakeReviewerServer]) -> list[ReviewerConfig]:
    return [s.config(f"r{i}", timeout_s=10.0) for i, s in enumerate(servers)]


async def timed(reviewers: list[ReviewerConfig], client: httpx.AsyncClient | None) -> float:
    start = time.perf_counter()
    result = await run_quorum(reviewers, REQUEST, transport=client)
    elapsed = (time.perf_counter() - start) * 1000
    if result.outcome != "approved":
        raise SystemExit(f"unexpected outcome {result.outcome}: {result.reason}")
    return elapsed


def cpu_only_us() -> float:
    """Prompt + body building, parsing and validating one answer, deciding: no network."""
    config = ReviewerConfig("r", "anthropic", "m")
    body = Answer.verdict("approve").anthropic("m")
    times = []
    for _ in range(2000):
        start = time.perf_counter()
        build_http_request(config, REQUEST)
        arguments, *_ = parse_anthropic(body)
        verdict, risk, rationale, concerns = validate_verdict(arguments)
        decide(1, [Review("r", "m", verdict, risk, rationale, concerns)])
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


async def main() -> None:
    instant = [FakeReviewerServer(Answer.verdict("approve")).start() for _ in range(3)]
    slow = [FakeReviewerServer(Answer.verdict("approve").slow(LATENCY_S)).start()
            for _ in range(4)]
    try:
        three_instant, one_instant = configs(instant), configs(instant[:1])
        async with httpx.AsyncClient() as client:
            for _ in range(10):  # warm up connections and code paths
                await timed(three_instant, client)
            shared3 = [await timed(three_instant, client) for _ in range(OVERHEAD_RUNS)]
            shared1 = [await timed(one_instant, client) for _ in range(OVERHEAD_RUNS)]
        fresh3 = [await timed(three_instant, None) for _ in range(OVERHEAD_RUNS // 4)]

        single_cfg, triple_cfg = configs(slow[:1]), configs(slow[1:])
        single, triple = [], []
        async with httpx.AsyncClient() as client:
            await timed(single_cfg, client)
            await timed(triple_cfg, client)
            for _ in range(SLOW_RUNS):  # interleaved, so load affects both alike
                single.append(await timed(single_cfg, client))
                triple.append(await timed(triple_cfg, client))
    finally:
        for server in instant + slow:
            server.close()

    overhead = statistics.median(shared3)
    ratio = statistics.median(triple) / statistics.median(single)
    print(f"review_cpu_per_reviewer_us: {cpu_only_us():.0f}")
    print(f"review_overhead_1_reviewer_median_ms: {statistics.median(shared1):.2f}")
    print(f"review_overhead_3_reviewers_median_ms: {overhead:.2f}")
    print(f"review_overhead_3_reviewers_p95_ms: "
          f"{statistics.quantiles(shared3, n=20)[-1]:.2f}")
    print(f"review_overhead_3_reviewers_new_client_median_ms: "
          f"{statistics.median(fresh3):.2f}")
    print(f"review_overhead_goal_{OVERHEAD_GOAL_MS:.0f}ms_met: "
          f"{'yes' if overhead <= OVERHEAD_GOAL_MS else 'no'}")
    print(f"review_1_reviewer_200ms_median_ms: {statistics.median(single):.1f}")
    print(f"review_3_reviewers_200ms_median_ms: {statistics.median(triple):.1f}")
    print(f"review_3_vs_1_ratio: {ratio:.3f}")
    print(f"review_parallel_goal_{PARALLEL_GOAL}x_met: "
          f"{'yes' if ratio <= PARALLEL_GOAL else 'no'}")


if __name__ == "__main__":
    asyncio.run(main())
