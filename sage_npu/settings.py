"""One `Settings` composed from each part's own settings model.

Sources, lowest to highest priority: defaults, a TOML config file (`--config`), environment
variables (`SAGE_NPU_EVAL__CHIP=910B4`), command-line flags. Each part receives only its
piece (`settings.eval` for npu_eval, `settings.memory` for memory); no part imports this module.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SAGE_NPU_", env_nested_delimiter="__", extra="forbid")

    eval: EvalSettings = Field(default_factory=EvalSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)


class SettingsError(ValueError):
    pass


def _merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_settings(config: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Compose the settings; a bad value raises SettingsError naming the field and source."""
    from pydantic import ValidationError

    data: dict[str, Any] = {}
    if config is not None:
        try:
            data = tomllib.loads(Path(config).read_text())
        except OSError as e:
            raise SettingsError(f"cannot read config file {config}: {e.strerror}") from e
        except tomllib.TOMLDecodeError as e:
            raise SettingsError(f"config file {config} is not valid TOML: {e}") from e
    try:
        env = Settings().model_dump(exclude_unset=True)
        return Settings(**_merge(_merge(data, env), overrides or {}))
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
        )
        raise SettingsError(f"invalid settings: {problems}") from e
