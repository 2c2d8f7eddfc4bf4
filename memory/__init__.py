"""Experience memory (docs/memory.md): a LanceDB store of experiences and rules, retrieval,
adoption-traced utility (ATU) and utility-gated consolidation (UGC).

Imports nothing else from sage_npu. Heavy dependencies (LanceDB, sentence-transformers) load on
first use, not on `import sage_npu.memory`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sage_npu.memory.settings import MemorySettings

__all__ = ["MemorySettings"]


def __getattr__(name: str):
    # Lazy, so that importing a submodule (the CLI's parser imports memory.cli) does not load pydantic.
    if name == "MemorySettings":
        from sage_npu.memory.settings import MemorySettings

        return MemorySettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
