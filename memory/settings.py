"""Settings of the experience memory; the root package composes them into `Settings.memory`.

Every constant of the memory's mechanism (docs/memory.md) is a field here, with its default.
Nothing in `sage_npu.memory` reads a constant from anywhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class MemorySettings(BaseModel):
    # --- where the store lives and how it is embedded
    db: Path | None = Field(
        default=None, description="memory folder (LanceDB); default: the user data dir's sage-npu/memory"
    )
    embedder: Literal["minilm", "openai", "hashing"] = Field(
        default="minilm",
        description="minilm: bundled all-MiniLM-L6-v2, offline; openai: an OpenAI-compatible /embeddings "
        "endpoint; hashing: feature hashing, no model (tests, simulations)",
    )
    embed_endpoint: str | None = Field(
        default=None, description="base URL of the OpenAI-compatible endpoint (embedder=openai)"
    )
    embed_model: str = Field(
        default="text-embedding-3-small", description="model name sent to the endpoint (embedder=openai)"
    )
    embed_api_key_env: str = Field(
        default="SAGE_NPU_EMBED_API_KEY",
        description="environment variable holding the endpoint's key (never the key itself)"
    )
    embed_timeout_s: float = Field(default=30.0, gt=0, description="timeout of one embeddings request")
    hashing_dim: int = Field(default=384, ge=8, description="vector size of the hashing embedder")
    load_starter: bool = Field(
        default=True, description="load the bundled Ascend C starter experiences into a new memory"
    )

    # --- retrieval
    candidates: int = Field(default=50, ge=1, description="nearest items taken before re-ranking")
    fts_candidates: int = Field(
        default=10, ge=0, description="full-text hits joined into the candidates (scored by their vector similarity)"
    )
    utility_weight: float = Field(default=0.3, ge=0, le=1, description="g in (1-g)*sim_norm + g*u")
    ann_ef: int | None = Field(
        default=None, ge=1, description="HNSW search breadth once a vector index exists (at least `candidates`; "
        "None: LanceDB's default)"
    )
    top_k: int = Field(default=5, ge=0, description="items returned per retrieval")

    # --- ATU
    no_correct_penalty: float = Field(
        default=0.2, ge=0, description="d: reward -d when no kernel was correct; xi=-d on reject"
    )
    ignored_penalty: float = Field(default=0.2, ge=0, description="b: xi=-b for an item shown but never adopted")
    eta_min: float = Field(
        default=0.05, gt=0, le=1, description="floor of the learning rate eta = max(1/(1+n_ret), eta_min)"
    )
    initial_utility: float = Field(default=0.0, description="u of a new item")
    editor_timeout_s: float = Field(
        default=3600.0, gt=0,
        description="an editor episode with no accept/reject after this long is credited as the agent's"
    )

    # --- UGC
    eligible_min_utility: float = Field(default=0.0, description="eligible only when u is above this")
    eligible_min_episodes: int = Field(
        default=3, ge=1, description="eligible only when adopted in at least this many episodes"
    )
    eligible_min_operators: int = Field(
        default=3, ge=1, description="eligible only when adopted across this many operators"
    )
    resident_token_budget: int = Field(default=10_000, ge=0, description="B: tokens of the resident rule set")
    model_context_tokens: int = Field(
        default=128_000, ge=1, description="context window of the agent's model, in tokens"
    )
    max_context_share: float = Field(
        default=0.25, gt=0, le=1, description="the resident set never exceeds this share of the model's context"
    )
    usage_rate: float = Field(default=0.1, gt=0, le=1, description="m in p <- (1-m)*p + m*1[adopted]")
    max_rule_tokens: int = Field(default=160, ge=8, description="length cap of an offline (extractive) rule")
    retire_below_utility: float = Field(default=-0.15, description="a cold item whose u falls below this is retired...")
    retire_min_retrievals: int = Field(
        default=10, ge=1, description="...once it has been shown in at least this many episodes"
    )

    # --- storage upkeep
    lock_timeout_s: float = Field(default=60.0, gt=0, description="wait for the store's write lock at most this long")
    optimize_every: int = Field(default=16, ge=1, description="compact a table every this many versions")
    keep_versions_s: float = Field(
        default=3600.0, ge=0, description="old table versions are kept this long (readers' snapshots)"
    )
    index_threshold: int = Field(
        default=20_000, ge=1, description="build a vector index once the items table has this many rows"
    )
    read_refresh_s: float = Field(
        default=1.0, ge=0,
        description="reads see other processes' writes at most this late (writes always see the latest)"
    )

    def resident_budget(self, context_tokens: int | None = None) -> int:
        """Tokens the resident set may use: min(B, share * model context)."""
        ctx = self.model_context_tokens if context_tokens is None else context_tokens
        return min(self.resident_token_budget, int(ctx * self.max_context_share))
