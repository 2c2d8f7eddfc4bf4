"""Settings of the LLM client; meant to be composed into `AgentSettings.llm`.

There is deliberately no field for the API key itself: a key in a settings file ends up in
config dumps, reports and traces. The settings only name the environment variable to read.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class LLMSettings(BaseModel):
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1); unset: "
                          "$SAGE_NPU_LLM_BASE_URL, and without either the offline optimizer runs")
    model: str | None = Field(default=None,
                              description="model name sent to the endpoint; unset: $SAGE_NPU_LLM_MODEL")
    api_key_env: str = Field(
        default="SAGE_NPU_LLM_API_KEY", description="environment variable holding the API key "
                                            "($OPENAI_API_KEY is tried after it); the key is never a setting")
    timeout_s: float = Field(default=120.0, gt=0,
                             description="seconds one request may take (and one stream may stay silent)")
    connect_timeout_s: float = Field(default=10.0, gt=0, description="seconds to open a connection to the endpoint")
    max_attempts: int = Field(default=4, ge=1, le=20, description="tries per request on 429, 5xx, timeouts and "
                                                          "connection errors")
    backoff_s: float = Field(default=1.0, ge=0, description="first retry delay, doubled each retry (a Retry-After "
                                                    "header from the server wins)")
    max_backoff_s: float = Field(default=30.0, ge=0, description="longest wait between two tries")
    temperature: float | None = Field(default=None, ge=0, le=2,
                                      description="sampling temperature; unset: the server's default")
    max_tokens: int | None = Field(default=None, ge=1,
                                   description="completion token cap per answer; unset: the server's")
