"""Settings of the agent part; the root composes them into `Settings.agent`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from sage_npu.agent.llm_settings import LLMSettings


class AgentSettings(BaseModel):
    turns: int = Field(default=30, ge=1, le=500, description="candidates an episode evaluates at most")
    max_unusable_answers: int = Field(default=3, ge=1, description="stop an episode after this many model answers "
                                      "in a row without a usable candidate (no code, or files already evaluated)")
    consolidate_every: int = Field(default=10, ge=0, description="run UGC after every this many credited episodes "
                                                         "(0: only `sage-npu memory consolidate`)")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="the LLM endpoint (unset: offline optimizer)")
