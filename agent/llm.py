"""A small, careful client for any OpenAI-compatible chat endpoint (vLLM, Ollama, GLM, ...).

Retries are ours, not the `openai` client's (it gets `max_retries=0`): we need the backoff to
honour Retry-After, to stop at once on cancellation, and to end in one `LLMError` whose
message tells a person what to do instead of a traceback from the HTTP stack.

The API key is read only from the environment variable the settings name and is scrubbed
from every message we build; errors are raised `from None` so a printed traceback does not
drag the HTTP layer's exception (and its request) along.
"""

from __future__ import annotations

import email.utils
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import openai

from sage_npu.agent.llm_settings import LLMSettings

log = logging.getLogger(__name__)

BASE_URL_ENV = "SAGE_NPU_LLM_BASE_URL"
MODEL_ENV = "SAGE_NPU_LLM_MODEL"
FALLBACK_KEY_ENV = "OPENAI_API_KEY"
# Local servers (vLLM, Ollama) need no key, but the openai client refuses to start without one.
_NO_KEY = "no-key"
_RETRY_STATUS = {408, 409, 425, 429} | set(range(500, 600))


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool = False   # the server sent no usage; counts are ~4 chars per token


@dataclass(frozen=True)
class RetryNotice:
    """A request about to be tried again, for people watching (`LLMClient(on_retry=...)`)."""

    next_try: int                   # the try about to start (2 for the first retry)
    max_attempts: int
    wait_s: float                   # the backoff before it
    what: str                       # what went wrong with the previous try (the key scrubbed)

    def message(self, base_url: str | None) -> str:
        return (f"the LLM endpoint {base_url}: {self.what}; try {self.next_try} of {self.max_attempts} "
                f"in {self.wait_s:.1f} s")


