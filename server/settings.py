"""The server's own settings (the `sage.server.*` part) and the shape of the composed settings
the server is given.

The root composes every part's model into one `Settings` (sage_npu/settings.py) and hands an
instance to the server; the server never imports the root, it reads the parts through
`ComposedSettings` and asks the instance itself to merge the editor's values into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from sage_npu.agent.settings import AgentSettings
    from sage_npu.agent.worker import MemorySettings
    from sage_npu.npu_eval.settings import EvalSettings


class ServerSettings(BaseModel):
    # Long enough to gather one "save all" (its writes arrive within milliseconds) into one
    # evaluation; every tenth of a second more is added to each save's verdict.
    debounce_s: float = Field(default=0.1, ge=0, le=10, description="wait this long after a save before evaluating")
    code_lens: bool = Field(default=True, description="show the evaluation summary and hot lines as code lenses")


class ComposedSettings(Protocol):
    """What the server reads of the root's `Settings`: each part's model, and the editor merge."""

    @property
    def eval(self) -> EvalSettings: ...

    @property
    def agent(self) -> AgentSettings: ...

    @property
    def memory(self) -> MemorySettings: ...

    @property
    def server(self) -> ServerSettings: ...

    def with_editor_values(self, raw: Any) -> tuple[ComposedSettings, list[str]]:
        """These settings with the editor's `sage.*` values merged in leaf by leaf, and a message
        for each value that was refused (that setting keeps its value from here)."""
        ...
