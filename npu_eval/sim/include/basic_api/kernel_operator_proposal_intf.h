// Sorting (kernel_operator_proposal_intf.h), Atlas A2 (910B) forms:
//   Sort32   sort each group of 32 scores, descending, into (score, index) pairs
//   MrgSort  merge up to 4 sorted lists of pairs into one
//   Sort     Sort32, then (isFullSort) merge everything into one sorted list
//   Extract  split sorted pairs back into scores and indices; Concat; GetSortLen/GetSortOffset
//
// A sorted element is 8 bytes: float data holds [score: float][index: uint32]; half data
// holds [score: half][2 bytes, written 0][index: uint32], so one element is 2 floats or 4 halves
// (GetSortLen). Equal scores keep their input order (earlier element, then lower list first);
// NaN scores sort before every number (an assumption: the hardware's NaN order is not
// documented).
#pragma once

#include <algorithm>
#include <vector>

#include "../sage_sim/vec.h"

namespace AscendC {

constexpr int32_t MRG_SORT_ELEMENT_LEN = 4;

struct MrgSort4Info {
    uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint8_t repeatTimes = 1;
    __aicore__ MrgSort4Info() {}
    __aicore__ MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], const bool ifExhaustedSuspensionIn,
                            const uint16_t validBitIn, const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn), repeatTimes(uint8_t(repeatTimesIn)) {
        for (int32_t i = 0; i < MRG_SORT_ELEMENT_LEN; ++i) elementLengths[i] = elementLengthsIn[i];
    }
};

template <typename T>
struct MrgSortSrcList {
    __aicore__ MrgSortSrcList() {}
    __aicore__ MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                              const LocalTensor<T>& src4In)
        : src1(src1In[0]), src2(src2In[0]), src3(src3In[0]), src4(src4In[0]) {}
    LocalTensor<T> src1;
    LocalTensor<T> src2;
    LocalTensor<T> src3;
    LocalTensor<T> src4;
};

#define SAGE_SORT_OK (::sage::sim::one_of<T, half, float>())

namespace detail {

struct SortElem {
    float score;
    uint32_t index;
};

// Elements of T one sorted element takes.
template <typename T>
constexpr uint32_t sort_width() {
    return 8 / sizeof(T);
}

template <typename T>
inline SortElem load_elem(const T* p) {
    SortElem e;
    e.score = float(p[0]);
    memcpy(&e.index, reinterpret_cast<const uint8_t*>(p) + 4, 4);
    return e;
}
template <typename T>
inline void store_elem(T* p, const SortElem& e) {
    uint8_t* b = reinterpret_cast<uint8_t*>(p);
    if constexpr (sizeof(T) == 2) {
        T s = T(e.score);  // exact: the score came from a half
        memcpy(b, &s, 2);
        memset(b + 2, 0, 2);
    } else {
        memcpy(b, &e.score, 4);
    }
    memcpy(b + 4, &e.index, 4);
}

// Descending; NaN first.
inline bool sorts_before(float a, float b) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
    return a > b;
}

// The last MrgSort's exhausted-suspension counts (GetMrgSortResult reads the same register).
inline uint16_t* mrg_sort_result() {
    static uint16_t r[4] = {0, 0, 0, 0};
    return r;
}

template <typename T>
inline void sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   int32_t repeatTime, const char* api, sage::sim::SrcLoc loc) {
    using namespace sage::sim;
    if (repeatTime < 0 || repeatTime > 255) {
        fail("ub-out-of-bounds", loc, "%s with repeatTime %d, in block %d: it takes 0 to 255 repeats of 32 elements",
             api, repeatTime, blk().idx);
    }
    const uint64_t n = uint64_t(repeatTime) * 32;
    const uint64_t dn = n * sort_width<T>();
    vec_src(src0, api, n, loc);
    vec_src(src1, api, n, loc);
    vec_dst(dst, api, dn, loc);
    std::vector<SortElem> all(n);
    const T* s = src0.data();
    const uint32_t* idx = src1.data();
    for (uint64_t i = 0; i < n; ++i) all[i] = SortElem{float(s[i]), idx[i]};
    for (uint64_t r = 0; r < uint64_t(repeatTime); ++r) {
        std::stable_sort(all.begin() + r * 32, all.begin() + (r + 1) * 32,
                         [](const SortElem& a, const SortElem& b) { return sorts_before(a.score, b.score); });
    }
    T* d = dst.data();
    for (uint64_t i = 0; i < n; ++i) store_elem(d + i * sort_width<T>(), all[i]);
    ub_mark(dst.range(dn));
    trace_instr(Pipe::V, "Sort32", dtype_name<T>(), uint32_t(n), dn * sizeof(T), loc, dst.range(dn), src0.range(n),
                src1.range(n));
}

}  // namespace detail

