"""The offline searcher (docs/architecture.md, The agent): with no model configured, a deterministic search over
the transform catalog (`agent/transforms.py`). Each round proposes every transform of the base
whose result was not evaluated yet; the driver evaluates them and keeps the fastest that wins
(greedy steepest ascent). The catalog only speeds up a correct kernel: it never fixes or drafts
one, so with nothing correct it stops at once.

For every memory item shown in a round, a candidate declares `adopted` when its transform follows
the item (their tags meet, `TRANSFORM_TAGS`) and `not_adopted` otherwise.
"""

from __future__ import annotations

from sage_npu.agent.adoption_block import Adoption
from sage_npu.agent.driver import FailedTurn, Outcome, SearchState, SearchStop
from sage_npu.agent.episode import Candidate, Proof, digest
from sage_npu.agent.reflection import Lessons, deterministic_lessons
from sage_npu.agent.transforms import Sources, propose
from sage_npu.memory.retrieval import Retrieval

# Which memory items a transform follows: an item is adopted when its tags meet these.
TRANSFORM_TAGS = {
    "double-buffering": {"buffer_num", "double-buffering"},
    "all-vector-cores": {"multi-core", "block_dim"},
    "bigger-tiles": {"tiling"},
    "fewer-tile-splits": {"tiling"},
    "cube-base-block": {"cube", "base-block"},
    "l1-double-buffering": {"cube", "double-buffering"},
    "block-then-whole-reduce": {"reduction", "reduce"},
    "vector-instead-of-scalar-loop": {"vectorise", "scalar"},
}


def follows(transform: str, item_tags: list[str]) -> bool:
    return bool(TRANSFORM_TAGS.get(transform, set()) & {t.lower() for t in item_tags})


def declare(transform: str, shown: Retrieval | None) -> dict[str, Adoption]:
    """The candidate's adoption status for every item shown."""
    if shown is None:
        return {}
    items = list(shown.resident) + [r.item for r in shown.items]
    out = {}
    for item in items:
        adopted = follows(transform, item.tags)
        out[item.id] = Adoption(id=item.id, status="adopted" if adopted else "not_adopted",
                                reason=f"{transform} {'follows' if adopted else 'does not use'} this item")
    return out


class CatalogSearcher:
    """The transform catalog as a `Searcher`."""

    model = "offline"
    tokens = 0

    def propose(self, state: SearchState) -> list[Candidate] | FailedTurn | SearchStop:
        if state.best is None:
            return SearchStop("the catalog only speeds up a correct kernel")
        host = state.base_files.get("host.py")
        if host is None:
            return SearchStop("the catalog edits host.py, and the task has none")
        found = propose(Sources(state.kernel_name, state.base_files[state.kernel_name], host), state.chip)
        fresh = [c for c in found if digest({**state.base_files, **c.files}) not in state.evaluated]
        if not fresh:
            return SearchStop("every transform of the base was evaluated")
        for c in fresh:
            c.adoptions = declare(c.transform, state.shown)
        return fresh

    def observe(self, outcome: Outcome, state: SearchState) -> None:
        """The catalog proposes from the base alone."""

    def lessons(self, operator: str, proofs: list[Proof], diff: str) -> Lessons:
        return Lessons(deterministic_lessons(operator, proofs))
