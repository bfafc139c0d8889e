"""The sentinel framing and the output cap, byte by byte (no sandbox needed)."""

from __future__ import annotations

import pytest

from uni_agent_gym.deployments.session import _Collector

TOKEN = b"0123456789abcdef0123456789abcdef"


def feed_in_pieces(collector: _Collector, data: bytes, size: int) -> None:
    for start in range(0, len(data), size):
        collector.feed(data[start : start + size])


@pytest.mark.parametrize("piece", [1, 2, 7, 33, 1 << 16], ids=lambda n: f"pieces-of-{n}")
@pytest.mark.parametrize(
    "body, exit_code",
    [(b"", 0), (b"hello\n", 0), (b"no newline", 3), (b"\n" + TOKEN[:-1] + b":0\n almost a sentinel\n", 255)],
    ids=["empty", "line", "no-newline", "near-sentinel"],
)
def test_sentinel_found_across_any_chunking(body, exit_code, piece):
    collector = _Collector(TOKEN, 10_000)
    feed_in_pieces(collector, body + b"\n" + TOKEN + b":" + str(exit_code).encode() + b"\n", piece)
    assert collector.done and collector.exit_code == exit_code
    assert collector.output() == (body.decode(), False)


def test_head_and_tail_are_kept_and_the_middle_counted():
    collector = _Collector(TOKEN, 1_000)
    body = b"".join(b"%05d\n" % i for i in range(10_000))  # 60,000 bytes
    feed_in_pieces(collector, body + b"\n" + TOKEN + b":0\n", 4096)
    output, truncated = collector.output()
    assert truncated
    assert output == body[:500].decode() + "\n[... 59000 bytes of output elided ...]\n" + body[-500:].decode()


def test_incomplete_output_is_returned_when_no_sentinel_came():
    collector = _Collector(TOKEN, 1_000)
    collector.feed(b"partial\n\n" + TOKEN[:5])
    assert not collector.done
    assert collector.output() == ("partial\n\n" + TOKEN[:5].decode(), False)


def test_no_limit_keeps_everything():
    collector = _Collector(TOKEN, None)
    feed_in_pieces(collector, b"x" * 300_000 + b"\n" + TOKEN + b":0\n", 1 << 16)
    assert collector.output() == ("x" * 300_000, False)
