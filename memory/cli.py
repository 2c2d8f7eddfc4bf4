"""`sage-npu memory stats|list|show|search|explain|consolidate|export|import|recompute`.

The root CLI owns the parser and the settings: it calls `add_memory_parser(subparsers, global_flags)`
and, for a parsed `memory` command, `run_memory(settings.memory, args)`, which returns the exit code:
0 done, 1 an unknown id, 2 a missing or damaged memory, a bad file or an embedder problem.
Human output by default; `--json` prints one JSON document.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built on every command: keep its imports light
    from sage_npu.memory.settings import MemorySettings


def add_memory_parser(subparsers, global_flags: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add `memory` and its subcommands; the global flags are accepted before or after the
    subcommand's name (`memory --db X stats` and `memory stats --db X`), the later one winning."""
    mem = subparsers.add_parser("memory", parents=[global_flags], help="inspect and maintain the experience memory",
                                description="Inspect and maintain the experience memory (LanceDB folder, --db).")
    sub = mem.add_subparsers(dest="memory_command", required=True, metavar="COMMAND")
    after = _without_defaults(global_flags)

    def add(name: str, func, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[after], help=help_, description=help_)
        p.set_defaults(memory_func=func)
        return p

    add("stats", cmd_stats, "counts of items, rules, episodes and adoptions")
    p = add("list", cmd_list, "list items, highest utility first")
    p.add_argument("--kind", choices=["experience", "rule"])
    p.add_argument("--status", choices=["cold", "resident", "retired"])
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50; 0: all)")
    p = add("show", cmd_show, "one item in full")
    p.add_argument("id")
    p = add("search", cmd_search, "what the agent would be shown for TEXT")
    p.add_argument("text", nargs="+", help="the query; several words need no quotes")
    p.add_argument("-k", type=int, help="items to retrieve (default memory.top_k)")
    p = add("explain", cmd_explain, "every change to an item's utility, from the adoption log")
    p.add_argument("id")
    p = add("consolidate", cmd_consolidate, "run UGC: abstract proven items into rules, choose the resident set")
    p.add_argument("--context-tokens", type=int, help="the model's context (default memory.model_context_tokens)")
    p = add("export", cmd_export, "write the memory to FILE (JSON lines, no vectors)")
    p.add_argument("file", type=Path)
    p = add("import", cmd_import, "merge FILE (from export) into the memory, creating it if needed")
    p.add_argument("file", type=Path)
    add("recompute", cmd_recompute, "rebuild every utility from the adoption log")
    return mem


