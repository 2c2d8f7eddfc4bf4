"""UGC's rule abstraction filled by the model (docs/memory.md), and consolidation when it is due.

Consolidation holds the store's write lock, and a model call can take minutes; so the model
drafts the rules first, outside the lock, for the items that are eligible now, and the
abstractor handed to consolidation only looks drafts up. An item without a usable draft (no
model, a garbage answer, a rule over the length cap, a draft with a sentence addressed to a model)
gets the offline, extractive rule.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from sage_npu.agent.adoption_block import json_block
from sage_npu.agent.llm import LLMClient, LLMError
from sage_npu.agent.reflection import strip_instructions
from sage_npu.memory import ugc
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.models import Item

log = logging.getLogger(__name__)

MAX_DRAFTS = 8   # model calls per consolidation at most; the rest are abstracted offline


class DraftedAbstractor:
    """A RuleAbstractor answering from drafts made beforehand, else extractively."""

    def __init__(self, drafts: dict[str, ugc.RuleDraft], fallback: ugc.RuleAbstractor) -> None:
        self.drafts = drafts
        self.fallback = fallback

    def abstract(self, item: Item) -> ugc.RuleDraft:
        return self.drafts.get(item.id) or self.fallback.abstract(item)


def draft_rule(client: LLMClient, item: Item, max_tokens: int) -> ugc.RuleDraft:
    ops = ", ".join(sorted(set(item.adopted_ops)))
    messages = [
        {"role": "system", "content": "You turn a proven Ascend C kernel optimization experience into one short, "
                                      "general rule: no operator-specific names or numbers, what to do and when."},
        {"role": "user", "content": f"The experience (proven on: {ops}):\n<memory>\n{item.title}\n{item.text}\n"
                                    f"</memory>\nAnswer with only a ```json block: "
                                    f'{{"title": "...", "text": "at most {max_tokens} tokens"}}'},
    ]
    draft = ugc.RuleDraft.model_validate(json_block(client.complete(messages).text))
    # A rule is shown in every prompt: nothing in it may be addressed to the model.
    addressed = strip_instructions(draft.title)[1] + strip_instructions(draft.text)[1]
    if addressed:
        raise ValueError(f"the draft holds {addressed} sentence(s) addressed to a model")
    return draft


def consolidate_if_due(memory: ExperienceMemory, every: int, client: LLMClient | None = None):
    """Run UGC when the credited episode count reaches a multiple of `every`; the report, or None."""
    episodes = memory.stats().episodes
    if every <= 0 or episodes == 0 or episodes % every:
        return None
    s = memory.settings
    fallback = ugc.ExtractiveAbstractor(memory.tokens, s.max_rule_tokens)
    drafts: dict[str, ugc.RuleDraft] = {}
    if client is not None and client.configured:
        candidates = [it for it in memory.list_items(status="cold") if ugc.eligible(it, s)][:MAX_DRAFTS]
        for item in candidates:
            try:
                d = draft_rule(client, item, s.max_rule_tokens)
            except (LLMError, ValueError, ValidationError, TypeError) as e:
                log.info("rule draft for %s unusable (%s); abstracting it offline", item.id, e)
                continue
            if memory.tokens.count([d.title + ": " + d.text])[0] <= s.max_rule_tokens:
                drafts[item.id] = d
    return memory.consolidate(DraftedAbstractor(drafts, fallback))
