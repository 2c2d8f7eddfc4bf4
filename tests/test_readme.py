"""The settings table (docs/settings.md, linked from the README) is checked against the pydantic models,
so it stays true."""

import re
from pathlib import Path

from pydantic import BaseModel

from sage_npu.settings import Settings

SETTINGS_DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


def _rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            rows += _rows(ann, f"{prefix}{name}.")
        else:
            default = field.get_default(call_default_factory=True)
            rows.append((f"{prefix}{name}", str(default), field.description or ""))
    return rows


def settings_table() -> str:
    lines = ["| setting | default | meaning |", "|---|---|---|"]
    lines += [f"| `{k}` | `{d}` | {m} |" for k, d, m in _rows(Settings)]
    return "\n".join(lines)


def test_settings_table_matches_the_models():
    text = SETTINGS_DOC.read_text()
    m = re.search(r"<!-- settings-table:.*?-->\n(.*?)\n<!-- /settings-table -->", text, re.S)
    assert m, "docs/settings.md lost its settings table markers"
    assert m.group(1).strip() == settings_table(), "regenerate it: python tests/test_readme.py"


def test_every_setting_is_documented():
    assert all(meaning for _, _, meaning in _rows(Settings))


if __name__ == "__main__":
    print(settings_table())
