"""Starter knowledge: Ascend C experiences shipped as package data and loaded into a new memory.

Each entry names its source (a public document or repository path). Ids are stable, so loading
twice (or into a memory that already learned about them) adds nothing and overwrites nothing.
"""

from __future__ import annotations

import json
from importlib import resources

from pydantic import BaseModel

from sage_npu.memory.models import Item

STARTER_FILE = "ascendc.json"


class StarterExperience(BaseModel):
    id: str
    title: str
    text: str
    category: str
    tags: list[str]
    source: str


def starter_experiences() -> list[StarterExperience]:
    raw = resources.files("sage_npu.memory").joinpath("starter", STARTER_FILE).read_text(encoding="utf-8")
    data = json.loads(raw)
    return [StarterExperience.model_validate(e) for e in data["experiences"]]


def starter_items(initial_utility: float = 0.0) -> list[Item]:
    """The starter experiences as items (without vectors)."""
    return [Item(id=e.id, kind="experience", title=e.title, text=e.text, category=e.category, tags=e.tags,
                 source=e.source, u=initial_utility, u0=initial_utility) for e in starter_experiences()]
