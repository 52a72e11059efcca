// Banded (sliding window) attention on the CPU, fp32, without autograd.
//
// Row i of sequence n sees the keys j with i - before <= j <= i + after that lie in
// [min_key, n_valid[n]); out[n, i] = softmax_j(scale * q_i . k_j) v_j over them, lse[n, i] their
// log-sum-exp (-inf and a zero output for a row with no key).
//
// Why a kernel of its own: a band's natural tiles are small (a few queries, ~2w keys), and the
// library kernels that take a block of queries and its key window waste the window's corners and
// run their products below their large-tile speed. Here R queries at a time (one register tile)
// score only the keys their union of windows holds: 2w + R keys for 2w + 1 useful ones.
//
//   scores  S (R x keys) = Q Kt: the keys 512 rows of queries may see are transposed (16 x 16 in
//           registers) into Kt, which stays in L2; the micro-kernel broadcasts q[r][d] into vectors
//           of 16 keys; G = 4 tiles of rows share each tile of keys while it is in L1;
//   softmax per row over its own keys (a lane mask on the two edge vectors only), scores in log2
//           units and one vectorised 2^x pass;
//   output  O (R x Dv) = P V: broadcasts p[r][j] into vectors of the value row, the last tile of
//           keys scaled by 1 / sum straight into the output.
//
// Built at first use by attn_core/kernels/native/__init__.py (g++ -O3 -march=native), called through
// ctypes (which releases the GIL); GCC's vector extensions give AVX-512, AVX2 or NEON code.

#include <sys/mman.h>

#include "tiles.h"

// A VEC x VEC block transposed in registers: log2(VEC) rounds, each swapping the off-diagonal
// h x h blocks of every 2h x 2h tile by two-vector shuffles.
template <int H>
static inline void swap_blocks(vf* r) {
    vi lo, hi;
    for (int c = 0; c < VEC; ++c) lo[c] = (c & H) ? VEC + c - H : c, hi[c] = (c & H) ? VEC + c : c + H;
    for (int i = 0; i < VEC; ++i)
        if (!(i & H)) {
            const vf a = r[i], b = r[i + H];
            r[i] = __builtin_shuffle(a, b, lo), r[i + H] = __builtin_shuffle(a, b, hi);
        }
}

static inline void transpose_block(vf* r) {
    if constexpr (VEC >= 16) swap_blocks<8>(r);
    swap_blocks<4>(r), swap_blocks<2>(r), swap_blocks<1>(r);
}

// The keys [kb, ke) of one sequence transposed: kt[d][j - kb], zero past ke - kb up to ldkt.
static void transpose_keys(const float* k, long D, long kb, long ke, float* kt, long ldkt) {
    const long w = ke - kb;
    for (long d = 0; d < D; ++d) std::memset(kt + d * ldkt + w, 0, (ldkt - w) * sizeof(float));
    k += kb * D;
    long j0 = 0;
    if (D % VEC == 0)
        for (; j0 + VEC <= w; j0 += VEC)
            for (long d0 = 0; d0 < D; d0 += VEC) {
                vf r[VEC];
                for (int t = 0; t < VEC; ++t) r[t] = load(k + (j0 + t) * D + d0);
                transpose_block(r);
                for (int t = 0; t < VEC; ++t) store(kt + (d0 + t) * ldkt + j0, r[t]);
            }
    for (; j0 < w; ++j0)
        for (long d = 0; d < D; ++d) kt[d * ldkt + j0] = k[j0 * D + d];
}

// Scratch of n floats; past 2 MiB aligned to and advised for huge pages, so that first touching
// the transposed keys costs a few page faults rather than one per 4 KiB.
static float* scratch(long n) {
    const size_t bytes = (sizeof(float) * n + 63) / 64 * 64;
    constexpr size_t HUGE = 2u << 20;
    if (bytes < HUGE) return static_cast<float*>(std::aligned_alloc(64, bytes));
    void* p = std::aligned_alloc(HUGE, (bytes + HUGE - 1) / HUGE * HUGE);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, (bytes + HUGE - 1) / HUGE * HUGE, MADV_HUGEPAGE);
#endif
    return static_cast<float*>(p);
}

