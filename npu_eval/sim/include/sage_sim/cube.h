// The cube unit's memories and arithmetic. A block's local memory is one byte array: the Unified
// Buffer first, then L1, L0A, L0B, L0C, the BiasTable and the Fixpipe Buffer, each a window at its own base (sizes
// from the chip profile's SAGE_CHIP_* defines). A LocalTensor's address is its byte offset in
// that array, so the race checks, the written-bytes bookkeeping and the trace treat every memory
// alike, and two memories never overlap.
//
// The loops that move and multiply fractals (ND->NZ copies, LoadData, Mmad, Fixpipe) are plain
// functions on bytes here, SAGE_SIM_OUTLINE so a kernel build calls the prebuilt runtime object's
// copy, and compiled optimised whatever the kernel's own -O level (SAGE_SIM_HOT): a kernel's
// templates only check the parameters and call them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dtypes.h"
#include "runtime.h"

#ifndef SAGE_CHIP_L1_BYTES
#define SAGE_CHIP_L1_BYTES (512 * 1024)
#endif
#ifndef SAGE_CHIP_L0A_BYTES
#define SAGE_CHIP_L0A_BYTES (64 * 1024)
#endif
#ifndef SAGE_CHIP_L0B_BYTES
#define SAGE_CHIP_L0B_BYTES (64 * 1024)
#endif
#ifndef SAGE_CHIP_L0C_BYTES
#define SAGE_CHIP_L0C_BYTES (128 * 1024)
#endif
#ifndef SAGE_CHIP_BT_BYTES
#define SAGE_CHIP_BT_BYTES 1024
#endif
#ifndef SAGE_CHIP_FB_BYTES
#define SAGE_CHIP_FB_BYTES 2048
#endif

