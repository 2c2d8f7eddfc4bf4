"""Reflection (DESIGN section 6): after an episode, what proved itself becomes new experiences,
each tied to the attempt that proves it (its evidence).

With a model, the model writes them from the improving steps and the final diff; its answer is
validated (an experience must cite one of the proving attempts) and anything unusable falls back
to the deterministic text, so a bad answer never costs the episode its lesson.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field, ValidationError

from sage_npu.agent.adoption_block import json_block
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.llm import LLMClient, LLMError
from sage_npu.memory.experience_memory import NewExperience

log = logging.getLogger(__name__)

MAX_EXPERIENCES = 3
MAX_DIFF_CHARS = 8000

Proof = tuple[str, str, float, list[str]]   # (attempt id, description, speedup, tags)


class _Drafted(BaseModel):
    attempt: str
    title: str = Field(min_length=3, max_length=120)
    text: str = Field(min_length=20, max_length=800)
    tags: list[str] = Field(default_factory=list, max_length=8)


def _deterministic(operator: str, proofs: list[Proof], source: str) -> list[NewExperience]:
    return [NewExperience(
        title=f"{operator}: {description}",
        text=f"On the {operator} kernel, {description} made it {speedup:.2f}x faster (estimated by the CPU cost "
             "model), correct on every trial.",
        operator=operator, category="optimization", tags=tags, source=source, evidence=[attempt_id])
        for attempt_id, description, speedup, tags in proofs]


def _prompt(operator: str, proofs: list[Proof], diff: str) -> list[dict[str, str]]:
    steps = "\n".join(f"- attempt {a}: {d} ({s:.2f}x faster)" for a, d, s, _ in proofs)
    return [
        {"role": "system", "content": "You distil Ascend C kernel optimization lessons into short, general "
                                      "experiences another engineer can reuse on other operators."},
        {"role": "user", "content":
            f"These steps made the `{operator}` kernel faster, each correct on every trial:\n{steps}\n\n"
            f"The whole change:\n```diff\n{diff[:MAX_DIFF_CHARS]}\n```\n\n"
            f"Write at most {MAX_EXPERIENCES} experiences, each proven by one attempt above. Answer with only a "
            '```json block: [{"attempt": "<attempt id>", "title": "...", "text": "what to do, when, and why it '
            'is faster", "tags": ["..."]}]'},
    ]


def _parse(text: str, proofs: list[Proof]) -> list[_Drafted]:
    data = json_block(text)
    if isinstance(data, dict):
        data = data.get("experiences", [data])
    valid = {a for a, *_ in proofs}
    out = []
    for entry in data[:MAX_EXPERIENCES]:
        d = _Drafted.model_validate(entry)
        if d.attempt in valid:
            out.append(d)
    return out


def reflect(recorder: EpisodeRecorder, proofs: list[Proof], client: LLMClient | None = None,
            diff: str = "") -> list[str]:
    """Write the episode's lessons into the memory; their ids."""
    if not proofs:
        return []
    operator = recorder.operator
    new = []
    if client is not None and client.configured:
        try:
            drafted = _parse(client.complete(_prompt(operator, proofs, diff)).text, proofs)
        except (LLMError, ValueError, ValidationError, TypeError, AttributeError) as e:
            log.info("reflection answer unusable (%s); keeping the deterministic lessons", e)
            drafted = []
        by_attempt = {a: (s, tags) for a, _, s, tags in proofs}
        new = [NewExperience(title=d.title, text=d.text, operator=operator, category="optimization",
                             tags=sorted(set(d.tags) | set(by_attempt[d.attempt][1])),
                             source=f"SAGE reflection ({client.model})", evidence=[d.attempt]) for d in drafted]
    if not new:
        source = f"SAGE reflection ({client.model})" if client is not None and client.configured \
            else "sage-npu offline optimizer"
        new = _deterministic(operator, proofs, source)
    return recorder.memory.add_experiences(new)