// Sorts each run of 32 scores of src0 (descending) with their uint32 indices from src1.
template <typename T>
__aicore__ inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                              const int32_t repeatTime, SAGE_LOC) {
    SAGE_DTYPE_GATE("Sort32", T, SAGE_SORT_OK, "half, float")
    if constexpr (SAGE_SORT_OK) {
        sage::sim::touch(loc);
        detail::sort32(dst, src0, src1, repeatTime, "Sort32", loc);
    }
}

// Merges the lists validBit names (3: lists 1-2, 7: 1-3, 15: all four), elementLengths[i]
// sorted elements each. With repeatTimes > 1 repeat r merges the next group: every list and
// dst start r * (sum of the lengths) elements further. With ifExhaustedSuspension the merge
// stops when a list runs out (GetMrgSortResult then tells how much of each was taken).
template <typename T>
__aicore__ inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params,
                               SAGE_LOC) {
    SAGE_DTYPE_GATE("MrgSort", T, SAGE_SORT_OK, "half, float")
    if constexpr (SAGE_SORT_OK) {
        using namespace sage::sim;
        touch(loc);
        const char* api = "MrgSort";
        if (params.validBit != 3 && params.validBit != 7 && params.validBit != 15) {
            fail("ub-out-of-bounds", loc,
                 "MrgSort with validBit %u, in block %d: it must be 0b11, 0b111 or 0b1111 (two, three or four lists, "
                 "from src1 on)",
                 unsigned(params.validBit), blk().idx);
        }
        const int lists = params.validBit == 3 ? 2 : params.validBit == 7 ? 3 : 4;
        const LocalTensor<T>* srcs[4] = {&src.src1, &src.src2, &src.src3, &src.src4};
        constexpr uint32_t w = detail::sort_width<T>();
        uint64_t total = 0;
        for (int i = 0; i < lists; ++i) {
            if (params.elementLengths[i] > 4095) {
                fail("ub-out-of-bounds", loc, "MrgSort: elementLengths[%d] = %u, but a list holds at most 4095 "
                     "elements, in block %d", i, unsigned(params.elementLengths[i]), blk().idx);
            }
            total += params.elementLengths[i];
        }
        const uint32_t reps = params.repeatTimes;
        for (int i = 0; i < lists; ++i) {
            uint64_t need = ((reps ? reps - 1 : 0) * total + params.elementLengths[i]) * w;
            vec_src(*srcs[i], api, reps ? need : 0, loc);
        }
        vec_dst(dst, api, reps * total * w, loc);
        std::vector<detail::SortElem> out;
        uint16_t* taken_out = detail::mrg_sort_result();
        for (uint32_t r = 0; r < reps; ++r) {
            std::vector<detail::SortElem> part;
            uint32_t pos[4] = {0, 0, 0, 0};
            const T* base[4] = {};
            for (int i = 0; i < lists; ++i) base[i] = srcs[i]->data() + uint64_t(r) * total * w;
            for (;;) {
                int best = -1;
                detail::SortElem be{};
                bool exhausted = false;
                for (int i = 0; i < lists; ++i) {
                    if (pos[i] >= params.elementLengths[i]) {
                        exhausted = true;
                        continue;
                    }
                    detail::SortElem e = detail::load_elem(base[i] + uint64_t(pos[i]) * w);
                    if (best < 0 || detail::sorts_before(e.score, be.score)) best = i, be = e;
                }
                if (best < 0 || (params.ifExhaustedSuspension && exhausted)) break;
                part.push_back(be);
                ++pos[best];
            }
            for (int i = 0; i < 4; ++i) taken_out[i] = uint16_t(i < lists ? pos[i] : 0);
            out.insert(out.end(), part.begin(), part.end());
        }
        T* d = dst.data();
        for (size_t i = 0; i < out.size(); ++i) store_elem(d + i * w, out[i]);
        uint64_t dn = uint64_t(out.size()) * w;
        ub_mark(dst.range(dn));
        trace_instr(Pipe::V, api, dtype_name<T>(), uint32_t(out.size()), dn * sizeof(T), loc, dst.range(dn),
                    srcs[0]->range(total * w));
    }
}

// The list form: elementCountList and validBit as above, repeatTime repeats; with
// isExhaustedSuspension, sortedNum[i] gets how many elements of list i were merged.
template <typename T, bool isExhaustedSuspension = false>
__aicore__ inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList,
                               const uint16_t elementCountList[4], uint32_t sortedNum[4], uint16_t validBit,
                               const int32_t repeatTime, SAGE_LOC) {
    MrgSort4Info info(elementCountList, isExhaustedSuspension, validBit, uint16_t(repeatTime));
    MrgSort(dst, sortList, info, loc);
    if (isExhaustedSuspension) {
        for (int i = 0; i < 4; ++i) sortedNum[i] = detail::mrg_sort_result()[i];
    }
}

