"""Replay a trace slice through the ingress forwarder and time every answer.

Each request is sent at its arrival time (from the slice's start) as ``POST /cats/llm/...``
with its blocks and length; its TTFT is the time to the answer (the instance answers when its
prefill ends) plus the round trip from the ingress to the site that answered, named by the
forwarder's ``CATS-CSCI-Id`` header.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from controller.evaluate.trace import Request

OK = 200
"""The HTTP status of an answered prompt."""


@dataclass(frozen=True)
class Answer:
    """One replayed request: its TTFT (s), the CSCI-ID that answered, the cached tokens the
    instance reported, the HTTP status (0: no answer)."""

    request: int
    ttft: float
    csci_id: str
    cached_tokens: int
    status: int
    error: str = ""


def _send(port: int, request: Request, timeout: float) -> tuple[float, str, int, int, str]:
    body = json.dumps({"hash_ids": list(request.blocks), "input_length": request.input_tokens})
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(
            "POST", "/cats/llm/v1/prefill", body, {"Content-Type": "application/json"}
        )
        reply = connection.getresponse()
        data = reply.read()
        took = time.perf_counter() - began
        csci = reply.getheader("CATS-CSCI-Id") or ""
        cached = int(json.loads(data).get("cached-tokens", 0)) if reply.status == OK else 0
        error = "" if reply.status == OK else data[:200].decode(errors="replace")
        return took, csci, cached, reply.status, error
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return time.perf_counter() - began, "", 0, 0, repr(exc)
    finally:
        connection.close()


def replay(
    port: int,
    requests: Sequence[Request],
    round_trip: Callable[[str], float],
    timeout: float = 300.0,
) -> list[Answer]:
    """Send every request at its arrival time; wait for every answer."""
    answers: list[Answer] = []
    lock = threading.Lock()

    def one(request: Request) -> None:
        took, csci, cached, status, error = _send(port, request, timeout)
        answer = Answer(request.index, took + round_trip(csci), csci, cached, status, error)
        with lock:
            answers.append(answer)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=512) as pool:
        for request in requests:
            delay = request.arrival - (time.perf_counter() - start)
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, request)
    return sorted(answers, key=lambda a: a.request)