namespace sage {
namespace sim {

// IDX is the cube's own buffer for the 4:2 sparse index LoadDataWithSparse loads and
// MmadWithSparse reads: a quarter of L0B (the LoadDataWithSparse page), no TPosition, so no
// tensor lives in it; a window of the array so the written-bytes and missing-sync checks cover it.
enum class Mem : uint8_t { UB, L1, L0A, L0B, L0C, BT, FB, IDX, Count };

inline const char* mem_name(Mem m) {
    static const char* names[] = {"Unified Buffer", "L1 Buffer", "L0A Buffer", "L0B Buffer", "L0C Buffer",
                                  "BiasTable Buffer", "Fixpipe Buffer", "sparse index buffer", "?"};
    return names[int(m)];
}
inline uint32_t mem_bytes(Mem m) {
    switch (m) {
        case Mem::UB: return uint32_t(rt().ub_bytes);
        case Mem::L1: return SAGE_CHIP_L1_BYTES;
        case Mem::L0A: return SAGE_CHIP_L0A_BYTES;
        case Mem::L0B: return SAGE_CHIP_L0B_BYTES;
        case Mem::L0C: return SAGE_CHIP_L0C_BYTES;
        case Mem::BT: return SAGE_CHIP_BT_BYTES;
        case Mem::FB: return SAGE_CHIP_FB_BYTES;
        case Mem::IDX: return SAGE_CHIP_L0B_BYTES / 4;
        default: return 0;
    }
}
// Where a memory's window starts in the block's local array (4 KB aligned, so a 1024-byte
// aligned L0C address is aligned in the array too).
// Every operand check asks, so the bases are kept, computed again only when the UB size changes
// (a manifest's ub_bytes).
inline uint32_t mem_base(Mem m) {
    static size_t ub = SIZE_MAX;
    static uint32_t bases[int(Mem::Count) + 1] = {};
    if (ub != rt().ub_bytes) {
        ub = rt().ub_bytes;
        for (int i = 0; i < int(Mem::Count); ++i) bases[i + 1] = bases[i] + (mem_bytes(Mem(i)) + 4095u) / 4096u * 4096u;
    }
    return bases[int(m)];
}
// The bytes of a block's local memory array: what the runners allocate per block.
inline size_t local_bytes() { return mem_base(Mem::Count); }
// The memory an address of the local array lies in.
inline Mem mem_at(uint32_t addr) {
    for (int i = int(Mem::Count) - 1; i > 0; --i)
        if (addr >= mem_base(Mem(i))) return Mem(i);
    return Mem::UB;
}

// The element types the cube unit reads and writes.
enum class CubeType : uint8_t { F16, BF16, F32, S8, U8, S32, S4 };
// Bits of one element: a fractal row holds 256 bits of k (16 half, 32 int8, 64 int4b_t).
inline uint32_t cube_bits(CubeType t) {
    return t == CubeType::S4 ? 4 : t == CubeType::F32 || t == CubeType::S32 ? 32 : t == CubeType::S8 || t == CubeType::U8 ? 8 : 16;
}
inline bool cube_integer(CubeType t) { return t == CubeType::S8 || t == CubeType::U8 || t == CubeType::S4; }

inline float cube_load(const uint8_t* p, CubeType t) {
    switch (t) {
        case CubeType::F16: { uint16_t h; memcpy(&h, p, 2); return half_bits_to_float(h); }
        case CubeType::BF16: { uint16_t h; memcpy(&h, p, 2); return bf16_bits_to_float(h); }
        case CubeType::F32: { float f; memcpy(&f, p, 4); return f; }
        case CubeType::S8: return float(int8_t(*p));
        case CubeType::U8: return float(*p);
        case CubeType::S32: { int32_t v; memcpy(&v, p, 4); return float(v); }
        case CubeType::S4: return float(int8_t(uint8_t(*p << 4)) >> 4);  // the low nibble (element 2i)
    }
    return 0.0f;
}

// GM ND -> L1 NZ (DataCopy with Nd2NzParams): each row's dValue elements cut into 32-byte C0
// blocks, block c of row r of matrix i at dst + i*dstNzMatrixStride elements +
// (c*dstNzC0Stride + r*dstNzNStride) * 32 bytes; a short last block is zero-filled. Source bytes
// at or past `readable` (a ragged last ND matrix running off its GM buffer) are not ours to read:
// they land as 0xFF (NaN for float/half) and stay unwritten in L1, as garbage does on the device.
struct Nd2Nz {
    uint32_t esize, ndNum, nValue, dValue;
    uint64_t srcNdMatrixStride, srcDValue;
    uint32_t dstNzC0Stride, dstNzNStride;
    uint64_t dstNzMatrixStride;
    uint64_t readable;
};
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_nd2nz(uint8_t* local, uint8_t* init, uint32_t dst, const uint8_t* src,
                                              const Nd2Nz& p) {
    const uint32_t c0 = 32 / p.esize, blocks = (p.dValue + c0 - 1) / c0;
    for (uint32_t nd = 0; nd < p.ndNum; ++nd) {
        uint64_t d = dst + nd * p.dstNzMatrixStride * p.esize;
        for (uint32_t r = 0; r < p.nValue; ++r) {
            for (uint32_t c = 0; c < blocks; ++c) {
                uint64_t o = d + (uint64_t(c) * p.dstNzC0Stride + uint64_t(r) * p.dstNzNStride) * 32;
                uint32_t n = (p.dValue - c * c0 < c0 ? p.dValue - c * c0 : c0) * p.esize;
                uint64_t at = (nd * p.srcNdMatrixStride + uint64_t(r) * p.srcDValue + uint64_t(c) * c0) * p.esize;
                uint32_t got = at >= p.readable ? 0 : uint32_t(std::min<uint64_t>(n, p.readable - at));
                memcpy(local + o, src + at, got);
                memset(local + o + got, 0xFF, n - got);
                memset(local + o + n, 0, 32 - n);
                memset(init + o, 1, got);
                memset(init + o + got, 0, n - got);
                memset(init + o + n, 1, 32 - n);
            }
        }
    }
}

// The source bounds of a DataCopy with Nd2NzParams: the bytes it may read from `src`. Every ND
// matrix's first row must lie in the GM buffer (a fault otherwise: a wrong stride or count). Rows
// after it that run past the end are a ragged last ND matrix (asc-devkit's load_data_l12l0
// scenario 14 cuts k = 70 rows into ndNum = 5 matrices of nValue = 16 to build a Zz layout): the
// device reads whatever lies beyond the buffer, into padding the Mmad may skip, so it is a warning.
SAGE_SIM_OUTLINE uint64_t nd2nz_src_bounds(const void* src, int home, uint64_t span_elems, uint32_t esize,
                                           uint32_t ndNum, uint64_t ndStride, uint32_t dValue, SrcLoc loc) {
    const auto* q = static_cast<const uint8_t*>(src);
    GmBuffer* b = gm_bounds(q, uint64_t(dValue) * esize, loc, false, "DataCopy", esize, home);
    gm_bounds(q + (ndNum - 1) * ndStride * esize, uint64_t(dValue) * esize, loc, false, "DataCopy", esize, home);
    const uint64_t readable = uint64_t(b->base + b->bytes - q), span = span_elems * esize;
    if (span <= readable) return span;
    report("gm-out-of-bounds", Severity::Warning, loc,
           "DataCopy with Nd2NzParams reads %llu elements at element %lld of GM buffer '%s', which holds %zu "
           "elements: the rows of its last ND matrix past element %zu (%llu elements) lie past the end, in "
           "block %d. The device reads whatever lies beyond the buffer into L1 (here: 0xFF, NaN as a float); "
           "harmless only if those rows are padding the Mmad skips. Copy the last matrix with nValue = the rows "
           "left to read only the buffer",
           (unsigned long long)span_elems, (long long)((q - b->base) / esize), b->name.c_str(), b->bytes / esize,
           b->bytes / esize, (unsigned long long)((span - readable) / esize), blk().idx);
    return readable;
}

// LoadData with LoadData2DParams: `repeat` 512-byte fractals, the j-th from src fractal
// startIndex + j*srcStride to dst fractal j*(1 + dstGap); `transpose` swaps a 16x16 fractal of
// 2-byte elements. The written-bytes flags move with the data (a tail's padding rows stay
// unwritten, and reading them later is not reported: the cube ignores them).
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_fractal_move(uint8_t* base, uint64_t dst, uint64_t src, bool transpose) {
    if (!transpose) {
        memmove(base + dst, base + src, 512);
        return;
    }
    uint16_t tmp[256];
    memcpy(tmp, base + src, 512);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) memcpy(base + dst + (c * 16 + r) * 2, &tmp[r * 16 + c], 2);
}
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_load2d(uint8_t* local, uint8_t* init, uint32_t dst, uint32_t src,
                                               uint32_t startIndex, uint32_t repeat, uint32_t srcStride,
                                               uint32_t dstGap, bool transpose) {
    for (uint32_t j = 0; j < repeat; ++j) {
        uint64_t s = src + (uint64_t(startIndex) + uint64_t(j) * srcStride) * 512;
        uint64_t d = dst + uint64_t(j) * (1 + dstGap) * 512;
        cube_fractal_move(local, d, s, transpose);
        cube_fractal_move(init, d, s, transpose);
    }
}

// LoadDataWithTranspose (LoadData2dTransposeParams): each repeat transposes one square of two
// consecutive 512-byte source fractals (int8: the two stacked, 32 x 32 bytes; float/int32: side by
// side, 16 x 16 elements; 2-byte types: one 16 x 16 fractal), into dst fractals at j*(1 + dstGap)
// fractals, the second dstFracGap fractals after the first's end. srcStride counts squares.
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_square_transpose(uint8_t* base, uint64_t dst, uint64_t dst2, uint64_t src,
                                                         uint32_t esize) {
    uint8_t tmp[1024];
    memcpy(tmp, base + src, 1024);
    if (esize == 1) {  // S[r][c] = tmp[r*32 + c], r, c < 32; dst row c of T: T[c][r]
        for (int c = 0; c < 32; ++c)
            for (int r = 0; r < 32; ++r) base[(c < 16 ? dst : dst2) + (c % 16) * 32 + r] = tmp[r * 32 + c];
        return;
    }
    // esize 4: S[r][c] = f0[r][c] (c < 8) or f1[r][c - 8]; T = S^T split the same way.
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) {
            const uint8_t* from = tmp + (c < 8 ? 0 : 512) + (r * 8 + c % 8) * 4;
            uint64_t to = (r < 8 ? dst : dst2) + (uint64_t(c) * 8 + r % 8) * 4;
            memcpy(base + to, from, 4);
        }
}
// int4b_t: four consecutive 16 x 64 fractals are a 64 x 64 square of nibbles (S[r][c] is nibble
// r*64 + c, element 2i in the low nibble of byte i); dst fractal f holds rows 16f..16f+15 of S
// transposed, fractal f at dst + f * step bytes (load_data_with_transpose.py's b4 model).
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_square_transpose4(uint8_t* base, uint64_t dst, uint64_t step, uint64_t src) {
    uint8_t tmp[2048];
    memcpy(tmp, base + src, 2048);
    for (uint32_t f = 0; f < 4; ++f) {
        uint8_t* out = base + dst + f * step;
        memset(out, 0, 512);
        for (uint32_t r = 0; r < 16; ++r)
            for (uint32_t c = 0; c < 64; ++c) {
                const uint32_t from = c * 64 + f * 16 + r, to = r * 64 + c;  // T[16f + r][c] = S[c][16f + r]
                const uint8_t v = (tmp[from / 2] >> (from % 2 * 4)) & 0xF;
                out[to / 2] = uint8_t(out[to / 2] | v << (to % 2 * 4));
            }
    }
}
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_load_transpose(uint8_t* local, uint8_t* init, uint32_t dst, uint32_t src,
                                                       uint32_t bits, uint32_t startIndex, uint32_t repeat,
                                                       uint32_t srcStride, uint32_t dstGap, uint32_t dstFracGap) {
    const uint32_t esize = bits / 8;
    for (uint32_t j = 0; j < repeat; ++j) {
        const uint64_t d = dst + uint64_t(j) * (1 + dstGap) * 512;
        if (bits == 4) {
            const uint64_t s = src + (uint64_t(startIndex) + uint64_t(j) * srcStride) * 2048;
            const uint64_t step = (1 + uint64_t(dstFracGap)) * 512;
            cube_square_transpose4(local, d, step, s);
            for (uint32_t f = 0; f < 4; ++f) memset(init + d + f * step, 1, 512);
            continue;
        }
        if (esize == 2) {
            const uint64_t s = src + (uint64_t(startIndex) + uint64_t(j) * srcStride) * 512;
            cube_fractal_move(local, d, s, true);
            cube_fractal_move(init, d, s, true);
            continue;
        }
        const uint64_t s = src + (uint64_t(startIndex) + uint64_t(j) * srcStride) * 1024;
        const uint64_t d2 = d + (1 + uint64_t(dstFracGap)) * 512;
        cube_square_transpose(local, d, d2, s, esize);
        memset(init + d, 1, 512);
        memset(init + d2, 1, 512);
    }
}

