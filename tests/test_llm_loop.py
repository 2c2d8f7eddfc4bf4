"""The SAGE loop with a model, end to end: real evaluation, a real memory (LanceDB), and the
real `openai` client talking HTTP to a fake OpenAI-compatible server that replays scripted,
realistic answers. The scripted model reads the memory ids from its prompt, as a model does."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sage_npu.agent.driver import run_episode
from sage_npu.agent.episode_memory import EpisodeRecorder
from sage_npu.agent.llm import LLMClient
from sage_npu.agent.llm_loop import ModelSearcher
from sage_npu.agent.llm_settings import LLMSettings
from sage_npu.agent.optimize import optimize
from sage_npu.agent.settings import AgentSettings
from sage_npu.agent.transforms import Sources, propose
from sage_npu.cli import main
from sage_npu.memory.experience_memory import ExperienceMemory
from sage_npu.memory.settings import MemorySettings
from sage_npu.npu_eval.chips import chip_profile
from sage_npu.npu_eval.evaluate import Evaluator
from sage_npu.npu_eval.settings import EvalSettings
from tests.fake_openai import FakeOpenAI, Reply, Seen

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"
KERNEL = "vadd_naive.cpp"
SHOWN = re.compile(r"^\[([^\]\s]+)\] (?:rule|experience):", re.M)
SECRET = "sk-test-never-leaks-4242"


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    e = Evaluator(EvalSettings(trials=2, cache_dir=tmp_path_factory.getbasetemp() / "llm-cache"))
    yield e
    e.close()


@pytest.fixture
def task(tmp_path) -> Path:
    d = tmp_path / "vadd_naive"
    shutil.copytree(EXAMPLES / "vadd_naive", d)
    return d


@pytest.fixture
def memory(tmp_path):
    return ExperienceMemory.open(MemorySettings(db=tmp_path / "mem", embedder="hashing"))


def rewrites(task: Path) -> dict[str, dict[str, str]]:
    """Faster, correct rewrites of the draft, as a capable model would write them."""
    cands = propose(Sources(KERNEL, (task / KERNEL).read_text(), (task / "host.py").read_text()),
                    chip_profile("910B2"))
    return {c.transform: c.files for c in cands}


def shown_ids(seen: Seen) -> list[str]:
    return SHOWN.findall(seen.body["messages"][1]["content"])


def adoption_json(ids: list[str], adopt: int | None) -> str:
    entries = [{"id": i, "status": "adopted" if k == adopt else "not_adopted",
                "reason": "double buffering overlaps the copies" if k == adopt else "not about this kernel"}
               for k, i in enumerate(ids)]
    return "```json\n" + json.dumps({"adoptions": entries}) + "\n```"


def answer(kernel: str | None, host: str | None = None, adopt: int | None = 0, block: bool = True,
           prose: str = "Here is a faster kernel.", **reply) -> callable:
    def reply_for(seen: Seen) -> Reply:
        parts = [prose]
        if kernel is not None:
            parts.append(f"```cpp\n{kernel}\n```")
        if host is not None:
            parts.append(f"```python\n{host}\n```")
        if block:
            parts.append(adoption_json(shown_ids(seen), adopt))
        return Reply(text="\n\n".join(parts), **reply)
    return reply_for


def reflection(seen: Seen) -> Reply:
    attempts = re.findall(r"- attempt (\S+):", seen.body["messages"][-1]["content"])
    return Reply(text="```json\n" + json.dumps([{
        "attempt": attempts[0], "title": "Double-buffer the copy queues of a streaming kernel",
        "text": "With BUFFER_NUM = 2 the MTE2 copy of tile i+1 overlaps the vector work on tile i; a memory-bound "
                "kernel with many tiles gets close to 2x.", "tags": ["double-buffering"]}]) + "\n```")


def recorder(memory: ExperienceMemory) -> EpisodeRecorder:
    return EpisodeRecorder(memory, operator="vadd_naive")


def client_for(srv: FakeOpenAI, **kw) -> LLMClient:
    return LLMClient(LLMSettings(base_url=srv.base_url, model="fake-coder", backoff_s=0, **kw), env={})


def adoptions_of(memory: ExperienceMemory, episode: str) -> list:
    return sorted(memory.store.fetch("adoptions", f"episode_id = '{episode}'"), key=lambda a: (a.turn, a.item_id))


def test_good_rewrites_improve_the_kernel_and_teach_the_memory(ev, task, memory):
    files = rewrites(task)
    script = [answer(files["double-buffering"][KERNEL]),
              answer(files["double-buffering"][KERNEL], host=files["all-vector-cores"]["host.py"], adopt=None),
              reflection]
    with FakeOpenAI(script) as srv:
        with client_for(srv) as client:
            rec = EpisodeRecorder(memory, operator="vadd_naive", model="fake-coder")
            seen_turns = []
            r = run_episode(task, ev, ModelSearcher(client), turns=2, recorder=rec, on_attempt=seen_turns.append)
        prompt = srv.requests[0].body["messages"][1]["content"]
    assert r.status == "improved" and r.speedup > 1.5, [(a.status, a.estimated_us) for a in r.attempts]
    assert [a.improves for a in r.attempts] == [True, True]
    assert r.best.status == "correct" and r.best.correctness.passed == r.best.correctness.trials
    assert "BUFFER_NUM = 2" in r.diff and "MAX_CORES" in r.diff
    assert (task / KERNEL).read_text() == (EXAMPLES / "vadd_naive" / KERNEL).read_text()  # never touched
    assert r.tokens == 3 * (11 + 7)   # the fake server's usage, per request
    # the prompt: memory quoted as data with ids, the kernel, host.py, the last report, the format
    ids = SHOWN.findall(prompt)
    assert len(ids) == 5 and "<memory>" in prompt and "estimated time:" in prompt
    assert "extern \"C\" __global__" in prompt and "def launch" in prompt and "```json" in prompt
    assert "910B2 (48 vector cores, Unified Buffer 192 KB" in prompt
    # the adoption log: turn 1 adopted the first id; turn 2 declared everything not adopted
    log = adoptions_of(memory, r.episode_id)
    assert {(a.turn, a.item_id, a.status) for a in log} == (
        {(1, i, "adopted" if k == 0 else "not_adopted") for k, i in enumerate(ids)}
        | {(2, i, "not_adopted") for i in SHOWN.findall(srv.requests[1].body["messages"][1]["content"])})
    assert seen_turns[0].adopted == (ids[0],)
    # ATU: the reward is positive, and the adopted item gained utility
    assert r.memory is not None and r.memory.reward > 0.3
    assert memory.item(ids[0]).u > 0 and memory.item(ids[0]).n_ado == 1
    # reflection: the model's lesson, tied to the attempt that proves it
    assert len(r.new_experiences) == 1
    lesson = memory.item(r.new_experiences[0])
    assert lesson.title.startswith("Double-buffer") and lesson.evidence == [f"{r.episode_id}/1"]


def test_broken_code_fails_its_turn_and_the_next_prompt_says_why(ev, task, memory):
    files = rewrites(task)
    broken = files["double-buffering"][KERNEL].replace("AscendC::Add(", "AscendC::Addd(", 1)
    script = [answer(broken), answer(files["double-buffering"][KERNEL]), reflection]
    with FakeOpenAI(script) as srv, client_for(srv) as client:
        r = run_episode(task, ev, ModelSearcher(client), turns=2, recorder=recorder(memory))
        second = srv.requests[1].body["messages"][1]["content"]
    assert [a.status for a in r.attempts] == ["compile_error", "correct"]
    assert r.status == "improved"
    assert "was not kept: compile_error" in second and "Addd" in second   # the error and the diff that caused it


def test_missing_statuses_are_asked_once_then_undeclared(ev, task, memory):
    files = rewrites(task)

    def partial(seen: Seen) -> Reply:
        first = shown_ids(seen)[0]
        return Reply(text=f"```json\n{json.dumps([{'id': first, 'status': 'adopted', 'reason': 'it applies'}])}\n```")

    script = [answer(files["double-buffering"][KERNEL], block=False), partial, reflection]
    with FakeOpenAI(script) as srv, client_for(srv) as client:
        r = run_episode(task, ev, ModelSearcher(client), turns=1, recorder=recorder(memory))
        reask = srv.requests[1].body["messages"][-1]["content"]
    assert "no valid status for" in reask
    statuses = [a.status for a in adoptions_of(memory, r.episode_id)]
    assert sorted(statuses) == ["adopted"] + ["undeclared"] * 4
    assert r.status == "improved"


def test_prose_gets_one_retry_then_the_turn_fails_cleanly(ev, task, memory):
    prose = answer(None, block=False, prose="I would use double buffering and more cores for this kernel.")
    files = rewrites(task)
    script = [prose, prose, answer(files["double-buffering"][KERNEL]), reflection]
    with FakeOpenAI(script) as srv, client_for(srv) as client:
        r = run_episode(task, ev, ModelSearcher(client), turns=2, recorder=recorder(memory))
        retry = srv.requests[1].body["messages"][-1]["content"]
        third = srv.requests[2].body["messages"][1]["content"]
    assert "could not be used" in retry and "only prose" in retry
    assert [a.status for a in r.attempts] == ["malformed", "correct"]
    assert "could not be used" in third                # turn 2 is told what went wrong
    assert r.status == "improved"
    turn1 = [a for a in adoptions_of(memory, r.episode_id) if a.turn == 1]
    assert turn1 and {a.status for a in turn1} == {"undeclared"}


def test_a_host_that_smuggles_the_answer_is_a_failure(ev, task, memory):
    smuggler = (task / "host.py").read_text().replace(
        "    z = torch.empty_like(x)\n", "    z = torch.empty_like(x)\n    z.copy_(torch.add(x, y))\n")
    assert "torch.add" in smuggler
    script = [answer((task / KERNEL).read_text(), host=smuggler)]
    with FakeOpenAI(script) as srv, client_for(srv) as client:
        r = run_episode(task, ev, ModelSearcher(client), turns=1, recorder=recorder(memory))
    assert r.attempts[0].status == "harness_error" and not r.attempts[0].improves
    assert r.status == "no_improvement" and r.best is r.seed
    assert r.memory.reward == 0.0      # first = best: nothing gained, nothing adopted that worked


def test_429_500_and_a_slow_answer_are_retried(ev, task):
    files = rewrites(task)
    script = [Reply(status=429, headers={"Retry-After": "0"}), Reply(status=500),
              Reply(text="late", delay_s=2.0), answer(files["double-buffering"][KERNEL], block=False)]
    with FakeOpenAI(script) as srv, client_for(srv, timeout_s=0.5, max_attempts=4) as client:
        r = run_episode(task, ev, ModelSearcher(client), turns=1)
    assert len(srv.requests) == 4
    assert r.status == "improved"


def test_a_dead_endpoint_ends_the_episode_with_the_reason(ev, task, memory):
    with FakeOpenAI([]) as srv:
        url = srv.base_url
    client = LLMClient(LLMSettings(base_url=url, model="m", max_attempts=1, connect_timeout_s=1), env={})
    r = run_episode(task, ev, ModelSearcher(client), turns=5, recorder=recorder(memory))
    assert r.status == "no_improvement" and r.turns == 1
    assert r.attempts[0].status == "llm_error" and "cannot connect" in r.error
    assert r.memory is not None and r.memory.credited    # the episode is still recorded


def test_optimize_picks_the_model_from_the_environment_and_the_key_stays_out(ev, task, memory, tmp_path):
    files = rewrites(task)
    with FakeOpenAI([answer(files["double-buffering"][KERNEL]), reflection]) as srv:
        env = {"SAGE_NPU_LLM_BASE_URL": srv.base_url, "SAGE_NPU_LLM_MODEL": "fake-coder",
               "SAGE_NPU_LLM_API_KEY": SECRET}
        r = optimize(task, ev, AgentSettings(turns=1), memory=memory, env=env)
        assert srv.requests[0].headers["authorization"] == f"Bearer {SECRET}"   # to the endpoint only
    assert r.model == "fake-coder" and r.status == "improved"
    stored = b"".join(p.read_bytes() for p in (tmp_path / "mem").rglob("*") if p.is_file())
    assert SECRET.encode() not in stored
    assert SECRET not in json.dumps(r.to_json())


def test_cli_optimize_with_a_model_shows_turns_adoptions_and_tokens(task, tmp_path, capsys, monkeypatch):
    files = rewrites(task)
    monkeypatch.setenv("SAGE_NPU_MEMORY__EMBEDDER", "hashing")
    with FakeOpenAI([answer(files["double-buffering"][KERNEL]), reflection]) as srv:
        monkeypatch.setenv("SAGE_NPU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("SAGE_NPU_LLM_MODEL", "fake-coder")
        code = main(["optimize", str(task), "--turns", "1", "--trials", "2", "--db", str(tmp_path / "m")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "round 1: candidates change the seed's kernel; to beat: best" in out
    assert re.search(r"turn\s+1\s+model\s+correct .* new best: \S+x faster than .* \(the seed\) .*adopted \S+",
                     out), out
    assert "tokens: 36 (fake-coder)" in out and "memory: episode" in out
    assert "1 experience the agent followed gained credit" in out
    assert (task / ".sage" / "suggestion" / KERNEL).exists()


NPUKB_REFERENCE = """\
import json
import os