// Softmax over each row's own keys, in place: s (R x nvec vectors, scores in log2 units) becomes p;
// row r sees the columns [lo[r], hi[r]] (lo > hi: none), so only the two vectors holding lo and hi
// need a lane mask, and the vectors outside them are zeroed. Writes each row's 1 / sum and its
// log-sum-exp (natural units).
static void softmax_rows(float* s, long lds, long nvec, const long* lo, const long* hi, float* inv, float* lse) {
    vi iota;
    for (int l = 0; l < VEC; ++l) iota[l] = l;
    const vf ninf = splat(-INFINITY);
    for (int r = 0; r < R; ++r) {
        float* row = s + r * lds;
        if (lo[r] > hi[r]) {
            std::memset(row, 0, nvec * VEC * sizeof(float));
            inv[r] = 0.0f;
            lse[r] = -INFINITY;
            continue;
        }
        const long c0 = lo[r] / VEC, c1 = hi[r] / VEC;  // the vectors holding the row's first and last key
        const vi a = vi{} + (int32_t)(lo[r] - c0 * VEC), b = vi{} + (int32_t)(hi[r] - c1 * VEC);
        const vi in0 = iota >= a, in1 = iota <= b;
        const vi first = c0 == c1 ? (in0 & in1) : in0;
        vf m = first ? load(row + c0 * VEC) : ninf;
        for (long c = c0 + 1; c < c1; ++c) {
            const vf x = load(row + c * VEC);
            m = x > m ? x : m;
        }
        if (c1 > c0) {
            const vf x = in1 ? load(row + c1 * VEC) : ninf;
            m = x > m ? x : m;
        }
        const float mx = hmax(m);
        const vf mv = splat(mx);
        std::memset(row, 0, c0 * VEC * sizeof(float));
        vf e = vexp2(load(row + c0 * VEC) - mv);
        e = first ? e : vf{};
        store(row + c0 * VEC, e);
        vf sum = e;
        for (long c = c0 + 1; c < c1; ++c) {
            e = vexp2(load(row + c * VEC) - mv);
            store(row + c * VEC, e);
            sum += e;
        }
        if (c1 > c0) {
            e = vexp2(load(row + c1 * VEC) - mv);
            e = in1 ? e : vf{};
            store(row + c1 * VEC, e);
            sum += e;
        }
        if (nvec > c1 + 1) std::memset(row + (c1 + 1) * VEC, 0, (nvec - c1 - 1) * VEC * sizeof(float));
        const float total = hsum(sum);
        inv[r] = 1.0f / total;
        lse[r] = (mx + std::log2(total)) * 0.69314718055994531f;
    }
}

#ifndef GROUPS
#define GROUPS 4
#endif
constexpr int G = GROUPS;  // register tiles of R rows done together: a tile of keys (values) loaded
                           // into L1 serves all G of them before the next is loaded
constexpr long KT = CV * VEC;  // keys per tile
#ifndef UNITROWS
#define UNITROWS 512
#endif
constexpr long UNIT = UNITROWS;  // query rows per transposed window of keys

// One register tile of R query rows: its first key jlo, each row's keys [lo, hi] relative to jlo
// (lo > hi: none), nk keys in all.
struct Rows {
    long i0, rows, jlo, nk, lo[R], hi[R];
};

static Rows rows_at(long i0, long i1, long before, long after, long kmin, long kmax, long kb) {
    Rows t;
    t.i0 = i0, t.rows = i1 - i0 < R ? i1 - i0 : R;
    t.jlo = i0 - before > kb ? i0 - before : kb;
    long last = -1;
    for (int r = 0; r < R; ++r) {
        const long i = i0 + r;
        const long a = i - before > kmin ? i - before : kmin;
        const long b = i + after < kmax - 1 ? i + after : kmax - 1;
        t.lo[r] = r < t.rows ? a - t.jlo : 0, t.hi[r] = r < t.rows ? b - t.jlo : -1;
        if (t.lo[r] <= t.hi[r] && t.hi[r] > last) last = t.hi[r];
    }
    t.nk = last + 1;
    return t;
}