class LLMError(RuntimeError):
    """A request that did not produce an answer; `str()` is meant for the user."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class LLMCancelled(LLMError):
    pass


class _Retryable(Exception):
    def __init__(self, what: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.what, self.status, self.retry_after = what, status, retry_after


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = (env.get(name) or "").strip()
    return value or None


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        parsed = email.utils.parsedate_tz(raw)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _interrupt(stream: object) -> None:
    """Unblock a read on `stream` from another thread.

    Closing the response does not wake a thread blocked in recv(); shutting the socket down does.
    """
    try:
        net = stream.response.extensions.get("network_stream")  # type: ignore[attr-defined]
        sock = net.get_extra_info("socket") if net is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
            return
    except (AttributeError, OSError):
        pass
    stream.close()  # type: ignore[attr-defined]


class LLMClient:
    """One client per episode: it also totals the tokens the episode used."""

    def __init__(self, settings: LLMSettings | None = None, *, env: Mapping[str, str] | None = None,
                 on_retry: Callable[[RetryNotice], None] | None = None) -> None:
        self.settings = settings or LLMSettings()
        self.on_retry = on_retry
        self.retries = 0                 # requests tried again, over the client's life
        env = os.environ if env is None else env
        s = self.settings
        self.base_url = (s.base_url or "").strip() or _env(env, BASE_URL_ENV)
        self.model = (s.model or "").strip() or _env(env, MODEL_ENV)
        self._key_source = next((n for n in (s.api_key_env, FALLBACK_KEY_ENV) if _env(env, n)), None)
        self.__key = _env(env, self._key_source) if self._key_source else None
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.requests = 0
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        key = f"from ${self._key_source}" if self._key_source else "none"
        return f"LLMClient(base_url={self.base_url!r}, model={self.model!r}, key={key})"

    @property
    def configured(self) -> bool:
        """False: no endpoint anywhere, and the caller should run the offline optimizer."""
        return self.base_url is not None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _scrub(self, text: str) -> str:
        return text.replace(self.__key, "***") if self.__key else text

    def _openai(self) -> openai.OpenAI:
        if self._client is None:
            s = self.settings
            self._client = openai.OpenAI(
                api_key=self.__key or _NO_KEY, base_url=self.base_url, max_retries=0,
                timeout=openai.Timeout(s.timeout_s, connect=s.connect_timeout_s))
        return self._client

    def complete(self, messages: Sequence[Mapping[str, str]], *, on_token: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None) -> Completion:
        """The model's answer to `messages`; streamed to `on_token` piece by piece when given.

        Raises LLMCancelled when `cancel` is set (checked before each try, during backoff and
        between streamed chunks) and LLMError when the endpoint cannot give an answer.
        """
        if not self.configured:
            raise LLMError(f"no LLM endpoint configured: set ${BASE_URL_ENV} (or the agent's llm.base_url) "
                           "to an OpenAI-compatible URL such as http://127.0.0.1:8000/v1")
        if not self.model:
            raise LLMError(f"no model name for the LLM endpoint {self.base_url}: set ${MODEL_ENV} "
                           "(or the agent's llm.model)")
        s = self.settings
        delay = s.backoff_s
        last: _Retryable | None = None
        for attempt in range(1, s.max_attempts + 1):
            self._check(cancel, attempt - 1)
            try:
                result = self._once(list(messages), on_token, cancel)
            except _Retryable as e:
                last = e
                if attempt == s.max_attempts:
                    break
                wait = min(s.max_backoff_s, e.retry_after if e.retry_after is not None else delay)
                delay = min(s.max_backoff_s, delay * 2 if delay else 0)
                notice = RetryNotice(attempt + 1, s.max_attempts, wait, self._scrub(e.what))
                log.info("LLM request: %s", notice.message(self.base_url))
                with self._lock:
                    self.retries += 1
                if self.on_retry is not None:
                    self.on_retry(notice)
                if cancel is not None and cancel.wait(wait):
                    self._check(cancel, attempt)
                elif cancel is None:
                    time.sleep(wait)
                continue
            with self._lock:
                self.requests += 1
                self.prompt_tokens += result.prompt_tokens
                self.completion_tokens += result.completion_tokens
            return result
        assert last is not None
        raise LLMError(self._scrub(
            f"the LLM endpoint {self.base_url} gave no answer after {s.max_attempts} "
            f"tr{'y' if s.max_attempts == 1 else 'ies'}; last: {last.what}. "
            f"Check that the server is running and reachable, or unset ${BASE_URL_ENV} to use the "
            "offline optimizer"), status=last.status, attempts=s.max_attempts)

    def _check(self, cancel: threading.Event | None, attempts: int) -> None:
        if cancel is not None and cancel.is_set():
            raise LLMCancelled(f"LLM request to {self.base_url} cancelled", attempts=attempts)

    def _params(self, messages: list, stream: bool) -> dict:
        s = self.settings
        params: dict = {"model": self.model, "messages": messages}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if s.max_tokens is not None:
            params["max_tokens"] = s.max_tokens
        if stream:
            params.update(stream=True, stream_options={"include_usage": True})
        return params

    def _once(self, messages: list, on_token: Callable[[str], None] | None,
              cancel: threading.Event | None) -> Completion:
        try:
            if on_token is None:
                return self._plain(messages)
            return self._streamed(messages, on_token, cancel)
        except openai.APITimeoutError:
            raise _Retryable(f"no answer within {self.settings.timeout_s:g} s (timeout)") from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e.__context__
            detail = f": {type(cause).__name__}" if cause is not None else ""
            raise _Retryable(f"cannot connect{detail}") from None
        except openai.APIStatusError as e:
            status = e.status_code
            what = f"HTTP {status}: {self._server_message(e)}"
            if status in _RETRY_STATUS:
                raise _Retryable(what, status, _retry_after(e.response.headers)) from None
            raise LLMError(self._scrub(self._advice(status, what)), status=status, attempts=1) from None
        except openai.OpenAIError as e:
            raise LLMError(self._scrub(f"the LLM endpoint {self.base_url} sent an answer we cannot read "
                                       f"({type(e).__name__}: {e}); is it OpenAI-compatible?")) from None

    @staticmethod
    def _server_message(e: openai.APIStatusError) -> str:
        body = e.body
        if isinstance(body, dict):
            inner = body["error"] if isinstance(body.get("error"), dict) else body
            if inner.get("message"):
                return str(inner["message"])[:300]
        return str(e.message)[:300]

    def _advice(self, status: int, what: str) -> str:
        where = f"the LLM endpoint {self.base_url} refused the request ({what})"
        if status in (401, 403):
            return (f"{where}: put a valid API key in ${self.settings.api_key_env} "
                    f"(currently {'from $' + self._key_source if self._key_source else 'none set'})")
        if status == 404:
            return (f"{where}: check that the URL ends in the API root (often /v1) and that the "
                    f"server serves the model {self.model!r}")
        return f"{where}: check the model name and the request settings (max_tokens, temperature)"

    def _plain(self, messages: list) -> Completion:
        resp = self._openai().chat.completions.create(**self._params(messages, stream=False))
        if not resp.choices:
            raise _Retryable("an answer with no choices")
        text = resp.choices[0].message.content or ""
        if resp.usage is not None:
            return Completion(text, resp.usage.prompt_tokens or 0, resp.usage.completion_tokens or 0)
        return self._estimated(text, messages)

    def _streamed(self, messages: list, on_token: Callable[[str], None],
                  cancel: threading.Event | None) -> Completion:
        stream = self._openai().chat.completions.create(**self._params(messages, stream=True))
        pieces: list[str] = []
        usage = None
        # A watcher cuts the connection when `cancel` is set, so a server that stalls mid-answer
        # cannot hold a cancelled request until the read timeout.
        done = threading.Event()
        watcher = None
        if cancel is not None:
            def watch() -> None:
                while not done.is_set():
                    if cancel.wait(0.05):
                        _interrupt(stream)
                        return
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
        try:
            for chunk in stream:
                if cancel is not None and cancel.is_set():
                    break
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    if choice.index == 0 and choice.delta is not None and choice.delta.content:
                        pieces.append(choice.delta.content)
                        on_token(choice.delta.content)
        except (openai.APIConnectionError, openai.APIStatusError, openai.OpenAIError):
            if cancel is None or not cancel.is_set():
                if pieces:
                    # Tokens already reached the caller; a silent retry would repeat them.
                    raise LLMError(self._scrub(f"the LLM endpoint {self.base_url} broke off its answer after "
                                               f"{len(''.join(pieces))} characters; try again")) from None
                raise
        except Exception as e:   # the HTTP layer's own errors (read timeout, stream closed under it)
            if cancel is None or not cancel.is_set():
                if not pieces:
                    raise _Retryable(f"reading the answer failed ({type(e).__name__})") from None
                raise LLMError(self._scrub(f"reading the answer from {self.base_url} failed after "
                                           f"{len(''.join(pieces))} characters ({type(e).__name__}); "
                                           "try again")) from None
        finally:
            done.set()
            stream.close()
            if watcher is not None:
                watcher.join()
        if cancel is not None and cancel.is_set():
            raise LLMCancelled(f"LLM request to {self.base_url} cancelled after {len(''.join(pieces))} "
                               "characters", attempts=1)
        text = "".join(pieces)
        if usage is not None:
            return Completion(text, usage.prompt_tokens or 0, usage.completion_tokens or 0)
        return self._estimated(text, messages)

    @staticmethod
    def _estimated(text: str, messages: list) -> Completion:
        prompt = sum(len(str(m.get("content", ""))) for m in messages)
        return Completion(text, prompt // 4, len(text) // 4, usage_estimated=True)
