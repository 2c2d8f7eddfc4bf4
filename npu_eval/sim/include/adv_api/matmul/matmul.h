// The Matmul high-level API (asc-devkit include/adv_api/matmul/matmul.h: MatmulImpl), built on the
// emulated cube unit's basic API: per base block of the TCubeTiling it copies A and B from GM to
// L1 (DataCopy with Nd2NzParams, MTE2), L1 to L0A/L0B (LoadData, MTE1), multiplies (Mmad, M,
// accumulating K in L0C in float, or int32 for int8) and writes C out (Fixpipe, FIX), with a
// SetFlag/WaitFlag between each producer and its consumer. So every check of those APIs (memory
// bounds, positions, uninitialised reads, missing syncs) applies, each at the user's Matmul call
// line, and the cost model sees the instructions per block.
//
// The emulator's model (docs/cube.md "The Matmul API"):
// - Init takes the tiling's buffers from the pipe: A1 depthA1 x baseM x baseK, B1 depthB1 x baseN
//   x baseK, A2/B2 dbL0A/dbL0B base tiles, CO1 baseM x baseN floats, and a bias's C1/C2 baseN
//   floats. A tiling that does not fit L1 or L0 is cube-buffer-overflow at the Init (or
//   REGIST_MATMUL_OBJ) line.
// - The steps overlap as the tiling's buffers allow: a streamed A or B has two L1 slots when
//   depthA1 >= 2 x stepKa (depthB1 >= 2 x stepKb), L0A/L0B two with dbL0A = dbL0B = 2, each slot freed
//   by a flag of the Matmul's own (ids past the kernel's 0..7); MTE2 preload continues the slots
//   from block to block. One L0C block (dbL0C 1): a block's first Mmad waits for the last Fixpipe.
// - In a mixed kernel the device runs Matmul on the AIC, called from the AIV; here the cube work
//   runs in the calling block's own cube memories, and an AIV's call is recorded on its AIC's
//   timeline between a message and a reply (matmul_detail::CubeClient).
// - C to a VECIN/VECCALC/VECOUT tensor: the 910B's Fixpipe writes a GM workspace and MTE2 copies
//   it into the UB; the trace records both, the UB write as MTE2's (a VECIN queue orders it).
#pragma once

#include <type_traits>

#include "../../basic_api/kernel_operator_block_sync_intf.h"
#include "../../basic_api/kernel_operator_data_copy_intf.h"
#include "../../basic_api/kernel_operator_fixpipe_intf.h"
#include "../../basic_api/kernel_operator_mm_intf.h"
#include "../../basic_api/kernel_tpipe.h"
#include "../../sage_sim/coop.h"
#include "batch_layout.h"
#include "constant_tiling.h"
#include "matmul_config.h"
#include "matmul_policy.h"
#include "matmul_tiling.h"
#include "sparse_b.h"

namespace AscendC {

template <typename T>
struct GetMmDstType {
    using Type = std::conditional_t<std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> ||
                                        std::is_same_v<T, int4b_t>, int32_t, float>;
};

namespace matmul_detail {

// The event id the Matmul's internal hand-offs use (each set is waited at once, so it never
// stays pending against a kernel's own flags).
constexpr int32_t kEvent = 7;

template <HardEvent E>
inline void hand_off(sage::sim::SrcLoc loc) {
    SetFlag<E>(kEvent, loc);
    WaitFlag<E>(kEvent, loc);
}

// A flag of the Matmul's own pipelining: set by the pipe that frees a buffer slot (MTE1 after its
// last load from an L1 slot, M after the Mmad that read an L0A/L0B slot), waited by the pipe that
// refills it. The device's Matmul takes its events from the pipe apart from the kernel's; here
// their ids start at 8, past the 0..7 a kernel's SetFlag/WaitFlag take, so the two never pair.
// Only the trace sees them (the emulator runs the calls in order): they order the cost model's
// pipes and its missing-sync check.
struct SlotFlag {
    HardEvent event;
    int32_t id;
    bool pending = false;

    void Set(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        if (pending) Wait(loc);
        trace_event(TraceKind::SetFlag, detail::event_pipe(event, false), "SetFlag", loc, int32_t(event), id);
        pending = true;
    }
    void Wait(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        if (!pending) return;
        trace_event(TraceKind::WaitFlag, detail::event_pipe(event, true), "WaitFlag", loc, int32_t(event), id);
        pending = false;
    }
};

// A Matmul call on an AIV of a mixed kernel. On the device the AIV is a client: it writes a message
// (the call and its arguments) to GM and sets a cross-core flag; the AIC's server loop waits for it,
// reads the message, does the cube work and, for a synchronous call, sets a flag the AIV waits for.
// The emulator runs the cube work here, in this AIV's own cube memories (the check that keeps cube
// APIs off AIVs stands aside while cube_client is set), and records it in the AIC's trace, between
// those two hand-overs: so the AIC serves its AIVs' calls one after another. The AIV's message costs
// it a GM round trip (MatmulMessage, the cost model's scalar GM access), the AIC's server its
// handling (MatmulServe: reading and decoding it, matmul_serve_cycles). A call that sends no message
// (`serve` false: MixDualMaster objects, where the AIC runs the code itself, or the second AIV of an
// ibshare A and B pair) only sets cube_client. A message the device's client posts without waiting
// (`ack` false: Init's and End's) gets no reply: the AIV goes on at once, and the AIC serves it in
// its turn.
class CubeClient {
public:
    CubeClient(sage::sim::SrcLoc loc, bool serve, bool ack = true) : loc_(loc), ack_(ack) {
        using namespace sage::sim;
        if (blk().cube_client++ || !serve || !coop().active || !coop().mixed || blk().core != AIV) return;
        BlockState* aic = AicState();
        if (aic == nullptr) return;
        const int ask = cross().next_id++;
        trace_instr(Pipe::S, protocol::kMatmulMessage, "", 0, 64, loc);
        trace_event(TraceKind::XSet, Pipe::S, "Matmul call (to the AIC)", loc, 0, ask);
        blk().server = aic, blk().cube_reply = cross().next_id++, served_ = true;
        trace_event(TraceKind::XWait, Pipe::ALL, "Matmul call (to the AIC)", loc, 0, ask);
        trace_instr(Pipe::S, protocol::kMatmulServe, "", 0, 64, loc);
    }
    ~CubeClient() {
        if (served_ && ack_) Reply(loc_);
        else if (served_) sage::sim::blk().server = nullptr, sage::sim::blk().cube_reply = -1;
        --sage::sim::blk().cube_client;
    }
    CubeClient(const CubeClient&) = delete;
    CubeClient& operator=(const CubeClient&) = delete;

    // The AIC is done with the call: it sets the reply flag, and what follows (the AIV's copy of a C
    // written to its UB) is the AIV's again, after the wait. False when no call is being served.
    static bool Reply(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        if (blk().server == nullptr) return false;
        const int id = blk().cube_reply;
        trace_event(TraceKind::XSet, Pipe::ALL, "Matmul done (to the AIV)", loc, 0, id);
        blk().server = nullptr, blk().cube_reply = -1;
        trace_event(TraceKind::XWait, Pipe::ALL, "Matmul done (to the AIV)", loc, 0, id);
        return true;
    }

private:
    sage::sim::SrcLoc loc_;
    bool ack_;
    bool served_ = false;
    // The state of this AIV's AIC (same AI Core), parked while the AIV runs.
    static sage::sim::BlockState* AicState() {
        using namespace sage::sim;
        const std::vector<CoreSlot>& cores = cross().cores;
        for (size_t f = 0; f < cores.size() && f < coop().fibers.size(); ++f)
            if (cores[f].core == AIC && cores[f].group == blk().group && int(f) != blk().fiber)
                return &coop().fibers[f]->st;
        return nullptr;
    }
};

// The ibshare cache (a Matmul on the ibshare norm template whose A or B alone is IBSHARE; the guide
// page on sharing the B matrix): the AIC keeps one L1 copy of that matrix, known by its GM address,
// filled by the first call that copies it; a later call (the other AIV's, or the same object's
// again) that needs a whole base-block tile already there reads it from L1 and copies nothing. Tail
// tiles are not kept, nor tiles past the matrix's L1 depth; another matrix empties the cache. True
// when `tile` (its place in the matrix and its K length, one number) is there; else it is kept if it
// may be. Held by the core whose L1 it is: the serving AIC, or the calling core.
inline bool shared_l1_hit(const void* org, uint64_t tile, bool whole, int32_t blocks, int32_t depth) {
    using namespace sage::sim;
    BlockState::SharedL1& c = (blk().server ? *blk().server : blk()).shared_l1;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(org);
    if (c.org != addr) c = BlockState::SharedL1{}, c.org = addr;
    if (!whole) return false;
    if (std::find(c.tiles.begin(), c.tiles.end(), tile) != c.tiles.end()) return true;
    if (c.blocks + blocks <= depth) c.tiles.push_back(tile), c.blocks += blocks;
    return false;
}

// Clears the unit flags of an L0C tensor's blocks, as SetFixPipeConfig(l0c, true) does.
template <typename T>
inline void clear_unit_flags(const LocalTensor<T>& l0c, sage::sim::SrcLoc loc) {
    SetFixPipeConfig(l0c, true, loc);
}

template <typename T>
constexpr QuantMode_t out_quant() {
    if constexpr (std::is_same_v<T, half>) return QuantMode_t::F322F16;
    else if constexpr (std::is_same_v<T, bfloat16_t>) return QuantMode_t::F322BF16;
    else return QuantMode_t::NoQuant;
}

inline uint32_t up(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }

// The Fixpipe quantisation a Matmul's types call for (the SetQuantScalar page): int8 in and half
// out dequantises (DEQF16), int8 in and int8 out requantises (REQ8), half/bfloat16 in and int8 out
// quantises (QF322B8_PRE); NoQuant for any other pair, which SetQuantScalar/Vector do not apply to.
template <typename L0C, typename Dst>
constexpr QuantMode_t quant_mode() {
    constexpr bool b8 = std::is_same_v<Dst, int8_t> || std::is_same_v<Dst, uint8_t>;
    if constexpr (std::is_same_v<L0C, int32_t> && std::is_same_v<Dst, half>) return QuantMode_t::DEQF16;
    else if constexpr (std::is_same_v<L0C, int32_t> && b8) return QuantMode_t::REQ8;
    else if constexpr (std::is_same_v<L0C, float> && b8) return QuantMode_t::QF322B8_PRE;
    else return QuantMode_t::NoQuant;
}

// L0C (NZ) -> a UB tensor as ND rows `stride` elements apart. The 910B has no L0C -> UB path: the
// Fixpipe writes a GM workspace (FIX) and an MTE2 copy brings it into the UB, so the trace records
// those two, and the UB write is MTE2's, which a VECIN queue orders against the vector unit.
template <typename T, typename U>
inline void fixpipe_to_ub(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                          sage::sim::SrcLoc loc, int64_t vec = -1) {
    using namespace sage::sim;
    FixpipeShape s = detail::fixpipe_source<T>(src, p, false, loc, vec);
    if (s.nSize == 0 || s.mSize == 0) return;
    const std::vector<uint8_t> words = detail::fix_words(s);
    s.words = words.empty() ? nullptr : words.data();
    const uint64_t bytes = detail::fix_out_bytes(s);
    if (mem_at(dst.addr_) != Mem::UB) {
        fail("api-misuse", loc, "Matmul writes C to a %s tensor, in block %d: a C of TPosition VECIN/VECCALC/VECOUT "
             "must be a Unified Buffer tensor", mem_name(mem_at(dst.addr_)), blk().idx);
    }
    dst.check("Matmul GetTensorC", (bytes + sizeof(T) - 1) / sizeof(T), loc, false);
    detail::unit_flag(false, p.unitFlag, {src.addr_, detail::fix_src_bytes(s)}, "Fixpipe", loc);
    cube_fixpipe(blk().ub, src.addr_, blk().ub + dst.addr_, s);
    const uint64_t moved = uint64_t(s.mSize) * s.nSize * sizeof(T);
    trace_instr(Pipe::FIX, "Fixpipe", dtype_name<T>(), s.mSize * s.nSize, moved, loc, {},
                {src.addr_, detail::fix_src_bytes(s)});
    if (!CubeClient::Reply(loc)) hand_off<HardEvent::FIX_MTE2>(loc);  // served by the AIC: its reply orders them
    UbRange w{dst.addr_, uint32_t(bytes)};
    ub_mark(w);
    trace_instr(Pipe::MTE2, "DataCopy", dtype_name<T>(), s.mSize * s.nSize, moved, loc, w);
    hand_off<HardEvent::MTE2_V>(loc);  // the call returns with C in the UB (sync = true)
}

// enAtomic (0 none, 1 add, 2 max, 3 min: the IterateAll/GetTensorC pages) as the core's atomic mode
// while one call writes C, then the mode the kernel had (its own SetAtomicAdd stays in force: a 0
// changes nothing).
class Atomic {
public:
    Atomic(uint8_t enAtomic, sage::sim::SrcLoc loc) : saved_(sage::sim::blk().atomic_op) {
        using namespace sage::sim;
        if (enAtomic > 3)
            fail("api-misuse", loc, "Matmul with enAtomic %u, in block %d: 0 (none), 1 (AtomicAdd), 2 (AtomicMax) "
                 "and 3 (AtomicMin) are the values", unsigned(enAtomic), blk().idx);
        if (enAtomic) blk().atomic_op = enAtomic == 1 ? AtomicAddOp : enAtomic == 2 ? AtomicMaxOp : AtomicMinOp;
    }
    ~Atomic() { sage::sim::blk().atomic_op = saved_; }
    Atomic(const Atomic&) = delete;
    Atomic& operator=(const Atomic&) = delete;

private:
    int saved_;
};

// Before a Matmul accumulates into GM atomically (split K: every core adds its part of K into the
// same C, cleared first). On the device the cores start together and a core's matmul takes far
// longer than the stores before it (the clearing of C), so every core's clearing lands before any
// core's sum. The cooperative runner runs cores one at a time: here the writing core waits until
// every other core has run up to a wait of its own (this one, a barrier, a poll) or finished. The
// sums then arrive in core order.
inline void await_other_cores(sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    Coop& c = coop();
    if (!c.active || !rt().poll) return;
    for (;;) {
        bool others_parked = true;
        for (const auto& f : c.fibers)
            if (f->idx != c.cur && f->state == FiberState::Ready) others_parked = false;
        if (others_parked) return;
        rt().poll(loc, "accumulates C into GM (Matmul enAtomic) once the other cores have cleared it", 1);
    }
}

// SetTensorA/B's transpose flag (the SetTensorA/SetTensorB pages): with the MatmulType's ISTRANS
// true the flag decides, call by call. With ISTRANS false the pages say the flag must be false
// ("precision is abnormal" otherwise), yet asc-devkit's own matmul_high_performance sample calls
// SetTensorB(b, true) on a half B declared without ISTRANS and its device test checks the
// transposed product: for half and bfloat16_t the emulator transposes as the call asks and warns
// at the call. For other types the flag must equal ISTRANS (the kernel's L1 sizes follow ISTRANS
// and the tiling's isTrans), an error.
template <class TYPE>
inline bool transpose_of(const char* api, bool flag, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    using T = typename TYPE::T;
    constexpr bool two_byte = std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;
    if (!two_byte && flag != TYPE::isTrans)
        fail("api-misuse", loc, "Matmul %s with the transpose flag %s, but the MatmulType (of %s) has ISTRANS %s, "
             "in block %d: for types other than half and bfloat16_t the flag must equal ISTRANS (and the tiling's "
             "isTrans), which size the L1 buffers (the %s page)", api, flag ? "true" : "false", dtype_name<T>(),
             TYPE::isTrans ? "true" : "false", blk().idx, api);
    if (flag && !TYPE::isTrans)
        report("api-misuse", Severity::Warning, loc,
               "Matmul %s with the transpose flag true, but the MatmulType's ISTRANS is false: the %s page says "
               "the flag must then be false (\"precision is abnormal\" otherwise); the emulator transposes as "
               "asked. Declare the MatmulType with ISTRANS true", api, api);
    return flag;
}

}  // namespace matmul_detail

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>,
          template <const auto&, typename, typename, typename, typename, typename> class MATMUL_POLICY = MatmulPolicy>
class MatmulImpl {
public:
    using AType = A_TYPE;
    using BType = B_TYPE;
    using CType = C_TYPE;
    using BiasType = BIAS_TYPE;
    using CallBack = MM_CB;
    // MM_CFG is a MatmulConfig or a constant tiling (MatmulApiStaticTiling, constant_tiling.h).
    static constexpr MatmulConfig kCfg = matmul_detail::config_of(MM_CFG);
    static constexpr bool kStaticTiling = matmul_detail::is_static(MM_CFG);
    static constexpr bool kMixDualMaster = kCfg.enableMixDualMaster;
    // Calls on an AIV of a mixed kernel are messages to the AIC (matmul_detail::CubeClient), except a
    // MixDualMaster object's, where the AIC runs the same code itself.
    static constexpr bool kServed = !kMixDualMaster;

private:
    using SrcT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using L0cT = typename GetMmDstType<SrcT>::Type;
    static_assert(std::is_same_v<SrcT, SrcBT>, "Matmul: A and B have one type on Atlas A2 (half, bfloat16_t, "
                                               "float, int8_t or int4b_t)");
    static_assert(!MM_CB::kDataCopyOut, "Matmul: a DataCopyOut callback (MatmulCallBackFunc's first) is not "
                                        "emulated yet; CopyA1 and CopyB1 are");
    static constexpr uint32_t kEs = sizeof(SrcT);    // 1 for int4b_t too: sizes go through Bytes()
    static constexpr bool kInt4 = sage::sim::is_int4<SrcT>();
    static constexpr uint32_t kC0 = kInt4 ? 64 : 32 / kEs;        // elements of a 32-byte block
    static constexpr uint32_t kFrac = kInt4 ? 1024 : 512 / kEs;   // elements of a 512-byte L0 fractal
    // B as the dense half of a 4:2 sparse matrix with its index (SparseMatmulType, SetSparseIndex)
    static constexpr bool kSparse = matmul_detail::is_sparse_v<B_TYPE>;
    // Bytes of n elements of A (two int4b_t a byte), and of B's n elements (a sparse B keeps half).
    static constexpr uint64_t Bytes(uint64_t n) { return sage::sim::elem_bytes<SrcT>(n); }
    static constexpr uint64_t BytesB(uint64_t n) { return kSparse ? n / 2 : Bytes(n); }
    // What Nd2NzParams' dValue and srcDValue count for n elements: bytes for int4b_t (pairs), else elements.
    static constexpr uint64_t NdUnits(uint64_t n) { return kInt4 ? (n + 1) / 2 : n; }
    static constexpr MatmulPolicyKind kPolicy = matmul_detail::policy_of<MATMUL_POLICY>::value;
    static_assert(kPolicy != MatmulPolicyKind::Custom,
                  "[not-emulated] Matmul with a user-defined MATMUL_POLICY: sage-npu runs the built-in "
                  "MatmulPolicy, NBuffer33MatmulPolicy, TrianUpperMatmulPolicy and TrianLowerMatmulPolicy, not a "
                  "policy's own modules");
    static constexpr bool kNBuffer33 = kPolicy == MatmulPolicyKind::NBuffer33;
    // C_TYPE in TPosition::CO1: the kernel owns L0C and each Iterate computes into its tensor.
    static constexpr bool kCInL0C = C_TYPE::pos == TPosition::CO1;
    // MatmulConfig.enUnitFlag (on by default in the norm and ibshare templates, off in mdl; those
    // three templates only, the MatmulConfig page): the Mmads of a block hand C to its Fixpipe by L0C's unit flags
    // (2 ... 2, 3 on the K loop's Mmads, 3 on the Fixpipe) instead of M_FIX/FIX_M flags, so the
    // two pipes overlap per 512-byte block. A kernel that reads C itself (C in CO1) keeps the flags.
    static constexpr bool kUnitFlag = kCfg.enUnitFlag && !kCInL0C &&
                                      (kCfg.doNorm || kCfg.doIBShareNorm || kCfg.doMultiDataLoad);

public:
    __aicore__ inline MatmulImpl() {}

