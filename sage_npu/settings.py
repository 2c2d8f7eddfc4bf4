"""One `Settings` composed from each part's own settings model.

Sources, lowest to highest priority: defaults, a TOML config file (`--config`), environment
variables (`SAGE_NPU_EVAL__CHIP=910B4`), command-line flags, and in the language server the
editor's `sage.*` settings. Each part receives only its piece (`settings.eval` for npu_eval,
`settings.memory` for memory); no part imports this module: the server is handed the instance.

One error policy: every refused value is named by its dotted path with pydantic's reason
(`eval.chip='H100': ...`). At startup (config, environment, flags) refused values stop the
command (`SettingsError`, all of them in one message); from the editor, where stopping the
server would help no one, each refused value keeps the value it had and comes back as a message
in the editor's spelling (`sage.eval.trials must be an integer, got "five"; keeping 5`).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, SettingsConfigDict

from sage_npu.agent.settings import AgentSettings
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.settings import EvalSettings
from sage_npu.server.settings import ServerSettings


class SettingsError(ValueError):
    pass


def _problem(path: tuple[str | int, ...], value: Any, reason: str) -> str:
    return f"{'.'.join(str(p) for p in path)}={value!r}: {reason}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SAGE_NPU_", env_nested_delimiter="__", extra="forbid")

    eval: EvalSettings = Field(default_factory=EvalSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    def with_editor_values(self, raw: Any) -> tuple[Settings, list[str]]:
        """These settings with an editor's `sage.*` values (camelCase or snake_case) merged in leaf
        by leaf, so one bad value falls back alone and a nested block (agent.llm) keeps the fields
        the editor did not send; one message per refused value: an unknown name is called
        unknown, a known one with a value of the wrong type or range says what it must be."""
        if raw is None:
            return self, []
        sage = raw.get("sage", raw) if isinstance(raw, dict) else raw
        if not isinstance(sage, dict):
            return self, [f"sage settings must be an object such as {{\"eval\": {{\"trials\": 5}}}}, got "
                          f"{_shown(sage)}; using the defaults"]
        merged = self.model_dump()
        problems = []
        for part, values in _aliases(_snake(sage)).items():
            if part not in merged:
                problems.append(f"sage.{part}: unknown setting")
                continue
            if not isinstance(values, dict):
                problems.append(f"sage.{part} must be an object of settings, got {_shown(values)}")
                continue
            for path, value in _leaves(values, _model_of(type(self).model_fields[part].annotation)):
                name = ".".join(("sage", *(to_camel(k) for k in (part, *path))))
                if value is _UNKNOWN:
                    problems.append(f"{name}: unknown setting")
                    continue
                trial = _with(merged[part], path, value)
                try:
                    # model_validate, not the constructor: the editor's values are not mixed with
                    # the environment a second time.
                    Settings.model_validate({**merged, part: trial})
                    merged[part] = trial
                except ValidationError as e:
                    problems.append(f"{_refused(name, value, e.errors()[0])}; keeping "
                                    f"{_shown(_at(merged[part], path))}")
        return Settings.model_validate(merged), problems


_UNKNOWN = object()   # a leaf whose name no settings model has


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _shown(value: Any) -> str:
    """A value as the editor's settings file spells it."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _refused(name: str, value: Any, error: Any) -> str:
    """Why a value was refused, from pydantic's error: `sage.eval.trials must be an integer, got
    "five"`, or the validator's own words."""
    kind, msg = error["type"], error["msg"]
    named = {"int_parsing": "an integer", "int_type": "an integer", "int_from_float": "an integer",
             "float_parsing": "a number", "float_type": "a number", "bool_parsing": "true or false",
             "bool_type": "true or false", "string_type": "a string", "dict_type": "an object",
             "list_type": "a list", "model_type": "an object of settings", "path_type": "a path (a string)"}
    if kind in named:
        return f"{name} must be {named[kind]}, got {_shown(value)}"
    if msg.startswith("Input should be "):
        return f"{name} must be {msg.removeprefix('Input should be ')}, got {_shown(value)}"
    return f"{name}={_shown(value)}: {msg.removeprefix('Value error, ')}"


def _aliases(raw: dict) -> dict:
    """The short spellings editors' docs use: `sage.llm.*` is `sage.agent.llm.*`, `sage.memory.path`
    is `sage.memory.db`."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    if isinstance(out.get("llm"), dict):
        agent = out.setdefault("agent", {})
        if isinstance(agent, dict):
            agent["llm"] = {**out.pop("llm"), **(agent.get("llm") or {})}
    memory = out.get("memory")
    if isinstance(memory, dict) and "path" in memory:
        memory.setdefault("db", memory.pop("path"))
    return out


def _leaves(d: dict, model: type[BaseModel] | None, prefix: tuple[str, ...] = ()
            ) -> list[tuple[tuple[str, ...], Any]]:
    """(path, value) of each value the editor sent, descending into nested settings models only:
    a dict where the model has a plain field is that field's (wrong) value; a name the model does
    not have gets `_UNKNOWN`."""
    out = []
    for k, v in d.items():
        field = model.model_fields.get(k) if model is not None else None
        if model is not None and field is None:
            out.append(((*prefix, k), _UNKNOWN))
            continue
        inner = _model_of(field.annotation) if field is not None else None
        out += _leaves(v, inner, (*prefix, k)) if isinstance(v, dict) and v and inner else [((*prefix, k), v)]
    return out


def _at(d: Any, path: tuple[str, ...]) -> Any:
    for k in path:
        d = d.get(k) if isinstance(d, dict) else None
    return d


def _with(base: dict, path: tuple[str, ...], value: Any) -> dict:
    """A copy of `base` with the value at `path` replaced (nested dicts copied along the way)."""
    head, *rest = path
    inner = base.get(head)
    return {**base, head: _with(inner, tuple(rest), value) if rest and isinstance(inner, dict) else value}


def _snake(d: Any) -> Any:
    if isinstance(d, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): _snake(v) for k, v in d.items()}
    return d


def _merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_settings(config: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Compose the settings; bad values raise SettingsError naming each field and value."""
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
        problems = "; ".join(_problem(err["loc"], err.get("input"), err["msg"]) for err in e.errors())
        raise SettingsError(f"invalid settings: {problems}") from e
