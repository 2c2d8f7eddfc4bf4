"""Experience memory (DESIGN section 5): a LanceDB store of experiences and rules, retrieval,
adoption-traced utility (ATU) and utility-gated consolidation (UGC).

Imports nothing else from sage_npu. Heavy dependencies (LanceDB, sentence-transformers) load on
first use, not on `import sage_npu.memory`.
"""

from sage_npu.memory.settings import MemorySettings

__all__ = ["MemorySettings"]
