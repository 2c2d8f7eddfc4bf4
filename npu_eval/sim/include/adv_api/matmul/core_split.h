// How the host tiling spreads one matmul over SetDim's cores (step 1 of the rule in matmul_tiling.h,
// docs/cube.md "Host tiling"): the search CANN's 910B tiling makes for a shape given by SetShape, in
// sage-npu's own code. M and N count in 16-row (16-column) units, K in 32-byte units.
//   - a shape whose whole A, B and C fit one core's L0 (and no more units of M x N than cores) stays
//     whole, M or N cut only past 32 units; with a K split, K past 32 units in its least divisor >= 2;
//   - otherwise each mDim x nDim (x kDim) within the cores, N outer, M, then K inner, each increasing,
//     among the divisors of the length, of its mapped power of two and of the cores (plus the two
//     pairs around sqrt(M / N * cores)): a split replaces the best so far when it gives a core fewer
//     L0 loops (or as many, on more cores), or as many cores reading less of A and B from GM; until one
//     has given each core 16 units of N (of M with a transposed A) each next split replaces it, and
//     after that none that leaves a core fewer does.
// The winner's core lengths then move to ones that cut into L0 blocks well, when the cores still do.
// N_BUFFER_33 (nbuffer33_n_dim) keeps M to 3 base blocks a core and picks N by compute per GM byte.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace matmul_tiling {
namespace core_split {

constexpr int64_t kNoSplit = 0x7fffffff;  // no loop count or GM load yet (or no case of it fits)

constexpr int32_t cdiv(int64_t a, int64_t b) { return b == 0 ? 0 : int32_t((a + b - 1) / b); }

// The power of two a length maps to: 16 <= p <= 1024 with p < len <= 2p (1024 when none, which
// includes 16 itself); a length under 16 maps to itself.
constexpr int32_t pow2_map(int32_t len) {
    if (len < 16) return len;
    int32_t p = 16;
    while (p < 1024 && !(p < len && 2 * p >= len)) p *= 2;
    return p;
}
// The divisors of x within [lo, hi].
constexpr int32_t divisors_in(int32_t x, int32_t lo, int32_t hi) {
    int32_t c = 0;
    for (int32_t i = lo; i <= hi && i <= x; ++i) c += x % i == 0;
    return c;
}
// The most divisors any divisor of x within [lo, hi] has.
constexpr int32_t richest_divisor(int32_t x, int32_t lo, int32_t hi) {
    int32_t best = 0;
    for (int32_t f = lo; f <= hi && f <= x; ++f)
        if (x % f == 0) best = std::max(best, divisors_in(f, 1, f));
    return best;
}
// Whether a core's length cuts into L0 and L1 blocks well: up to 8 always, else it needs a divisor
// up to 64 with more than two divisors (past 128, more than four counting those up to 128).
constexpr bool divides_well(int32_t x) {
    if (x <= 8) return true;
    const int32_t l0 = richest_divisor(x, 1, 64);
    const int32_t l1 = x > 128 ? richest_divisor(x, 65, 128) : 0;
    return !(l0 <= 2 || (x > 128 && l0 + l1 <= 4));
}
// A core's length for `parts` parts of `len`: the even share, moved toward the mapped length's share
// until it divides well.
constexpr int32_t core_length(int32_t len, int32_t mapped, int32_t parts) {
    if (parts == 1 && divides_well(len)) return len;
    int32_t x = cdiv(len, parts);
    const int32_t target = cdiv(mapped, parts);
    while (x != target && !divides_well(x)) x += x < target ? 1 : -1;
    return x;
}

struct Shape {
    int32_t m16, n16, k16, cores;
    bool splitK, aTrans, bTrans;
    int64_t l1, l0a, l0c;  // bytes
};
struct SplitDims {
    int32_t m = 1, n = 1, k = 1;
};

class Search {
public:
    explicit Search(const Shape& s) : s_(s) {
        const bool kMapped = s.k16 > 64 && (divisors_in(s.k16, 1, 64) <= 2 ||
                                            (s.k16 > 128 && divisors_in(s.k16, 1, 128) <= 4));
        // a K split maps K (when it has few divisors) and leaves M and N as they are
        mMap_ = s.splitK ? s.m16 : pow2_map(s.m16);
        nMap_ = s.splitK ? s.n16 : pow2_map(s.n16);
        kMap_ = s.splitK && kMapped ? pow2_map(s.k16) : s.k16;
    }
    SplitDims Run() const {
        SplitDims d;
        if (s_.cores <= 1) return d;
        if (Small(d)) return d;
        Best best;
        const std::vector<int32_t> ms = Candidates(s_.m16, mMap_, true), ns = Candidates(s_.n16, nMap_, false);
        const std::vector<int32_t> ks = s_.splitK ? Divisors(s_.k16, kMap_, s_.cores) : std::vector<int32_t>{1};
        for (int32_t n : ns)
            for (int32_t m : ms)
                for (int32_t k : ks)
                    if (m > 0 && n > 0 && int64_t(m) * n * k <= s_.cores) Consider(best, m, n, k);
        return Finish(best);
    }

private:
    struct Best {
        int32_t m = 1, n = 1, k = 1, cores = 1;
        int64_t loops = kNoSplit, load = kNoSplit;
        bool wide = false;  // some split so far gave each core 16 units of N
    };
    Shape s_;
    int32_t mMap_ = 0, nMap_ = 0, kMap_ = 0;