    // In a mixed kernel the AIV's Init is a message (the device client's init message, posted
    // without waiting) the AIC serves, as its later calls are; the object's set-up is scalar work on
    // the core that computes (MatmulInit; none for the second AIV of an A-and-B IBSHARE pair, which
    // computes nothing). Only a constant tiling given with a null TCubeTiling is fully constant (the
    // constant-tiling page's full constant case); with a TCubeTiling the set-up is the host tiling's.
    __aicore__ inline void Init(const TCubeTiling* __restrict cubeTiling, TPipe* tpipe = nullptr, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed && !SharedPairServed(), false);
        sage::sim::touch(loc);
        constTiling_ = kStaticTiling && cubeTiling == nullptr;
        if (!SharedPairServed()) Scalar(sage::sim::protocol::kMatmulInit, loc);
        if (cubeTiling == nullptr && !kStaticTiling)
            sage::sim::fail("api-misuse", loc, "Matmul Init with a null tiling (only a Matmul whose MM_CFG is a "
                            "constant MatmulApiStaticTiling runs without one)");
        TPipe* pipe = tpipe ? tpipe : static_cast<TPipe*>(sage::sim::blk().tpipe);
        const TCubeTiling next = matmul_detail::static_tiling(MM_CFG, cubeTiling);
        // Init again (REGIST_MATMUL_OBJ, then the kernel's own Init, as matmul_ibshareAB does): the
        // object keeps the buffers it holds when the new tiling's fit in them, as the device's
        // re-initialised object reuses its own; only a larger tiling takes new ones.
        const bool keep = init_ && pipe == pipe_ && Buffers(next).FitIn(Buffers(t_));
        if (!init_) NameFlags();
        t_ = next;
        pipe_ = pipe;
        init_ = true;
        CheckTiling(loc);
        if (!keep) Allocate(loc);
        orgM_ = t_.M, orgN_ = t_.N, orgKa_ = t_.Ka, orgKb_ = t_.Kb, orgKc_ = t_.N;
        singleM_ = t_.singleCoreM, singleN_ = t_.singleCoreN, singleK_ = t_.singleCoreK;
        // no bias until SetBias, whatever the tiling's isBias (the device's bias scheduler starts disabled)
        PolicyLimits(loc);
    }
    __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
    __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
        orgM_ = orgM, orgN_ = orgN, orgKa_ = orgKa, orgKb_ = orgKb, orgKc_ = orgKc ? orgKc : orgN;
    }
    __aicore__ inline void SetSingleShape(int singleM, int singleN, int singleK) {
        singleM_ = singleM, singleN_ = singleN, singleK_ = singleK;
    }
    __aicore__ inline void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
        if (tailM > 0) singleM_ = tailM;
        if (tailN > 0) singleN_ = tailN;
        if (tailK > 0) singleK_ = tailK;
    }
    __aicore__ inline void SetTensorA(const GlobalTensor<SrcT>& gm, bool isTransposeA = false, SAGE_LOC) {
        a_ = gm, transA_ = matmul_detail::transpose_of<A_TYPE>("SetTensorA", isTransposeA, loc), iter_ = -1;
    }
    // A in L1 (MatmulType<TPosition::TSCM, CubeFormat::NZ, ...>): the whole singleCoreM x K in NZ
    // fractals the kernel staged (C0 columns of K, each up(M, 16) rows), read by the L0 loads in place.
    __aicore__ inline void SetTensorA(const LocalTensor<SrcT>& l1, bool isTransposeA = false, SAGE_LOC) {
        aL1_ = l1, transA_ = matmul_detail::transpose_of<A_TYPE>("SetTensorA", isTransposeA, loc), iter_ = -1;
        aL1Set_ = true;
    }
    __aicore__ inline void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false, SAGE_LOC) {
        b_ = gm, transB_ = matmul_detail::transpose_of<B_TYPE>("SetTensorB", isTransposeB, loc), iter_ = -1;
    }
    // The 4:2 sparse B's index (the SetSparseIndex page): uint8_t, four 2-bit indices a byte, NZ
    // fractals of 16 columns x 8 bytes over the whole N (up(N, 16) columns per 64 of K).
    __aicore__ inline void SetSparseIndex(const GlobalTensor<uint8_t>& indexGlobal, SAGE_LOC) {
        matmul_detail::sparse_index_allowed<B_TYPE>(kCfg.doMultiDataLoad, loc);
        index_ = indexGlobal, iter_ = -1;
    }
    __aicore__ inline void SetBias(const GlobalTensor<BiasT>& biasGlobal) {
        bias_ = biasGlobal, bias_on_ = true, iter_ = -1;
    }
    __aicore__ inline void DisableBias() { bias_on_ = false; }
    __aicore__ inline void ClearBias() { bias_on_ = false; }
    __aicore__ inline void SetBatchNum(int32_t batchA, int32_t batchB) { batchA_ = batchA, batchB_ = batchB; }
    __aicore__ inline void SetHF32(bool enableHF32 = false, int32_t = 0, SAGE_LOC) {
        if (enableHF32) sage::sim::fail("api-misuse", loc, "Matmul SetHF32(true): HF32 mode is not emulated yet");
    }
    // Quantisation of C on its way out of L0C (the SetQuantScalar/SetQuantVector pages): one word
    // for all of C, or one a column of N (uint64_t words: scale bits 31..13, offset 45..37, sign 46,
    // as the Fixpipe's QUANT_PRE reads them). Set before Iterate/IterateAll.
    __aicore__ inline void SetQuantScalar(const uint64_t quantScalar, SAGE_LOC) {
        QuantTypes("SetQuantScalar", loc);
        quant_ = Quant::Scalar, quantScalar_ = quantScalar;
    }
    __aicore__ inline void SetQuantVector(const GlobalTensor<uint64_t>& quantTensor, SAGE_LOC) {
        QuantTypes("SetQuantVector", loc);
        quant_ = Quant::Vector, quantVec_ = quantTensor;
    }
    __aicore__ inline void SetSubBlockIdx(uint8_t subBlockIdx) { subBlock_ = subBlockIdx; }
    __aicore__ inline uint8_t GetSubBlockIdx() { return subBlock_; }
    // The GM IterateNBatch writes C to (the UB-C path of IterateAll/GetTensorC needs none here, see top).
    template <class T>
    __aicore__ inline void SetWorkspace(__gm__ const T* addr, int size) {
        workspace_.SetGlobalBuffer(reinterpret_cast<__gm__ DstT*>(const_cast<T*>(addr)),
                                   uint64_t(size) * sizeof(T) / sizeof(DstT));
        cOffset_ = 0;
    }
    template <class T>
    __aicore__ inline void SetWorkspace(GlobalTensor<T>& addr) {
        workspace_.SetGlobalBuffer(reinterpret_cast<__gm__ DstT*>(addr.GetPhyAddr()),
                                   addr.GetSize() * sizeof(T) / sizeof(DstT));
        cOffset_ = 0;
    }
    __aicore__ inline void SetLocalWorkspace(const LocalTensor<uint8_t>&) {}  // 310P's ND->NZ buffer: unused on A2
    // What the CopyA1/CopyB1 callbacks receive as dataPtr and tilingPtr (the MatmulCallBackFunc page).
    template <class T>
    __aicore__ inline void SetSelfDefineData(T dataPtr) {
        if constexpr (std::is_convertible_v<T, uint64_t>) selfData_ = uint64_t(dataPtr);
    }
    __aicore__ inline void SetUserDefInfo(const uint64_t tilingPtr) { userInfo_ = tilingPtr; }

    // One base block (in the tiling's iterate order) into L0C; false when every block is done.
    // Iterate<false> (the asynchronous mode of the GetTensorC page) starts every block of the core
    // at once, into the SetWorkspace GM: each GetTensorC<false> then takes the next block in the
    // iterate order. The emulator computes a block when it is taken, the same numbers in the same
    // order. Called again while blocks are pending (a while (Iterate<false>()) loop), it says
    // whether any is left, and ends the round when none is.
    template <bool sync = true>
    __aicore__ inline bool Iterate(bool enPartialSum = false, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed);
        syncCalled_ = sync;
        sage::sim::touch(loc);
        Ready("Iterate", loc);
        OnlyIterateAll("Iterate", loc);
        if constexpr (!sync) return StartAsync(loc);
        if (iter_ < 0) Fence(loc);
        if (!Next()) return false;
        ComputeBlock(iter_, enPartialSum && computed_ == iter_, loc);
        computed_ = iter_++;
        return true;
    }
    // Iterate into the kernel's own L0C tensor (C_TYPE of TPosition::CO1, CubeFormat::NZ): the block
    // as Mmad leaves it, NZ with its rows rounded up to 16; enPartialSum adds onto what the tensor holds.
    template <bool sync = true, typename T>
    __aicore__ inline bool Iterate(bool enPartialSum, const LocalTensor<T>& localCmatrix, SAGE_LOC) {
        static_assert(std::is_same_v<T, L0cT>, "Matmul Iterate into a CO1 tensor: its type is L0C's (float, or "
                                               "int32_t for int8_t A/B)");
        matmul_detail::CubeClient client(loc, kServed);
        syncCalled_ = sync;
        sage::sim::touch(loc);
        Ready("Iterate", loc, true);
        UserL0C(localCmatrix, enPartialSum, loc);
        if (iter_ < 0) Fence(loc);
        if (!Next()) return false;
        co1t_ = localCmatrix;
        ComputeBlock(iter_, enPartialSum, loc);
        computed_ = iter_++;
        return true;
    }
    template <bool sync = true>
    __aicore__ inline void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                                      bool enSequentialWrite = false, SAGE_LOC) {
        // an atomic write waits for the other cores before the call goes to the AIC, so a served call
        // is never parked halfway (its AIC's trace holds one call at a time)
        if (enAtomic || sage::sim::blk().atomic_op) matmul_detail::await_other_cores(loc);
        matmul_detail::CubeClient client(loc, kServed);
        sage::sim::touch(loc);
        OnlyIterateAll("GetTensorC", loc);
        matmul_detail::Atomic atomic(enAtomic, loc);
        if constexpr (!sync) TakeAsync(loc);
        uint32_t mb, nb;
        Block(computed_, mb, nb);
        const uint64_t at = enSequentialWrite ? 0 : COffset(mb, nb);
        WriteGm(gm[at], enSequentialWrite ? uint32_t(t_.baseN) : RowC(), loc);
    }
    template <bool sync = true>
    __aicore__ inline void GetTensorC(const LocalTensor<DstT>& co2Local, uint8_t enAtomic = 0,
                                      bool enSequentialWrite = false, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed);
        sage::sim::touch(loc);
        OnlyIterateAll("GetTensorC", loc);
        NoAtomic(enAtomic, loc);
        if constexpr (!sync) TakeAsync(loc);
        WriteUb(co2Local, uint32_t(t_.baseN), loc);
    }
    // The whole singleCoreM x singleCoreN C of this core, block by block.
    template <bool sync = true>
    __aicore__ inline void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                                      bool enSequentialWrite = false, bool waitIterateAll = false,
                                      bool fakeMsg = false, SAGE_LOC) {
        // an atomic write waits for the other cores before the call goes to the AIC, so a served call
        // is never parked halfway (its AIC's trace holds one call at a time)
        if (enAtomic || sage::sim::blk().atomic_op) matmul_detail::await_other_cores(loc);
        matmul_detail::CubeClient client(loc, kServed && !SharedPairServed());
        sage::sim::touch(loc);
        Ready("IterateAll", loc);
        syncCalled_ = sync;
        matmul_detail::Atomic atomic(enAtomic, loc);
        if (SharedPairServed()) return;
        PolicyLimits(loc);
        Fence(loc);
        for (int32_t i = 0; i < Blocks(); ++i) {
            if (Skipped(i)) continue;
            uint32_t mb, nb;
            Block(i, mb, nb);
            ComputeBlock(i, false, loc);
            WriteGm(gm[COffset(mb, nb)], RowC(), loc);
        }
        computed_ = -1, iter_ = -1;
    }
    template <bool sync = true>
    __aicore__ inline void IterateAll(const LocalTensor<DstT>& ubCmatrix, uint8_t enAtomic = 0, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed);
        syncCalled_ = sync;
        sage::sim::touch(loc);
        Ready("IterateAll", loc);
        NoAtomic(enAtomic, loc);
        const uint32_t stride = matmul_detail::up(uint32_t(singleN_), 32 / sizeof(DstT));
        PolicyLimits(loc);
        Fence(loc);
        for (int32_t i = 0; i < Blocks(); ++i) {
            if (Skipped(i)) continue;
            uint32_t mb, nb;
            Block(i, mb, nb);
            ComputeBlock(i, false, loc);
            WriteUb(ubCmatrix[uint32_t(mb * t_.baseM * stride + nb * t_.baseN)], stride, loc);
        }
        computed_ = -1, iter_ = -1;
    }
    template <bool isTurnOnDebug = true>
    __aicore__ inline MatrixOffset GetOffsetC() {
        uint32_t mb = 0, nb = 0;
        if (computed_ >= 0) Block(computed_, mb, nb);
        return {int32_t(mb * t_.baseM * orgKc_ + nb * t_.baseN), int32_t(mb * t_.baseM), int32_t(nb * t_.baseN),
                int32_t(RowsOf(mb)), int32_t(ColsOf(nb))};
    }
    // End: in a mixed kernel the device's client posts an end message, without waiting, after a
    // synchronous call (its isSyncGetC); the AIC serves it.
    __aicore__ inline void End(SAGE_LOC) {
        if (init_ && syncCalled_) matmul_detail::CubeClient client(loc, kServed && !SharedPairServed(), false);
        iter_ = -1, computed_ = -1, async_ = -1, syncCalled_ = false;
    }
    // The emulator computes at the call, so an asynchronous (sync = false) call is done when it returns.
    __aicore__ inline void WaitIterateAll() {}
    __aicore__ inline void WaitIterateBatch() {}

    // ---- batched matmul (docs/cube.md "Batch Matmul"): batchA A and batchB B matrices, broadcast to
    // max(batchA, batchB) C matrices of singleCoreM x singleCoreN, each by the block loop above.
    template <bool sync = true, bool waitIterateBatch = false>
    __aicore__ inline void IterateBatch(const GlobalTensor<DstT>& gm, uint32_t batchA, uint32_t batchB,
                                        bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                                        const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0,
                                        const bool enPartialSum = false, const uint8_t enAtomic = 0, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed);
        sage::sim::touch(loc);
        BatchReady("IterateBatch", batchA, batchB, enAtomic, loc);
        syncCalled_ = sync;
        OnlyIterateAll("IterateBatch", loc);
        RunBatches(gm, 0, batchA, batchB, matrixStrideA, matrixStrideB, loc);
    }
    // batchLoop IterateBatch calls over consecutive batches, C to the SetWorkspace GM in C's layout.
    template <bool sync = true, bool waitIterateBatch = false>
    __aicore__ inline void IterateNBatch(const uint32_t batchLoop, uint32_t batchA, uint32_t batchB,
                                         bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                                         const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0,
                                         const bool enPartialSum = false, const uint8_t enAtomic = 0, SAGE_LOC) {
        matmul_detail::CubeClient client(loc, kServed);
        sage::sim::touch(loc);
        BatchReady("IterateNBatch", batchA, batchB, enAtomic, loc);
        syncCalled_ = sync;
        OnlyIterateAll("IterateNBatch", loc);
        if (workspace_.addr_ == nullptr)
            sage::sim::fail("api-misuse", loc, "Matmul IterateNBatch before SetWorkspace, in block %d: it writes C to "
                            "the workspace SetWorkspace gives", sage::sim::blk().idx);
        for (uint32_t l = 0; l < batchLoop; ++l) RunBatches(workspace_, l, batchA, batchB, matrixStrideA, matrixStrideB, loc);
        cOffset_ = 0;
    }
    // After IterateNBatch: the next IterateBatch's C in the workspace.
    template <bool sync = true>
    __aicore__ inline GlobalTensor<DstT> GetBatchTensorC(uint32_t batchA, uint32_t batchB,
                                                         bool enSequentialWrite = false) {
        GlobalTensor<DstT> c = workspace_[cOffset_];
        cOffset_ += uint64_t(batchA > batchB ? batchA : batchB) * singleM_ * singleN_;
        return c;
    }
    template <bool sync = true>
    __aicore__ inline GlobalTensor<DstT> GetBatchC(uint32_t batchA, uint32_t batchB, bool enSequentialWrite = false) {
        return GetBatchTensorC<sync>(batchA, batchB, enSequentialWrite);
    }