// LoadData with LoadData3DParamsV2 (img2col): the feature map in L1 is NC1HWC0 (N = 1, C0 = 32
// bytes), row R of the img2col matrix X is output position (R / Wo, R % Wo), column C is channel
// block C / c0 of kernel point (c1 outer, kh, kw inner) and element C % c0; a position the window
// puts in the padding reads padValue. The window rows mStart.. (mExt) and columns kStart.. (kExt)
// of X go to L0A as the ZZ fractals of X (to: 0) or of X transposed (1), or to L0B as the ZN
// fractals Mmad reads B from, X's rows being K (2), as the doc page and load3d.py lay them out.
struct Load3d {
    uint32_t bits, l1H, l1W, channelSize;  // bits of an element: 4 (int4b_t), 8, 16 or 32
    uint32_t padLeft, padRight, padTop, padBottom;
    uint32_t kStart, mStart, kExt, mExt;
    uint32_t strideW, strideH, filterW, filterH, dilW, dilH;
    uint32_t padBits;  // padValue's bits (int4b_t: the low nibble)
    int to;
};
// The output width of the window's walk (Wo), or 0 when the dilated kernel is wider than the map.
inline uint32_t load3d_wo(const Load3d& p) {
    const uint32_t span = (p.filterW - 1) * p.dilW + 1, wide = p.l1W + p.padLeft + p.padRight;
    return wide < span ? 0 : (wide - span) / p.strideW + 1;
}
// The element offset in dst of X's element (r, c), both counted from the window's start.
inline uint64_t load3d_dst(const Load3d& p, uint32_t r, uint32_t c) {
    const uint32_t c0 = 256 / p.bits;
    uint64_t frac, in;
    if (p.to == 0) {
        frac = uint64_t(r / 16) * ((p.kExt + c0 - 1) / c0) + c / c0, in = (r % 16) * c0 + c % c0;
    } else if (p.to == 1) {
        frac = uint64_t(c / 16) * ((p.mExt + c0 - 1) / c0) + r / c0, in = (c % 16) * c0 + r % c0;
    } else {
        frac = uint64_t(r / c0) * ((p.kExt + 15) / 16) + c / 16, in = (c % 16) * c0 + r % c0;
    }
    return frac * 16 * c0 + in;
}
// One element of `bits` from local element s_el (from byte base src, or the pad value) to element
// d_el from byte base dst; int4b_t moves a nibble (element 2i in a byte's low half). With a
// SetLoadDataBoundary bound, a read at L1 byte b >= bound reads byte b % bound instead.
inline void load3d_move(uint8_t* local, uint8_t* init, uint64_t dst, uint64_t d_el, const uint8_t* from,
                        uint64_t s_el, uint32_t bits) {
    if (bits != 4) {
        memcpy(local + dst + d_el * (bits / 8), from + s_el * (bits / 8), bits / 8);
        memset(init + dst + d_el * (bits / 8), 1, bits / 8);
        return;
    }
    const uint8_t v = uint8_t(from[s_el / 2] >> (s_el % 2 * 4)) & 0xF;
    uint8_t& out = local[dst + d_el / 2];
    out = uint8_t(d_el % 2 ? (out & 0x0F) | v << 4 : (out & 0xF0) | v);
    init[dst + d_el / 2] = 1;
}
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_load3d(uint8_t* local, uint8_t* init, uint32_t dst, uint32_t src,
                                               const Load3d& p, uint32_t l1_base, uint32_t bound) {
    const uint32_t c0 = 256 / p.bits, wo = load3d_wo(p), points = p.filterH * p.filterW;
    for (uint32_t r = 0; r < p.mExt; ++r) {
        const uint32_t R = p.mStart + r, ho = R / wo, wi = R % wo;
        for (uint32_t c = 0; c < p.kExt; ++c) {
            const uint32_t C = p.kStart + c, block = C / c0, c1 = block / points, pt = block % points;
            const int64_t h = int64_t(ho) * p.strideH + int64_t(pt / p.filterW) * p.dilH - p.padTop;
            const int64_t w = int64_t(wi) * p.strideW + int64_t(pt % p.filterW) * p.dilW - p.padLeft;
            const bool inside = h >= 0 && h < p.l1H && w >= 0 && w < p.l1W && c1 * c0 + C % c0 < p.channelSize;
            const uint64_t d_el = load3d_dst(p, r, c);
            if (!inside) {
                load3d_move(local, init, dst, d_el, reinterpret_cast<const uint8_t*>(&p.padBits), 0, p.bits);
                continue;
            }
            const uint64_t s_el = ((uint64_t(c1) * p.l1H + h) * p.l1W + w) * c0 + C % c0;
            uint64_t s = src + s_el * p.bits / 8;  // the byte holding it
            if (bound) s = l1_base + (s - l1_base) % bound;
            load3d_move(local, init, dst, d_el, local + s, p.bits == 4 ? s_el % 2 : 0, p.bits);
        }
    }
}

