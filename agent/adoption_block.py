"""The model's answer format and its parser (docs/architecture.md, The agent).

An answer carries the whole new kernel in a ```cpp block, optionally a whole new host.py in a
```python block, and an adoption block: for every memory item id it was shown, a status
(`adopted` or `not_adopted`) and a reason. The block is a ```json block or an
<adoption>...</adoption> section holding JSON or one `ID: status - reason` line per item.

The parser is lenient about prose around the blocks (models add it whatever the prompt says)
and strict about statuses, since ATU credits memory items on them: a status other than the two
is not guessed at, the id is reported missing so the loop can ask once more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, ValidationError

DeclaredStatus = Literal["adopted", "not_adopted"]   # what a turn may declare; memory adds "undeclared"
STATUSES: tuple[DeclaredStatus, ...] = get_args(DeclaredStatus)

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_SECTION = re.compile(r"<adoption>(.*?)(</adoption>|\Z)", re.S | re.I)
_LINE = re.compile(r"^\s*(?:[-*]\s*)?[\[`\"']?(?P<id>[^\s:=\]`\"']+)[\]`\"']?\s*[:=]\s*"
                   r"(?P<status>not[\s_-]*adopted|adopted|\w+)\s*"
                   r"(?:[-\u2013\u2014:,;(]\s*(?P<reason>.*?)\)?)?\s*$", re.I)
_CPP = {"cpp", "c++", "cc", "cxx", "c", "ascendc", "h", "hpp"}
_PY = {"python", "py", "python3"}


class Adoption(BaseModel):
    id: str = Field(min_length=1)
    status: DeclaredStatus
    reason: str = Field(min_length=1)


class ParsedAnswer(BaseModel):
    kernel: str | None = None                                 # the whole new kernel file
    host: str | None = None                                   # the new host.py, when the answer changes it
    adoptions: dict[str, Adoption] = Field(default_factory=dict)  # by item id, only ids that were shown
    missing_ids: list[str] = Field(default_factory=list)      # shown, with no valid status: ask once more
    unknown_ids: list[str] = Field(default_factory=list)      # declared but never shown: ignored
    errors: list[str] = Field(default_factory=list)           # the answer cannot be used: retry with these
    warnings: list[str] = Field(default_factory=list)         # usable, but something was off

    @property
    def ok(self) -> bool:
        return self.kernel is not None and not self.errors


def _norm_status(raw: Any) -> DeclaredStatus | None:
    if not isinstance(raw, str):
        return None
    s = re.sub(r"[\s-]+", "_", raw.strip().lower())
    return next((st for st in STATUSES if st == s), None)


def _entries(data: Any) -> list[tuple[str, Any, Any]] | None:
    """(id, status, reason) from the JSON shapes models produce; None if it is not an adoption block."""
    if isinstance(data, dict):
        for key in ("adoptions", "adoption", "items", "memory"):
            if key in data:
                return _entries(data[key])
        out = []
        for k, v in data.items():
            if isinstance(v, dict):
                out.append((str(k), v.get("status"), v.get("reason", v.get("rationale"))))
            elif isinstance(v, str):
                out.append((str(k), v, None))
            else:
                return None
        return out
    if isinstance(data, list) and all(isinstance(e, dict) for e in data):
        return [(str(e.get("id", e.get("item_id", ""))), e.get("status"), e.get("reason", e.get("rationale")))
                for e in data]
    return None


def _line_entries(text: str) -> list[tuple[str, Any, Any]]:
    out = []
    for line in text.splitlines():
        if (m := _LINE.match(line)) is not None:
            out.append((m["id"], m["status"], m["reason"]))
    return out


def _adoption_entries(text: str, fences: list[tuple[str, str]], warnings: list[str]) -> list | None:
    sections = _SECTION.findall(text)
    if sections:
        listed: list = []
        for body, close in sections:
            if not close:
                warnings.append("the <adoption> section is not closed; read it to the end of the answer")
            inner = body.strip()
            if (m := _FENCE.search(inner)) is not None:
                inner = m.group(2)
            try:
                found = _entries(json.loads(inner))
            except json.JSONDecodeError:
                found = None
            listed += found if found is not None else _line_entries(inner)
        return listed
    blocks = [body for lang, body in fences if lang in ("json", "")]
    entries: list | None = None
    for body in blocks:
        try:
            found = _entries(json.loads(body))
        except json.JSONDecodeError as e:
            if body.lstrip().startswith(("{", "[")):
                warnings.append(f"the adoption JSON block is not valid JSON ({e.msg} at line {e.lineno})")
            continue
        if found is not None:
            entries = (entries or []) + found
    return entries


def _pick(blocks: list[str], marker: str) -> str | None:
    """The last block holding `marker` (a full file rather than a snippet), else the last block."""
    with_marker = [b for b in blocks if marker in b]
    return (with_marker or blocks or [None])[-1]


def parse_answer(text: str, shown_ids: Iterable[str], *, code_required: bool = True) -> ParsedAnswer:
    """Kernel, host and adoptions from a model's answer. With `code_required=False` (the reply to
    `reask_message`) an answer without code is no error."""
    shown = list(dict.fromkeys(str(i) for i in shown_ids))
    out = ParsedAnswer()
    fences = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    unmatched = _FENCE.sub("", text)

    cpp = [body for lang, body in fences if lang in _CPP]
    if cpp:
        out.kernel = _pick(cpp, "__global__")
        if out.kernel is not None and "__global__" not in out.kernel:
            out.warnings.append("the ```cpp block has no __global__ kernel entry")
    elif not code_required:
        pass
    elif re.search(r"^[ \t]*```[ \t]*(cpp|c\+\+|cc|cxx|c)\b", unmatched, re.M | re.I):
        out.errors.append("the ```cpp block is not closed: the answer looks cut off. Send the whole kernel "
                          "again, ending the block with ```")
    else:
        what = "only prose" if not fences else "no ```cpp block"
        out.errors.append(f"the answer has {what}: put the complete new kernel file in one ```cpp fenced "
                          "block (and host.py, if it changes, in a ```python block)")

    py = [body for lang, body in fences if lang in _PY]
    if py:
        out.host = _pick(py, "def launch")
        if out.host is None or "def launch" not in out.host:
            out.host = None
            out.warnings.append("a ```python block without `def launch` was ignored: a new host.py must be the "
                                "whole file")

    entries = _adoption_entries(text, fences, out.warnings)
    if entries is None:
        if shown:
            out.warnings.append("no adoption block found")
        entries = []
    for item_id, status, reason in entries:
        if item_id not in shown:
            if item_id and item_id not in out.unknown_ids:
                out.unknown_ids.append(item_id)
            continue
        norm = _norm_status(status)
        if norm is None:
            out.warnings.append(f"item {item_id}: status {status!r} is not one of {', '.join(STATUSES)}")
            continue
        try:
            adoption = Adoption(id=item_id, status=norm, reason=str(reason or "").strip())
        except ValidationError:
            out.warnings.append(f"item {item_id}: no reason given for {norm!r}")
            continue
        prev = out.adoptions.get(item_id)
        if prev is not None and prev.status != adoption.status:
            out.warnings.append(f"item {item_id}: declared both {prev.status} and {adoption.status}; kept the last")
        out.adoptions[item_id] = adoption
    if out.unknown_ids:
        out.warnings.append(f"ignored statuses for ids that were not shown: {', '.join(out.unknown_ids)}")
    out.missing_ids = [i for i in shown if i not in out.adoptions]
    return out


def json_block(text: str) -> Any:
    """The JSON in a model's answer: its first ```json (or bare ```) block, else the whole text.
    Raises ValueError (json.JSONDecodeError) when it is not JSON."""
    m = re.search(r"```(?:json)?[ \t]*\n(.*?)```", text, re.S)
    return json.loads(m.group(1) if m else text)


def format_instructions(shown_ids: Iterable[str]) -> str:
    """The answer format, for the prompt."""
    ids = list(shown_ids)
    example = ",\n".join(f'  {{"id": "{i}", "status": "adopted | not_adopted", "reason": "..."}}' for i in ids[:3])
    return (
        "Answer with the complete new kernel file in one ```cpp fenced block. If host.py must change, add the "
        "complete new host.py in one ```python block. Then an adoption block, a ```json fenced block listing "
        f"every memory item shown to you ({', '.join(ids) or 'none'}) with its status, exactly `adopted` or "
        "`not_adopted`, and a one-line reason:\n```json\n{\"adoptions\": [\n" + example + "\n]}\n```"
    )


def reask_message(parsed: ParsedAnswer) -> str:
    """The one follow-up asking for the statuses the answer left out."""
    return ("Your adoption block has no valid status for: " + ", ".join(parsed.missing_ids) + ". Reply with only "
            "a ```json block giving each of them {\"id\", \"status\": \"adopted\" or \"not_adopted\", \"reason\"}.")
