"""Hover text for Ascend C API names: the signatures as the real CANN headers spell them
(`include/basic_api/*_intf.h`, see /work/research/ascendc-api.md), what the call does, and
the constraint that bites. `resident_rules(api)` is the empty default of the rules section;
the server's hovers show the experience memory's resident rules (`stores.ResidentRules`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiDoc:
    name: str
    signatures: tuple[str, ...]
    summary: str
    constraints: tuple[str, ...] = ()
    member: bool = False  # a method (`que.AllocTensor`), hovered only after `.` or `->`


_T = "template <typename T>"
_TM = "template <typename T, bool isSetMask = true>"
_ALIGNED = "Operands in UB must start 32-byte aligned (views `t[k]` with k * sizeof(T) a multiple of 32)."


def _binary(name: str, what: str, dtypes: str) -> ApiDoc:
    return ApiDoc(name, (
        f"{_T}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src0,\n"
        "    const LocalTensor<T>& src1, const int32_t& count);",
        f"{_TM}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src0,\n"
        "    const LocalTensor<T>& src1, uint64_t mask, const uint8_t repeatTime,\n"
        "    const BinaryRepeatParams& repeatParams);  // also uint64_t mask[]",
    ), f"Element-wise {what} on the vector pipe (V): the count form handles the first `count` elements.",
        (_ALIGNED, f"Element types on 910B: {dtypes}.",
         "src and dst may overlap only exactly (the same tensor), not shifted."))


def _scalar(name: str, what: str) -> ApiDoc:
    return ApiDoc(name, (
        f"{_TM}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const T& scalarValue, const int32_t& count);",
        f"{_TM}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const T& scalarValue, uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams);",
    ), f"{what} on the vector pipe (V).",
        ("The scalar's type must be exactly T: `Muls(halfDst, halfSrc, 0.5f, n)` does not deduce on the real "
         "headers; write `(half)0.5` or use a `half` variable.", _ALIGNED))


def _unary(name: str, what: str, dtypes: str = "half, float") -> ApiDoc:
    return ApiDoc(name, (
        f"{_T}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const int32_t& count);",
        f"{_TM}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams);",
    ), f"Element-wise {what} on the vector pipe (V).", (_ALIGNED, f"Element types on 910B: {dtypes}."))


def _reduce(name: str, what: str, extra: str) -> ApiDoc:
    index = ", bool calIndex = 0" if name != "ReduceSum" else ""
    head = _TM if name == "ReduceSum" else _T
    return ApiDoc(name, (
        f"{head}\n__aicore__ inline void {name}(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        f"    const LocalTensor<T>& sharedTmpBuffer, const int32_t count{index});",
    ), f"The {what} of the first `count` elements of src, written to dst[0].",
        ("sharedTmpBuffer is scratch (its contents afterwards are unspecified); give it at least one element per "
         "256-byte repeat of src, rounded up to 32 bytes.", extra,
         "Reading the result as a scalar (`dst.GetValue(0)`) needs a V_S flag first: SetFlag/WaitFlag<HardEvent::V_S>.",
         "Element types: half, float."))


_QUEUE_SYNC = ("EnQue/DeQue are what order the pipes between producer and consumer (VECIN: MTE2 -> V, VECOUT: "
               "V -> MTE3); a tensor that skips the queue needs SetFlag/WaitFlag instead.")

_DOCS = [
    ApiDoc("DataCopy", (
        f"{_T}\n__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,\n"
        "    const uint32_t count);  // GM -> UB (MTE2)",
        f"{_T}\n__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const uint32_t count);  // UB -> GM (MTE3)",
        f"{_T}\n__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const uint32_t count);  // UB -> UB",
        f"{_T}\n__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,\n"
        "    const DataCopyParams& repeatParams);  // also GM <- UB, UB <- UB",
    ), "Moves data between global memory and the Unified Buffer on the copy engines (MTE2 in, MTE3 out).",
        ("`count * sizeof(T)` must be a multiple of 32 bytes: the count form moves whole 32-byte blocks and "
         "silently drops a tail. For other lengths use DataCopyPad (910B).",
         "UB addresses must be 32-byte aligned; GM addresses need only element alignment.",
         "DataCopyParams counts blockLen and the strides (gaps) in 32-byte blocks; blockCount is 1..4095.")),
    ApiDoc("DataCopyPad", (
        f"{_T}\n__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,\n"
        "    const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams);  // GM -> UB",
        f"{_T}\n__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,\n"
        "    const DataCopyExtParams& dataCopyParams);  // UB -> GM",
    ), "A copy with byte lengths: moves lengths that are not whole 32-byte blocks, padding each burst in UB.",
        ("910B (Atlas A2) and later: no GM paths on 310P.",
         "blockLen is in bytes; GM-side strides in bytes, UB-side strides in 32-byte blocks.",
         "GM -> UB: each burst starts 32-byte aligned in UB and is padded to the next 32-byte boundary, so a row "
         "of `cols` elements occupies a 32-byte-rounded stride in UB.")),
    ApiDoc("DataCopyParams", (
        "struct DataCopyParams {\n    uint16_t blockCount = 1;  // bursts\n    uint16_t blockLen = 0;    "
        "// 32-byte blocks per burst\n    uint16_t srcStride = 0;   // gap, 32-byte blocks\n"
        "    uint16_t dstStride = 0;\n};",), "Burst description for DataCopy's strided form.",
        ("All lengths and gaps are in 32-byte blocks (for DataCopy, on the GM side too).",)),
    ApiDoc("DataCopyExtParams", (
        "struct DataCopyExtParams {\n    uint16_t blockCount = 1;\n    uint32_t blockLen = 0;    // bytes\n"
        "    uint32_t srcStride = 0;\n    uint32_t dstStride = 0;\n    uint32_t rsv = 0;\n};",),
        "Burst description for DataCopyPad: `{blockCount, blockLen bytes, srcStride, dstStride, 0}`.",
        ("blockLen is in bytes; strides are bytes on the GM side and 32-byte blocks on the UB side.",)),
    _binary("Add", "dst = src0 + src1", "half, int16_t, int32_t, float"),
    _binary("Sub", "dst = src0 - src1", "half, int16_t, int32_t, float"),
    _binary("Mul", "dst = src0 * src1", "half, int16_t, int32_t, float"),
    _binary("Div", "dst = src0 / src1", "half, float"),
    _binary("Max", "dst = max(src0, src1)", "half, int16_t, int32_t, float"),
    _binary("Min", "dst = min(src0, src1)", "half, int16_t, int32_t, float"),
    _scalar("Adds", "dst = src + scalar"),
    _scalar("Muls", "dst = src * scalar"),
    _scalar("Maxs", "dst = max(src, scalar)"),
    _scalar("Mins", "dst = min(src, scalar)"),
    _scalar("LeakyRelu", "dst = src >= 0 ? src : src * scalar (half, float)"),
    _unary("Exp", "exp"),
    _unary("Ln", "natural log"),
    _unary("Abs", "absolute value"),
    _unary("Sqrt", "square root"),
    _unary("Rsqrt", "1 / sqrt"),
    _unary("Reciprocal", "1 / x"),
    _unary("Relu", "max(x, 0)", "half, int32_t, float"),
    ApiDoc("Duplicate", (
        f"{_T}\n__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue,\n"
        "    const int32_t& count);",
        f"{_TM}\n__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,\n"
        "    const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride);",
    ), "Fills dst with one scalar on the vector pipe (use it to pad a tail before a whole-repeat op).",
        ("The scalar's type must be exactly T: `Duplicate(t, static_cast<T>(0), n)`.", _ALIGNED)),
    ApiDoc("Axpy", (
        "template <typename T, typename U>\n__aicore__ inline void Axpy(const LocalTensor<T>& dst, "
        "const LocalTensor<U>& src,\n    const U& scalarValue, const int32_t& count);",
    ), "dst = dst + src * scalar (dst is read and written).",
        ("T/U: half/half, float/float, or float/half (mixed precision).", _ALIGNED)),
    ApiDoc("Cast", (
        "template <typename T, typename U>\n__aicore__ inline void Cast(const LocalTensor<T>& dst, "
        "const LocalTensor<U>& src,\n    const RoundMode& roundMode, const uint32_t count);",
        "template <typename T, typename U, bool isSetMask = true>\n__aicore__ inline void Cast(const "
        "LocalTensor<T>& dst, const LocalTensor<U>& src,\n    const RoundMode& roundMode, const uint64_t mask, "
        "const uint8_t repeatTime,\n    const UnaryRepeatParams& repeatParams);",
    ), "Converts element types (T = dst, U = src) with a rounding mode; out-of-range values saturate.",
        ("Only some pairs and modes exist: half -> float takes CAST_NONE only; float -> half takes CAST_NONE, "
         "CAST_ODD or CAST_RINT..CAST_TRUNC; unlisted pairs (half -> half, int8 -> float) need two casts.",
         "CAST_NONE on a lossy conversion rounds like CAST_RINT (half to even).",
         "In the mask form the mask counts elements of the wider type per repeat.", _ALIGNED)),
    ApiDoc("Compare", (
        "template <typename T, typename U>\n__aicore__ inline void Compare(const LocalTensor<U>& dst, "
        "const LocalTensor<T>& src0,\n    const LocalTensor<T>& src1, CMPMODE cmpMode, uint32_t count);",
    ), "Compares element-wise (CMPMODE::LT, GT, EQ, LE, GE, NE) into a bit mask: bit i of dst = "
       "src0[i] OP src1[i].",
        ("`count * sizeof(T)` must be a multiple of 256 bytes (128 half, 64 float): pad a tail with Duplicate.",
         "dst (uint8_t) needs count / 8 bytes; int32_t sources support EQ only.")),
    ApiDoc("CompareScalar", (
        "template <typename T, typename U>\n__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, "
        "const LocalTensor<T>& src0,\n    const T src1Scalar, CMPMODE cmpMode, uint32_t count);",
    ), "Compares each element with a scalar into a bit mask (CANN 9 name: Compares).",
        ("`count * sizeof(T)` must be a multiple of 256 bytes.", "Element types: half, float; dst uint8_t.")),
    ApiDoc("Select", (
        "template <typename T, typename U>\n__aicore__ inline void Select(const LocalTensor<T>& dst, "
        "const LocalTensor<U>& selMask,\n    const LocalTensor<T>& src0, const LocalTensor<T>& src1, "
        "SELMODE selMode, uint32_t count);",
        "template <typename T, typename U>\n__aicore__ inline void Select(const LocalTensor<T>& dst, "
        "const LocalTensor<U>& selMask,\n    const LocalTensor<T>& src0, T src1, SELMODE selMode, uint32_t count);",
    ), "Picks per element by a bit mask: bit 1 takes src0, bit 0 takes src1 (a tensor or a scalar).",
        ("VSEL_TENSOR_TENSOR_MODE and VSEL_TENSOR_SCALAR_MODE use 8 KB of the reserved top of UB.",
         "VSEL_CMPMASK_SPR reuses the same first 256 / sizeof(T) bits in every repeat.",
         "Element types: half, float.")),
    _reduce("ReduceSum", "sum", "half sums saturate at +-65504; float sums add repeat partials in order."),
    _reduce("ReduceMax", "maximum", "With calIndex = true the index of the first maximum lands in dst[1] as raw "
            "integer bits (read it through ReinterpretCast)."),
    _reduce("ReduceMin", "minimum", "With calIndex = true the index of the first minimum lands in dst[1] as raw "
            "integer bits (read it through ReinterpretCast)."),
    ApiDoc("SetFlag", ("template <HardEvent event>\n__aicore__ inline void SetFlag(int32_t eventID);",),
           "Signals event `eventID` from the source pipe of `event` (HardEvent::MTE2_V: the MTE2 copy is done, "
           "V may go).",
           ("Every SetFlag needs its WaitFlag with the same event and id (ids 0..7); setting twice without a wait "
            "is an error.", "Names read SRC_DST: the DST pipe waits for the SRC pipe.")),
    ApiDoc("WaitFlag", ("template <HardEvent event>\n__aicore__ inline void WaitFlag(int32_t eventID);",),
           "Blocks the destination pipe of `event` until the matching SetFlag.",
           ("A WaitFlag whose SetFlag never comes hangs the core (flag-deadlock): in a loop, set once before "
            "the loop for a wait at its top, and wait once after it.",)),
    ApiDoc("PipeBarrier", ("template <pipe_t pipe>\n__aicore__ inline void PipeBarrier();",),
           "Waits until every instruction issued so far on `pipe` (PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL) "
           "has finished.",
           ("PIPE_S is not allowed.", "It orders one pipe against itself; between two pipes use "
            "SetFlag/WaitFlag (cheaper than PIPE_ALL).")),
    ApiDoc("TPipe", ("class TPipe {\npublic:\n    template <class T>\n    __aicore__ inline bool InitBuffer(T& que, "
                     "uint8_t num, uint32_t len);\n    template <TPosition pos>\n    __aicore__ inline bool "
                     "InitBuffer(TBuf<pos>& buf, uint32_t len);\n    __aicore__ inline void Reset();\n};",),
           "Owns the on-chip buffers and hands them to queues and TBufs.",
           ("Only one TPipe should be alive per kernel.",
            "Usable UB: 184 KB on 910B (the top 8 KB of 192 KB is reserved), 248 KB on 310P.")),
    ApiDoc("InitBuffer", (
        "template <class T>\n__aicore__ inline bool InitBuffer(T& que, uint8_t num, uint32_t len);  // TQue",
        "template <TPosition pos>\n__aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len);  // TBuf",
    ), "Reserves `num` buffers of `len` bytes each for a queue (or one for a TBuf), carved in order from UB.",
        ("len is in bytes and rounded up to 32; all buffers together must fit the usable UB (184 KB on 910B, "
         "248 KB on 310P), else ub-overflow.", "num = 2 (double buffering) lets copy and compute overlap.",
         "At most 64 buffers per TPipe."), member=True),
    ApiDoc("TQue", ("template <TPosition pos, int32_t depth, auto mask = 0>\nclass TQue;",),
           "A queue of UB buffers at a position (VECIN, VECOUT, ...): AllocTensor -> fill -> EnQue -> DeQue -> "
           "use -> FreeTensor.", ("depth has no default; samples use BUFFER_NUM for it and for InitBuffer's num.",
                                  _QUEUE_SYNC)),
    ApiDoc("TBuf", ("template <TPosition pos = TPosition::LCM>\nclass TBuf {\n    template <typename T> "
                    "__aicore__ inline LocalTensor<T> Get();\n    template <typename T> __aicore__ inline "
                    "LocalTensor<T> Get(uint32_t len);\n};",),
           "A plain UB buffer for temporaries: Get<T>() returns the whole buffer as a LocalTensor<T>.",
           ("No queue orders the pipes around it: when DataCopy and vector ops share a TBuf tensor, put "
            "SetFlag/WaitFlag (e.g. HardEvent::MTE2_V) between them.",
            "Get<T>(len): len * sizeof(T) must be a multiple of 32 bytes and fit the buffer.")),
    ApiDoc("AllocTensor", ("template <typename T>\n__aicore__ inline LocalTensor<T> AllocTensor();",),
           "Takes the next free buffer of the queue as a LocalTensor<T> (length = buffer bytes / sizeof(T)).",
           ("Blocks while all `num` buffers are held: every AllocTensor needs a FreeTensor (after the DeQue that "
            "consumes it), or the next one waits forever (queue-deadlock).",), member=True),
    ApiDoc("FreeTensor", ("template <typename T>\n__aicore__ inline void FreeTensor(LocalTensor<T>& tensor);",),
           "Returns the tensor's buffer to its queue.",
           ("Free a tensor once, after its last use: using it afterwards is a use-after-free.",), member=True),
    ApiDoc("EnQue", ("template <typename T>\n__aicore__ inline bool EnQue(const LocalTensor<T>& tensor);",),
           "Hands a filled tensor to the queue's consumer.",
           ("At most `depth` tensors may wait in the queue.", _QUEUE_SYNC), member=True),
    ApiDoc("DeQue", ("template <typename T>\n__aicore__ inline LocalTensor<T> DeQue();",),
           "Takes the oldest tensor from the queue, waiting for its producer pipe.",
           ("DeQue on an empty queue waits forever (queue-deadlock): one EnQue per DeQue.",), member=True),
    ApiDoc("LocalTensor", ("template <typename T>\nclass LocalTensor;",),
           "A typed view of on-chip memory (UB); `t[k]` is a view starting k elements in, shrinking its length.",
           ("Views passed to DataCopy or vector ops must start 32-byte aligned.",
            "GetValue/SetValue are scalar accesses on the S pipe: slow, and they need a V_S / S_V flag next to "
            "vector ops.")),
    ApiDoc("GlobalTensor", ("template <typename T>\nclass GlobalTensor;",),
           "A typed view of global memory (GM); `g[k]` offsets by k elements and keeps the buffer size.",
           ("SetGlobalBuffer's size is in elements.", "Reach GM through DataCopy/DataCopyPad; GetValue/SetValue "
            "are uncached scalar accesses.")),
    ApiDoc("SetGlobalBuffer", ("__aicore__ inline void SetGlobalBuffer(__gm__ PrimType* buffer, uint64_t "
                               "bufferSize);",),
           "Points a GlobalTensor at GM (usually the kernel argument plus this block's offset).",
           ("bufferSize is in elements; cast GM_ADDR to the element type first: `(__gm__ half*)x + offset`.",),
           member=True),
    ApiDoc("GetValue", ("__aicore__ inline PrimType GetValue(const uint32_t index) const;",),
           "Reads one element on the scalar pipe (S).",
           ("After a vector op writes the tensor, SetFlag/WaitFlag<HardEvent::V_S> before reading.",
            "One element per call: inside a loop over elements it serialises the kernel; use vector ops."),
           member=True),
    ApiDoc("SetValue", ("template <typename T1>\n__aicore__ inline void SetValue(const uint32_t index, "
                        "const T1 value) const;",),
           "Writes one element on the scalar pipe (S).",
           ("Before a vector op reads what SetValue wrote, SetFlag/WaitFlag<HardEvent::S_V>.",
            "One element per call: inside a loop over elements it serialises the kernel; use Duplicate or "
            "vector ops."), member=True),
    ApiDoc("GetBlockIdx", ("__aicore__ inline int64_t GetBlockIdx();",), "This core's block index, 0 .. "
           "GetBlockNum() - 1: the usual base of its slice of GM.", ()),
    ApiDoc("GetBlockNum", ("__aicore__ inline int64_t GetBlockNum();",), "The number of blocks launched "
           "(block_dim).", ()),
    ApiDoc("Sum", ("template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = "
                   "false>\n__aicore__ inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& "
                   "srcTensor,\n    [const LocalTensor<uint8_t>& sharedTmpBuffer,] const SumParams& sumParams);",),
           "High-level row sums: dst[i] = the sum of the first n elements of row i, for `outter` rows.",
           ("SumParams{outter, inner, n}: inner is n rounded up to 32 bytes (the row pitch in UB), in elements.",
            "half and float.")),
    ApiDoc("Broadcast", ("template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>\n"
                         "__aicore__ inline void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src,\n"
                         "    const uint32_t dstShape[dim], const uint32_t srcShape[dim]"
                         "[, LocalTensor<uint8_t>& sharedTmpBuffer]);  // CANN 8: BroadCast",),
           "numpy broadcasting in UB: dim 1 ([1] -> [n]) or dim 2 along axis 0 ([1, N] -> [M, N]) or axis 1 "
           "([M, 1] -> [M, N]).",
           ("The source must be 1 along `axis` and equal to the destination elsewhere.",)),
    ApiDoc("SyncAll", ("template <bool isAIVOnly = true>\n__aicore__ inline void SyncAll();",
                       "template <bool isAIVOnly = true>\n__aicore__ inline void SyncAll(const GlobalTensor<int32_t>& "
                       "gmWorkspace,\n    const LocalTensor<int32_t>& ubWorkspace, const int32_t usedCores = 0);"),
           "A barrier across every block of the launch: data one block wrote to GM before it is visible to all "
           "after it.",
           ("Every block must reach it the same number of times, or the launch hangs (reported as flag-deadlock).",
            "The GM-workspace form needs its workspace zeroed by the host.")),
    ApiDoc("IBSet", ("template <bool isAIVOnly = true>\n__aicore__ inline void IBSet(const GlobalTensor<int32_t>& "
                     "gmWorkspace,\n    const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx, int32_t eventID);",),
           "Sets block `blockIdx`'s flag `eventID` in GM (waits until it is 0, writes 1): that block's IBWait with "
           "the same arguments may go on.",
           ("gmWorkspace: at least cores*32*eventID + blockIdx*32 + 32 bytes, zeroed by the host; ubWorkspace: 32 "
            "bytes.", "Pair it with an IBWait of the same gmWorkspace, blockIdx and eventID, or the waiter hangs.")),
    ApiDoc("IBWait", ("template <bool isAIVOnly = true>\n__aicore__ inline void IBWait(const GlobalTensor<int32_t>& "
                      "gmWorkspace,\n    const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx, "
                      "int32_t eventID);",),
           "Waits until block `blockIdx`'s flag `eventID` is 1 (an IBSet with the same arguments), then clears it.",
           ("A wait no IBSet ever satisfies hangs the device (reported as flag-deadlock).",)),
    ApiDoc("WaitPreBlock", ("__aicore__ inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace,\n"
                            "    LocalTensor<int32_t>& ubWorkspace);",),
           "Waits until every lower block has passed NotifyNextBlock in this round: the section up to "
           "NotifyNextBlock runs in block order (deterministic accumulation).",
           ("Call InitDetermineComputeWorkspace first; gmWorkspace GetBlockNum()*32 bytes, ubWorkspace "
            "GetBlockNum()*32+32.", "Every block calls WaitPreBlock and NotifyNextBlock the same number of times.")),
    ApiDoc("DataCacheCleanAndInvalid",
           ("template <typename T, CacheLine entireType, DcciDst dcciDst>\n__aicore__ inline void "
            "DataCacheCleanAndInvalid(const GlobalTensor<T>& dst);",),
           "Writes back and drops the core's data-cache line holding `dst` (or the whole cache): the next "
           "GetValue reads GM again.",
           ("A loop polling a flag another block writes must call it before each GetValue, or it reads the stale "
            "line forever.", "SINGLE_CACHE_LINE covers `dst` up to its 64-byte boundary.")),
]

DOCS: dict[str, ApiDoc] = {d.name: d for d in _DOCS}
DOCS["Compares"] = DOCS["CompareScalar"]
DOCS["BroadCast"] = DOCS["Broadcast"]


def lookup(name: str) -> ApiDoc | None:
    return DOCS.get(name)


def resident_rules(api: str) -> list[str]:
    """Resident rules that mention `api`, each one line of Markdown: none without a memory.

    The server's hovers read the experience memory's instead (`stores.ResidentRules.about`).
    """
    return []


def markdown(doc: ApiDoc, rules: list[str]) -> str:
    parts = [f"**AscendC::{doc.name}**: {doc.summary}", "```cpp\n" + "\n".join(doc.signatures) + "\n```"]
    if doc.constraints:
        parts.append("**Constraints**\n" + "\n".join(f"- {c}" for c in doc.constraints))
    if rules:
        parts.append("**Resident rules**\n" + "\n".join(f"- {r}" for r in rules))
    return "\n\n".join(parts)
