"""The server's own settings (the `sage.server.*` part of the editor's settings)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ServerSettings(BaseModel):
    debounce_s: float = Field(0.3, ge=0, le=10, description="wait this long after a save before evaluating")
    code_lens: bool = Field(True, description="show the evaluation summary and hot lines as code lenses")