def _without_defaults(flags: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The same flags with no defaults: argparse copies a subcommand's namespace over its parent's,
    so a subcommand's default (None, False) would erase a flag given before the subcommand."""
    out = argparse.ArgumentParser(add_help=False)
    for action in flags._actions:
        if action.option_strings and action.dest != "help":
            mine = copy.copy(action)  # the parent parsers share action objects: never mutate theirs
            mine.default = argparse.SUPPRESS
            out._add_action(mine)
    return out


def run_memory(settings: MemorySettings, args: argparse.Namespace) -> int:
    from sage_npu.memory.embeddings import EmbeddingError
    from sage_npu.memory.store import StoreError, UnknownId

    try:
        return args.memory_func(settings, args)
    except UnknownId as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 1
    except (StoreError, EmbeddingError) as e:
        print(f"sage-npu: {e}", file=sys.stderr)
        return 2


def _open(settings: MemorySettings, create: bool = False, **kw):
    from sage_npu.memory.experience_memory import ExperienceMemory

    return ExperienceMemory.open(settings, create=create, **kw)


def _print(args, data, human: str) -> None:
    print(json.dumps(data, indent=2, default=str) if getattr(args, "json", False) else human)


def cmd_stats(settings: MemorySettings, args) -> int:
    s = _open(settings).stats()
    human = "\n".join([
        f"memory     {s.path} (schema {s.schema_version}, {s.embedder}, {s.dim}-d)",
        f"items      {s.items}: {s.experiences} experiences, {s.rules} rules; "
        + ", ".join(f"{n} {k}" for k, n in sorted(s.by_status.items())),
        f"resident   {s.by_status.get('resident', 0)} rules, {s.resident_tokens} tokens",
        f"episodes   {s.episodes} ({s.open_episodes} open)",
        f"adoptions  {s.adoptions}",
        f"attempts   {s.attempts}",
        *calibration_lines(s.calibration)])
    _print(args, s.model_dump(), human)
    return 0


def calibration_lines(kinds) -> list[str]:
    """The advisor's calibration: per finding kind, verified savings against estimated ones."""
    if not kinds:
        return ["advisor    no verified findings yet"]
    return ["advisor    verified findings (delivered / estimated saving):"] + [
        f"  {k.code + (' (device)' if k.measured else ''):<22} n={k.n:<4} median ratio {k.median_ratio:.2f}, "
        f"{k.within:.0%} within 25%" for k in kinds]


def _row(it) -> str:
    return f"{it.id:<40} {it.kind:<10} {it.status:<8} u={it.u:+.3f} ret={it.n_ret:<3} ado={it.n_ado:<3} {it.title}"


def cmd_list(settings: MemorySettings, args) -> int:
    items = _open(settings).list_items(args.kind, args.status, args.limit or None)
    _print(args, [it.model_dump(mode="json") for it in items],
           "\n".join(_row(it) for it in items) if items else "no items match")
    return 0


def cmd_show(settings: MemorySettings, args) -> int:
    it = _open(settings).item(args.id)
    human = "\n".join([
        _row(it), "", it.text, "",
        f"category {it.category or '-'}; tags {', '.join(it.tags) or '-'}; operator {it.operator or '-'}",
        f"source   {it.source or '-'}",
        f"adopted on {', '.join(it.adopted_ops) or '-'}; evidence {', '.join(it.evidence) or '-'}",
        f"status   {it.status}{': ' + it.status_reason if it.status_reason else ''}"
        + (f"; usage p = {it.p:.3f}, {it.tokens} tokens" if it.kind == "rule" else ""),
        f"created  {it.created_at:%Y-%m-%d %H:%M}, updated {it.updated_at:%Y-%m-%d %H:%M}"])
    _print(args, it.model_dump(mode="json"), human)
    return 0


def cmd_search(settings: MemorySettings, args) -> int:
    r = _open(settings).retrieve(" ".join(args.text), args.k)
    lines = [f"resident  {it.id}  {it.title}" for it in r.resident]
    lines += [f"{x.score:+.3f}    {x.item.id}  {x.item.title}  (sim {x.sim:.3f}, u {x.item.u:+.3f}, {x.via})"
              for x in r.items]
    _print(args, r.model_dump(mode="json"), "\n".join(lines) if lines else "nothing retrieved (empty memory?)")
    return 0


def cmd_explain(settings: MemorySettings, args) -> int:
    from sage_npu.memory.explain import format_explanation

    e = _open(settings).explain(args.id)
    _print(args, e.model_dump(mode="json"), format_explanation(e))
    return 0


def cmd_consolidate(settings: MemorySettings, args) -> int:
    r = _open(settings).consolidate(context_tokens=args.context_tokens)
    human = "\n".join([
        f"eligible   {len(r.eligible)}; new rules {', '.join(r.new_rules) or '-'}",
        f"resident   {len(r.resident)} rules, {r.used_tokens}/{r.budget} tokens: "
        + (", ".join(s.id for s in r.resident) or "-"),
        f"to cold    {', '.join(r.to_cold) or '-'}",
        f"retired    {', '.join(r.retired) or '-'}"])
    _print(args, r.model_dump(), human)
    return 0


def cmd_export(settings: MemorySettings, args) -> int:
    n = _open(settings).export(args.file)
    _print(args, {"file": str(args.file), "records": n}, f"wrote {n} records to {args.file}")
    return 0


def cmd_import(settings: MemorySettings, args) -> int:
    from sage_npu.memory.experience_memory import read_export

    read_export(args.file)  # a bad file fails before any memory is created
    r = _open(settings, create=True, load_starter=False).import_(args.file)
    _print(args, r.model_dump(), f"imported {r.items} items, {r.episodes} episodes, {r.attempts} attempts, "
                                 f"{r.adoptions} adoptions ({r.skipped_existing} already present)")
    return 0


def cmd_recompute(settings: MemorySettings, args) -> int:
    r = _open(settings).recompute()
    _print(args, r.model_dump(), f"replayed {r.episodes} episodes over {r.items} items; "
                                 f"repaired {len(r.fixed)}: {', '.join(r.fixed) or '-'}")
    return 0
