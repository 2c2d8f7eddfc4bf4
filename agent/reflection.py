"""Reflection (docs/architecture.md, The agent): after an episode, what proved itself becomes new experiences,
each tied to the attempt that proves it (its evidence).

Two ways to write them, chosen by the episode's searcher (`Searcher.lessons`): the offline text
(`deterministic_lessons`), or a model's lessons (`model_lessons`) from the improving steps and the
final diff, validated (a lesson must cite one of the proving attempts), with anything unusable
falling back to the offline text, so a bad answer never costs the episode its lesson. The driver
writes the lessons into the memory.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field, ValidationError

from sage_npu.agent.adoption_block import json_block
from sage_npu.agent.episode import Proof
from sage_npu.agent.llm import LLMClient, LLMError
from sage_npu.memory.experience_memory import NewExperience

log = logging.getLogger(__name__)

MAX_EXPERIENCES = 3
MAX_DIFF_CHARS = 8000
OFFLINE_SOURCE = "sage-npu offline optimizer"


class _Drafted(BaseModel):
    attempt: str
    title: str = Field(min_length=3, max_length=120)
    text: str = Field(min_length=20, max_length=800)
    tags: list[str] = Field(default_factory=list, max_length=8)


def deterministic_lessons(operator: str, proofs: list[Proof], source: str = OFFLINE_SOURCE) -> list[NewExperience]:
    """One experience per proof, in a fixed wording."""
    return [NewExperience(
        title=f"{operator}: {p.description}",
        text=f"On the {operator} kernel, {p.description} made it {p.speedup:.2f}x faster ("
             + ("estimated by the CPU cost model" if p.estimated else "measured on the device")
             + "), correct on every trial.",
        operator=operator, category="optimization", tags=list(p.tags), source=source, evidence=[p.attempt_id],
        id=None) for p in proofs]


def _prompt(operator: str, proofs: list[Proof], diff: str) -> list[dict[str, str]]:
    steps = "\n".join(f"- attempt {p.attempt_id}: {p.description} ({p.speedup:.2f}x faster)" for p in proofs)
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
    valid = {p.attempt_id for p in proofs}
    out = []
    for entry in data[:MAX_EXPERIENCES]:
        d = _Drafted.model_validate(entry)
        if d.attempt in valid:
            out.append(d)
    return out


def model_lessons(client: LLMClient, operator: str, proofs: list[Proof], diff: str) -> list[NewExperience]:
    """The model's lessons (at most MAX_EXPERIENCES), else the offline text under the model's name."""
    if not proofs:
        return []
    source = f"SAGE reflection ({client.model})"
    try:
        drafted = _parse(client.complete(_prompt(operator, proofs, diff)).text, proofs)
    except (LLMError, ValueError, ValidationError, TypeError, AttributeError) as e:
        log.info("reflection answer unusable (%s); keeping the deterministic lessons", e)
        drafted = []
    tags_of = {p.attempt_id: p.tags for p in proofs}
    new = [NewExperience(title=d.title, text=d.text, operator=operator, category="optimization",
                         tags=sorted(set(d.tags) | set(tags_of[d.attempt])), source=source, evidence=[d.attempt],
                         id=None) for d in drafted]
    return new or deterministic_lessons(operator, proofs, source)
