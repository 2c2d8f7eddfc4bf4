"""LLMClient against a real HTTP server (tests/fake_openai.py), through the real openai client."""

from __future__ import annotations

import logging
import socket
import threading
import time

import pytest

from sage_npu.agent.llm import LLMCancelled, LLMClient, LLMError
from sage_npu.agent.llm_settings import LLMSettings
from tests.fake_openai import FakeOpenAI, Reply

KEY = "sk-test-SECRET-7c1f9a"
MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def client(url: str, **kw) -> LLMClient:
    base = {"base_url": url, "model": "m1", "backoff_s": 0.01, "max_backoff_s": 5.0, "timeout_s": 5.0}
    return LLMClient(LLMSettings(**{**base, **kw}), env={"SAGE_NPU_LLM_API_KEY": KEY})


def test_normal_completion_counts_tokens_and_sends_the_key_as_bearer():
    with FakeOpenAI([Reply("first answer", prompt_tokens=20, completion_tokens=3),
                     Reply("second", prompt_tokens=5, completion_tokens=2)]) as srv:
        c = client(srv.base_url)
        out = c.complete(MSGS)
        assert (out.text, out.prompt_tokens, out.completion_tokens) == ("first answer", 20, 3)
        c.complete(MSGS)
        assert (c.prompt_tokens, c.completion_tokens, c.total_tokens, c.requests) == (25, 5, 30, 2)
        seen = srv.requests[0]
        assert seen.path == "/v1/chat/completions"
        assert seen.body["model"] == "m1" and seen.body["messages"] == MSGS
        assert seen.headers["authorization"] == f"Bearer {KEY}"


def test_streaming_calls_on_token_per_chunk_and_reads_usage():
    pieces: list[str] = []
    with FakeOpenAI([Reply(chunks=["```cpp\n", "int x;", "\n```"], prompt_tokens=9, completion_tokens=4)]) as srv:
        c = client(srv.base_url)
        out = c.complete(MSGS, on_token=pieces.append)
    assert pieces == ["```cpp\n", "int x;", "\n```"]
    assert out.text == "```cpp\nint x;\n```"
    assert (out.prompt_tokens, out.completion_tokens, out.usage_estimated) == (9, 4, False)
    assert srv.requests[0].body["stream"] is True
    assert c.total_tokens == 13


def test_429_is_retried_after_the_servers_retry_after():
    with FakeOpenAI([Reply(status=429, headers={"Retry-After": "1"}), Reply("ok")]) as srv:
        c = client(srv.base_url, backoff_s=0.0)
        t0 = time.monotonic()
        out = c.complete(MSGS)
        waited = time.monotonic() - t0
    assert out.text == "ok" and len(srv.requests) == 2
    assert waited >= 0.9, f"Retry-After: 1 was not honoured (waited {waited:.2f} s)"


def test_500_until_retries_are_exhausted_names_the_endpoint_not_the_key():
    with FakeOpenAI([Reply(status=500, error_message="model crashed")] * 3) as srv:
        c = client(srv.base_url, max_attempts=3)
        with pytest.raises(LLMError) as info:
            c.complete(MSGS)
    msg = str(info.value)
    assert len(srv.requests) == 3
    assert srv.base_url in msg and "3 tries" in msg and "HTTP 500" in msg and "model crashed" in msg
    assert KEY not in msg and KEY not in repr(info.value)
    assert info.value.status == 500 and info.value.__cause__ is None and info.value.__context__ is None


def test_backoff_doubles_between_tries():
    with FakeOpenAI([Reply(status=503)] * 3 + [Reply("late")]) as srv:
        c = client(srv.base_url, backoff_s=0.2, max_attempts=4)
        t0 = time.monotonic()
        assert c.complete(MSGS).text == "late"
        assert time.monotonic() - t0 >= 0.2 + 0.4 + 0.8 - 0.05


def test_client_errors_are_not_retried_and_say_what_to_do():
    with FakeOpenAI([Reply(status=401, error_message="bad key")]) as srv:
        with pytest.raises(LLMError) as info:
            client(srv.base_url).complete(MSGS)
    assert len(srv.requests) == 1
    assert "SAGE_NPU_LLM_API_KEY" in str(info.value) and KEY not in str(info.value)


def test_a_slow_answer_beyond_the_timeout_fails_cleanly():
    with FakeOpenAI([Reply("too late", delay_s=3)] * 2) as srv:
        c = client(srv.base_url, timeout_s=0.3, max_attempts=2)
        t0 = time.monotonic()
        with pytest.raises(LLMError) as info:
            c.complete(MSGS)
        assert time.monotonic() - t0 < 2.5
    assert "timeout" in str(info.value) and srv.base_url in str(info.value)
    assert len(srv.requests) == 2


