"""Settings of the agent part; the root composes them into `Settings.agent`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from sage_npu.agent.llm_settings import LLMSettings


class BenchSettings(BaseModel):
    """`sage-npu bench` (docs/bench.md): how episodes are spread and ordered."""

    wave: int = Field(default=8, ge=1, description="episodes per wave: they all see the memory as the earlier waves "
                      "left it, and are credited in suite order when the wave ends (the run's memory depends on it, "
                      "never on --jobs or the cluster)")
    ray: bool = Field(default=False, description="run each episode as a Ray task (sage-npu bench --ray)")
    ray_address: str | None = Field(default=None, description="the Ray cluster to join (ray start --head prints it); "
                                    "unset: a local Ray instance")
    task_timeout_s: float = Field(default=3600.0, gt=0, description="an episode running longer is ended and "
                                  "recorded as a timeout")
    max_retries: int = Field(default=3, ge=0, description="times an episode whose worker died is run again")
    models: list[str] = Field(default_factory=list, description="models to run the suite with, one run each "
                              "(results FILE.<model>.json); empty: agent.llm.model")
    shared_memory: bool = Field(default=False, description="with several models: one memory for all (transfer), "
                                "else one per model (<db>/<model>)")


class AgentSettings(BaseModel):
    turns: int = Field(default=30, ge=1, le=500, description="candidates an episode evaluates at most")
    max_unusable_answers: int = Field(default=3, ge=1, description="stop an episode after this many model answers "
                                      "in a row without a usable candidate (no code, or files already evaluated)")
    consolidate_every: int = Field(default=10, ge=0, description="run UGC after every this many credited episodes "
                                                         "(0: only `sage-npu memory consolidate`)")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="the LLM endpoint (unset: offline optimizer)")
    bench: BenchSettings = Field(default_factory=BenchSettings, description="sage-npu bench: waves, Ray, timeouts")
