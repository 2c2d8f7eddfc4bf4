"""`sage-npu optimize` end to end with a scripted OpenAI-compatible server on 127.0.0.1 (the real
`openai` client, max_retries=0, over HTTP), a real evaluation and a real memory: the turn lines say
what each turn is compared with and why a failed candidate failed, a repeated candidate is not
evaluated again, answers without a usable candidate stop the episode, an unusable answer is sent
back as a bounded excerpt, the endpoint's retries are shown, the memory's effect is said in words
(and in symbols with --verbose), and the credit follows the attempt that adopted each item.

The script, turn by turn (items A, B, C, D: the first four ids shown):
  turn 1  a kernel that does not compile, adopting B        -> B: adopted only by an incorrect attempt
  turn 2  host.py on one core (correct, slower), adopting C -> C: adopted only by a correct attempt, no new best
  turn 3  double buffering (the new best), adopting A       -> A: adopted by the attempt that set the new best
  turn 4  the turn-3 kernel again                           -> not evaluated again (duplicate)
  turn 5  1 MB of prose, then prose again                   -> malformed; the retry quotes an excerpt only
  turn 6  prose twice                                       -> malformed: 3 unusable answers in a row: stop
  D is declared not_adopted in every turn                   -> D: shown, never adopted
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sage_npu.cli import main
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.settings import MemorySettings
from tests.fake_openai import FakeOpenAI, Reply, Seen
from tests.test_llm_loop import EXAMPLES, KERNEL, reflection, rewrites, shown_ids

HUGE = "Let me explain my plan for this kernel at length. " * 20000   # ~1 MB of prose, no code


@pytest.fixture
def task(tmp_path) -> Path:
    d = tmp_path / "vadd_naive"
    shutil.copytree(EXAMPLES / "vadd_naive", d)
    return d


def scripted(task: Path) -> tuple[list, list[str]]:
    files = rewrites(task)
    fast = files["double-buffering"][KERNEL]
    broken = fast.replace("AscendC::Add(", "AscendC::Addd(", 1)
    one_core = (task / "host.py").read_text().replace("MAX_CORES = 2", "MAX_CORES = 1")
    assert one_core != (task / "host.py").read_text()
    first: list[str] = []     # the ids the first prompt showed: A, B, C, D, ...

    def turn(kernel: str, host: str | None, adopt: int | None):
        def reply(seen: Seen) -> Reply:
            ids = shown_ids(seen)
            if not first:
                first.extend(ids)
            chosen = first[adopt] if adopt is not None else None
            block = [{"id": i, "status": "adopted" if i == chosen else "not_adopted", "reason": "scripted"}
                     for i in ids]
            parts = [f"```cpp\n{kernel}\n```"] + ([f"```python\n{host}\n```"] if host else [])
            return Reply(text="\n\n".join(parts + ["```json\n" + json.dumps({"adoptions": block}) + "\n```"]))
        return reply

    prose = Reply(text="I would rather discuss the design first.")
    script = [Reply(status=429, headers={"Retry-After": "0"}),          # the endpoint is busy once
              turn(broken, None, 1), turn((task / KERNEL).read_text(), one_core, 2), turn(fast, None, 0),
              turn(fast, None, None), Reply(text=HUGE), prose, prose, prose, reflection]
    return script, first


def test_optimize_tells_the_truth_about_each_turn_and_credits_the_attempt(task, tmp_path, capsys, monkeypatch):
    script, ids = scripted(task)
    db = tmp_path / "mem"
    monkeypatch.setenv("SAGE_NPU_MEMORY__EMBEDDER", "hashing")
    with FakeOpenAI(script) as srv:
        monkeypatch.setenv("SAGE_NPU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("SAGE_NPU_LLM_MODEL", "fake-coder")
        code = main(["optimize", str(task), "--turns", "10", "--trials", "2", "--db", str(db), "--verbose"])
        requests = srv.requests
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    assert code == 0, out + err
    lines = out.splitlines()
    turn_line = {int(m.group(1)): ln for ln in lines if (m := re.match(r"turn\s+(\d+)\s", ln))}

    # turn lines: rounds marked, each turn compared with the best so far, reasons, no time beside a wrong kernel
    assert lines[0].startswith("round 1: candidates change the seed's kernel; to beat: best ")
    assert re.search(r"compile_error\s+--\s+compile_error: \[\S+\] vadd_naive\.cpp:\d+: .*Addd", turn_line[1])
    assert " us " not in turn_line[1].split("|")[0]
    assert re.search(r"correct\s+\d+\.\d+ us\s+not faster than the best so far \(\d+\.\d+ us, the seed\)",
                     turn_line[2])
    assert re.search(r"correct\s+\d+\.\d+ us\s+new best: \d\.\d\dx faster than \d+\.\d+ us \(the seed\)", turn_line[3])
    assert "| best " in turn_line[3] and "(turn 3)" in turn_line[3].split("|")[1]
    assert sum(ln.startswith("round ") for ln in lines) == 6
    # no repeated candidate: turn 4 names turn 3 and its verdict, and is not evaluated again
    assert re.search(r"duplicate\s+--\s+the same files as turn 3, not evaluated again \(correct, \d+\.\d+ us\)",
                     turn_line[4])
    assert "(turn 4) was not kept: it is the same files as turn 3, not evaluated again (correct, " \
        in requests[5].body["messages"][1]["content"]
    # bounded retry: the 1 MB answer goes back as an excerpt
    retry = requests[6].body["messages"]
    assert retry[-2]["role"] == "assistant" and len(retry[-2]["content"]) < 2200 < len(HUGE)
    assert "characters of this answer left out" in retry[-2]["content"]
    # early stop after 3 answers in a row without a usable candidate, with a clear message
    assert set(turn_line) == {1, 2, 3, 4, 5, 6} and "malformed" in turn_line[6]
    assert "the episode stopped early: no usable candidate in 3 answers in a row" in err
    assert len(requests) == 10          # the 429, 4 answers, 2 x (answer + retry), the reflection
    # the endpoint's retry is shown
    assert "retrying: the LLM endpoint" in err and "HTTP 429" in err and "try 2 of 4" in err
    assert "the LLM endpoint needed 1 retry" in out

    # the memory's effect in words, then the symbols (--verbose)
    assert "1 experience the agent followed gained credit: a rewrite following them set a new best" in out
    assert "1 experience followed only by rewrites that were not correct lost some" in out
    assert "1 experience followed only by correct rewrites that were not faster: counted as used" in out
    assert re.search(r"\d+ experiences? shown but not followed lost a little", out)

    mem = ExperienceMemory.open(MemorySettings(db=db, embedder="hashing"))
    attempts = {a.turn: a for a in mem.store.fetch("attempts")}
    (episode,) = mem.store.fetch("episodes")
    t0, t2, t3 = attempts[0].time_us, attempts[2].time_us, attempts[3].time_us
    assert t0 and t2 and t3 and t2 >= t0 > t3
    # z = 1 - T_best/T_first = 1 - t3/t0
    z = 1 - t3 / t0
    # double buffering on vadd_naive: 1.26x by the public per-API costs (docs/cost-model.md)
    assert episode.reward == pytest.approx(z) and 0.1 < z < 1
    a, b, c, d = (mem.item(i) for i in ids[:4])
    # every item starts at u = 0, n_ret = 0: eta = max(1/(1+1), 0.05) = 1/2
    # A (new best, alone in it): xi = z/1 -> u = 0.5*0 + 0.5*z = z/2; n_ado 1; the operator joins
    assert (a.u, a.n_ret, a.n_ado, a.adopted_ops) == (pytest.approx(z / 2), 1, 1, ["vadd_naive"])
    # B (only the compile error adopted it): xi = -b = -0.2 -> u = 0.5*-0.2 = -0.1; n_ado 1; no operator
    assert (b.u, b.n_ret, b.n_ado, b.adopted_ops) == (pytest.approx(-0.1), 1, 1, [])
    # C (only the correct, slower turn 2 adopted it): n_ado 1, no utility update: u stays 0
    assert (c.u, c.n_ret, c.n_ado, c.adopted_ops) == (0.0, 1, 1, [])
    # D (shown, never adopted): xi = -b -> u = -0.1; n_ado 0
    assert (d.u, d.n_ret, d.n_ado) == (pytest.approx(-0.1), 1, 0)
    # the same in the --verbose symbols: class, xi, eta, u
    verbose = {ln.split()[0]: ln for ln in lines if ln.startswith("  ") and len(ln.split()) > 2
               and ln.split()[0] in ids[:4]}
    assert re.search(rf"new_best\s+xi \+{z:.4f}, eta 0\.500: u \+0\.0000 -> \+{z / 2:.4f}", verbose[ids[0]])
    assert "incorrect   xi -0.2000, eta 0.500: u +0.0000 -> -0.1000" in verbose[ids[1]]
    assert "correct     no utility update: u +0.0000 -> +0.0000, n_ret 1, n_ado 1" in verbose[ids[2]]
    assert "not_adopted xi -0.2000, eta 0.500: u +0.0000 -> -0.1000, n_ret 1, n_ado 0" in verbose[ids[3]]
    assert f"  z = +{z:.4f}" in lines

    # every attempt has its source hash and its speedup over the first correct kernel (the seed)
    assert all(len(attempts[k].source_hash) == 64 for k in (0, 1, 2, 3, 4))
    assert attempts[4].source_hash == attempts[3].source_hash and attempts[4].status == "duplicate"
    assert (attempts[0].speedup, attempts[1].speedup) == (1.0, 0.0)
    assert attempts[2].speedup == pytest.approx(t0 / t2) and attempts[3].speedup == pytest.approx(t0 / t3)
    assert (attempts[5].status, attempts[5].source_hash, attempts[5].speedup) == ("malformed", "", 0.0)


def test_an_excerpt_is_bounded_and_keeps_both_ends():
    from sage_npu.agent.prompt import MAX_ECHO_HEAD, MAX_ECHO_TAIL, excerpt

    text = "start " + "x" * 10_000 + " end"
    out = excerpt(text)
    assert out.startswith("start ") and out.endswith(" end") and len(out) < MAX_ECHO_HEAD + MAX_ECHO_TAIL + 80
    assert f"[... {len(text) - MAX_ECHO_HEAD - MAX_ECHO_TAIL} characters of this answer left out ...]" in out
    assert excerpt("short answer") == "short answer"


def test_a_turn_line_never_puts_a_time_beside_a_wrong_kernel():
    from sage_npu.agent.episode import Attempt
    from sage_npu.agent.progress import progress_lines

    wrong = Attempt(2, "model", "rewrote the kernel", "mismatch", None, False, round=2, base_turn=1, vs_us=5.0,
                    vs_turn=1, best_us=5.0, best_turn=1, reason="wrong at index 3: got 1, expected 2; max abs err 1")
    first = Attempt(1, "model", "rewrote the kernel", "correct", 5.0, True, round=1, base_turn=0, vs_us=10.0,
                    vs_turn=0, best_us=5.0, best_turn=1)
    head, line = progress_lines(wrong, first)
    assert head == "round 2: candidates change turn 1's kernel; to beat: best 5.000 us (turn 1)"
    assert " us " not in line.split("|")[0] and "wrong at index 3: got 1, expected 2" in line
    assert line.split("|")[1].startswith(" best 5.000 us (turn 1)")
    assert progress_lines(first, None)[1].split("|")[0].rstrip().endswith(
        "5.000 us  new best: 2.00x faster than 10.000 us (the seed)")
