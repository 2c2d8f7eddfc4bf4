"""An episode in words a kernel engineer reads: one line per turn (what it was compared with, the
best so far, why a failed candidate failed), a header per round, and what the episode did to the
experience memory. The CLI prints these; the data behind them is `Attempt` and `OptimizeResult`."""

from __future__ import annotations

from sage_npu.agent.episode import Attempt, OptimizeResult
from sage_npu.memory.atu import UtilityChange


def _turn(turn: int | None) -> str:
    return "the seed" if turn == 0 else f"turn {turn}"


def _best(us: float | None, turn: int | None) -> str:
    return f"best {us:.3f} us ({_turn(turn)})" if us is not None else "nothing correct yet"


def round_header(a: Attempt) -> str:
    """The line before a round's first turn: what its candidates change and the best they must beat."""
    base = "no kernel yet" if a.base_turn is None else f"{_turn(a.base_turn)}'s kernel"
    return f"round {a.round}: candidates change {base}; to beat: {_best(a.vs_us, a.vs_turn)}"


def turn_line(a: Attempt) -> str:
    """One turn: its time and verdict against the best so far, or why it cannot be kept (a wrong
    kernel gets no time), then the best so far after it."""
    if a.estimated_us is not None and a.improves:
        vs = (f"{a.vs_us / a.estimated_us:.2f}x faster than {a.vs_us:.3f} us ({_turn(a.vs_turn)})"
              if a.vs_us is not None else "the first correct kernel")
        verdict = f"{a.estimated_us:9.3f} us  new best: {vs}"
    elif a.estimated_us is not None:
        verdict = f"{a.estimated_us:9.3f} us  {a.reason}"
    else:
        verdict = f"{'--':>12}  {a.reason or a.status}"
    adopted = f"; adopted {', '.join(a.adopted)}" if a.adopted else ""
    what = "" if a.description == a.reason else f"  [{a.description}{adopted}]"
    return f"turn {a.turn:>3}  {a.transform:<17} {a.status:<13} {verdict}  | {_best(a.best_us, a.best_turn)}{what}"


def progress_lines(a: Attempt, previous: Attempt | None) -> list[str]:
    """The lines to print for a turn: the round header when it opens a round, then the turn."""
    head = [round_header(a)] if previous is None or previous.round != a.round else []
    return head + [turn_line(a)]


def _names(changes: list[UtilityChange], titles: dict[str, str]) -> str:
    shown = [f'"{titles[c.item_id]}"' if c.item_id in titles else c.item_id for c in changes[:3]]
    more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
    return ", ".join(shown) + more


def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def memory_effect(result: OptimizeResult, verbose: bool = False) -> str:
    """What the episode did to the experience memory, for every episode; with `verbose`, the
    symbols behind it (z, and each item's class, xi, u and n_ado)."""
    m = result.memory
    if m is None:
        return ("memory: not used" if not result.memory_held else
                "memory: the episode waits for your accept or reject before it credits anything")
    if not m.credited:
        return f"memory: episode {m.episode_id[:8]} was already credited; nothing changed"
    by: dict[str, list[UtilityChange]] = {}
    for c in m.changes:
        by.setdefault(c.credit, []).append(c)
    t = result.item_titles
    lines = []
    if "new_best" in by:
        lines.append(f"{_n(len(by['new_best']), 'experience')} the agent followed gained credit: a rewrite following "
                     f"them set a new best ({_names(by['new_best'], t)})")
    if "incorrect" in by:
        lines.append(f"{_n(len(by['incorrect']), 'experience')} followed only by rewrites that were not correct "
                     f"lost some ({_names(by['incorrect'], t)})")
    if "correct" in by:
        lines.append(f"{_n(len(by['correct']), 'experience')} followed only by correct rewrites that were not "
                     f"faster: counted as used, utility unchanged ({_names(by['correct'], t)})")
    if "not_adopted" in by:
        lines.append(f"{_n(len(by['not_adopted']), 'experience')} shown but not followed lost a little")
    if "undeclared" in by:
        lines.append(f"{_n(len(by['undeclared']), 'experience')} shown without a status: unchanged")
    if not m.changes:
        lines.append("no experience was shown (the memory has none for this operator yet)")
    if result.new_experiences:
        lines.append(f"{_n(len(result.new_experiences), 'new experience')} learned from what worked "
                     "(sage-npu memory list)")
    if result.reflection_note:
        lines.append(result.reflection_note)
    for r in result.rules:
        lines.append(f'rule {r.id} "{r.title}" is now always in the prompt' if r.change == "resident"
                     else f'rule {r.id} "{r.title}" left the prompt (no longer among the best rules)')
    z = m.reward if m.reward is not None else 0.0
    reward = (f"the fastest correct kernel is {1 / (1 - z):.2f}x the first correct one" if 0 < z < 1 else
              "nothing correct was found" if z < 0 else "no correct kernel beat the first correct one")
    out = [f"memory: episode {m.episode_id[:8]} credited ({reward})"] + [f"  - {x}" for x in lines]
    if verbose:
        out.append(f"  z = {m.reward:+.4f}" if m.reward is not None else "  z = n/a")
        width = max((len(c.item_id) for c in m.changes), default=0)
        for c in m.changes:
            xi = f"xi {c.xi:+.4f}, eta {c.eta:.3f}" if c.xi is not None and c.eta is not None else "no utility update"
            out.append(f"  {c.item_id:<{width}}  {c.credit:<11} {xi}: u {c.u_before:+.4f} -> {c.u_after:+.4f}, "
                       f"n_ret {c.n_ret}, n_ado {c.n_ado}")
    return "\n".join(out)