// Mmad: C (L0C, NZ: n-block major, 16x16 fractals of m rows x 16 n) = init + A * B, where A is
// L0A's m-block-major fractals of 16 m x k0 k and B is L0B's k-block-major fractals of 16 n x k0
// k (k0 = 32 bytes of the input type). Every product of two half or bfloat16 values is exact in
// float; the sum runs over k in order, in float (int32 for int8), each C element on its own.
// Rows and columns up to the next 16 are computed too (the fractals' padding, as the device
// fills them); k stops at k.
struct MmadShape {
    uint32_t m, n, k;
    CubeType in;          // A and B
    int init;             // 0: zero, 1: C's current value (accumulate), 2: the bias vector
    uint32_t bias;        // address of the bias (float or int32, n elements) when init == 2
    uint32_t k1;          // k fractals per A row block / B block row (kDirectionAlign may round it up)
};

// The inner product kernel cube_mmad runs. Auto takes the AVX2 one where the CPU has it; both
// give the same bits (each element's products added in k order, a multiply then an add, never
// fused), and tests force each in turn to check that (tests/test_cube_mmad_paths.py).
enum class MmadKernel : uint8_t { Auto, Scalar, Avx2 };
inline MmadKernel& cube_mmad_kernel() {
    static MmadKernel k = MmadKernel::Auto;
    return k;
}

