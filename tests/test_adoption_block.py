"""The answer parser on realistic model output: prose around blocks, partial and broken blocks."""

from __future__ import annotations

from sage_npu.agent.adoption_block import format_instructions, parse_answer, reask_message

KERNEL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    // BUFFER_NUM = 2: double buffering
}
"""
HOST = """from sage_npu.npu_eval.host import Launch, Tiling

def launch(x, y):
    return Launch(kernel="add_custom", block_dim=40, args=[x, y], outputs=[x])
"""
SHOWN = ["R1", "E7", "E9"]


def answer(*parts: str) -> str:
    return "\n".join(parts)


def test_good_answer_with_prose_around_the_blocks():
    text = answer(
        "Sure! Here is a faster version using double buffering.", "", "```cpp", KERNEL, "```", "",
        "I kept the host unchanged.", "```json",
        '{"adoptions": [{"id": "R1", "status": "adopted", "reason": "kept the 32-byte aligned copies"},',
        ' {"id": "E7", "status": "adopted", "reason": "double buffering hides the copy-in"},',
        ' {"id": "E9", "status": "not_adopted", "reason": "tiles already fill the UB"}]}', "```",
        "Let me know if you need anything else.")
    p = parse_answer(text, SHOWN)
    assert p.ok and p.errors == [] and p.warnings == []
    assert p.kernel.strip() == KERNEL.strip() and p.host is None
    assert {i: a.status for i, a in p.adoptions.items()} == {"R1": "adopted", "E7": "adopted", "E9": "not_adopted"}
    assert p.adoptions["E9"].reason == "tiles already fill the UB"
    assert p.missing_ids == [] and p.unknown_ids == []


def test_missing_statuses_are_listed_for_the_reask():
    text = answer("```cpp", KERNEL, "```", "```json",
                  '[{"id": "E7", "status": "adopted", "reason": "double buffering"}]', "```")
    p = parse_answer(text, SHOWN)
    assert p.ok and list(p.adoptions) == ["E7"]
    assert p.missing_ids == ["R1", "E9"]
    msg = reask_message(p)
    assert "R1" in msg and "E9" in msg and "E7" not in msg
    # the reply to the re-ask carries only the block, and fills the gaps
    reply = parse_answer('```json\n{"R1": {"status": "not_adopted", "reason": "n/a"}, '
                         '"E9": {"status": "adopted", "reason": "bigger tiles"}}\n```', p.missing_ids,
                         code_required=False)
    assert reply.errors == [] and reply.missing_ids == [] and reply.adoptions["E9"].status == "adopted"


def test_no_adoption_block_at_all_leaves_every_id_missing():
    p = parse_answer(answer("```cpp", KERNEL, "```"), SHOWN)
    assert p.ok and p.missing_ids == SHOWN and "no adoption block found" in p.warnings


def test_statuses_are_strict_and_reasons_required():
    text = answer("```cpp", KERNEL, "```", "<adoption>", "- R1: Adopted - aligned copies",
                  "- E7: partially - some of it", "- E9: not adopted", "</adoption>")
    p = parse_answer(text, SHOWN)
    assert p.adoptions["R1"].status == "adopted" and p.adoptions["R1"].reason == "aligned copies"
    assert p.missing_ids == ["E7", "E9"]
    assert any("E7" in w and "partially" in w for w in p.warnings)
    assert any("E9" in w and "no reason" in w for w in p.warnings)


def test_adoption_section_with_json_inside():
    text = answer("```cpp", KERNEL, "```", "<adoption>",
                  '{"R1": {"status": "not_adopted", "reason": "x"}, "E7": {"status": "adopted", "reason": "y"},'
                  ' "E9": {"status": "not-adopted", "rationale": "z"}}', "</adoption>")
    p = parse_answer(text, SHOWN)
    assert p.missing_ids == [] and p.adoptions["E9"].status == "not_adopted" and p.adoptions["E9"].reason == "z"


def test_partial_block_cut_off_mid_kernel_is_an_error():
    text = answer("Here is the kernel:", "```cpp", KERNEL[:80])
    p = parse_answer(text, SHOWN)
    assert not p.ok and p.kernel is None
    assert "not closed" in p.errors[0] and "```" in p.errors[0]


def test_broken_adoption_json_is_a_warning_not_a_lost_kernel():
    text = answer("```cpp", KERNEL, "```", "```json", '{"adoptions": [{"id": "R1", "status": "adopted"', "```")
    p = parse_answer(text, SHOWN)
    assert p.ok and p.missing_ids == SHOWN
    assert any("not valid JSON" in w for w in p.warnings)


def test_prose_only_is_a_clear_error():
    p = parse_answer("I think you should use double buffering and more cores. Good luck!", SHOWN)
    assert not p.ok and p.kernel is None and p.host is None
    assert p.errors == ["the answer has only prose: put the complete new kernel file in one ```cpp fenced block "
                        "(and host.py, if it changes, in a ```python block)"]
    assert p.missing_ids == SHOWN


def test_a_host_block_is_returned_and_a_snippet_is_ignored():
    text = answer("```python", "BLOCK = 40  # just a note", "```", "```cpp", KERNEL, "```",
                  "```python", HOST, "```", "```json", '[{"id": "R1", "status": "adopted", "reason": "r"}]', "```")
    p = parse_answer(text, ["R1"])
    assert p.ok and p.host.strip() == HOST.strip() and p.missing_ids == []
    only_snippet = parse_answer(answer("```cpp", KERNEL, "```", "```python", "x = 1", "```"), [])
    assert only_snippet.host is None and any("def launch" in w for w in only_snippet.warnings)


def test_the_full_kernel_wins_over_a_snippet():
    text = answer("The change is:", "```cpp", "pipe.InitBuffer(inQueueX, 2, TILE * sizeof(half));", "```",
                  "Full file:", "```cpp", KERNEL, "```")
    assert parse_answer(text, []).kernel.strip() == KERNEL.strip()


def test_unknown_ids_are_ignored_and_reported():
    text = answer("```cpp", KERNEL, "```", "```json",
                  '[{"id": "R1", "status": "adopted", "reason": "a"}, {"id": "E404", "status": "adopted", '
                  '"reason": "made up"}]', "```")
    p = parse_answer(text, ["R1"])
    assert list(p.adoptions) == ["R1"] and p.unknown_ids == ["E404"] and p.missing_ids == []
    assert any("E404" in w for w in p.warnings)


def test_format_instructions_name_every_id_and_both_statuses():
    text = format_instructions(SHOWN)
    assert all(i in text for i in SHOWN) and "not_adopted" in text and "```cpp" in text


def test_line_format_variants_models_write():
    text = answer("```cpp", KERNEL, "```", "<adoption>", "E1: not-adopted - no need", "* `E2`: NOT ADOPTED: x",
                  "E3 = adopted (fits)", "E4: maybe - hmm", "</adoption>")
    p = parse_answer(text, ["E1", "E2", "E3", "E4"])
    assert {k: (a.status, a.reason) for k, a in p.adoptions.items()} == {
        "E1": ("not_adopted", "no need"), "E2": ("not_adopted", "x"), "E3": ("adopted", "fits")}
    assert p.missing_ids == ["E4"]
