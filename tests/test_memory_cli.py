"""`sage-npu memory ...` through the functions the root CLI wires in (parser + run_memory), with the
hashing embedder so no model loads; plus the starter knowledge and export/import."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from sage_npu.memory.cli import add_memory_parser, run_memory
from sage_npu.memory.experience_memory import ExperienceMemory, NewExperience
from sage_npu.memory.models import Adoption, Attempt, Episode, EpisodeLog
from sage_npu.memory.settings import MemorySettings
from sage_npu.memory.starter import starter_experiences


def _parser() -> argparse.ArgumentParser:
    # The same shape as sage_npu/cli.py: global flags accepted after the command name.
    g = argparse.ArgumentParser(add_help=False)
    g.add_argument("--db", type=Path)
    g.add_argument("--json", action="store_true")
    p = argparse.ArgumentParser(prog="sage-npu")
    add_memory_parser(p.add_subparsers(dest="command", required=True), g).set_defaults(func="cmd_memory")
    return p


def run(capsys, *argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["memory", *argv])
    assert args.func == "cmd_memory"  # the root CLI's dispatch reaches every memory subcommand
    code = run_memory(MemorySettings(db=args.db, embedder="hashing", hashing_dim=64), args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "mem"
    mem = ExperienceMemory.open(MemorySettings(db=path, embedder="hashing", hashing_dim=64))
    [new] = mem.add_experiences([NewExperience(title="Fuse the bias add", text="Add the bias in the same tile loop.",
                                               operator="bias_add")])
    for k, op in enumerate(["add", "mul", "relu"]):
        eid = f"ep{k}"
        mem.credit(EpisodeLog(
            episode=Episode(id=eid, operator=op),
            attempts=[Attempt(id=f"{eid}-0", episode_id=eid, turn=0, status="correct", time_us=100.0),
                      Attempt(id=f"{eid}-1", episode_id=eid, turn=1, status="correct", time_us=60.0)],
            adoptions=[Adoption(episode_id=eid, turn=1, item_id="ascendc-double-buffering", status="adopted"),
                       Adoption(episode_id=eid, turn=1, item_id=new, status="not_adopted")]))
    return path


# ---- starter knowledge


def test_starter_knowledge_has_20_to_30_sourced_experiences_with_stable_ids():
    exps = starter_experiences()
    assert 20 <= len(exps) <= 30
    assert len({e.id for e in exps}) == len(exps) and all(e.id.startswith("ascendc-") for e in exps)
    for e in exps:
        assert e.source and re.search(r"[\w-]+/[\w-]+ \S+", e.source), e.id  # "owner/repo path"
        assert len(e.text) > 80 and e.title
    topics = " ".join(e.title + e.text for e in exps)
    for must in ["double buffering", "32-byte", "Unified Buffer", "vector cores", "scalar", "Cast", "ReduceSum",
                 "DataCopyPad", "TBuf"]:
        assert must.lower() in topics.lower(), must


def test_a_new_memory_gets_the_starter_knowledge_once(tmp_path):
    settings = MemorySettings(db=tmp_path / "m", embedder="hashing", hashing_dim=64)
    mem = ExperienceMemory.open(settings)
    n = len(starter_experiences())
    assert mem.stats().items == n
    assert mem.load_starter() and mem.stats().items == n  # stable ids: loading again adds nothing
    ExperienceMemory.open(settings)
    assert mem.stats().items == n
    bare = ExperienceMemory.open(settings.model_copy(update={"db": tmp_path / "bare", "load_starter": False}))
    assert bare.stats().items == 0


# ---- commands


def test_stats_human_and_json(capsys, db):
    code, out, _ = run(capsys, "stats", "--db", str(db))
    assert code == 0 and "episodes   3 (0 open)" in out and "adoptions  6" in out
    code, out, _ = run(capsys, "stats", "--json", "--db", str(db))
    data = json.loads(out)
    assert code == 0 and (data["episodes"], data["items"], data["adoptions"]) == (3, len(starter_experiences()) + 1, 6)


def test_list_show_search_explain(capsys, db):
    code, out, _ = run(capsys, "list", "--db", str(db), "--limit", "2")
    assert code == 0 and out.splitlines()[0].startswith("ascendc-double-buffering") and len(out.splitlines()) == 2
    code, out, _ = run(capsys, "list", "--db", str(db), "--status", "resident")
    assert code == 0 and out.strip() == "no items match"
    code, out, _ = run(capsys, "show", "ascendc-double-buffering", "--db", str(db))
    assert code == 0 and "adopted on add, mul, relu" in out and "InitBuffer.md" in out
    code, out, _ = run(capsys, "search", "double buffering overlaps copy and compute", "--db", str(db), "-k", "3")
    assert code == 0 and "ascendc-double-buffering" in out.splitlines()[0] and len(out.splitlines()) == 3
    quoted = out
    code, out, _ = run(capsys, "search", *"double buffering overlaps copy and compute".split(), "--db", str(db),
                       "-k", "3")
    assert code == 0 and out == quoted  # the words of an unquoted query are one query
    code, out, _ = run(capsys, "explain", "ascendc-double-buffering", "--db", str(db))
    assert code == 0 and out.count("episode ep") == 3 and "z = +0.4000" in out
    code, out, _ = run(capsys, "explain", "ascendc-double-buffering", "--json", "--db", str(db))
    assert code == 0 and len(json.loads(out)["steps"]) == 3


def test_consolidate_and_recompute(capsys, db):
    code, out, _ = run(capsys, "consolidate", "--db", str(db))
    assert code == 0 and "rule-ascendc-double-buffering" in out
    code, out, _ = run(capsys, "list", "--status", "resident", "--db", str(db))
    assert "rule-ascendc-double-buffering" in out
    code, out, _ = run(capsys, "recompute", "--json", "--db", str(db))
    assert code == 0 and json.loads(out)["fixed"] == []


def test_missing_store_unknown_id_and_corrupt_meta_fail_clearly(capsys, db, tmp_path):
    code, _, err = run(capsys, "stats", "--db", str(tmp_path / "none"))
    assert code == 2 and "no experience memory at" in err and not (tmp_path / "none").exists()
    code, _, err = run(capsys, "show", "no-such-id", "--db", str(db))
    assert code == 1 and "no item 'no-such-id'" in err
    code, _, err = run(capsys, "explain", "no-such-id", "--db", str(db))
    assert code == 1
    (db / "memory.json").write_text("{")
    code, _, err = run(capsys, "list", "--db", str(db))
    assert code == 2 and "corrupt" in err


def test_export_then_import_reproduces_the_memory(capsys, db, tmp_path):
    out_file = tmp_path / "mem.jsonl"
    code, out, _ = run(capsys, "export", str(out_file), "--db", str(db))
    assert code == 0 and out_file.exists()
    code, out, _ = run(capsys, "import", str(out_file), "--db", str(tmp_path / "copy"))
    assert code == 0 and "3 episodes" in out
    settings = MemorySettings(embedder="hashing", hashing_dim=64)
    a = ExperienceMemory.open(settings.model_copy(update={"db": db}), create=False)
    b = ExperienceMemory.open(settings.model_copy(update={"db": tmp_path / "copy"}), create=False)
    assert a.stats().model_dump(exclude={"path"}) == b.stats().model_dump(exclude={"path"})
    ia, ib = a.item("ascendc-double-buffering"), b.item("ascendc-double-buffering")
    assert (ia.u, ia.n_ret, ia.n_ado, ia.adopted_ops) == (ib.u, ib.n_ret, ib.n_ado, ib.adopted_ops)
    # Importing again changes nothing: every id is already there.
    code, out, _ = run(capsys, "import", str(out_file), "--db", str(tmp_path / "copy"))
    assert code == 0 and "imported 0 items, 0 episodes" in out
    assert b.item("ascendc-double-buffering").u == ia.u


def test_import_of_a_bad_file_says_where_and_creates_nothing(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "sage-npu-memory", "schema_version": 1}\n{"table": "items", "row": {"id": 3}}\n')
    code, _, err = run(capsys, "import", str(bad), "--db", str(tmp_path / "new"))
    assert code == 2 and f"{bad}:2: bad record" in err and not (tmp_path / "new").exists()
    code, _, err = run(capsys, "import", str(tmp_path / "absent.jsonl"), "--db", str(tmp_path / "new"))
    assert code == 2 and "cannot read" in err


# ---- global flags before or after the subcommand


@pytest.mark.parametrize("command", [["stats"], ["list"], ["show", "ascendc-double-buffering"], ["search", "bias"],
                                     ["explain", "ascendc-double-buffering"], ["consolidate"], ["recompute"]])
@pytest.mark.parametrize("where", ["before", "after", "split"])
def test_global_flags_before_or_after_the_subcommand_and_json_everywhere(capsys, db, command, where):
    flags = ["--db", str(db), "--json"]
    argv = {"before": [*flags, *command], "after": [*command, *flags],
            "split": ["--db", str(db), *command, "--json"]}[where]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    data = json.loads(out)  # JSON, not the human text
    if command == ["stats"]:
        assert data["path"] == str(db) and data["episodes"] == 3  # this memory, not the default one


def test_export_and_import_print_json_with_flags_first(capsys, db, tmp_path):
    out_file = tmp_path / "e.jsonl"
    code, out, _ = run(capsys, "--json", "--db", str(db), "export", str(out_file))
    assert code == 0 and json.loads(out)["records"] > 0
    code, out, _ = run(capsys, "--json", "--db", str(tmp_path / "new"), "import", str(out_file))
    assert code == 0 and json.loads(out)["items"] > 0


def test_the_root_cli_takes_memory_flags_before_the_subcommand(capsys, db):
    from sage_npu.cli import build_parser

    args = build_parser().parse_args(["memory", "--db", str(db), "--json", "stats"])
    assert args.db == db and args.json is True
    args = build_parser().parse_args(["memory", "stats", "--db", str(db), "--json"])
    assert args.db == db and args.json is True
    args = build_parser().parse_args(["memory", "stats"])
    assert args.db is None and args.json is False and args.chip is None