__aicore__ inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                                        uint16_t& mrgSortList4) {
    const uint16_t* r = detail::mrg_sort_result();
    mrgSortList1 = r[0];
    mrgSortList2 = r[1];
    mrgSortList3 = r[2];
    mrgSortList4 = r[3];
}

// Sort32 of repeatTime * 32 scores; with isFullSort the runs are then merged into one list (the
// device merges 4 at a time through tmp, which it overwrites).
template <typename T, bool isFullSort>
__aicore__ inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                            LocalTensor<T>& tmp, const int32_t repeatTime, SAGE_LOC) {
    SAGE_DTYPE_GATE("Sort", T, SAGE_SORT_OK, "half, float")
    if constexpr (SAGE_SORT_OK) {
        using namespace sage::sim;
        touch(loc);
        detail::sort32(dst, concat, index, repeatTime, "Sort", loc);
        if constexpr (isFullSort) {
            constexpr uint32_t w = detail::sort_width<T>();
            const uint64_t n = uint64_t(repeatTime) * 32;
            tmp.check("Sort (tmp)", n * w, loc);
            T* d = dst.data();
            std::vector<detail::SortElem> all(n);
            for (uint64_t i = 0; i < n; ++i) all[i] = detail::load_elem(d + i * w);
            std::stable_sort(all.begin(), all.end(), [](const detail::SortElem& a, const detail::SortElem& b) {
                return detail::sorts_before(a.score, b.score);
            });
            for (uint64_t i = 0; i < n; ++i) detail::store_elem(d + i * w, all[i]);
            memcpy(static_cast<void*>(tmp.data()), d, n * 8);
            ub_mark(tmp.range(n * w));
            // The merge rounds: log4 of the runs, each a pass over all elements.
            uint32_t rounds = 0;
            for (uint64_t q = uint64_t(repeatTime); q > 1; q = (q + 3) / 4) ++rounds;
            if (rounds)
                trace_instr(Pipe::V, "MrgSort", dtype_name<T>(), uint32_t(n * rounds), n * 8 * rounds, loc,
                            dst.range(n * w), tmp.range(n * w));
        }
    }
}

// Splits repeatTime * 32 sorted elements into their scores and their indices.
template <typename T>
__aicore__ inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex,
                               const LocalTensor<T>& sorted, const int32_t repeatTime, SAGE_LOC) {
    SAGE_DTYPE_GATE("Extract", T, SAGE_SORT_OK, "half, float")
    if constexpr (SAGE_SORT_OK) {
        using namespace sage::sim;
        touch(loc);
        const char* api = "Extract";
        if (repeatTime < 0 || repeatTime > 255) {
            fail("ub-out-of-bounds", loc, "Extract with repeatTime %d, in block %d: it takes 0 to 255", repeatTime,
                 blk().idx);
        }
        constexpr uint32_t w = detail::sort_width<T>();
        const uint64_t n = uint64_t(repeatTime) * 32;
        vec_src(sorted, api, n * w, loc);
        vec_dst(dstValue, api, n, loc);
        vec_dst(dstIndex, api, n, loc);
        std::vector<detail::SortElem> all(n);
        for (uint64_t i = 0; i < n; ++i) all[i] = detail::load_elem(sorted.data() + i * w);
        for (uint64_t i = 0; i < n; ++i) {
            memcpy(static_cast<void*>(dstValue.data() + i), sorted.data() + i * w, sizeof(T));
            dstIndex.data()[i] = all[i].index;
        }
        ub_mark(dstValue.range(n));
        ub_mark(dstIndex.range(n));
        trace_instr(Pipe::V, "GatherMask", dtype_name<T>(), uint32_t(n), n * 8, loc, dstValue.range(n),
                    sorted.range(n * w));
        trace_instr(Pipe::V, "GatherMask", "uint32", uint32_t(n), n * 8, loc, dstIndex.range(n), sorted.range(n * w));
    }
}

// On Atlas A2 the scores need no region-proposal packing: concat becomes src itself.
template <typename T>
__aicore__ inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                              const int32_t repeatTime, SAGE_LOC) {
    SAGE_DTYPE_GATE("Concat", T, SAGE_SORT_OK, "half, float")
    sage::sim::touch(loc);
    (void)tmp;
    (void)repeatTime;
    concat = src;
}

// Elements of T that elemCount sorted elements take, and where element elemOffset starts.
template <typename T>
__aicore__ inline uint32_t GetSortLen(const uint32_t elemCount) {
    SAGE_DTYPE_GATE("GetSortLen", T, SAGE_SORT_OK, "half, float")
    return elemCount * detail::sort_width<T>();
}
template <typename T>
__aicore__ inline uint32_t GetSortOffset(const uint32_t elemOffset) {
    SAGE_DTYPE_GATE("GetSortOffset", T, SAGE_SORT_OK, "half, float")
    return elemOffset * detail::sort_width<T>();
}

#undef SAGE_SORT_OK

}  // namespace AscendC
