"""Settings of the agent part; the root composes them into `Settings.agent`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from sage_npu.agent.llm_settings import LLMSettings


class AgentSettings(BaseModel):
    turns: int = Field(30, ge=1, le=500, description="candidates an episode evaluates at most")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="the LLM endpoint (unset: offline optimizer)")
