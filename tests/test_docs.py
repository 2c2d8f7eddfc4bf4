"""What a user reads points only at documents the project has: no design documents or issue
trackers outside it, and every `docs/*.md` a README, doc page, message or help text names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = ("sage_npu", "npu_eval", "memory", "agent", "server")
OUTSIDE = re.compile(r"DESIGN section|DESIGN\.md|\.\./shared/|shared/DESIGN|ascendc-notes\.md|see the issues"
                     r"|\bDESIGN\b")


def user_facing() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for part in PARTS:
        files += [p for p in sorted((REPO / part).rglob("*")) if p.suffix in (".py", ".h", ".md", ".json")
                  and "build" not in p.relative_to(REPO).parts]
    return files


def test_nothing_points_outside_the_project():
    found = [f"{p.relative_to(REPO)}:{i}: {line.strip()}" for p in user_facing()
             for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if OUTSIDE.search(line)]
    assert not found, "texts that point at documents the project does not have:\n" + "\n".join(found)


def test_every_docs_page_named_exists():
    named = {m for p in user_facing() for m in re.findall(r"docs/([\w-]+\.md)", p.read_text(errors="replace"))}
    named |= {m for p in (REPO / "docs").glob("*.md") for m in re.findall(r"\]\(([\w-]+\.md)", p.read_text())}
    missing = sorted(n for n in named if not (REPO / "docs" / n).exists())
    assert named and not missing, f"named but missing in docs/: {missing}"


def test_the_user_contracts_live_in_docs():
    for page in ("task-format.md", "report.md", "settings.md", "diagnostic-codes.md", "profile.md"):
        assert (REPO / "docs" / page).exists(), page
        assert f"docs/{page}" in (REPO / "README.md").read_text(), f"README does not link docs/{page}"
