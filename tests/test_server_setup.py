"""How the server is wired, without an editor: hooks fanned out to every feature (a failing one
is logged and the others still run), commands registered by the feature that owns them, the
settings composed once at the root and handed in, and a suggestion that carries its files."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from lsprotocol import types

from sage_npu.agent.episode import OptimizeResult
from sage_npu.npu_eval.report import Report
from sage_npu.server.features.base import Feature
from sage_npu.server.features.suggestion_notices import Suggestion
from sage_npu.server.setup import create_server
from sage_npu.settings import Settings

REPO = Path(__file__).resolve().parents[1]


class Broken(Feature):
    def settings_changed(self, settings) -> None:
        raise RuntimeError("broken on purpose")

    def shutdown(self) -> None:
        raise RuntimeError("broken on purpose")

    def hover(self, params):
        raise RuntimeError("broken on purpose")


class Recorder(Feature):
    def __init__(self, server) -> None:
        super().__init__(server)
        self.calls: list[str] = []

    def commands(self):
        return {"test.ping": self.ping, "test.later": self.later}

    def ping(self, word: str) -> str:
        return f"pong {word}"

    async def later(self) -> str:
        return "later"

    def settings_changed(self, settings) -> None:
        self.calls.append(f"settings {settings.eval.chip}")

    def shutdown(self) -> None:
        self.calls.append("shutdown")

    def hover(self, params):
        self.calls.append("hover")
        return [types.Hover(contents="recorded")]


def server_with(*kinds):
    return create_server(Settings(), "test", features=lambda s: [k(s) for k in kinds])


def test_one_failing_feature_does_not_stop_the_others(caplog):
    server = server_with(Broken, Recorder)
    recorder = server.features[1]
    assert isinstance(recorder, Recorder)
    server.apply_settings({"sage": {"eval": {"chip": "910B4"}}})
    hovers = asyncio.run(server.dispatch("hover", types.HoverParams(
        types.TextDocumentIdentifier("file:///k.cpp"), types.Position(line=0, character=0))))
    server.fan_out("shutdown")
    assert recorder.calls == ["settings 910B4", "hover", "shutdown"]
    assert [h.contents for h in hovers] == ["recorded"]
    failed = [r.getMessage() for r in caplog.records if "Broken" in r.getMessage()]
    assert failed == ["feature Broken failed in settings_changed", "feature Broken failed in hover",
                      "feature Broken failed in shutdown"]


def test_features_register_their_own_commands():
    server = server_with(Recorder)
    commands = server.protocol.fm.commands
    assert {"test.ping", "test.later"} <= set(commands)
    assert commands["test.ping"]("there") == "pong there"
    assert asyncio.run(commands["test.later"]()) == "later"


def test_the_default_features_declare_the_commands_the_clients_run():
    server = create_server(Settings(), "test")
    try:
        assert {"sage.evaluate", "sage.optimize", "sage.acceptSuggestion", "sage.rejectSuggestion",
                "sage.showMemory"} <= set(server.protocol.fm.commands)
    finally:
        server.fan_out("shutdown")


def test_the_settings_come_composed_from_the_root_and_editor_values_merge_into_them(monkeypatch):
    from sage_npu import __version__, cli

    handed = {}
    monkeypatch.setattr("sage_npu.server.setup.serve",
                        lambda settings, version, tcp=None: handed.update(settings=settings, version=version))
    assert cli.main(["serve", "--chip", "910B4"]) == 0
    settings = handed["settings"]
    assert isinstance(settings, Settings) and settings.eval.chip == "910B4" and handed["version"] == __version__
    assert set(Settings.model_fields) == {"eval", "memory", "agent", "server"}
    merged, problems = settings.with_editor_values({"sage": {"eval": {"trials": 0, "seed": 3},
                                                             "server": {"debounceS": 1.5}, "colour": {"x": 1}}})
    assert (merged.eval.chip, merged.eval.seed, merged.eval.trials, merged.server.debounce_s) == ("910B4", 3, 5, 1.5)
    assert problems[0] == "sage.eval.trials must be greater than or equal to 1, got 0; keeping 5"
    assert problems[1] == "sage.colour: unknown setting"


def test_editor_setting_messages_say_what_is_wrong():
    """A known setting with a value of the wrong type is a type error, not "unknown"; a name no
    model has is unknown; settings that are not an object are refused whole, without a crash."""
    settings = Settings()
    cases = {
        "nope": 'sage settings must be an object such as {"eval": {"trials": 5}}, got "nope"; using the defaults',
        "sage-nope": 'sage settings must be an object such as {"eval": {"trials": 5}}, got "nope"; using the '
                     'defaults',
        "trials": 'sage.eval.trials must be an integer, got "five"; keeping 5',
        "nested": 'sage.eval.trials must be an integer, got {"x": 1}; keeping 5',
        "debounce": 'sage.server.debounceS must be a number, got "soon"; keeping 0.1',
        "part": 'sage.eval must be an object of settings, got "five"',
        "leaf": "sage.eval.colour: unknown setting",
        "enum": "sage.eval.backend must be 'sim', 'ascend' or 'auto', got \"gpu\"; keeping \"auto\"",
    }
    raw = {"nope": "nope", "sage-nope": {"sage": "nope"}, "trials": {"sage": {"eval": {"trials": "five"}}},
           "nested": {"sage": {"eval": {"trials": {"x": 1}}}}, "debounce": {"sage": {"server": {"debounceS": "soon"}}},
           "part": {"sage": {"eval": "five"}}, "leaf": {"sage": {"eval": {"colour": 1}}},
           "enum": {"sage": {"eval": {"backend": "gpu"}}}}
    for name, want in cases.items():
        merged, problems = settings.with_editor_values(raw[name])
        assert problems == [want], name
        assert merged.eval.trials == 5 and merged.server.debounce_s == 0.1


def test_the_server_imports_neither_memory_nor_the_root_package():
    for path in (REPO / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                assert not name.startswith("sage_npu.memory"), f"{path} imports {name}"
                assert name.split(".")[:2][-1] in ("agent", "npu_eval", "server") or not name.startswith("sage_npu"), \
                    f"{path} imports {name}"


def _result(task: Path, files: dict[str, str]) -> OptimizeResult:
    report = Report(task=str(task), kernel=str(task / "k.cpp"), status="correct")
    return OptimizeResult(task=str(task), status="improved", seed=report, best=report, speedup=1.8, turns=2,
                          episode_id="e1", best_attempt_id="a1", best_files=files, diff="--- a/k.cpp\n+++ b/k.cpp\n")


def test_a_suggestion_carries_the_changed_files_whole(tmp_path):
    (tmp_path / "k.cpp").write_text("int BUFFER_NUM = 1;\n")
    (tmp_path / "host.py").write_text("MAX_CORES = 2\n")
    sug = Suggestion.of(tmp_path, _result(tmp_path, {"k.cpp": "int BUFFER_NUM = 2;\n", "host.py": "MAX_CORES = 2\n",
                                                  "tiling.h": "// new\n"}))
    notice = sug.notice((tmp_path / "k.cpp").as_uri()).model_dump(mode="json", by_alias=True)
    # host.py is unchanged: only what changes is carried, each file with its absolute path and whole text.
    assert notice["files"] == [
        {"path": str((tmp_path / "k.cpp").resolve()), "name": "k.cpp", "text": "int BUFFER_NUM = 2;\n"},
        {"path": str((tmp_path / "tiling.h").resolve()), "name": "tiling.h", "text": "// new\n"}]
    assert (notice["episodeId"], notice["attemptId"], notice["task"]) == ("e1", "a1", str(tmp_path))
    assert notice["diff"].startswith("--- a/k.cpp") and notice["speedup"] == 1.8 and notice["estimated"] is True