// c (M x N, row-major, holding the initial values) += a (M x K) * b (K x N), one element at a
// time in k order. M and N are whole fractals (multiples of 16).
template <class T>
SAGE_SIM_HOT void mmad_rows_scalar(T* c, const T* a, const T* b, uint32_t M, uint32_t N, uint32_t K) {
    for (uint32_t i = 0; i < M; ++i) {
        T* cr = c + size_t(i) * N;
        for (uint32_t kk = 0; kk < K; ++kk) {
            const T av = a[size_t(i) * K + kk];
            const T* br = b + size_t(kk) * N;
            for (uint32_t j = 0; j < N; ++j) cr[j] = T(cr[j] + av * br[j]);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SAGE_SIM_MMAD_AVX2 1
// The same sums on 8-lane vectors: a block of 4 rows x 16 columns of C stays in registers while
// k runs, each lane doing exactly the scalar loop's multiply and add (no FMA: "no-fma" keeps the
// compiler from contracting them, whatever the build's flags).
template <class T>
__attribute__((target("avx2,no-fma"))) SAGE_SIM_HOT void mmad_rows_avx2(T* c, const T* a, const T* b, uint32_t M,
                                                                      uint32_t N, uint32_t K) {
    typedef T v8 __attribute__((vector_size(32), aligned(4)));
    typedef v8* at;  // 8 lanes at any float's address (aligned(4)); a cast, as a lambda would be -O0 here
    typedef const v8* cat;
    for (uint32_t i = 0; i < M; i += 4) {
        T *c0 = c + size_t(i) * N, *c1 = c0 + N, *c2 = c1 + N, *c3 = c2 + N;
        const T *a0 = a + size_t(i) * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
        for (uint32_t j = 0; j < N; j += 16) {
            v8 x0 = *at(c0 + j), y0 = *at(c0 + j + 8), x1 = *at(c1 + j), y1 = *at(c1 + j + 8);
            v8 x2 = *at(c2 + j), y2 = *at(c2 + j + 8), x3 = *at(c3 + j), y3 = *at(c3 + j + 8);
            for (uint32_t kk = 0; kk < K; ++kk) {
                const T* br = b + size_t(kk) * N + j;
                const v8 b0 = *cat(br), b1 = *cat(br + 8);
                x0 = x0 + a0[kk] * b0, y0 = y0 + a0[kk] * b1;
                x1 = x1 + a1[kk] * b0, y1 = y1 + a1[kk] * b1;
                x2 = x2 + a2[kk] * b0, y2 = y2 + a2[kk] * b1;
                x3 = x3 + a3[kk] * b0, y3 = y3 + a3[kk] * b1;
            }
            *at(c0 + j) = x0, *at(c0 + j + 8) = y0, *at(c1 + j) = x1, *at(c1 + j + 8) = y1;
            *at(c2 + j) = x2, *at(c2 + j + 8) = y2, *at(c3 + j) = x3, *at(c3 + j + 8) = y3;
        }
    }
}
#endif

template <class T>
SAGE_SIM_HOT void mmad_rows(T* c, const T* a, const T* b, uint32_t M, uint32_t N, uint32_t K) {
#ifdef SAGE_SIM_MMAD_AVX2
    MmadKernel k = cube_mmad_kernel();
    if (k == MmadKernel::Auto) k = __builtin_cpu_supports("avx2") ? MmadKernel::Avx2 : MmadKernel::Scalar;
    if (k == MmadKernel::Avx2) return mmad_rows_avx2(c, a, b, M, N, K);
#endif
    mmad_rows_scalar(c, a, b, M, N, K);
}

// n elements of type t from p into float (int32 for the integer types), the cube's reading.
SAGE_SIM_HOT inline void cube_unpack(float* dst, const uint8_t* p, uint32_t n, CubeType t) {
    switch (t) {
        case CubeType::F16:
            for (uint32_t x = 0; x < n; ++x) {
                _Float16 v;
                memcpy(&v, p + 2 * x, 2);
                dst[x] = float(v);
            }
            return;
        case CubeType::BF16:
            for (uint32_t x = 0; x < n; ++x) {
                uint32_t u = uint32_t(uint16_t(p[2 * x] | p[2 * x + 1] << 8)) << 16;
                memcpy(dst + x, &u, 4);
            }
            return;
        default: memcpy(dst, p, size_t(n) * 4); return;  // F32
    }
}
SAGE_SIM_HOT inline void cube_unpack(int32_t* dst, const uint8_t* p, uint32_t n, CubeType t) {
    if (t == CubeType::S4) {  // two a byte, element 2i in the low nibble, sign-extended from bit 3
        for (uint32_t x = 0; x < n; ++x) dst[x] = int32_t(int8_t(uint8_t(p[x / 2] >> (x % 2 * 4) << 4)) >> 4);
        return;
    }
    for (uint32_t x = 0; x < n; ++x) dst[x] = t == CubeType::U8 ? int32_t(p[x]) : int32_t(int8_t(p[x]));
}

// The buffers of one Mmad: A row-major M x K, B K x N, C M x N (float or int32).
template <class T>
struct MmadBuffers {
    std::vector<T> a, b, c;
    void reserve(size_t na, size_t nb, size_t nc) {
        if (a.size() < na) a.resize(na);
        if (b.size() < nb) b.resize(nb);
        if (c.size() < nc) c.resize(nc);
    }
};

// C's start (M x N row-major, M and N whole fractals): zero, the bias (one value per column, every
// row) or L0C's NZ fractals; and C written back to L0C as NZ.
template <class T>
SAGE_SIM_HOT void cube_c_start(const uint8_t* local, uint32_t c, const MmadShape& s, T* C) {
    const uint32_t m16 = (s.m + 15) / 16, n16 = (s.n + 15) / 16, M = m16 * 16, N = n16 * 16;
    for (uint32_t i = 0; i < M; ++i) {
        T* row = C + size_t(i) * N;
        if (s.init == 0) memset(row, 0, size_t(N) * sizeof(T));
        else if (s.init == 2) memcpy(row, local + s.bias, size_t(N) * 4);
        else
            for (uint32_t jb = 0; jb < n16; ++jb)
                memcpy(row + jb * 16, local + c + ((uint64_t(jb) * m16 + i / 16) * 256 + (i % 16) * 16) * 4, 64);
    }
}
template <class T>
SAGE_SIM_HOT void cube_c_store(uint8_t* local, uint32_t c, const MmadShape& s, const T* C) {
    const uint32_t m16 = (s.m + 15) / 16, n16 = (s.n + 15) / 16, M = m16 * 16, N = n16 * 16;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t jb = 0; jb < n16; ++jb)
            memcpy(local + c + ((uint64_t(jb) * m16 + i / 16) * 256 + (i % 16) * 16) * 4, C + size_t(i) * N + jb * 16, 64);
}

// cube_mmad for one accumulator type: unpack A and B, start C, multiply, write C back as NZ.
template <class T>
SAGE_SIM_HOT void cube_mmad_as(uint8_t* local, uint32_t c, uint32_t a, uint32_t b, const MmadShape& s) {
    const uint32_t bits = cube_bits(s.in);  // element offsets below become bytes as at * bits / 8
    const uint32_t k0 = 256 / bits, m16 = (s.m + 15) / 16, n16 = (s.n + 15) / 16, k1 = s.k1;
    const uint32_t M = m16 * 16, N = n16 * 16, K = s.k;
    static MmadBuffers<T> buf;
    buf.reserve(size_t(M) * K, size_t(K) * N, size_t(M) * N);
    T *A = buf.a.data(), *B = buf.b.data(), *C = buf.c.data();
    // A to row-major; m = 1 is GEMV: the hardware reads A's one row from L0A as ND (the Mmad doc
    // page); the other 15 rows of the fractal are not computed from anything and come out as 0.
    for (uint32_t i = 0; i < M; ++i) {
        T* row = A + size_t(i) * K;
        if (s.m == 1) {
            if (i == 0) cube_unpack(row, local + a, K, s.in);
            else memset(row, 0, size_t(K) * sizeof(T));
            continue;
        }
        for (uint32_t kb = 0; kb * k0 < K; ++kb) {
            const uint64_t at = (uint64_t(i / 16) * k1 + kb) * 16 * k0 + (i % 16) * k0;
            cube_unpack(row + kb * k0, local + a + at * bits / 8, K - kb * k0 < k0 ? K - kb * k0 : k0, s.in);
        }
    }
    // B (ZN: fractal (kk / k0, j / 16) holds 16 columns of k0 k each) to row-major K x N.
    T col[64];  // one fractal row: up to k0 (32 for int8, 64 for int4b_t) values of k
    for (uint32_t kb = 0; kb * k0 < K; ++kb) {
        const uint32_t kn = K - kb * k0 < k0 ? K - kb * k0 : k0;
        for (uint32_t j = 0; j < N; ++j) {
            const uint64_t at = (uint64_t(kb) * n16 + j / 16) * 16 * k0 + (j % 16) * k0;
            cube_unpack(col, local + b + at * bits / 8, kn, s.in);
            for (uint32_t x = 0; x < kn; ++x) B[size_t(kb * k0 + x) * N + j] = col[x];
        }
    }
    cube_c_start(local, c, s, C);
    mmad_rows(C, A, B, M, N, K);
    cube_c_store(local, c, s, C);
}

SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_mmad(uint8_t* local, uint8_t* init, uint32_t c, uint32_t a, uint32_t b,
                                             const MmadShape& s) {
    if (!rt().values) {}  // an estimate-only run: L0C keeps what it held, marked written below
    else if (cube_integer(s.in)) cube_mmad_as<int32_t>(local, c, a, b, s);
    else cube_mmad_as<float>(local, c, a, b, s);
    const uint32_t fractals = (s.m + 15) / 16 * ((s.n + 15) / 16);
    for (uint32_t f = 0; f < fractals; ++f) memset(init + c + uint64_t(f) * 1024, 1, 1024);
}

// MmadWithSparse (int8 x int8 -> int32, 4:2 structured sparsity; the MmadWithSparse page and the
// 4选2稀疏索引矩阵 section of 辅助矩阵分形格式详解). A is M x k in L0A as usual; B holds the kept
// half of each group of 4 k: dense row 2g + h (h = 0, 1) of group g, ZN in L0B like any int8 B.
// Its 2-bit index lives in the sparse index buffer at B's L0B offset / 4, fractal for fractal
// (16 n x 32 k, 128 bytes: n row r at byte r*8, k column c in bits 2*(c%4) of byte c/4). The
// first value of a pair multiplies A's element i0 of the group, the second element max(i1 + 1,
// i0) (the page's table: 2'b10 2'b00 selects element 2 twice). A's columns past k read as 0.
// Each dense value is added into a K x N B at the element it selects, so the sum is Mmad's.
// Returns the first index equal to 3 (outside {0, 1, 2}) as its dense row * 65536 + column, or -1.
SAGE_SIM_OUTLINE SAGE_SIM_HOT int64_t cube_mmad_sparse(uint8_t* local, uint8_t* init, uint32_t c, uint32_t a,
                                                        uint32_t b, uint32_t idx, const MmadShape& s) {
    const uint32_t m16 = (s.m + 15) / 16, n16 = (s.n + 15) / 16, M = m16 * 16, N = n16 * 16;
    const uint32_t K = (s.k + 3) / 4 * 4, Kd = K / 2, k1 = (s.k + 31) / 32;
    static MmadBuffers<int32_t> buf;
    buf.reserve(size_t(M) * K, size_t(K) * N, size_t(M) * N);
    int32_t *A = buf.a.data(), *B = buf.b.data(), *C = buf.c.data();
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t kk = 0; kk < K; ++kk)
            A[size_t(i) * K + kk] = kk < s.k ? int8_t(local[a + (uint64_t(i / 16) * k1 + kk / 32) * 512 + (i % 16) * 32 + kk % 32]) : 0;
    memset(B, 0, size_t(K) * N * sizeof(int32_t));
    int64_t bad = -1;
    for (uint32_t kd = 0; kd < Kd; ++kd)
        for (uint32_t j = 0; j < N; ++j) {
            const uint64_t frac = uint64_t(kd / 32) * n16 + j / 16, at = frac * 512 + (j % 16) * 32 + kd % 32;
            auto code = [&](uint32_t d) {  // the 2-bit index of dense row d, column j
                const uint64_t f = uint64_t(d / 32) * n16 + j / 16;
                return uint32_t(local[idx + f * 128 + (j % 16) * 8 + (d % 32) / 4] >> ((d % 4) * 2)) & 3u;
            };
            const uint32_t i0 = code(kd & ~1u), i1 = code(kd | 1u);
            if ((i0 == 3 || i1 == 3) && bad < 0) bad = int64_t(kd) * 65536 + j;
            const uint32_t pos = kd % 2 == 0 ? i0 : (i1 + 1 > i0 ? i1 + 1 : i0);
            if (pos < 4) B[size_t(kd / 2 * 4 + pos) * N + j] += int8_t(local[b + at]);
        }
    cube_c_start(local, c, s, C);
    mmad_rows(C, A, B, M, N, K);
    cube_c_store(local, c, s, C);
    for (uint32_t f = 0; f < m16 * n16; ++f) memset(init + c + uint64_t(f) * 1024, 1, 1024);
    return bad;
}

// LoadDataWithSparse: `repeat` B fractals from L1 fractal startIndex on to L0B (contiguous, no
// stride), and their 128-byte index fractals from the index tensor's fractal startIndex on to the
// sparse index buffer at the L0B offset / 4.
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_load_sparse(uint8_t* local, uint8_t* init, uint32_t dst, uint32_t src,
                                                    uint32_t idx_src, uint32_t idx_dst, uint32_t startIndex,
                                                    uint32_t repeat) {
    memmove(local + dst, local + src + uint64_t(startIndex) * 512, uint64_t(repeat) * 512);
    memmove(init + dst, init + src + uint64_t(startIndex) * 512, uint64_t(repeat) * 512);
    memmove(local + idx_dst, local + idx_src + uint64_t(startIndex) * 128, uint64_t(repeat) * 128);
    memmove(init + idx_dst, init + idx_src + uint64_t(startIndex) * 128, uint64_t(repeat) * 128);
}

// Fixpipe's conversions (QuantMode_t on the 910B): the value from L0C (float or int32), then the
// mode's cast (F322F16/F322BF16: ReLU first when asked, round to nearest even) or quantisation.
// A quantisation word (QUANT_PRE, the 随路量化 page's table for NPU arch 2201) is one uint64: the
// scale M1 in bits 31..13 (a float cut to 1 sign, 8 exponent and 10 mantissa bits), a shift N in
// bits 35..32 (b'0000 is 1, b'1111 is 16), the mode control bit 36 (int32 input shifted right by
// N and saturated to int16 first; REQ8/DEQF16 only), a signed 9-bit offset in bits 45..37 (the
// B8 modes) and the sign bit 46 (int8 when 1, uint8 when 0). The scalar modes read one word, the
// per-column (V) modes word j for column j. Non-negative values are scaled by M1, negative ones
// by M2: M1 again, or 0 with ReLU (the 随路量化与随路ReLU场景组合 page). The B8 result is
// saturated to [-256, 255], rounded to nearest even, offset, and saturated to int8 or uint8 (its
// gen_data_*.py algorithms); DEQF16 saturates to half's range, then rounds.
enum class FixQuant : uint8_t { None, F322F16, F322BF16, DEQF16, QF322B8, REQ8 };
struct FixpipeShape {
    uint32_t nSize, mSize, srcStride, dstStride, ndNum, srcNdStride, dstNdStride;
    bool nz;              // NZ output (dstStride in 32-byte blocks between n-blocks), else ND rows
    uint32_t w;           // NZ output column block: 16, 32 for int8, 8 for float with channel split
    bool relu;
    FixQuant quant;
    uint64_t word;        // the scalar quantisation word (deqScalar / SetFixpipePreQuantFlag)
    int64_t vec;          // per-column words: their local-array address, or -1 for the scalar word
    const uint8_t* words; // those words as read before the conversion (the device copies them to the
                          // Fixpipe Buffer first, so an output over them in L1 does not change them)
    CubeType src, dst;
};
inline uint32_t cube_size(CubeType t) {
    return t == CubeType::F16 || t == CubeType::BF16 ? 2 : (t == CubeType::S8 || t == CubeType::U8) ? 1 : 4;
}
// The float a quantisation word scales by: its bits 31..13.
inline float quant_scale(uint64_t word) {
    const uint32_t bits = uint32_t(word) & 0xFFFFE000u;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
inline bool quant_signed(uint64_t word) { return (word >> 46) & 1; }
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_fix_quant(float v, int32_t iv, const FixpipeShape& s, uint64_t word,
                                                  uint8_t* out) {
    float x = v;
    if (s.src == CubeType::S32) {
        int64_t i = iv;
        if ((word >> 36) & 1) {  // mode control bit: shift right by N, saturate to int16
            i >>= ((word >> 32) & 0xF) + 1;
            i = i < -32768 ? -32768 : i > 32767 ? 32767 : i;
        }
        x = float(i);
    }
    const float m1 = quant_scale(word);
    x *= x >= 0.0f || !s.relu ? m1 : 0.0f;
    if (s.quant == FixQuant::DEQF16) {
        x = x < -65504.0f ? -65504.0f : x > 65504.0f ? 65504.0f : x;
        const uint16_t h = float_to_half_bits(x);
        memcpy(out, &h, 2);
        return;
    }
    x = x < -256.0f ? -256.0f : x > 255.0f ? 255.0f : x;
    const int32_t offset = int32_t(uint32_t(word >> 37) << 23) >> 23;  // 9-bit two's complement
    int32_t r = int32_t(__builtin_rintf(x)) + offset;
    const bool sgn = quant_signed(word);
    const int32_t lo = sgn ? -128 : 0, hi = sgn ? 127 : 255;
    r = r < lo ? lo : r > hi ? hi : r;
    *out = uint8_t(r);
}
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_fix_value(float v, int32_t iv, const FixpipeShape& s, uint64_t word,
                                                  uint8_t* out) {
    if (s.quant == FixQuant::DEQF16 || s.quant == FixQuant::QF322B8 || s.quant == FixQuant::REQ8)
        return cube_fix_quant(v, iv, s, word, out);
    if (s.relu) {
        v = v < 0.0f ? 0.0f : v;
        iv = iv < 0 ? 0 : iv;
    }
    switch (s.dst) {
        case CubeType::F16: { uint16_t h = float_to_half_bits(v); memcpy(out, &h, 2); return; }
        case CubeType::BF16: { uint16_t h = float_to_bf16_bits(v); memcpy(out, &h, 2); return; }
        case CubeType::F32: memcpy(out, &v, 4); return;
        case CubeType::S32: memcpy(out, &iv, 4); return;
        default: return;  // the B8 outputs are quantisation modes, handled above
    }
}
// L0C (NZ) -> out: element (i, j) of matrix nd from src + nd*srcNdStride fractals +
// (j/16)*srcStride*16 + i*16 + j%16 elements; to out row i, column j of the ND matrix at
// nd*dstNdStride elements with rows dstStride apart, or, for NZ output, to column block j/w at
// (j/w)*dstStride*32 bytes, row i, column j%w (w = 16, 32 for int8, 8 for a channel split).
SAGE_SIM_OUTLINE SAGE_SIM_HOT void cube_fixpipe(const uint8_t* local, uint32_t src, uint8_t* out,
                                                const FixpipeShape& s) {
    const uint32_t osz = cube_size(s.dst);
    for (uint32_t nd = 0; nd < s.ndNum; ++nd) {
        for (uint32_t i = 0; i < s.mSize; ++i) {
            for (uint32_t j = 0; j < s.nSize; ++j) {
                const uint8_t* p = local + src +
                    (uint64_t(nd) * s.srcNdStride * 256 + uint64_t(j / 16) * s.srcStride * 16 + i * 16 + j % 16) * 4;
                float v;
                int32_t iv;
                memcpy(&v, p, 4);
                memcpy(&iv, p, 4);
                const uint32_t w = s.w;
                uint64_t o = s.nz ? uint64_t(j / w) * s.dstStride * 32 + (uint64_t(i) * w + j % w) * osz
                                  : (uint64_t(nd) * s.dstNdStride + uint64_t(i) * s.dstStride + j) * osz;
                uint64_t word = s.word;
                if (s.words) memcpy(&word, s.words + uint64_t(j) * 8, 8);
                cube_fix_value(v, iv, s, word, out + o);
            }
        }
    }
}

}  // namespace sim
}  // namespace sage