def test_cancellation_mid_stream_stops_reading():
    cancel = threading.Event()
    got: list[str] = []

    def on_token(piece: str) -> None:
        got.append(piece)
        if len(got) == 2:
            cancel.set()

    with FakeOpenAI([Reply(chunks=[f"t{i} " for i in range(50)], chunk_delay_s=0.05)]) as srv:
        c = client(srv.base_url)
        t0 = time.monotonic()
        with pytest.raises(LLMCancelled):
            c.complete(MSGS, on_token=on_token, cancel=cancel)
        assert time.monotonic() - t0 < 1.5   # the whole answer would take 2.5 s
    assert got == ["t0 ", "t1 "]
    assert c.requests == 0


def test_cancellation_while_the_server_stalls_mid_stream():
    cancel = threading.Event()
    with FakeOpenAI([Reply(chunks=["a", "b"], chunk_delay_s=30)]) as srv:
        c = client(srv.base_url, timeout_s=60)
        threading.Timer(0.3, cancel.set).start()
        t0 = time.monotonic()
        with pytest.raises(LLMCancelled):
            c.complete(MSGS, on_token=lambda _: None, cancel=cancel)
        assert time.monotonic() - t0 < 3


def test_cancel_set_before_the_call_sends_nothing():
    cancel = threading.Event()
    cancel.set()
    with FakeOpenAI([Reply("x")]) as srv:
        with pytest.raises(LLMCancelled):
            client(srv.base_url).complete(MSGS, cancel=cancel)
    assert srv.requests == []


def test_dead_endpoint_gives_an_actionable_error(caplog):
    with socket.socket() as s:   # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    c = client(url, max_attempts=2)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMError) as info:
        c.complete(MSGS)
    msg = str(info.value)
    assert url in msg and "cannot connect" in msg and "SAGE_NPU_LLM_BASE_URL" in msg
    assert "Traceback" not in msg and KEY not in msg
    assert KEY not in caplog.text and url in caplog.text


def test_env_resolution_and_empty_values_mean_unset():
    env = {"SAGE_NPU_LLM_BASE_URL": "http://h:1/v1", "SAGE_NPU_LLM_MODEL": "qwen", "OPENAI_API_KEY": KEY}
    c = LLMClient(LLMSettings(), env=env)
    assert (c.configured, c.base_url, c.model) == (True, "http://h:1/v1", "qwen")
    assert "OPENAI_API_KEY" in repr(c) and KEY not in repr(c)
    # the settings win over the environment; an empty variable is no endpoint at all
    c = LLMClient(LLMSettings(base_url="http://s:2/v1", model="glm"), env=env)
    assert (c.base_url, c.model) == ("http://s:2/v1", "glm")
    c = LLMClient(LLMSettings(), env={"SAGE_NPU_LLM_BASE_URL": "  ", "SAGE_NPU_LLM_MODEL": ""})
    assert not c.configured and c.model is None
    with pytest.raises(LLMError, match="SAGE_NPU_LLM_BASE_URL"):
        c.complete(MSGS)


def test_the_key_comes_only_from_the_named_variable():
    env = {"MY_KEY": "sk-mine", "SAGE_NPU_LLM_API_KEY": "sk-default", "OPENAI_API_KEY": "sk-openai"}
    with FakeOpenAI([Reply("a"), Reply("b"), Reply("c")]) as srv:
        LLMClient(LLMSettings(base_url=srv.base_url, model="m", api_key_env="MY_KEY"), env=env).complete(MSGS)
        LLMClient(LLMSettings(base_url=srv.base_url, model="m", api_key_env="MISSING"), env=env).complete(MSGS)
        LLMClient(LLMSettings(base_url=srv.base_url, model="m"), env={}).complete(MSGS)
    auth = [r.headers["authorization"] for r in srv.requests]
    assert auth == ["Bearer sk-mine", "Bearer sk-openai", "Bearer no-key"]
    assert "api_key" not in LLMSettings.model_fields


def test_a_key_echoed_by_the_server_is_scrubbed():
    with FakeOpenAI([Reply(status=400, error_message=f"invalid request for key {KEY}")]) as srv:
        with pytest.raises(LLMError) as info:
            client(srv.base_url).complete(MSGS)
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_missing_model_is_a_clear_error():
    c = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1"), env={})
    with pytest.raises(LLMError, match="SAGE_NPU_LLM_MODEL"):
        c.complete(MSGS)
