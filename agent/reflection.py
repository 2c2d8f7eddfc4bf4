"""Reflection (docs/architecture.md, The agent): after an episode, what proved itself becomes new experiences,
each tied to the attempt that proves it (its evidence).

Two ways to write them, chosen by the episode's searcher (`Searcher.lessons`): the offline text
(`deterministic_lessons`, whose descriptions name the catalog transform), or a model's lessons
(`model_lessons`) from the improving steps and the final diff, validated (a lesson must cite one
of the proving attempts). When the model's reflection is unusable, a lesson is derived from each
proof's own diff and verdict (`diff_lessons`) when the change is small enough to state, else
nothing is stored; `Lessons.note` says which. Reflections are data: sentences addressed to a model
("ignore all previous instructions ...") are stripped before anything is stored
(`strip_instructions`). The driver writes the lessons into the memory.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from sage_npu.agent.adoption_block import json_block
from sage_npu.agent.episode import Proof
from sage_npu.agent.llm import LLMClient, LLMError
from sage_npu.memory.experience_memory import NewExperience

log = logging.getLogger(__name__)

MAX_EXPERIENCES = 3
MAX_DIFF_CHARS = 8000
MAX_LESSON_LINES = 8      # changed lines a derived lesson may state; a bigger change is a rewrite, not a lesson
OFFLINE_SOURCE = "sage-npu offline optimizer"

# A sentence addressed to a model rather than a kernel engineer: an injected instruction.
_ADDRESSED = re.compile(
    r"\b(ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,60}\b(previous|prior|above|earlier|all|any|system|"
    r"the)\b[^.!?\n]{0,60}\b(instructions?|prompts?|rules?|messages?|context|guidelines?)\b"
    r"|\byou are (now )?(a|an|the|no longer)\b|\b(system|developer) (prompt|message)\b|\bas an ai\b"
    r"|\bnew instructions?\b|\bjailbreak|<\|?/?(im_start|im_end|system|assistant|user|memory)\|?>"
    r"|^\s*(system|assistant|user)\s*:", re.I | re.M)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")


@dataclass(frozen=True)
class Lessons:
    """What reflection stores, and a note for people when it did not go as planned."""

    experiences: list[NewExperience] = field(default_factory=list)
    note: str = ""


def strip_instructions(text: str) -> tuple[str, int]:
    """The text without its sentences addressed to a model; and how many were removed."""
    kept, dropped = [], 0
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0)
        if _ADDRESSED.search(sentence):
            dropped += 1
        else:
            kept.append(sentence)
    return " ".join("".join(kept).split()), dropped


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


def _changed_lines(diff: str) -> list[tuple[str, str, str]]:
    """(file, '-' or '+', line) of a unified diff's changed lines, blank and comment-only lines left out."""
    out, name = [], ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].removeprefix("b/")
        elif line.startswith(("---", "@@", "\\")):
            continue
        elif line[:1] in "+-":
            body = line[1:].strip()
            if body and not body.startswith(("//", "#", "/*", "*")):
                out.append((name, line[0], body))
    return out


def diff_lessons(operator: str, proofs: list[Proof], source: str) -> list[NewExperience]:
    """A lesson per proof whose change is small enough to state: what became what, and the verdict."""
    out = []
    for p in proofs:
        lines = _changed_lines(p.change)
        if not lines or len(lines) > MAX_LESSON_LINES:
            continue
        parts = []
        for name in dict.fromkeys(f for f, _, _ in lines):
            old = " / ".join(b for f, k, b in lines if f == name and k == "-")
            new = " / ".join(b for f, k, b in lines if f == name and k == "+")
            parts.append(f"in {name}, `{old}` became `{new}`" if old else f"in {name}, `{new}` was added")
        how = "estimated by the CPU cost model" if p.estimated else "measured on the device"
        title = f"{operator}: " + parts[0].split(", ", 1)[1]
        out.append(NewExperience(
            title=title if len(title) <= 120 else title[:117] + "...",
            text=f"On the {operator} kernel, " + "; ".join(parts) + f": {p.speedup:.2f}x faster ({how}), correct on "
                 f"all {p.trials} trials.",
            operator=operator, category="optimization", tags=list(p.tags), source=source, evidence=[p.attempt_id],
            id=None))
    return out


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


def model_lessons(client: LLMClient, operator: str, proofs: list[Proof], diff: str) -> Lessons:
    """The model's lessons (at most MAX_EXPERIENCES), stripped of anything addressed to a model; when
    none is usable, the lessons derived from the proofs' diffs (or none), and a note saying so."""
    if not proofs:
        return Lessons()
    source = f"SAGE reflection ({client.model})"
    why = ""
    try:
        drafted = _parse(client.complete(_prompt(operator, proofs, diff)).text, proofs)
    except (LLMError, ValueError, ValidationError, TypeError, AttributeError) as e:
        why, drafted = f"{type(e).__name__}: {str(e)[:120]}", []
    tags_of = {p.attempt_id: p.tags for p in proofs}
    new, stripped = [], 0
    for d in drafted:
        title, n_title = strip_instructions(d.title)
        text, n_text = strip_instructions(d.text)
        stripped += n_title + n_text
        if len(title) >= 3 and len(text) >= 20:
            new.append(NewExperience(title=title, text=text, operator=operator, category="optimization",
                                     tags=sorted(set(d.tags) | set(tags_of[d.attempt])), source=source,
                                     evidence=[d.attempt], id=None))
    note = f"{stripped} sentence(s) addressed to a model were removed from the reflection" if stripped else ""
    if new:
        return Lessons(new, note)
    derived = diff_lessons(operator, proofs, f"{source}, derived from the diff")
    log.info("reflection answer unusable (%s); %d lesson(s) derived from the diff", why or "no valid lesson",
             len(derived))
    what = (f"stored {len(derived)} lesson(s) derived from the diff and the verdict" if derived else
            "its change is too large to state as a lesson, so nothing was stored")
    return Lessons(derived, "; ".join(x for x in (note, f"the model's reflection was unusable; {what}") if x))