    bool Small(SplitDims& d) const {
        const bool odd = s_.splitK && ((s_.n16 > 32 && nMap_ % 32 != 0) || (s_.m16 > 32 && mMap_ % 32 != 0));
        if (odd || int64_t(s_.m16) * s_.n16 > s_.cores || int64_t(s_.m16) * s_.k16 * 512 > s_.l0a ||
            int64_t(s_.n16) * s_.k16 * 512 > s_.l0a || int64_t(s_.m16) * s_.n16 * 1024 > s_.l0c)
            return false;
        d.m = s_.m16 <= 32 ? 1 : cdiv(s_.m16, cdiv(mMap_, mMap_ / 32));
        d.n = s_.n16 <= 32 ? 1 : cdiv(s_.n16, cdiv(nMap_, nMap_ / 32));
        if (s_.splitK && s_.k16 > 32) {
            int32_t k = 1;
            for (int32_t i = 2; i <= std::min(s_.cores, s_.k16); ++i)
                if (s_.k16 % i == 0) {
                    k = i;
                    break;
                }
            d.k = cdiv(s_.k16, k == 1 ? s_.k16 : cdiv(kMap_, k));
        }
        return true;
    }
    std::vector<int32_t> Divisors(int32_t len, int32_t mapped, int32_t upTo) const {
        std::vector<int32_t> v;
        for (int32_t i = 1; i <= upTo; ++i)
            if (len % i == 0 || mapped % i == 0 || s_.cores % i == 0) v.push_back(i);
        return v;
    }
    // M's or N's candidates: the divisors, plus the two counts around sqrt(M / N * cores).
    std::vector<int32_t> Candidates(int32_t len, int32_t mapped, bool isM) const {
        std::vector<int32_t> v = Divisors(len, mapped, std::min(s_.cores, len));
        const double opt = std::sqrt(double(s_.m16) / s_.n16 * s_.cores);
        const int32_t om = int32_t(std::ceil(opt)), on = int32_t(std::ceil(s_.cores / opt));
        for (int32_t x : isM ? std::vector<int32_t>{om, on == 0 ? 1 : s_.cores / on}
                             : std::vector<int32_t>{on, om == 0 ? 1 : s_.cores / om})
            if (std::find(v.begin(), v.end(), x) == v.end()) v.insert(std::upper_bound(v.begin(), v.end(), x), x);
        return v;
    }
    int32_t CoreK(int32_t k) const { return s_.splitK && kMap_ != s_.k16 ? kMap_ / k * 2 : s_.k16 / k; }
    void Consider(Best& best, int32_t m, int32_t n, int32_t k) const {
        const int32_t cm = cdiv(s_.m16, m), cn = cdiv(s_.n16, n), ck = CoreK(k), cores = m * n * k;
        if (ck == 0) return;  // more K parts than K has units: not a split (CANN's loop count is 0 there)
        bool fits = true;  // a core keeps 16 units of N (of M for a transposed A) where the shape has them
        if (!s_.bTrans && s_.n16 >= 16 && cn < 16) fits = false;
        if (s_.aTrans && s_.m16 >= 16 && cm < 16) fits = false;
        const bool free = s_.bTrans && !s_.aTrans;  // this rule does not apply
        const bool always = !free && !best.wide && fits, barred = !free && best.wide && !fits;
        const bool ranked = free || best.wide == fits;
        const int64_t loops = L0Loops(cm, cn, ck), load = GmLoad(m, n, cm, cn, ck) * (s_.splitK ? ck : 1);
        const bool fewerLoops = ranked && (loops < best.loops || (loops == best.loops && cores > best.cores));
        const bool lessLoad = !fewerLoops && cores == best.cores && load < best.load;
        if (barred || !(always || fewerLoops || lessLoad)) return;
        best = {m, n, k, cores, loops, load, (s_.bTrans || cn >= 16) && (!s_.aTrans || cm >= 16) && cores > 1};
    }
    // L0 loops of a core's cm x cn x ck units in blocks of at most 128 units of C (64 a side) and 64
    // units of A or B.
    static int64_t L0Loops(int32_t cm, int32_t cn, int32_t ck) {
        int32_t n0 = std::min(16, cn);
        int32_t m0 = std::min({cm, 128 / n0, 64});
        n0 = std::min({cn, 128 / m0, 64});
        m0 = std::min({cm, 128 / n0, 64});
        const int32_t k0 = std::max(1, std::min({64 / m0, 64 / n0, ck}));
        return int64_t(cdiv(cm, m0)) * cdiv(cn, n0) * cdiv(ck, k0);
    }
    // Units of A and B all cores read from GM, by what L1 (double-buffered) holds of a core's A and B:
    // all of either, or all of K for some rows and columns; kNoSplit when no case fits.
    int64_t GmLoad(int32_t m, int32_t n, int32_t cm, int32_t cn, int32_t ck) const {
        const int64_t kb = int64_t(ck) * 512, l1 = s_.l1, m16 = s_.m16, n16 = s_.n16;
        const int32_t n0 = std::min(16, cn), m0 = std::min({16, cm, 128 / n0});
        const int64_t k0 = std::min({64 / m0, 64 / n0, ck}) * 512;
        if ((cm + cn) * kb <= l1 || (cm + n0 * 2) * kb <= l1 || (cn + m0 * 2) * kb <= l1) return m16 * n + n16 * m;
        if ((n0 * kb + m0 * k0) * 2 > l1 && (m0 * kb + n0 * k0) * 2 > l1)
            return m16 * cdiv(n16, n0) + n16 * cdiv(m16, m0);
        if ((m0 + n0) * kb * 2 <= l1) {
            const int64_t m1 = int64_t(cdiv(l1 - n0 * kb * 2, kb * 2 * m0)) * m0;
            const int64_t n1 = int64_t(cdiv(l1 - m0 * kb * 2, kb * 2 * n0)) * n0;
            return std::min(m16 * n + n16 * cdiv(m16, m1), n16 * m + m16 * cdiv(n16, n1));
        }
        int64_t load = kNoSplit;
        if (cm * kb + n0 * k0 * 2 <= l1 || (m0 * kb + n0 * k0) * 2 <= l1)
            load = std::min(load, m16 * n + n16 * cdiv(m16, m0));
        if (cn * kb + m0 * k0 * 2 <= l1 || (n0 * kb + m0 * k0) * 2 <= l1)
            load = std::min(load, n16 * m + m16 * cdiv(n16, n0));
        return load;
    }
    SplitDims Finish(const Best& b) const {
        int32_t cm = core_length(s_.m16, mMap_, b.m), cn = core_length(s_.n16, nMap_, b.n);
        int32_t ck = cdiv(s_.k16 % b.k == 0 ? s_.k16 : kMap_, b.k);
        if (int64_t(cdiv(s_.m16, cm)) * cdiv(s_.n16, cn) * cdiv(s_.k16, ck) > s_.cores)
            cm = cdiv(s_.m16, b.m), cn = cdiv(s_.n16, b.n), ck = cdiv(s_.k16, b.k);
        SplitDims d;
        d.m = std::min(cdiv(s_.m16, cm), s_.cores), d.n = std::min(cdiv(s_.n16, cn), s_.cores);
        d.k = s_.splitK ? std::min(cdiv(s_.k16, ck), s_.cores) : 1;
        return d;
    }
};

// N_BUFFER_33's cores: M in parts of 3 base blocks, then among 1 .. min(N / bn, cores / mDim) + 1 parts
// of N the one whose core does the most cube work per byte of A and B it reads (block by block, main
// and tail blocks, twice the bytes when a part's 256-byte rounding fails), within 1% of the work the
// one leaving more cores idle in proportion to the blocks' sides, else the one with less work a core.
struct Nb33Choice {
    int32_t n;
    float cycles, intensity, band;
};
inline int32_t aligned_part(bool need, int32_t len, int32_t parts, int32_t align, bool& ok) {
    const int32_t part = cdiv(len, parts);
    ok = true;
    if (!need || align == 0 || parts <= 1) return part;
    const int32_t up = cdiv(part, align) * align;
    if (up >= cdiv(len, parts - 1)) return ok = false, part;
    return up;
}
inline Nb33Choice nb33_score(int32_t M, int32_t N, int32_t md, int32_t nd, const int32_t (&base)[3], int32_t cores,
                             bool aTrans, bool bTrans, int32_t aBits, int32_t bBits) {
    const int32_t bm = base[0], bn = base[1], bk = base[2], aAlign = 2048 / aBits, bAlign = 2048 / bBits;
    bool okA = true, okB = true;
    const int32_t sm = aligned_part(aTrans && M % aAlign == 0, M, md, aAlign, okA);
    const int32_t sn = aligned_part(!bTrans && N % bAlign == 0, N, nd, bAlign, okB);
    const float ratio = okA && okB ? 1.0f : 2.0f, reduce = 256.0f / aBits;
    float cyc = 0, mem = 0;
    auto add = [&](int32_t x, int32_t y, int32_t count) {
        if (x <= 0 || y <= 0 || count <= 0) return;
        cyc += float(x) * y * bk / (256.0f * reduce) * count;
        mem += ratio * (float(x) * bk * aBits / 8 + float(y) * bk * bBits / 8) * count;
    };
    add(bm, bn, (sm / bm) * (sn / bn)), add(bm, sn % bn, sm / bm), add(sm % bm, bn, sn / bn);
    add(sm % bm, sn % bn, 1);
    const float band = float((cores - md) * bm + (cores - nd) * bn) / float((bm + bn) * cores);
    return {nd, cyc, mem > 0 ? cyc / mem : 0.0f, band};
}
inline bool nb33_before(const Nb33Choice& a, const Nb33Choice& b) {
    if (std::fabs(a.intensity - b.intensity) > 1.0e-4f) return a.intensity > b.intensity;
    if (std::fabs(a.cycles - b.cycles) < 0.01f * b.cycles) return a.band > b.band;
    return a.cycles < b.cycles;
}
inline int32_t nbuffer33_n_dim(int32_t M, int32_t N, int32_t md, const int32_t (&base)[3], int32_t cores, bool aTrans,
                               bool bTrans, int32_t aBits, int32_t bBits) {
    const int32_t most = std::min(N / base[1], cores / std::max(md, 1)) + 1;
    Nb33Choice best = nb33_score(M, N, md, 1, base, cores, aTrans, bTrans, aBits, bBits);
    for (int32_t nd = 2; nd <= most; ++nd) {
        const Nb33Choice c = nb33_score(M, N, md, nd, base, cores, aTrans, bTrans, aBits, bBits);
        if (nb33_before(c, best)) best = c;
    }
    return best.n;
}

// The 910B's split of a large shape given by SetOrgShape alone (no SetShape; M >= 128 and M x N past
// 26214 = 0.8 x 128 x 256 elements a core): every mDim x nDim that uses all the cores, ranked as
// nbuffer33_n_dim ranks its N parts (cube work per byte of A and B, block by block).
inline bool split_mn_applies(int64_t M, int64_t N, int32_t cores) {
    return cores > 1 && M >= 128 && M * N > int64_t(26214) * cores;
}
inline SplitDims split_mn_dims(int32_t M, int32_t N, const int32_t (&base)[3], int32_t cores, bool aTrans,
                               bool bTrans, int32_t aBits, int32_t bBits) {
    SplitDims d;
    Nb33Choice best{0, 0, 0, 0};
    for (int32_t m = 1; m <= cores; ++m) {
        if (cores % m != 0) continue;
        Nb33Choice c = nb33_score(M, N, m, cores / m, base, cores, aTrans, bTrans, aBits, bBits);
        if (best.n == 0 || nb33_before(c, best)) best = c, d.m = m, d.n = cores / m;
    }
    return d;
}

}  // namespace core_split
}  // namespace matmul_tiling