import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def get_input_groups():
    with open(os.path.join(os.path.dirname(__file__), "1_Add.json")) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return [[torch.randn(c["inputs"][0]["shape"]), torch.randn(c["inputs"][1]["shape"])] for c in cases]


def get_init_inputs():
    return []
"""


def test_bench_has_the_model_draft_a_single_file_task(tmp_path, monkeypatch):
    from sage_npu.agent.bench import run_suite

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # where single-file tasks are staged
    suite = tmp_path / "npukb" / "level0"
    suite.mkdir(parents=True)
    (suite / "1_Add.py").write_text(NPUKB_REFERENCE)
    (suite / "1_Add.json").write_text('{"inputs": [{"shape": [1024]}, {"shape": [1024]}]}\n'
                                      '{"inputs": [{"shape": [8, 136]}, {"shape": [8, 136]}]}\n')
    draft = EXAMPLES / "vadd_naive"
    script = [answer(None, block=False, prose="Let me think about the tiling first."),   # no code: one retry
              answer((draft / KERNEL).read_text(), host=(draft / "host.py").read_text(), block=False)]
    with FakeOpenAI(script) as srv:
        agent = AgentSettings(turns=1, llm=LLMSettings(base_url=srv.base_url, model="fake-coder", backoff_s=0))
        result = run_suite(suite.parent, EvalSettings(trials=2, cache_dir=tmp_path / "c"), agent)
        first = srv.requests[0].body["messages"][1]["content"]
    row = result.rows[0]
    assert row.name == "1_Add" and row.status == "fixed" and row.correct, row
    assert row.turns == 1 and row.speedup == 1.0 and row.tokens > 0
    assert "no kernel yet" in first and "host.py: none yet" in first and "def get_input_groups" in first
    assert result.model == "fake-coder" and result.metrics()["execution_rate"] == 1.0
    assert not list(suite.glob("*.cpp"))     # the suite itself is never written to
