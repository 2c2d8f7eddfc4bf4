"""Hover on Ascend C API names: the table of API docs (signatures as the real headers spell
them, the constraint that bites, the resident-rules hook), and hover over stdio (pytest-lsp)
with the recorded capabilities of VS Code and Neovim, positions in the negotiated encoding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from sage_npu.server import api_docs

ADD = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "add_custom" / "add_custom.cpp"
REQUIRED = ["DataCopy", "DataCopyPad", "Add", "Sub", "Mul", "Div", "Adds", "Muls", "Exp", "Cast", "ReduceSum",
            "ReduceMax", "TQue", "TBuf", "TPipe", "InitBuffer", "AllocTensor", "FreeTensor", "EnQue", "DeQue",
            "SetFlag", "WaitFlag", "PipeBarrier", "Duplicate", "Compare", "Select", "GetValue", "SetValue",
            "LocalTensor", "GlobalTensor", "GetBlockIdx"]


def test_at_least_25_apis_each_with_a_signature_and_summary():
    assert len({d.name for d in api_docs.DOCS.values()}) >= 25
    for name in REQUIRED:
        doc = api_docs.lookup(name)
        assert doc is not None, name
        assert doc.summary and doc.signatures and all(name in s for s in doc.signatures), name


# (api, text that must appear in a signature, as the CANN headers spell it)
SIGNATURES = [
    ("DataCopy", "DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,\n    const uint32_t count);"),
    ("DataCopyPad", "const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams);"),
    ("Add", "const LocalTensor<T>& src1, const int32_t& count);"),
    ("Cast", "const RoundMode& roundMode, const uint32_t count);"),
    ("ReduceSum", "const LocalTensor<T>& sharedTmpBuffer, const int32_t count);"),
    ("ReduceMax", "const int32_t count, bool calIndex = 0);"),
    ("Compare", "CMPMODE cmpMode, uint32_t count);"),
    ("Select", "SELMODE selMode, uint32_t count);"),
    ("SetFlag", "template <HardEvent event>\n__aicore__ inline void SetFlag(int32_t eventID);"),
    ("PipeBarrier", "template <pipe_t pipe>\n__aicore__ inline void PipeBarrier();"),
    ("TQue", "template <TPosition pos, int32_t depth, auto mask = 0>\nclass TQue;"),
    ("InitBuffer", "InitBuffer(T& que, uint8_t num, uint32_t len);"),
    ("AllocTensor", "template <typename T>\n__aicore__ inline LocalTensor<T> AllocTensor();"),
    ("Duplicate", "Duplicate(const LocalTensor<T>& dst, const T& scalarValue,\n    const int32_t& count);"),
]


@pytest.mark.parametrize("api,text", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_signatures_as_the_headers_spell_them(api, text):
    assert any(text in s for s in api_docs.lookup(api).signatures)


# (api, the constraint that bites)
CONSTRAINTS = [
    ("DataCopy", "`count * sizeof(T)` must be a multiple of 32 bytes"),
    ("DataCopy", "UB addresses must be 32-byte aligned"),
    ("DataCopyPad", "no GM paths on 310P"),
    ("Add", "32-byte aligned"),
    ("Muls", "must be exactly T"),
    ("Compare", "multiple of 256 bytes"),
    ("InitBuffer", "184 KB on 910B"),
    ("TBuf", "SetFlag/WaitFlag"),
    ("AllocTensor", "FreeTensor"),
    ("WaitFlag", "hangs"),
    ("PipeBarrier", "PIPE_S is not allowed"),
    ("GetValue", "V_S"),
]


@pytest.mark.parametrize("api,text", CONSTRAINTS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONSTRAINTS)])
def test_the_constraint_that_bites(api, text):
    assert any(text in c for c in api_docs.lookup(api).constraints)


def test_markdown_and_the_resident_rules_hook():
    doc = api_docs.lookup("DataCopy")
    md = api_docs.markdown(doc, api_docs.resident_rules("DataCopy"))
    assert md.startswith("**AscendC::DataCopy**") and "```cpp\n" in md and "**Constraints**" in md
    assert api_docs.resident_rules("DataCopy") == [] and "Resident rules" not in md
    with_rules = api_docs.markdown(doc, ["Use DataCopyPad for the tail tile (adopted 3 times)"])
    assert with_rules.endswith("**Resident rules**\n- Use DataCopyPad for the tail tile (adopted 3 times)")


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "sage_npu.cli", "serve"]),
)
async def client(request, lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param)))
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"
    assert result.capabilities.hover_provider
    yield
    await lsp_client.shutdown_session()


_CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def units(text: str, encoding: str) -> int:
    codec, unit = _CODEC[encoding]
    return len(text.encode(codec)) // unit


async def hover_at(client: LanguageClient, uri: str, text: str, marker: str, inside: int = 1) -> types.Hover | None:
    """Hover `inside` characters into the first occurrence of `marker`."""
    line_no, line = next((i, ln) for i, ln in enumerate(text.splitlines()) if marker in ln)
    col = units(line[:line.index(marker) + inside], client.position_encoding)
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(line=line_no, character=col)))


@pytest.mark.asyncio
async def test_hover_over_api_names(client: LanguageClient, tmp_path):
    text = ADD.read_text().replace(
        "        AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);",
        "        /* 搬入 */ AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);")
    path = tmp_path / "add_custom.cpp"
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=text)))

    h = await hover_at(client, uri, text, "DataCopy(xLocal", inside=4)
    assert h is not None and h.contents.kind == types.MarkupKind.Markdown
    assert h.contents.value.startswith("**AscendC::DataCopy**") and "multiple of 32 bytes" in h.contents.value
    line = next(ln for ln in text.splitlines() if "搬入" in ln)
    start = units(line[:line.index("DataCopy(xLocal")], client.position_encoding)
    assert (h.range.start.character, h.range.end.character) == (start, start + len("DataCopy"))

    alloc = await hover_at(client, uri, text, "AllocTensor<half>()", inside=0)
    assert "**AscendC::AllocTensor**" in alloc.contents.value and "FreeTensor" in alloc.contents.value
    que = await hover_at(client, uri, text, "TQue<", inside=2)
    assert "class TQue" in que.contents.value
    flag_free = await hover_at(client, uri, text, "Add(zLocal", inside=1)
    assert "**AscendC::Add**" in flag_free.contents.value

    # The user's own names are not the API's: `op.Process()` is a method, `tileLength` a field.
    assert await hover_at(client, uri, text, "op.Process", inside=4) is None
    assert await hover_at(client, uri, text, "tileLength = blockLength", inside=2) is None


@pytest.mark.asyncio
async def test_no_hover_outside_ascendc_files(client: LanguageClient, tmp_path):
    path = tmp_path / "plain.cpp"
    text = "void DataCopy(int);\nint main() { DataCopy(1); }\n"
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=text)))
    assert await hover_at(client, uri, text, "DataCopy(1)", inside=2) is None


@pytest.mark.asyncio
async def test_the_ub_view_on_initbuffer_hover_and_the_kernel_lens(client: LanguageClient, tmp_path):
    """What each buffer takes of the Unified Buffer and their total against the chip's, on
    hover over InitBuffer and as a code lens on the kernel entry, before any evaluation."""
    text = ADD.read_text().replace("tileLength * sizeof(half)", "4096 * sizeof(half)")
    path = tmp_path / "add_custom.cpp"
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="cpp", version=1, text=text)))
    h = await hover_at(client, uri, text, "InitBuffer(inQueueY", inside=3)
    md = h.contents.value
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if "InitBuffer(inQueueX" in ln)
    assert md.startswith("**Unified Buffer of `KernelAdd` on 910B2**"), md
    assert f"| `inQueueX` (line {line}) | 2 | 8192 B | 16384 B |" in md
    assert "**Total**: 49152 B of 196608 B usable (25.0%)" in md and "**AscendC::InitBuffer**" in md
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri)))
    entry = next(i for i, ln in enumerate(text.splitlines()) if "__global__" in ln)
    assert [(lens.range.start.line, lens.command.title) for lens in lenses] == [
        (entry, "UB (KernelAdd): 48 KB of 192 KB on 910B2, 25% | inQueueX 2 x 8 KB, inQueueY 2 x 8 KB, "
                "outQueueZ 2 x 8 KB")]


def test_the_ub_view_of_buffers_sized_at_run_time():
    from sage_npu.npu_eval.analysis import ub_usage
    from sage_npu.npu_eval.chips import chip_profile
    from sage_npu.server.ub_view import hover_markdown, lens_title

    usage = ub_usage(ADD.read_text(), chip_profile("910B4"))
    assert [u.scope for u in usage] == ["KernelAdd"]
    assert lens_title(usage[0]).startswith("UB (KernelAdd): 3 buffers sized at run time, 192 KB on 910B4 | ")
    md = hover_markdown(usage[0])
    assert "| 2 | `tileLength * sizeof(half)` | at run time |" in md and "plus 3 buffer(s) sized at run time" in md
    over = ub_usage(ADD.read_text().replace("tileLength * sizeof(half)", "40000 * sizeof(float)"),
                    chip_profile("910B4"))[0]
    assert "does not fit" in lens_title(over) and over.known_bytes == 6 * 160000