extern "C" {

int band_vector_width() { return VEC; }

// q, k (N, L, D) and v, out (N, L, Dv) contiguous fp32, Dv a multiple of band_vector_width();
// n_valid: N limits or null (L); lse: (N, L) or null. Sequences n0 .. n1-1, rows r0 .. r1-1 of each.
// Returns 0, or -1 when scratch memory could not be had.
int band_attention(const float* q, const float* k, const float* v, float* out, float* lse, long N, long L, long D,
                   long Dv, long before, long after, long min_key, const int64_t* n_valid, float scale, long n0,
                   long n1, long r0, long r1) {
    (void)N;
    const long span = before + after + R;  // keys a tile of R rows may see
    // the keys UNIT rows may see, transposed for each UNIT rows (kt stays in L2); rows of kt padded so
    // that their stride is no multiple of 1 KiB (rows a multiple of 4 KiB apart share an L1 set)
    long ldkt = (UNIT + before + after + 2 * KT + VEC - 1) / VEC * VEC;
    if (ldkt % 256 == 0) ldkt += VEC;
    const long lds = (span + VEC - 1) / VEC * VEC + VEC;
    float* kt = scratch(ldkt * D);
    float* s = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * G * R * lds));
    float* ob = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * (G + 1) * R * Dv));
    float* zero = static_cast<float*>(std::calloc(D + 1, sizeof(float)));  // the query of a row past r1
    if (!kt || !s || !ob || !zero) {
        std::free(kt), std::free(s), std::free(ob), std::free(zero);
        return -1;
    }
    float* junk = ob + G * R * Dv;  // where the output of a row past r1 goes
    const long dvec = Dv / VEC;
    const long kmin = min_key > 0 ? min_key : 0;
    const float scale2 = scale * 1.44269504088896341f;  // scores in log2 units: softmax by 2^x
    for (long n = n0; n < n1; ++n) {
        const long kmax = n_valid ? (n_valid[n] < L ? n_valid[n] : L) : L;  // keys j < kmax
        const float* qn = q + n * L * D;
        const float* vn = v + n * L * Dv;
        float* on = out + n * L * Dv;
        for (long u0 = r0; u0 < r1; u0 += UNIT) {
        const long u1 = u0 + UNIT < r1 ? u0 + UNIT : r1;
        const long kb = u0 - before > kmin ? u0 - before : kmin;
        long ke = u1 + after < kmax ? u1 + after : kmax;
        if (ke < kb) ke = kb;
        transpose_keys(k + n * L * D, D, kb, ke, kt, ldkt);
        for (long b0 = u0; b0 < u1; b0 += G * R) {
            Rows t[G];
            const float* qr[G][R];
            float* dst[G][R];
            int groups = 0;
            long tiles = 0;  // key tiles of the longest group
            for (long i0 = b0; i0 < u1 && groups < G; i0 += R, ++groups) {
                const Rows& g = t[groups] = rows_at(i0, u1, before, after, kmin, kmax, kb);
                for (int r = 0; r < R; ++r) {
                    qr[groups][r] = r < g.rows ? qn + (i0 + r) * D : zero;
                    dst[groups][r] = r < g.rows ? on + (i0 + r) * Dv : junk;
                }
                const long nt = (g.nk + KT - 1) / KT;
                tiles = nt > tiles ? nt : tiles;
            }
            // scores: tile by tile of keys, each tile for every group (its keys stay in L1)
            for (long c = 0; c < tiles; ++c)
                for (int g = 0; g < groups; ++g) {
                    const long nvec = (t[g].nk + VEC - 1) / VEC - c * CV;
                    if (nvec > 0)
                        scores(qr[g], D, scale2, kt + (t[g].jlo - kb) + c * KT, ldkt, nvec, s + g * R * lds + c * KT,
                               lds);
                }
            float inv[G][R], ls[G][R];
            for (int g = 0; g < groups; ++g) {
                softmax_rows(s + g * R * lds, lds, (t[g].nk + VEC - 1) / VEC, t[g].lo, t[g].hi, inv[g], ls[g]);
                if (t[g].nk <= 0)  // no row of the tile has a key
                    for (int r = 0; r < t[g].rows; ++r) std::memset(dst[g][r], 0, sizeof(float) * Dv);
                if (lse)
                    for (int r = 0; r < t[g].rows; ++r) lse[n * L + t[g].i0 + r] = ls[g][r];
            }
            // outputs: tile by tile of value rows, each for every group; the last one scaled into out
            for (long c = 0; c < tiles; ++c)
                for (int g = 0; g < groups; ++g) {
                    const long nk = t[g].nk - c * KT;
                    if (nk <= 0) continue;
                    values(s + g * R * lds + c * KT, lds, nk < KT ? nk : KT, vn + (t[g].jlo + c * KT) * Dv, Dv, dvec,
                           ob + g * R * Dv, Dv, c > 0, nk <= KT ? dst[g] : nullptr, inv[g]);
                }
        }
        }
    }
    std::free(kt), std::free(s), std::free(ob), std::free(zero);
    return 0;
}
}
