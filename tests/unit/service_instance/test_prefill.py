"""The service instance's prefill model: a cached prefix is not prefilled again, one prefill at
a time in arrival order, bad prompts refused (no sockets: the WSGI application is called)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterable
from typing import Any

import pytest

from agents.service_instance.app import InstanceSettings, ServiceInstance, ServiceTime
from agents.service_instance.prefill import PrefillEngine, PrefillSettings, prompt

FAST = PrefillSettings(rate=1e9, kv_blocks=4, block_tokens=100)


def test_a_cached_prefix_is_not_prefilled_again() -> None:
    engine = PrefillEngine(FAST)
    assert engine.serve((1, 2, 3), 300).cached_tokens == 0
    assert engine.serve((1, 2, 3, 4), 350).cached_tokens == 300
    assert engine.serve((1, 2, 3, 4), 350).cached_tokens == 349  # all cached: one token left
    assert engine.serve((9, 2, 3), 300).cached_tokens == 0  # a prefix, not any block


def test_the_lru_keeps_the_kv_capacity() -> None:
    engine = PrefillEngine(FAST)
    engine.serve((1, 2, 3), 300)
    engine.serve((7, 8), 200)
    assert engine.cached_tokens((1, 2, 3), 300) == 200  # block 3, the tail, went first
    assert len(engine.cache.blocks) == 4


def test_prefills_run_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = PrefillEngine(PrefillSettings(rate=1e9, kv_blocks=100, block_tokens=10))
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    def prefill(seconds: float) -> None:
        with lock:
            running.append(1)
            most[0] = max(most[0], len(running))
        threading.Event().wait(0.01)
        with lock:
            running.pop()

    monkeypatch.setattr("agents.service_instance.prefill.time.sleep", prefill)
    start = threading.Barrier(5)

    def one(k: int) -> None:
        start.wait()
        engine.serve((k,), 10)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert len(engine.cache.blocks) == 5


BAD_PROMPTS: list[object] = [
    None,
    [],
    {"hash_ids": [], "input_length": 5},
    {"hash_ids": [1], "input_length": 0},
    {"hash_ids": ["a"], "input_length": 5},
    {"hash_ids": [1, True], "input_length": 5},
]


@pytest.mark.parametrize("body", BAD_PROMPTS)
def test_a_bad_prompt_is_refused(body: Any) -> None:
    with pytest.raises(ValueError, match=r"hash_ids|input_length|object"):
        prompt(body)


def _call(app: ServiceInstance, body: bytes) -> tuple[str, dict[str, Any]]:
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]]) -> None:
        status.append(line)

    environ = {
        "PATH_INFO": "/v1/prefill",
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    chunks: Iterable[bytes] = app(environ, start_response)
    return status[0], json.loads(b"".join(chunks))


def test_the_instance_answers_a_prompt_with_what_it_reused() -> None:
    app = ServiceInstance(InstanceSettings("llm-1", 4, ServiceTime(), prefill=FAST))
    prompt_body = json.dumps({"hash_ids": [5, 6], "input_length": 150}).encode()
    status, first = _call(app, prompt_body)
    assert status.startswith("200")
    assert first["cached-tokens"] == 0
    _, again = _call(app, prompt_body)
    assert again["cached-tokens"] == 149
    status, refused = _call(app, b'{"hash_ids": 3}')
    assert status.startswith("400")
    assert "hash_ids" in refused["error"]