private:
    TCubeTiling t_{};
    TPipe* pipe_ = nullptr;
    bool init_ = false;
    GlobalTensor<SrcT> a_;
    GlobalTensor<SrcBT> b_;
    GlobalTensor<BiasT> bias_;
    GlobalTensor<uint8_t> index_;  // SetSparseIndex
    TBuf<TPosition::B1> index1_;   // a sparse B's index fractals beside B in L1
    bool transA_ = A_TYPE::isTrans, transB_ = B_TYPE::isTrans, bias_on_ = false;
    int32_t orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, orgKc_ = 0;
    int32_t singleM_ = 0, singleN_ = 0, singleK_ = 0;
    int32_t batchA_ = 1, batchB_ = 1;
    int32_t iter_ = -1, computed_ = -1;
    int32_t async_ = -1;  // the next block GetTensorC<false> takes after Iterate<false>; -1: none started
    uint8_t subBlock_ = 0;
    bool l1_used_ = false, l0_used_ = false, l0c_used_ = false;
    // unit flags: the block in L0C was computed with them (its Fixpipe reads with 3); its flags are
    // still set (no Fixpipe read it); the last Fixpipe of this object cleared them (no FIX_M needed)
    bool ufBlock_ = false, ufPending_ = false, ufRead_ = false;
    TBuf<TPosition::A1> a1_;
    TBuf<TPosition::B1> b1_;
    TBuf<TPosition::A2> a2_;
    TBuf<TPosition::B2> b2_;
    LocalTensor<SrcT> a2s_, b2s_;  // L0A/L0B: the kernel-wide ones (SharedL0) or the pipe's (PipeShared)
    TBuf<TPosition::CO1> co1_;
    TBuf<TPosition::C1> bias1_;
    uint32_t bias_l1_need_ = 0;  // the L1 bias buffer's bytes when A1 and B1 left no room for it
    TBuf<TPosition::C2> bias2_;
    LocalTensor<L0cT> co1t_;      // where blocks are computed: the pipe's shared L0C or the kernel's CO1 tensor
    LocalTensor<BiasT> bias2t_;   // the bias in the BiasTable (PipeShared)
    uint32_t slotA_ = 0, slotB_ = 0;  // which of the base blocks (or K chunks) in L1 a block reads
    // A held in L1 over several blocks (full loads: copied whole at the round's first block;
    // nbuffer33: each slot when first needed), else streamed: each K chunk copied into the next of its
    // one or two slots.
    bool heldA_ = false, heldB_ = false;
    // Whether a held copy waits for every earlier load: nbuffer33's slots are refilled within a round
    // (each group of rows, each other column); full loads copy the whole matrix once a round, so only
    // the round's first held copy waits (for the last round's loads; MTE2 keeps its order).
    bool heldWait_ = kNBuffer33;
    // pipelining (docs/cube.md "The Matmul API"): the flags that free each L1 slot of a streamed A or
    // B, the L1 bias buffer, each L0A/L0B slot and the BiasTable; chunk and step counts pick the slots
    matmul_detail::SlotFlag l1FreeA_[2] = {{HardEvent::MTE1_MTE2, 0}, {HardEvent::MTE1_MTE2, 0}};
    matmul_detail::SlotFlag l1FreeB_[2] = {{HardEvent::MTE1_MTE2, 0}, {HardEvent::MTE1_MTE2, 0}};
    matmul_detail::SlotFlag biasL1Free_{HardEvent::MTE1_MTE2, 0};
    matmul_detail::SlotFlag l0Free_[2] = {{HardEvent::M_MTE1, 0}, {HardEvent::M_MTE1, 0}};
    matmul_detail::SlotFlag biasBtFree_{HardEvent::M_MTE1, 0};
    uint32_t chunkA_ = 0, chunkB_ = 0, l0Slot_ = 0, l0Steps_ = 0;
    bool fullA_ = false, fullB_ = false;  // full loads: A (B) copied to L1 this round
    int32_t lastBlock_ = 0x7fffffff;  // the block computed last: a block not after it starts a new round

    GlobalTensor<DstT> workspace_;
    uint64_t cOffset_ = 0;

    // ---- quantisation (SetQuantScalar/SetQuantVector)
    static constexpr QuantMode_t kQuant = matmul_detail::quant_mode<L0cT, DstT>();
    enum class Quant : uint8_t { None, Scalar, Vector };
    Quant quant_ = Quant::None;
    uint64_t quantScalar_ = 0;
    GlobalTensor<uint64_t> quantVec_;
    TBuf<TPosition::C1> quant1_;  // a block's baseN words in L1 (the device's copy on their way to the FB)
    bool quant_used_ = false;
    uint32_t curN0_ = 0;  // the current block's first column
    uint64_t userInfo_ = 0, selfData_ = 0;  // SetUserDefInfo, SetSelfDefineData
    static constexpr bool kAInL1 = A_TYPE::pos == TPosition::TSCM;
    LocalTensor<SrcT> aL1_;     // A in TSCM (SetTensorA(LocalTensor))
    uint32_t chunkK0_ = 0, curMb_ = 0;
    bool aL1Set_ = false;
    __aicore__ inline void QuantTypes(const char* api, sage::sim::SrcLoc loc) const {
        sage::sim::touch(loc);
        if (kQuant == QuantMode_t::NoQuant)
            sage::sim::fail("api-misuse", loc, "Matmul %s with %s A/B and a %s C, in block %d: quantisation applies "
                            "to int8_t in with half or int8_t out, and half/bfloat16_t in with int8_t out",
                            api, sage::sim::dtype_name<SrcT>(), sage::sim::dtype_name<DstT>(), sage::sim::blk().idx);
    }
    // The block's per-column words, GM -> L1 (MTE2), for the Fixpipe's cbufWorkspace; -1 for none.
    __aicore__ inline int64_t QuantWords(sage::sim::SrcLoc loc) {
        if (quant_ != Quant::Vector) return -1;
        LocalTensor<uint64_t> q1 = quant1_.template Get<uint64_t>();
        if (quant_used_) matmul_detail::hand_off<HardEvent::FIX_MTE2>(loc);
        detail::gm_to_ub(q1, quantVec_[curN0_], 0, uint64_t(curN_) * 8, 0, "Matmul SetQuantVector", loc);
        sage::sim::trace_instr(detail::Pipe::MTE2, "DataCopy", "uint64_t", curN_, uint64_t(curN_) * 8, loc,
                               q1.range(curN_));
        matmul_detail::hand_off<HardEvent::MTE2_FIX>(loc);
        quant_used_ = true;
        return int64_t(q1.addr_);
    }

    // ---- batches
    __aicore__ inline void BatchReady(const char* api, uint32_t batchA, uint32_t batchB, uint8_t enAtomic,
                                      sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        Ready(api, loc);
        NoAtomic(enAtomic, loc);
        const uint32_t batchC = batchA > batchB ? batchA : batchB;
        if (batchA == 0 || batchB == 0 || batchC % batchA || batchC % batchB)
            fail("api-misuse", loc, "Matmul %s with batchA %u and batchB %u, in block %d: each must be positive and "
                 "divide the larger (the smaller is broadcast)", api, batchA, batchB, blk().idx);
        // Layouts other than NORMAL hold every batch of A and B in L1 at once (IterateBatch.md)
        if constexpr (A_TYPE::layout != LayoutMode::NORMAL && A_TYPE::layout != LayoutMode::NONE) {
            const uint64_t a = matmul_detail::up(singleM_, 16) * Bytes(matmul_detail::up(singleK_, kC0));
            const uint64_t b = matmul_detail::up(singleN_, 16) * BytesB(matmul_detail::up(singleK_, kC0));
            const uint64_t need = batchA * a + batchB * b;
            if (need > mem_bytes(Mem::L1))
                fail("cube-buffer-overflow", loc, "Matmul %s: %u A and %u B matrices need %llu bytes of L1 (fractal-"
                     "aligned), which holds %llu on %s, in block %d: pass fewer batches per call", api, batchA,
                     batchB, (unsigned long long)need, (unsigned long long)mem_bytes(Mem::L1), chip_name(), blk().idx);
        }
    }
    __aicore__ inline matmul_detail::LayoutInfo ALayout() const {
        return {t_.ALayoutInfoB, t_.ALayoutInfoS, t_.ALayoutInfoN, t_.ALayoutInfoG, t_.ALayoutInfoD};
    }
    __aicore__ inline matmul_detail::LayoutInfo BLayout() const {
        return {t_.BLayoutInfoB, t_.BLayoutInfoS, t_.BLayoutInfoN, t_.BLayoutInfoG, t_.BLayoutInfoD};
    }
    __aicore__ inline matmul_detail::LayoutInfo CLayout() const {
        return {t_.CLayoutInfoB, t_.CLayoutInfoS1, t_.CLayoutInfoN, t_.CLayoutInfoG, t_.CLayoutInfoS2};
    }
    // Batches loop * batchC .. of C (A's and B's by the broadcast), each through the block loop with
    // the operands' base and row strides pointed at that batch's matrices.
    __aicore__ inline void RunBatches(const GlobalTensor<DstT>& gm, uint32_t loop, uint32_t batchA, uint32_t batchB,
                                      uint32_t strideA, uint32_t strideB, sage::sim::SrcLoc loc) {
        using matmul_detail::batch_view;
        const uint32_t batchC = batchA > batchB ? batchA : batchB;
        const GlobalTensor<SrcT> a0 = a_;
        const GlobalTensor<SrcBT> b0 = b_;
        const GlobalTensor<BiasT> bias0 = bias_;
        const int32_t ka = orgKa_, kb = orgKb_, m = orgM_, n = orgN_, kc = orgKc_;
        Fence(loc);
        for (uint32_t j = 0; j < batchC; ++j) {
            const uint32_t c = loop * batchC + j;
            const auto va = batch_view(A_TYPE::layout, ALayout(), loop * batchA + j / (batchC / batchA),
                                       uint32_t(transA_ ? ka : m), uint32_t(transA_ ? m : ka), strideA);
            const auto vb = batch_view(B_TYPE::layout, BLayout(), loop * batchB + j / (batchC / batchB),
                                       uint32_t(transB_ ? n : kb), uint32_t(transB_ ? kb : n), strideB);
            const auto vc = batch_view(C_TYPE::layout, CLayout(), c, uint32_t(m), uint32_t(kc), 0);
            a_ = a0[va.offset], b_ = b0[vb.offset];
            (transA_ ? orgM_ : orgKa_) = int32_t(va.stride);
            (transB_ ? orgKb_ : orgN_) = int32_t(vb.stride);
            orgKc_ = int32_t(vc.stride);
            if (bias_on_ && kCfg.isBiasBatch) bias_ = bias0[uint64_t(c) * singleN_];
            for (int32_t i = 0; i < Blocks(); ++i) {
                uint32_t mb, nb;
                Block(i, mb, nb);
                ComputeBlock(i, false, loc);
                WriteGm(gm[vc.offset + uint64_t(mb) * t_.baseM * RowC() + uint64_t(nb) * t_.baseN], RowC(), loc);
            }
            orgKa_ = ka, orgKb_ = kb, orgM_ = m, orgN_ = n, orgKc_ = kc;
        }
        a_ = a0, b_ = b0, bias_ = bias0;
        computed_ = -1, iter_ = -1;
    }

    // ---- the tiling and the buffers
    static constexpr bool kInt8 = kEs == 1 && !kInt4;
    // K of a base block must be whole squares where a transposing load needs them (int4b_t: 64 x 64),
    // and for a sparse B whole 32-byte fractals of its dense half.
    __aicore__ inline uint32_t KAlign() const {
        return kSparse || kInt4 ? 64 : kInt8 ? 32 : (kEs == 4 && !transB_) ? 16 : kC0;
    }
    // Whole fractals of N for B not transposed: int8 squares are 32 columns wide, int4b_t ones 64.
    static constexpr uint32_t kNAlign = kInt4 ? 64 : kInt8 ? 32 : 16;
    __aicore__ inline void TilingFault(const char* what, sage::sim::SrcLoc loc) const {
        sage::sim::fail("api-misuse", loc,
                        "Matmul Init with a TCubeTiling whose %s (baseM %d, baseN %d, baseK %d, stepKa %d, stepKb %d, "
                        "depthA1 %d, depthB1 %d), in block %d: fill it with matmul_tiling's GetTiling",
                        what, t_.baseM, t_.baseN, t_.baseK, t_.stepKa, t_.stepKb, t_.depthA1, t_.depthB1,
                        sage::sim::blk().idx);
    }
    __aicore__ inline void Overflow(const char* mem, uint64_t need, uint32_t have, const char* how,
                                    sage::sim::SrcLoc loc) const {
        sage::sim::fail("cube-buffer-overflow", loc,
                        "Matmul Init: the tiling needs %llu bytes of %s (%s), which holds %u on %s, in block %d: "
                        "lower baseM/baseN/baseK or depthA1/depthB1, or let GetTiling choose them",
                        (unsigned long long)need, mem, how, have, sage::sim::chip_name(), sage::sim::blk().idx);
    }
    __aicore__ inline void CheckTiling(sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        const auto& t = t_;
        if (t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 || t.stepKa <= 0 || t.stepKb <= 0 || t.depthA1 <= 0 ||
            t.depthB1 <= 0 || t.singleCoreM <= 0 || t.singleCoreN <= 0 || t.singleCoreK <= 0)
            TilingFault("base, step, depth and singleCore fields are not all positive", loc);
        if (t.baseM % 16 || t.baseN % kNAlign || t.baseK % (kInt8 ? 32 : kC0))
            TilingFault("base block is not whole fractals (baseM, baseN multiples of 16, baseK of 32 bytes)", loc);
        if (t.stepKa > t.depthA1 || t.stepKb > t.depthB1) TilingFault("stepKa/stepKb exceed depthA1/depthB1", loc);
        const uint64_t bias = t.isBias ? uint64_t(t.baseN) * 4 : 0;
        const BufferBytes b = Buffers(t);
        // the L1 bias buffer comes after A1 and B1 and only counts once a bias is set (Allocate)
        const uint64_t l1 = uint64_t(b.a1) + b.b1 + b.index;
        if (l1 > mem_bytes(Mem::L1)) Overflow("L1", l1, mem_bytes(Mem::L1), "depthA1*baseM*baseK + depthB1*baseN*baseK", loc);
        const uint64_t l0a = b.a2, l0b = b.b2;
        if (l0a > mem_bytes(Mem::L0A)) Overflow("L0A", l0a, mem_bytes(Mem::L0A), "dbL0A*baseM*baseK", loc);
        if (l0b > mem_bytes(Mem::L0B)) Overflow("L0B", l0b, mem_bytes(Mem::L0B), "dbL0B*baseN*baseK", loc);
        const uint64_t l0c = uint64_t(t.dbL0C > 1 ? 2 : 1) * t.baseM * t.baseN * 4;
        if (l0c > mem_bytes(Mem::L0C)) Overflow("L0C", l0c, mem_bytes(Mem::L0C), "dbL0C*baseM*baseN*4", loc);
        if (bias > mem_bytes(Mem::BT)) Overflow("the BiasTable", bias, mem_bytes(Mem::BT), "baseN*4", loc);
    }
    // The bytes of each buffer a tiling takes (Init's contract, docs/cube.md "Buffers").
    struct BufferBytes {
        uint32_t a1, b1, a2, b2, co1, bias, quant, index;
        bool FitIn(const BufferBytes& o) const {
            return a1 <= o.a1 && b1 <= o.b1 && a2 <= o.a2 && b2 <= o.b2 && co1 <= o.co1 && bias <= o.bias &&
                   quant <= o.quant && index <= o.index;
        }
    };
    // A sparse B's index: 2 bits per dense value, baseK / 8 bytes a column.
    static BufferBytes Buffers(const TCubeTiling& t) {
        const uint32_t a = uint32_t(Bytes(uint32_t(t.baseK))), b = uint32_t(BytesB(uint32_t(t.baseK)));
        return {uint32_t(t.depthA1) * t.baseM * a, uint32_t(t.depthB1) * t.baseN * b,
                uint32_t(t.dbL0A > 1 ? 2 : 1) * t.baseM * a, uint32_t(t.dbL0B > 1 ? 2 : 1) * t.baseN * b,
                uint32_t(t.baseM) * t.baseN * 4, t.isBias ? matmul_detail::up(uint32_t(t.baseN) * 4, 64) : 0u,
                kQuant != QuantMode_t::NoQuant ? uint32_t(t.baseN) * 8 : 0u,
                kSparse ? uint32_t(t.depthB1) * t.baseN * t.baseK / 8 : 0u};
    }
    __aicore__ inline void Allocate(sage::sim::SrcLoc loc) {
        if (pipe_ == nullptr)
            sage::sim::fail("api-misuse", loc, "Matmul Init without a TPipe, in block %d: pass &pipe to "
                            "REGIST_MATMUL_OBJ (or Init), after the TPipe is declared", sage::sim::blk().idx);
        const BufferBytes b = Buffers(t_);
        pipe_->InitBuffer(a1_, b.a1, loc);
        pipe_->InitBuffer(b1_, b.b1, loc);
        if constexpr (kCfg.isA2B2Shared) {
            SharedL0(loc);
        } else {
            a2s_ = PipeShared<SrcT>(0, a2_, b.a2, loc);
            b2s_ = PipeShared<SrcT>(1, b2_, b.b2, loc);
        }
        if constexpr (!kCInL0C) co1t_ = PipeShared<L0cT>(2, co1_, b.co1, loc);
        if (b.index) pipe_->InitBuffer(index1_, b.index, loc);
        if (t_.isBias) {
            // The device's bias scheduler takes its L1 buffer after A1 and B1 and touches it only when
            // a bias is set: a tiling that fills L1 with depthA1/depthB1 runs while no bias is set
            // (quant_group_matmul_high_performance), so the overflow is reported at the first use.
            bias_l1_need_ = b.bias;
            if (pipe_->cube_room(sage::sim::Mem::L1) >= (b.bias + 31u) / 32u * 32u) {
                pipe_->InitBuffer(bias1_, b.bias, loc);
                bias_l1_need_ = 0;
            }
            bias2t_ = PipeShared<BiasT>(3, bias2_, b.bias, loc);
        }
        if (b.quant) pipe_->InitBuffer(quant1_, b.quant, loc);
    }
    // L0A, L0B, L0C or the BiasTable (`which` 0..3), shared with the pipe's other Matmul objects
    // (TPipe::MatmulShare): taken from the pipe only when the earlier objects' is smaller.
    template <class T, TPosition P>
    __aicore__ inline LocalTensor<T> PipeShared(int which, TBuf<P>& buf, uint32_t bytes, sage::sim::SrcLoc loc) {
        TPipe::MatmulShare& s = pipe_->matmul_share_[which];
        if (s.bytes < bytes) {
            pipe_->InitBuffer(buf, bytes, loc);
            s = {buf.template Get<T>().addr_ - sage::sim::mem_base(detail::pos_mem(P)), bytes, nullptr};
        }
        return LocalTensor<T>(P, s.addr, bytes / sizeof(T), loc);
    }
    __aicore__ inline bool SharesL0C() const {
        return !kCInL0C && pipe_->matmul_share_[2].addr + sage::sim::mem_base(sage::sim::Mem::L0C) == co1t_.addr_;
    }
    // Another Matmul object of the pipe wrote C through the shared L0C: its Fixpipe must finish
    // reading it before this object's Mmad writes it (as an isA2B2Shared object's loads wait for the
    // other object's Mmad reading the global L0A/L0B).
    __aicore__ inline bool OtherUsedL0C() const {
        return SharesL0C() && pipe_->matmul_share_[2].owner != nullptr && pipe_->matmul_share_[2].owner != this;
    }
    __aicore__ inline bool OwnsShare() const { return !SharesL0C() || pipe_->matmul_share_[2].owner == this; }
    // MatmulConfig.isA2B2Shared: L0A and L0B are managed globally, one double buffer (two 32 KB
    // halves each) every Matmul object of the kernel shares, so an A or B base block may not pass
    // 32 KB. Here each object's A2/B2 is the whole of L0A/L0B at address 0 (no allocator): the
    // objects use the same memory, as on the device; the steps run serially, so one half is in use.
    static constexpr uint32_t kSharedHalf = 32 * 1024;
    __aicore__ inline void SharedL0(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        const uint32_t a = uint32_t(t_.baseM) * uint32_t(Bytes(t_.baseK));
        const uint32_t b = uint32_t(t_.baseN) * uint32_t(BytesB(t_.baseK));
        if (a > kSharedHalf || b > kSharedHalf)
            fail("api-misuse", loc, "Matmul with isA2B2Shared: the A base block (baseM*baseK, %u bytes) and the B "
                 "base block (baseN*baseK, %u bytes) must each fit 32 KB, half of the shared L0A/L0B double "
                 "buffer, in block %d: lower baseK on the host (SetFixSplit)", a, b, blk().idx);
        a2s_ = LocalTensor<SrcT>(TPosition::A2, 0, sage::sim::bytes_elems<SrcT>(mem_bytes(Mem::L0A)), loc);
        b2s_ = LocalTensor<SrcT>(TPosition::B2, 0, sage::sim::bytes_elems<SrcT>(mem_bytes(Mem::L0B)), loc);
    }
    // The L0A/L0B tiles of the current K step (two slots with dbL0A = dbL0B = 2).
    __aicore__ inline LocalTensor<SrcT> A2() { return a2s_[l0Slot_ * uint32_t(t_.baseM) * t_.baseK]; }
    __aicore__ inline LocalTensor<SrcT> B2() { return b2s_[l0Slot_ * uint32_t(t_.baseN) * t_.baseK]; }
    // The L1 buffers at the base blocks (or K chunk) a block reads: slotA_/slotB_ of depthA1/depthB1.
    __aicore__ inline LocalTensor<SrcT> A1() {
        return a1_.template Get<SrcT>()[slotA_ * uint32_t(t_.baseM) * t_.stepKa * t_.baseK];
    }
    __aicore__ inline LocalTensor<SrcT> B1() {
        return b1_.template Get<SrcT>()[slotB_ * uint32_t(t_.baseN) * t_.stepKb * t_.baseK];
    }
    // Iterate<false>: the round of blocks GetTensorC<false> takes (see Iterate).
    __aicore__ inline bool StartAsync(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        if (async_ >= 0) {
            SkipAsync();
            if (async_ < Blocks()) return true;
            async_ = -1;
            return false;
        }
        if (workspace_.addr_ == nullptr)
            fail("api-misuse", loc, "Matmul Iterate<false> before SetWorkspace, in block %d: the asynchronous mode "
                 "keeps C's blocks in the workspace SetWorkspace gives, and it must be set before Iterate",
                 blk().idx);
        Fence(loc);
        async_ = 0;
        return Blocks() > 0;
    }
    // Past the blocks a triangle policy leaves out.
    __aicore__ inline void SkipAsync() {
        while (async_ < Blocks() && Skipped(async_)) ++async_;
    }
    // GetTensorC<false>: the next block of the round Iterate<false> started, computed now.
    __aicore__ inline void TakeAsync(sage::sim::SrcLoc loc) {
        using namespace sage::sim;
        if (async_ < 0) return;  // no round started: the block of the last synchronous Iterate
        SkipAsync();
        if (async_ >= Blocks())
            fail("api-misuse", loc, "Matmul GetTensorC<false> after all %d blocks of the Iterate<false> round were "
                 "taken, in block %d: call it singleCoreM/baseM x singleCoreN/baseN times (rounded up)",
                 Blocks(), blk().idx);
        ComputeBlock(async_, false, loc);
        computed_ = async_++;
    }
    // What this emulation covers, checked where the computation starts.
    __aicore__ inline void Ready(const char* api, sage::sim::SrcLoc loc, bool toL0C = false) const {
        using namespace sage::sim;
        if (!init_) fail("api-misuse", loc, "Matmul %s before Init (REGIST_MATMUL_OBJ), in block %d", api, blk().idx);
        if (kCInL0C && !toL0C)
            fail("api-misuse", loc, "Matmul %s with C in TPosition::CO1, in block %d: such a Matmul computes into "
                 "the kernel's L0C tensor, through Iterate(enPartialSum, l0cTensor) (the Iterate page)", api, blk().idx);
        if ((kAInL1 ? !aL1Set_ : a_.addr_ == nullptr) || b_.addr_ == nullptr)
            fail("api-misuse", loc, "Matmul %s before SetTensorA and SetTensorB, in block %d", api, blk().idx);
        // A in CubeFormat::VECTOR is one row of K (GEMV, M = 1): in GM the same bytes as an ND row.
        constexpr bool aTscmNz = kAInL1 && A_TYPE::format == CubeFormat::NZ;
        if constexpr ((A_TYPE::pos != TPosition::GM && !aTscmNz) || B_TYPE::pos != TPosition::GM ||
                      (A_TYPE::format != CubeFormat::ND && A_TYPE::format != CubeFormat::VECTOR && !aTscmNz) ||
                      (B_TYPE::format != CubeFormat::ND && !kBNz) ||
                      (C_TYPE::format != CubeFormat::ND && C_TYPE::format != CubeFormat::ND_ALIGN &&
                       !(kNzC && (C_TYPE::pos == TPosition::GM || kCInL0C))))
            fail("api-misuse", loc, "Matmul with A/B not ND in GM or C not ND is not emulated yet (in block %d): "
                 "sage-npu runs MatmulType<TPosition::GM, CubeFormat::ND, ...> for A and B and ND for C", blk().idx);
        if (kBNz && transB_)
            fail("api-misuse", loc, "Matmul %s with B in NZ transposed is not emulated yet (in block %d): an NZ B in "
                 "GM is K x N", api, blk().idx);
        if (kAInL1 && (transA_ || mem_at(aL1_.addr_) != Mem::L1))
            fail("api-misuse", loc, "Matmul %s with A in TSCM, in block %d: SetTensorA needs an L1 (TSCM) tensor "
                 "holding A in NZ, not transposed (a transposed A in TSCM is not emulated yet)", api, blk().idx);
        if (kInt4 && transA_)
            fail("dtype-unsupported", loc, "Matmul %s with an int4b_t A transposed, in block %d: on %s an int4b_t A "
                 "is not transposed (the SetTensorA page)", api, blk().idx, chip_name());
        if (kInt4 && (orgKa_ % 2 || orgKb_ % 2 || (!transB_ && orgN_ % 2)))
            fail("api-misuse", loc, "Matmul %s with int4b_t rows of an odd length (Ka %d, Kb %d, N %d), in block %d: "
                 "two int4b_t share a byte, so each GM row must hold whole bytes", api, orgKa_, orgKb_, orgN_,
                 blk().idx);
        if constexpr (kSparse) matmul_detail::sparse_ready(transB_, index_.addr_ != nullptr, singleM_, singleN_,
                                                           singleK_, loc);
        if (transA_ && kEs != 2)
            fail("api-misuse", loc, "Matmul with A transposed for %s is not emulated yet (in block %d): half and "
                 "bfloat16_t A may be transposed", dtype_name<SrcT>(), blk().idx);
        if (bias_on_ && !std::is_same_v<BiasT, L0cT>)
            fail("api-misuse", loc, "Matmul with a %s bias is not emulated yet (in block %d): the bias has L0C's "
                 "type (%s)", dtype_name<BiasT>(), blk().idx, dtype_name<L0cT>());
        if (bias_on_ && !t_.isBias)
            fail("api-misuse", loc, "Matmul with a bias, but the tiling has isBias 0, in block %d: call "
                 "EnableBias(true) on the host tiling so it reserves the bias buffers", blk().idx);
        if (bias_on_ && bias_l1_need_)
            fail("cube-buffer-overflow", loc, "Matmul %s with a bias, but the tiling's A1 and B1 buffers leave no room in "
                 "L1 for the bias buffer (%u bytes, after depthA1*baseM*baseK + depthB1*baseN*baseK) on %s, in block "
                 "%d: lower depthA1/depthB1 so L1 keeps baseN*4 bytes for the bias", api, bias_l1_need_, chip_name(),
                 blk().idx);
        if (kQuant != QuantMode_t::NoQuant && quant_ == Quant::None)
            fail("api-misuse", loc, "Matmul %s with %s A/B and a %s C before SetQuantScalar or SetQuantVector, in "
                 "block %d: the C leaves L0C through a quantisation, whose scale these set", api,
                 dtype_name<SrcT>(), dtype_name<DstT>(), blk().idx);
        if (t_.baseK % KAlign())
            fail("api-misuse", loc, "Matmul: baseK %d is not a multiple of %u, which %s B not transposed needs (in "
                 "block %d)", t_.baseK, KAlign(), dtype_name<SrcT>(), blk().idx);
    }
    // A and B both IBSHARE in a mixed kernel: the two AIVs of an AI Core issue the same matmul, and
    // the AIC computes it once from the shared L1 copies and writes C once (the Matmul usage page, IBSHARE:
    // only IterateAll to GM then). Here sub-block 0's call does the work, sub-block 1's returns.
    __aicore__ inline bool SharedPairServed() const {
        if constexpr (A_TYPE::ibShare && B_TYPE::ibShare)
            return sage::sim::coop().active && sage::sim::coop().mixed && sage::sim::blk().core == AIV &&
                   sage::sim::blk().sub_idx != 0;
        return false;
    }
    // Atomic writes are to GM (IterateAll's page: enAtomic for a GM C; a UB C takes none here).
    __aicore__ inline void NoAtomic(uint8_t enAtomic, sage::sim::SrcLoc loc) const {
        if (enAtomic)
            sage::sim::fail("api-misuse", loc, "Matmul with enAtomic %u to a UB tensor or in IterateBatch is not "
                            "emulated yet (in block %d): sage-npu accumulates into a C in GM (IterateAll and "
                            "GetTensorC)", unsigned(enAtomic), sage::sim::blk().idx);
    }

    // ---- the policies (the MatmulPolicy page) and C in the kernel's L0C (the Iterate page)
    __aicore__ inline bool Skipped(int32_t i) const {  // a triangle policy's blocks off its half of C
        if constexpr (kPolicy != MatmulPolicyKind::TrianUpper && kPolicy != MatmulPolicyKind::TrianLower) {
            return false;
        } else {
            uint32_t mb, nb;
            Block(i, mb, nb);
            return kPolicy == MatmulPolicyKind::TrianUpper ? mb > nb : mb < nb;
        }
    }
    // iter_ at the next block to compute (past skipped ones); false, and the walk reset, at the end.
    __aicore__ inline bool Next() {
        if (iter_ < 0) iter_ = 0;
        while (iter_ < Blocks() && Skipped(iter_)) ++iter_;
        if (iter_ < Blocks()) return true;
        iter_ = -1;
        return false;
    }
    __aicore__ inline void OnlyIterateAll(const char* api, sage::sim::SrcLoc loc) const {
        if (kNBuffer33)
            sage::sim::fail("api-misuse", loc, "Matmul %s with NBuffer33MatmulPolicy, in block %d: that policy gives "
                            "C through IterateAll only", api, sage::sim::blk().idx);
    }
    __aicore__ inline void PolicyLimits(sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        if (kPolicy != MatmulPolicyKind::Default && !kCfg.doNorm && !kCfg.doMultiDataLoad)
            fail("api-misuse", loc, "Matmul with %s and a MatmulConfig that is neither CFG_NORM's kind nor CFG_MDL's, "
                 "in block %d: the triangle policies run with those two, NBuffer33MatmulPolicy with CFG_MDL's",
                 PolicyName(), blk().idx);
        if constexpr (kNBuffer33) NBuffer33Limits(loc);
    }
    static constexpr const char* PolicyName() {
        return kNBuffer33 ? "NBuffer33MatmulPolicy" : kPolicy == MatmulPolicyKind::TrianUpper ? "TrianUpperMatmulPolicy"
               : kPolicy == MatmulPolicyKind::TrianLower ? "TrianLowerMatmulPolicy" : "MatmulPolicy";
    }
    // NBuffer33MatmulPolicy's limits (the MatmulPolicy page): MDL, A and B in GM, a pure cube kernel,
    // stepM, stepKa, stepKb <= 3 with stepKa = stepKb = ceil(singleCoreK / baseK), and A's stepM x stepKa
    // base blocks held in L1 at once (depthA1).
    __aicore__ inline void NBuffer33Limits(sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        const int b = blk().idx, kIter = (singleK_ + t_.baseK - 1) / t_.baseK;
        if (!kCfg.doMultiDataLoad)
            fail("api-misuse", loc, "Matmul with NBuffer33MatmulPolicy and a MatmulConfig other than MDL, in block "
                 "%d: the policy runs with CFG_MDL (GetMDLConfig) only", b);
        if (A_TYPE::pos != TPosition::GM || B_TYPE::pos != TPosition::GM)
            fail("api-misuse", loc, "Matmul with NBuffer33MatmulPolicy and A or B not in TPosition::GM, in block %d",
                 b);
        if (coop().active && coop().mixed)
            fail("api-misuse", loc, "Matmul with NBuffer33MatmulPolicy in a mixed (cube and vector) kernel, in block "
                 "%d: the policy runs in pure cube kernels only", b);
        if (t_.stepM > 3 || t_.stepKa != kIter || t_.stepKb != kIter || kIter > 3)
            fail("api-misuse", loc, "Matmul with NBuffer33MatmulPolicy and stepM %d, stepKa %d, stepKb %d for "
                 "singleCoreK %d in baseK %d, in block %d: the policy needs stepM <= 3 and stepKa = stepKb = "
                 "ceil(singleCoreK / baseK) <= 3 (ScheduleType::N_BUFFER_33 in SetMatmulConfigParams before "
                 "GetTiling gives such a tiling)", t_.stepM, t_.stepKa, t_.stepKb, singleK_, t_.baseK, b);
        if (t_.depthA1 < t_.stepM * t_.stepKa)
            fail("api-misuse", loc, "Matmul with NBuffer33MatmulPolicy and depthA1 %d, in block %d: the policy keeps "
                 "stepM x stepKa = %d base blocks of A in L1", t_.depthA1, b, t_.stepM * t_.stepKa);
    }
    template <class T>
    __aicore__ inline void UserL0C(const LocalTensor<T>& l0c, bool partial, sage::sim::SrcLoc loc) const {
        using namespace sage::sim;
        if (!kCInL0C || !kNzC)
            fail("api-misuse", loc, "Matmul Iterate into an L0C tensor needs C_TYPE MatmulType<TPosition::CO1, "
                 "CubeFormat::NZ, float or int32_t> (the Iterate page), in block %d", blk().idx);
        if (mem_at(l0c.addr_) != Mem::L0C)
            fail("api-misuse", loc, "Matmul Iterate into a %s tensor, in block %d: it computes into an L0C (CO1) "
                 "tensor", mem_name(mem_at(l0c.addr_)), blk().idx);
        if (partial && (singleM_ != t_.baseM || singleN_ != t_.baseN))
            fail("api-misuse", loc, "Matmul Iterate(enPartialSum = true, l0cTensor) with singleCoreM x singleCoreN "
                 "%d x %d and baseM x baseN %d x %d, in block %d: it accumulates in L0C only when they are equal",
                 singleM_, singleN_, t_.baseM, t_.baseN, blk().idx);
    }

    // ---- the block loop
    __aicore__ inline int32_t MIter() const { return (singleM_ + t_.baseM - 1) / t_.baseM; }
    __aicore__ inline int32_t NIter() const { return (singleN_ + t_.baseN - 1) / t_.baseN; }
    __aicore__ inline int32_t Blocks() const { return MIter() * NIter(); }
    __aicore__ inline bool OrderN() const {
        return kCfg.iterateOrder == IterateOrder::UNDEF ? t_.iterateOrder == 1
                                                        : kCfg.iterateOrder == IterateOrder::ORDER_N;
    }
    __aicore__ inline void Block(int32_t i, uint32_t& mb, uint32_t& nb) const {
        if (i < 0) i = 0;
        if constexpr (kNBuffer33) {  // groups of stepM block rows; in a group N outer, M inner
            const int32_t step = t_.stepM, g = i / (step * NIter()), r = i % (step * NIter());
            const int32_t rows = MIter() - g * step < step ? MIter() - g * step : step;
            mb = uint32_t(g * step + r % rows), nb = uint32_t(r / rows);
            return;
        }
        if (OrderN()) mb = uint32_t(i / NIter()), nb = uint32_t(i % NIter());
        else mb = uint32_t(i % MIter()), nb = uint32_t(i / MIter());
    }
    __aicore__ inline uint32_t RowsOf(uint32_t mb) const {
        return uint32_t(singleM_ - int32_t(mb) * t_.baseM < t_.baseM ? singleM_ - int32_t(mb) * t_.baseM : t_.baseM);
    }
    __aicore__ inline uint32_t ColsOf(uint32_t nb) const {
        return uint32_t(singleN_ - int32_t(nb) * t_.baseN < t_.baseN ? singleN_ - int32_t(nb) * t_.baseN : t_.baseN);
    }

    uint32_t curM_ = 0, curN_ = 0;
    // C block i into L0C: K in chunks of L1 (stepKa x baseK), each in baseK steps of L0.
    __aicore__ inline void ComputeBlock(int32_t i, bool partial, sage::sim::SrcLoc loc) {
        uint32_t mb, nb;
        Block(i, mb, nb);
        curM_ = RowsOf(mb), curN_ = ColsOf(nb), curN0_ = nb * uint32_t(t_.baseN), curMb_ = mb;
        // nbuffer33: a block row's A stays in L1 from the group's first column on, and a column's B
        // from the group's first row on (double-buffered when depthB1 holds two), so only those copy.
        bool loadA = !kNBuffer33 || nb == 0, loadB = !kNBuffer33 || mb % uint32_t(t_.stepM) == 0;
        heldA_ = heldB_ = kNBuffer33;
        if constexpr (kNBuffer33)
            slotA_ = mb % uint32_t(t_.stepM), slotB_ = t_.depthB1 >= 2 * t_.stepKb ? nb % 2 : 0;
        // A CopyA1/CopyB1 callback moves one base block a call (the MatmulCallBackFunc page): one baseK
        // slice of K per GM -> L1 copy then.
        const uint32_t steps = MM_CB::kCopyA1 || MM_CB::kCopyB1 ? 1u : uint32_t(t_.stepKa < t_.stepKb ? t_.stepKa : t_.stepKb);
        const uint32_t chunk = uint32_t(t_.baseK) * steps;
        if constexpr (kFullLoads) FullLoads(i, mb, nb, chunk, loadA, loadB);
        if constexpr (kL0ACache) {  // a new round (or batch: another A) loads A again
            if (i <= lastA2Block_) a2Kept_ = false;
            lastA2Block_ = i;
        }
        // MTE2 preload (MDL, the MatmulConfig page: 1 for A, 2 for B) takes the next block's copy into
        // the other slot; otherwise a block's first chunk goes to the first slot.
        if (!(kCfg.doMultiDataLoad && kCfg.doMTE2Preload == 1)) chunkA_ = 0;
        if (!(kCfg.doMultiDataLoad && kCfg.doMTE2Preload == 2)) chunkB_ = 0;
        UnitFlagsFor(partial, loc);
        if ((l0c_used_ && !(ufBlock_ && ufRead_)) || OtherUsedL0C()) matmul_detail::hand_off<HardEvent::FIX_M>(loc);
        bool first = !partial;
        const uint32_t chunks = (uint32_t(singleK_) + chunk - 1) / chunk, c0 = KStart(chunks);
        for (uint32_t j = 0; j < chunks; ++j) {
            const uint32_t k0 = (c0 + j) % chunks * chunk;
            const uint32_t kLen = uint32_t(singleK_) - k0 < chunk ? uint32_t(singleK_) - k0 : chunk;
            CopyChunk(mb, nb, k0, kLen, loadA, loadB, first, loc);
            for (uint32_t kk = 0; kk < kLen; kk += uint32_t(t_.baseK)) {
                const uint32_t kl = kLen - kk < uint32_t(t_.baseK) ? kLen - kk : uint32_t(t_.baseK);
                Step(kk, kLen, kl, first, j + 1 == chunks && kk + kl >= kLen, loc);
                first = false;
            }
            FreeChunk(loc);
        }
        if (!ufBlock_) matmul_detail::hand_off<HardEvent::M_FIX>(loc);
        ufPending_ = ufBlock_, ufRead_ = false;
        l0c_used_ = true;
        if (SharesL0C()) pipe_->matmul_share_[2].owner = this;
    }

    // The K chunk a block starts from. MatmulConfig.enableKdimReorderLoad (MDL; the MatmulConfig page and
    // the guide page on staggered K access) starts core i at chunk i mod the chunks of the larger step
    // and wraps around, so cores sharing an A or B read different addresses at once; L0C then sums K
    // in that order, as the device's does. Otherwise chunk 0.
    __aicore__ inline uint32_t KStart(uint32_t chunks) const {
        if constexpr (!(kCfg.doMultiDataLoad && kCfg.enableKdimReorderLoad)) {
            return 0;
        } else {
            const bool byA = t_.stepKa > t_.stepKb;
            const uint32_t big = uint32_t(byA ? t_.stepKa : t_.stepKb), small = uint32_t(byA ? t_.stepKb : t_.stepKa);
            const uint32_t factor = MM_CB::kCopyA1 || MM_CB::kCopyB1 ? big : big / small;  // chunks per larger step
            const uint32_t outer = (chunks + factor - 1) / factor;
            return uint32_t(GetBlockIdx()) % outer * factor % chunks;
        }
    }

    // The Matmul's own scalar work, one record per unit the cost model charges (Init, a K step of the
    // Mmad loop, a GM -> L1 copy; docs/cost-model.md "The Matmul API's scalar work"): on the device the
    // scalar unit computes each step's addresses and sizes from the tiling before it issues the step's
    // instructions, so this work holds back their issue. A fully constant tiling (constTiling_) folds much
    // of it at compile time; the record says which.
    __aicore__ inline void Scalar(const char* what, sage::sim::SrcLoc loc) const {
        sage::sim::trace_instr(sage::sim::Pipe::S, what, constTiling_ ? sage::sim::protocol::kStaticTiling : "",
                               0, 0, loc);
    }
    bool constTiling_ = false;  // Init had a fully constant tiling (a null TCubeTiling)
    bool syncCalled_ = false;   // a synchronous call since Init or End: End then posts its message

    // ---- the pipelining: L1 and L0 double buffers (docs/cube.md "The Matmul API")
    // A streamed A (B) has two L1 slots when depthA1 >= 2 x stepKa (depthB1 >= 2 x stepKb): the copy of
    // one K chunk then overlaps the loads and Mmads of the one before. A sparse B's index buffer is single.
    __aicore__ inline bool DbA1() const { return t_.depthA1 >= 2 * t_.stepKa; }
    __aicore__ inline bool DbB1() const { return !kSparse && t_.depthB1 >= 2 * t_.stepKb; }
    // L0A and L0B hold two base tiles each with dbL0A = dbL0B = 2 (the tiling's default): the loads of
    // one K step overlap the Mmad of the one before. The kernel-wide shared L0 (isA2B2Shared) and a
    // sparse B's index beside B in L0B keep one.
    __aicore__ inline bool DbL0() const {
        return t_.dbL0A > 1 && t_.dbL0B > 1 && !kCfg.isA2B2Shared && !kSparse;
    }
    // Each object's flags get their own ids (8 and up), so two objects' pending flags never pair with
    // each other in a trace, even where an AIC serves both AIVs' objects: the block's object count
    // times 4, plus the AIV's sub-block (2 on an AIC). Per block, so the same launch gives the same
    // trace every time (a program's repeated launches are read once: program.py launch_fingerprint).
    __aicore__ inline void NameFlags() {
        using namespace sage::sim;
        const int32_t side = blk().core == AIC ? 2 : blk().sub_idx % 2;
        const int32_t base = 8 + 8 * ((blk().next_event_id[1]++ % (1 << 20)) * 4 + side);
        l1FreeA_[0].id = base, l1FreeA_[1].id = base + 1, l1FreeB_[0].id = base + 2, l1FreeB_[1].id = base + 3;
        biasL1Free_.id = base + 4, l0Free_[0].id = base, l0Free_[1].id = base + 1, biasBtFree_.id = base + 2;
    }
    // Where a call starts a round: another Matmul object of the pipe, or this one's last call, may
    // have used the L1 and L0 buffers, so the first copies wait for every earlier load and the first
    // loads for every earlier Mmad; the slot flags still pending are taken then.
    __aicore__ inline void Fence(sage::sim::SrcLoc loc) {
        a2Kept_ = false;  // SetTensorA may have given another A
        for (matmul_detail::SlotFlag* f : {&l1FreeA_[0], &l1FreeA_[1], &l1FreeB_[0], &l1FreeB_[1], &biasL1Free_,
                                           &l0Free_[0], &l0Free_[1], &biasBtFree_})
            f->Wait(loc);
        if (l1_used_) matmul_detail::hand_off<HardEvent::MTE1_MTE2>(loc);
        if (l0_used_) matmul_detail::hand_off<HardEvent::M_MTE1>(loc);
    }
    // GM -> L1 for one K chunk: a streamed A or B into its next slot once MTE1 has read what that slot
    // held; a held one after every earlier load when heldWait_ says so.
    __aicore__ inline void CopyChunk(uint32_t mb, uint32_t nb, uint32_t k0, uint32_t kLen, bool loadA, bool loadB,
                                     bool first, sage::sim::SrcLoc loc) {
        if (heldWait_ && ((loadA && heldA_) || (loadB && heldB_))) {
            if (l1_used_) matmul_detail::hand_off<HardEvent::MTE1_MTE2>(loc);
            heldWait_ = kNBuffer33;
        }
        if constexpr (!kAInL1) {
            if (loadA) {
                if (!heldA_) slotA_ = DbA1() ? chunkA_ % 2 : 0, l1FreeA_[slotA_].Wait(loc);
                if (kFullLoads && heldA_) CopyWholeA(k0, kLen, loc);
                else CopyA1(mb, k0, kLen, loc);
            }
        }
        chunkK0_ = k0;
        if (loadB) {
            if (!heldB_) slotB_ = DbB1() ? chunkB_ % 2 : 0, l1FreeB_[slotB_].Wait(loc);
            if (kFullLoads && heldB_) CopyWholeB(k0, kLen, loc);
            else CopyB1(nb, k0, kLen, loc);
        }
        if (first && bias_on_) biasL1Free_.Wait(loc), CopyBias1(nb, loc);
        matmul_detail::hand_off<HardEvent::MTE2_MTE1>(loc);
        l1_used_ = true;
    }
    // After a chunk's last load: its streamed slots are free for the copies after it.
    __aicore__ inline void FreeChunk(sage::sim::SrcLoc loc) {
        if (!kAInL1 && !heldA_) l1FreeA_[slotA_].Set(loc), ++chunkA_;
        if (!heldB_) l1FreeB_[slotB_].Set(loc), ++chunkB_;
    }
    // One K step: L1 -> L0A/L0B into the next L0 slot once the Mmad that read it is done, then the Mmad.
    __aicore__ inline void Step(uint32_t kk, uint32_t kLen, uint32_t kl, bool first, bool last, sage::sim::SrcLoc loc) {
        Scalar(sage::sim::protocol::kMatmulKStep, loc);
        l0Slot_ = DbL0() ? l0Steps_++ % 2 : 0;
        if (kCfg.isA2B2Shared) matmul_detail::hand_off<HardEvent::M_MTE1>(loc);  // any object's Mmad may read it
        else l0Free_[l0Slot_].Wait(loc);
        {
            sage::sim::TracePause cached(kL0ACache && a2Kept_);
            LoadA2(kk, kLen, kl, loc);
        }
        a2Kept_ = kL0ACache;
        LoadB2(kk, kLen, kl, loc);
        const bool with_bias = first && bias_on_;
        if (with_bias) biasBtFree_.Wait(loc), LoadBias2(loc), biasL1Free_.Set(loc);
        matmul_detail::hand_off<HardEvent::MTE1_M>(loc);
        Mad(first, with_bias, kl, last, loc);
        if (!kCfg.isA2B2Shared) l0Free_[l0Slot_].Set(loc);
        if (with_bias) biasBtFree_.Set(loc);
        l0_used_ = true;
    }

    // The L0A cache (the matmul_l0cache sample's README): with a constant tiling whose singleCoreM is
    // baseM and singleCoreK baseK, A's one base tile stays in L0A and every block of the round
    // multiplies it with its own B, so A goes from L1 to L0A once a round. The emulator still loads
    // it into each L0 slot it uses (the data), without the trace record the device has no load for.
    static constexpr bool kL0ACache = kStaticTiling && !kAInL1 && kCfg.singleCoreM != 0 &&
                                      kCfg.singleCoreM == kCfg.basicM && kCfg.singleCoreK != 0 &&
                                      kCfg.singleCoreK == kCfg.basicK;
    bool a2Kept_ = false;  // the L0A cache holds this round's A
    int32_t lastA2Block_ = 0x7fffffff;  // the block computed last (as lastBlock_, for the L0A cache)

    // ---- full loads (MDL): the TCubeTiling page's 全载. A whose whole single-core part fits the L1
    // block its tiling caches (stepM x baseM >= singleCoreM and stepKa x baseK >= singleCoreK) is copied
    // whole at a round's first block, each base block into its own slot of A1, and read from there by every block that
    // uses it; B likewise with stepN, stepKb and B1. Half, bfloat16 and float only (their NZ blocks fit a
    // slot of baseM x stepKa x baseK elements), the copies of whole K only (one chunk), default policy.
    static constexpr bool kFullLoads = kCfg.doMultiDataLoad && kPolicy == MatmulPolicyKind::Default &&
                                       !MM_CB::kCopyA1 && !MM_CB::kCopyB1 && !kSparse && !kInt4 && kEs != 1;
    __aicore__ inline bool FullFits(int32_t step, int32_t base, int32_t single, int32_t stepK, int32_t depth,
                                    int32_t blocks, uint32_t chunk) const {
        const uint64_t slot = uint64_t(base) * stepK * t_.baseK;
        const uint64_t need = uint64_t(matmul_detail::up(uint32_t(base), 16)) * matmul_detail::up(uint32_t(singleK_), 16);
        return chunk >= uint32_t(singleK_) && step * base >= single && blocks <= 64 && need <= slot &&
               int64_t(blocks) * stepK <= depth;
    }
    __aicore__ inline void FullLoads(int32_t i, uint32_t mb, uint32_t nb, uint32_t chunk, bool& loadA, bool& loadB) {
        if (i <= lastBlock_) fullA_ = fullB_ = false, heldWait_ = true;  // a new round (or batch, or partial sum) copies again
        lastBlock_ = i;
        slotA_ = slotB_ = 0;
        if (FullFits(t_.stepM, t_.baseM, singleM_, t_.stepKa, t_.depthA1, MIter(), chunk)) {
            slotA_ = mb, loadA = !fullA_, fullA_ = true, heldA_ = true;
        }
        if (FullFits(t_.stepN, t_.baseN, singleN_, t_.stepKb, t_.depthB1, NIter(), chunk)) {
            slotB_ = nb, loadB = !fullB_, fullB_ = true, heldB_ = true;
        }
    }
    // A full load copies the whole matrix at the round's first block, every base block into its slot,
    // before the first load to L0 (the device moves A and B once each and the pipeline runs serially:
    // the NBuffer33 guide page, line 68; NBuffer33 splits A's copy by row group instead, line 109).
    // The device issues one copy (an Nd2NzParams ndNum of base blocks); here one per base block,
    // back to back: the same bytes on MTE2, each with the per-copy head (27 cycles).
    __aicore__ inline void CopyWholeA(uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc) {
        const uint32_t rows = curM_, slot = slotA_;
        Scalar(sage::sim::protocol::kMatmulCopy, loc);  // the device's one copy
        for (uint32_t m = 0; m < uint32_t(MIter()); ++m)
            slotA_ = m, curM_ = RowsOf(m), CopyA1(m, k0, kLen, loc, false);
        curM_ = rows, slotA_ = slot;
    }
    __aicore__ inline void CopyWholeB(uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc) {
        const uint32_t cols = curN_, slot = slotB_;
        Scalar(sage::sim::protocol::kMatmulCopy, loc);  // the device's one copy
        for (uint32_t n = 0; n < uint32_t(NIter()); ++n)
            slotB_ = n, curN_ = ColsOf(n), CopyB1(n, k0, kLen, loc, false);
        curN_ = cols, slotB_ = slot;
    }

    // ---- GM -> L1 (MTE2)
    // The ibshare cache (matmul_detail::shared_l1_hit) keeps the one matrix of A and B that is
    // IBSHARE on the ibshare norm template (with both IBSHARE the AIC computes the call once instead:
    // SharedPairServed); never a matrix a callback copies.
    static constexpr bool kShareA = A_TYPE::ibShare && !B_TYPE::ibShare && kCfg.doIBShareNorm && !MM_CB::kCopyA1;
    static constexpr bool kShareB = B_TYPE::ibShare && !A_TYPE::ibShare && kCfg.doIBShareNorm && !MM_CB::kCopyB1;
    static constexpr uint64_t TileKey(uint32_t k0, uint32_t mn0, uint32_t kLen) {
        return uint64_t(k0) << 40 | uint64_t(mn0) << 16 | kLen;
    }
    // `own`: the copy's scalar work is recorded here (a full load records its one copy itself); an
    // ibshare cache hit pauses the trace, so a copy not made records nothing.
    __aicore__ inline void CopyA1(uint32_t mb, uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc, bool own = true) {
        LocalTensor<SrcT> a1 = A1();
        const uint32_t m0 = mb * uint32_t(t_.baseM);
        sage::sim::TracePause shared(kShareA && matmul_detail::shared_l1_hit(
            a_.GetPhyAddr(), TileKey(k0, m0, kLen), curM_ == uint32_t(t_.baseM) && kLen % uint32_t(t_.baseK) == 0,
            int32_t(kLen) / t_.baseK, t_.depthA1));
        if (own) Scalar(sage::sim::protocol::kMatmulCopy, loc);
        if constexpr (MM_CB::kCopyA1) {  // block (mb, k block) of curM_ x kLen, A's layout in L1 the user's
            MM_CB::CopyA1Fn(a1.template ReinterpretCast<int8_t>(), a_.GetPhyAddr(), int(mb), int(k0 / t_.baseK),
                            int(curM_), int(kLen), userInfo_, selfData_);
            return;
        }
        if (!transA_) {  // M x K rows: NZ fractals (mi, kc) at kc * m16 + mi (int4b_t: dValue counts bytes)
            Nd2NzParams p(1, uint16_t(curM_), uint16_t(NdUnits(kLen)), 0, uint16_t(NdUnits(orgKa_)),
                          uint16_t(matmul_detail::up(curM_, 16)), 1, 0);
            DataCopy(a1, a_[uint64_t(m0) * orgKa_ + k0], p, loc);
        } else {  // K x M rows: NZ fractals (kr, mc) at mc * k16 + kr
            Nd2NzParams p(1, uint16_t(kLen), uint16_t(curM_), 0, uint16_t(orgM_),
                          uint16_t(matmul_detail::up(kLen, 16)), 1, 0);
            DataCopy(a1, a_[uint64_t(k0) * orgM_ + m0], p, loc);
        }
    }
    __aicore__ inline void CopyB1(uint32_t nb, uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc, bool own = true) {
        LocalTensor<SrcT> b1 = B1();
        const uint32_t n0 = nb * uint32_t(t_.baseN);
        sage::sim::TracePause shared(kShareB && matmul_detail::shared_l1_hit(
            b_.GetPhyAddr(), TileKey(k0, n0, kLen), curN_ == uint32_t(t_.baseN) && kLen % uint32_t(t_.baseK) == 0,
            int32_t(kLen) / t_.baseK, t_.depthB1));
        if (own) Scalar(sage::sim::protocol::kMatmulCopy, loc);
        if constexpr (MM_CB::kCopyB1) {  // block (k block, nb) of kLen x curN_
            MM_CB::CopyB1Fn(b1.template ReinterpretCast<int8_t>(), b_.GetPhyAddr(), int(k0 / t_.baseK), int(nb),
                            int(kLen), int(curN_), userInfo_, selfData_);
            return;
        }
        if constexpr (kSparse) {  // the dense half: N rows of K / 2, and the index fractals of its columns
            Nd2NzParams p(1, uint16_t(curN_), uint16_t(kLen / 2), 0, uint16_t(orgKb_ / 2),
                          uint16_t(matmul_detail::up(curN_, 16)), 1, 0);
            DataCopy(b1, b_[uint64_t(n0) * (orgKb_ / 2) + k0 / 2], p, loc);
            matmul_detail::copy_sparse_index(index1_.template Get<uint8_t>(), index_, n0, curN_, k0, kLen, orgN_,
                                             loc);
        } else if (transB_) {  // N x K rows: NZ fractals (nr, kc) at kc * n16 + nr, already L0B's order
            Nd2NzParams p(1, uint16_t(curN_), uint16_t(NdUnits(kLen)), 0, uint16_t(NdUnits(orgKb_)),
                          uint16_t(matmul_detail::up(curN_, 16)), 1, 0);
            DataCopy(b1, b_[uint64_t(n0) * orgKb_ + k0], p, loc);
        } else if constexpr (kBNz) {
            CopyB1Nz(n0, k0, kLen, loc);
        } else if (kEs != 4) {  // K x N rows: NZ fractals (kr, nc) at nc * kAl + kr, kAl K in whole squares
            Nd2NzParams p(1, uint16_t(kLen), uint16_t(NdUnits(curN_)), 0, uint16_t(NdUnits(orgN_)),
                          uint16_t(matmul_detail::up(kLen, kInt4 ? 64 : kInt8 ? 32 : 16)), 1, 0);
            DataCopy(b1, b_[uint64_t(k0) * orgN_ + n0], p, loc);
        } else {
            CopyB1Float(n0, k0, kLen, loc);
        }
    }
    // B in NZ in GM (K x N, the int8/half weight layout): C0-column blocks, each all of K (rounded up to
    // 16 rows) of C0-wide rows; SetTensorB points at the single-core block's first column block. A tile's
    // column blocks are kLen rows each, copied as they are to L1's (kr, nc) fractals: one 32-byte
    // block a row, gaps for the rest of K in GM and for the squares' rows in L1.
    static constexpr bool kBNz = B_TYPE::format == CubeFormat::NZ && kEs != 4 && !kInt4 && !kSparse;
    __aicore__ inline void CopyB1Nz(uint32_t n0, uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc) {
        const uint32_t c0 = 32 / kEs, kAl16 = matmul_detail::up(uint32_t(orgKb_), 16);
        const uint32_t cols = matmul_detail::up(curN_, c0) / c0, kRows = matmul_detail::up(kLen, kInt8 ? 32 : 16);
        DataCopyParams p(uint16_t(cols), uint16_t(kLen), uint16_t(kAl16 - kLen), uint16_t(kRows - kLen));
        DataCopy(B1(), b_[(uint64_t(n0 / c0) * kAl16 + k0) * c0], p, loc);
    }
    // float K x N: each 16-row group of K its own run of 8-column fractals, (g, c8) at g * n8 + c8,
    // so two neighbouring fractals are one 16 x 16 square for LoadDataWithTranspose.
    __aicore__ inline void CopyB1Float(uint32_t n0, uint32_t k0, uint32_t kLen, sage::sim::SrcLoc loc) {
        LocalTensor<SrcT> b1 = B1();
        const uint32_t n8 = matmul_detail::up(curN_, 16) / 8, full = kLen / 16, tail = kLen % 16;
        const uint64_t src = uint64_t(k0) * orgN_ + n0;
        if (full && 16u * uint32_t(orgN_) <= 65535u && n8 * kFrac <= 16384u) {  // Nd2NzParams' 16-bit strides
            Nd2NzParams p(uint16_t(full), 16, uint16_t(curN_), uint16_t(16 * orgN_), uint16_t(orgN_), 16, 1,
                          uint16_t(n8 * kFrac));
            DataCopy(b1, b_[src], p, loc);
        } else {
            for (uint32_t g = 0; g < full; ++g) {
                Nd2NzParams p(1, 16, uint16_t(curN_), 0, uint16_t(orgN_), 16, 1, 0);
                DataCopy(b1[g * n8 * kFrac], b_[src + uint64_t(g) * 16 * orgN_], p, loc);
            }
        }
        if (tail) {
            Nd2NzParams p(1, uint16_t(tail), uint16_t(curN_), 0, uint16_t(orgN_), 16, 1, 0);
            DataCopy(b1[full * n8 * kFrac], b_[src + uint64_t(full) * 16 * orgN_], p, loc);
        }
    }
    __aicore__ inline void CopyBias1(uint32_t nb, sage::sim::SrcLoc loc) {
        LocalTensor<BiasT> c1 = bias1_.template Get<BiasT>();
        Nd2NzParams p(1, 1, uint16_t(curN_), 0, uint16_t(curN_), 1, 1, 0);  // one row, zero-padded to 32 bytes
        DataCopy(c1, bias_[uint64_t(nb) * t_.baseN], p, loc);
    }

    // ---- L1 -> L0A/L0B (MTE1): the kl elements of K from kk of the chunk in L1
    __aicore__ inline uint32_t M16() const { return matmul_detail::up(curM_, 16) / 16; }
    __aicore__ inline uint32_t N16() const { return matmul_detail::up(curN_, transB_ ? 16 : kNAlign) / 16; }
    __aicore__ inline void LoadA2(uint32_t kk, uint32_t kLen, uint32_t kl, sage::sim::SrcLoc loc) {
        if constexpr (kAInL1) return LoadA2FromL1(kk, kl, loc);
        LocalTensor<SrcT> a1 = A1(), a2 = A2();
        const uint32_t m16 = M16(), k1 = (kl + kC0 - 1) / kC0, kf = kk / kC0;
        if (!transA_) {  // L0A: (mi, kc) at mi * k1 + kc
            for (uint32_t kc = 0; kc < k1; ++kc)
                LoadData(a2[kc * kFrac], a1, LoadData2DParams(uint16_t((kf + kc) * m16), uint8_t(m16), 1, 0,
                                                              uint16_t(k1 - 1), false, 0), loc);
            return;
        }
        const uint32_t kAl16 = matmul_detail::up(kLen, 16) / 16;  // 2-byte A^T: each 16 x 16 fractal transposed
        for (uint32_t mi = 0; mi < m16; ++mi)
            LoadData(a2[mi * k1 * kFrac], a1, LoadData2DParams(uint16_t(mi * kAl16 + kf), uint8_t(k1), 1, 0, 0,
                                                               true, 0), loc);
    }
    __aicore__ inline void LoadB2(uint32_t kk, uint32_t kLen, uint32_t kl, sage::sim::SrcLoc loc) {
        LocalTensor<SrcT> b1 = B1(), b2 = B2();
        const uint32_t n16 = N16(), k1 = (kl + kC0 - 1) / kC0, kf = kk / kC0;
        if constexpr (kSparse) {  // 64 of K a dense fractal row, the index with it
            return matmul_detail::load_sparse_b(b2, b1, index1_.template Get<uint8_t>(), kk / 64, (kl + 63) / 64, n16,
                                                loc);
        } else if (kInt4 && !transB_) {  // 64 x 64 squares (kr, nc) at nc * kAl64 + kr -> 4 ZN fractals each
            const uint32_t kAl64 = matmul_detail::up(kLen, 64) / 64;
            for (uint32_t kc = 0; kc < k1; ++kc)
                LoadDataWithTranspose(b2[kc * n16 * kFrac], b1,
                                      LoadData2dTransposeParams(uint16_t(kf + kc), uint8_t(n16 / 4), uint16_t(kAl64),
                                                                3, 0), loc);
        } else if (transB_) {  // already (kc, nr) order: one run of n16 fractals per k block
            for (uint32_t kc = 0; kc < k1; ++kc)
                LoadData(b2[kc * n16 * kFrac], b1, LoadData2DParams(uint16_t((kf + kc) * n16), uint8_t(n16), 1, 0, 0,
                                                                    false, 0), loc);
        } else if (kEs == 2) {  // (kr, nc) at nc * kAl16 + kr, each transposed into L0B's (kc, nc)
            const uint32_t kAl16 = matmul_detail::up(kLen, 16) / 16;
            for (uint32_t kc = 0; kc < k1; ++kc)
                LoadData(b2[kc * n16 * kFrac], b1, LoadData2DParams(uint16_t(kf + kc), uint8_t(n16),
                                                                    uint16_t(kAl16), 0, 0, true, 0), loc);
        } else if (kEs == 4) {  // squares (g, q) -> k blocks 2g and 2g + 1 of n block q
            const uint32_t g0 = kk / 16, groups = (kl + 15) / 16;
            for (uint32_t g = 0; g < groups; ++g)
                LoadDataWithTranspose(b2[2 * g * n16 * kFrac], b1,
                                      LoadData2dTransposeParams(uint16_t((g0 + g) * n16), uint8_t(n16), 1, 0,
                                                                uint16_t(n16 - 1)), loc);
        } else {  // int8: squares of two k-stacked fractals -> n blocks 2nc and 2nc + 1 of k block p
            const uint32_t kAl32 = matmul_detail::up(kLen, 32) / 32, p0 = kk / 32;
            for (uint32_t nc = 0; nc < n16 / 2; ++nc)
                LoadDataWithTranspose(b2[2 * nc * kFrac], b1,
                                      LoadData2dTransposeParams(uint16_t(nc * kAl32 + p0), uint8_t(k1), 1,
                                                                uint16_t(n16 - 1), 0), loc);
        }
    }
    // A staged in L1 as NZ over the core's whole M: fractal (mi, kc) at kc * up(singleCoreM, 16) / 16 + mi.
    __aicore__ inline void LoadA2FromL1(uint32_t kk, uint32_t kl, sage::sim::SrcLoc loc) {
        LocalTensor<SrcT> a2 = A2();
        const uint32_t m16 = M16(), k1 = (kl + kC0 - 1) / kC0, kf = (chunkK0_ + kk) / kC0;
        const uint32_t rows16 = matmul_detail::up(uint32_t(singleM_), 16) / 16, m0 = curMb_ * uint32_t(t_.baseM) / 16;
        for (uint32_t kc = 0; kc < k1; ++kc)
            LoadData(a2[kc * kFrac], aL1_, LoadData2DParams(uint16_t((kf + kc) * rows16 + m0), uint8_t(m16), 1, 0,
                                                            uint16_t(k1 - 1), false, 0), loc);
    }
    // Mmad's n: int8 B transposed in squares fills whole 32-column pairs of n blocks
    __aicore__ inline uint32_t NMad() const { return (kInt8 || kInt4) && !transB_ ? N16() * 16 : curN_; }
    __aicore__ inline void LoadBias2(sage::sim::SrcLoc loc) {
        LocalTensor<BiasT> c1 = bias1_.template Get<BiasT>(), c2 = bias2t_;
        DataCopy(c2, c1, DataCopyParams(1, uint16_t((NMad() * 4 + 63) / 64), 0, 0), loc);  // 64-byte blocks
    }

    // ---- the multiply (M)
    __aicore__ inline void Mad(bool first, bool with_bias, uint32_t kl, bool last, sage::sim::SrcLoc loc) {
        LocalTensor<SrcT> a2 = A2(), b2 = B2();
        LocalTensor<L0cT> c = co1t_;
        MmadParams p;
        p.unitFlag = ufBlock_ ? (last ? 3 : 2) : 0;
        // m = 1 would be GEMV, which reads A as one ND row; the tile in L0A is NZ, so run 16 rows
        p.m = uint16_t(curM_ == 1 ? 16 : curM_);
        p.n = uint16_t(NMad());
        p.k = uint16_t(kl);
        p.cmatrixInitVal = first && !with_bias;
        p.cmatrixSource = false;
        // A bias of another type than L0C's never gets here (Ready refuses it at the call); the
        // constexpr keeps such a Matmul compiling when it adds no bias.
        if constexpr (kSparse) {  // the bias from the BiasTable (its C2 buffer starts it)
            p.cmatrixSource = with_bias;
            if (with_bias) matmul_detail::sparse_bias_at_start(bias2_.template Get<BiasT>(), loc);
            return MmadWithSparse(c, a2, b2, p, loc);
        }
        if constexpr (std::is_same_v<BiasT, L0cT>) {
            if (with_bias) return Mmad(c, a2, b2, bias2t_, p, loc);
        }
        Mmad(c, a2, b2, p, loc);
    }

    // ---- L0C -> C (FIX)
    // ND_ALIGN: C's rows padded to 32 bytes in GM, the padding columns written (zeros: B's and
    // the bias's padding in their last 32-byte block is zero-filled by the ND -> NZ copy).
    static constexpr bool kAlignC = C_TYPE::format == CubeFormat::ND_ALIGN;
    // C in NZ (CubeFormat::NZ, GM): column blocks of kNzW columns, each all of C's rows (M rounded up
    // to 16) of kNzW elements; 8 float columns with MatmulConfig.isEnableChannelSplit (the Fixpipe's
    // channel split), 32 for a 1-byte C, else 16.
    static constexpr bool kNzC = C_TYPE::format == CubeFormat::NZ;
    static constexpr uint32_t kNzW = sizeof(DstT) == 1 ? 32 : std::is_same_v<DstT, float> && kCfg.isEnableChannelSplit ? 8 : 16;
    __aicore__ inline uint32_t NzRows() const { return matmul_detail::up(uint32_t(orgM_), 16); }
    // Where block (mb, nb) of C starts, in elements.
    __aicore__ inline uint64_t COffset(uint32_t mb, uint32_t nb) const {
        if constexpr (kNzC) return uint64_t(nb) * t_.baseN / kNzW * NzRows() * kNzW + uint64_t(mb) * t_.baseM * kNzW;
        return uint64_t(mb) * t_.baseM * RowC() + uint64_t(nb) * t_.baseN;
    }
    __aicore__ inline uint32_t RowC() const {
        return kAlignC ? matmul_detail::up(uint32_t(orgKc_), 32 / sizeof(DstT)) : uint32_t(orgKc_);
    }
    __aicore__ inline FixpipeParamsV220 FixParams(uint32_t stride) const {
        const uint32_t cols = kAlignC ? matmul_detail::up(curN_, 32 / sizeof(DstT)) : curN_;
        FixpipeParamsV220 p(uint16_t(cols), uint16_t(curM_), uint16_t(M16() * 16), stride, kCfg.enableRelu);
        if constexpr (kNzC) p.dstStride = NzRows() * kNzW * sizeof(DstT) / 32, p.isChannelSplit = kCfg.isEnableChannelSplit;
        p.quantPre = matmul_detail::out_quant<DstT>();
        if (quant_ == Quant::Scalar) p.quantPre = kQuant, p.deqScalar = quantScalar_;
        if (quant_ == Quant::Vector) p.quantPre = detail::vector_mode(kQuant);
        p.unitFlag = ufBlock_ ? 3 : 0;
        return p;
    }
    // Whether this block's Mmads and Fixpipe use unit flags. A block computed with them and never
    // read still holds its flags: accumulating onto it (enPartialSum) is the case the UnitFlag
    // pages exclude (several Iterates, one GetTensorC). Otherwise the block starts from clear
    // flags: whatever set them (a block never read, another Matmul object's in a shared L0C, an
    // object whose call was refused) left data this block overwrites, as it would without them.
    __aicore__ inline void UnitFlagsFor(bool partial, sage::sim::SrcLoc loc) {
        if (ufPending_ && partial)
            sage::sim::fail("api-misuse", loc, "Matmul Iterate accumulating onto L0C (enPartialSum) over a block no "
                            "GetTensorC read, with MatmulConfig.enUnitFlag on, in block %d: several Iterates before "
                            "one GetTensorC are not supported with UnitFlag (the MatmulConfig and UnitFlag pages); "
                            "set enUnitFlag = false or get C after each Iterate", sage::sim::blk().idx);
        if (kUnitFlag) matmul_detail::clear_unit_flags(co1t_, loc);
        ufBlock_ = kUnitFlag;
        ufPending_ = false;
    }
    // After a Fixpipe with unit flags: the blocks of C it did not read (a tail's padding rows or
    // columns) keep their flags, so they are cleared as SetFixPipeConfig(l0c, true) does (the
    // UnitFlag page's reset after a partial read).
    __aicore__ inline void FixpipeRead(sage::sim::SrcLoc loc) {
        if (!ufBlock_) return;
        matmul_detail::clear_unit_flags(co1t_, loc);
        ufPending_ = false, ufRead_ = true;
    }
    __aicore__ inline void Computed(const char* api, sage::sim::SrcLoc loc) const {
        if (!l0c_used_ || curM_ == 0)
            sage::sim::fail("api-misuse", loc, "Matmul %s before an Iterate computed a block, in block %d", api,
                            sage::sim::blk().idx);
        if (!OwnsShare())
            sage::sim::fail("api-misuse", loc, "Matmul %s after another Matmul object computed, in block %d: the "
                            "objects of a TPipe share L0C (each holds data there only within its calls), so "
                            "the other's block overwrote this one's; get C before calling another object", api,
                            sage::sim::blk().idx);
    }
    __aicore__ inline void WriteGm(const GlobalTensor<DstT>& gm, uint32_t stride, sage::sim::SrcLoc loc) {
        Computed("GetTensorC", loc);
        if (sage::sim::blk().atomic_op) matmul_detail::await_other_cores(loc);
        const int64_t vec = QuantWords(loc);
        detail::fixpipe_to_gm(gm, co1t_, FixParams(stride), kNzC, vec, loc);
        FixpipeRead(loc);
    }
    __aicore__ inline void WriteUb(const LocalTensor<DstT>& ub, uint32_t stride, sage::sim::SrcLoc loc) {
        Computed("GetTensorC", loc);
        const int64_t vec = QuantWords(loc);
        matmul_detail::fixpipe_to_ub(ub, co1t_, FixParams(stride), loc, vec);
        FixpipeRead(loc);
    }
};

}  // namespace AscendC

namespace matmul = AscendC;
