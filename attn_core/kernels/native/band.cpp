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
//   scores  S (R x keys) = Q Kt: Kt is the keys' window transposed once per unit of rows, so the
//           micro-kernel broadcasts q[r][d] and multiplies it into vectors of 16 keys;
//   softmax per row over its own keys (a lane mask), one vectorised exp pass;
//   output  O (R x Dv) = P V: broadcasts p[r][j] into vectors of the value row.
//
// Built at first use by attn_core/kernels/native/__init__.py (g++ -O3 -march=native), called through
// ctypes (which releases the GIL); GCC's vector extensions give AVX-512, AVX2 or NEON code.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

#if defined(__AVX512F__)
constexpr int VEC = 16;  // floats per vector
constexpr int R = 6;     // query rows per register tile: R x 4 accumulators of 16 floats
#else
constexpr int VEC = 8;
constexpr int R = 4;
#endif
constexpr int CV = 4;  // vectors per tile along keys (scores) or along the value's width (output)

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));

static inline vf splat(float x) { return x * (vf{} + 1.0f); }  // no +0.0 to keep
static inline vf load(const float* p) {
    vf r;
    std::memcpy(&r, p, sizeof r);
    return r;
}
static inline void store(float* p, vf x) { std::memcpy(p, &x, sizeof x); }

// exp for x <= 0 (scores minus their row maximum): Cephes' expf polynomial on x = n ln2 + r,
// |r| <= ln2 / 2; 2^n from the exponent bits. Relative error ~2e-7; x < -87 gives ~1e-38.
static inline vf vexp(vf x) {
    const vf lo = splat(-87.0f);
    x = x < lo ? lo : x;
    const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
    vf t = x * splat(1.44269504088896341f) + magic;
    vf n = t - magic;
    vi ni;
    std::memcpy(&ni, &t, sizeof ni);
    vi mi;
    std::memcpy(&mi, &magic, sizeof mi);
    ni -= mi;
    vf r = x - n * splat(0.693359375f) - n * splat(-2.12194440e-4f);
    vf p = splat(1.9875691500e-4f);
    p = p * r + splat(1.3981999507e-3f);
    p = p * r + splat(8.3334519073e-3f);
    p = p * r + splat(4.1665795894e-2f);
    p = p * r + splat(1.6666665459e-1f);
    p = p * r + splat(5.0000001201e-1f);
    p = p * r * r + r + splat(1.0f);
    vi bits = (ni + 127) << 23;
    vf two_n;
    std::memcpy(&two_n, &bits, sizeof two_n);
    return p * two_n;
}

static inline float hmax(vf x) {
    float m = x[0];
    for (int l = 1; l < VEC; ++l) m = x[l] > m ? x[l] : m;
    return m;
}
static inline float hsum(vf x) {
    float s = 0.0f;
    for (int l = 0; l < VEC; ++l) s += x[l];
    return s;
}

// S[r][c*VEC ..] = sum_d qs[r][d] * kt[d][c*VEC ..] for C vectors of keys. Not inlined: alone, the
// compiler keeps its R x C accumulators and R row pointers in registers.
template <int C>
__attribute__((noinline)) static void score_tile(const float* qs, long D, long ldq, const float* kt, long ldkt,
                                                 float* s, long lds) {
    const float* qr[R];
    for (int r = 0; r < R; ++r) qr[r] = qs + r * ldq;
    vf acc[R][C] = {};
    for (long d = 0; d < D; ++d, kt += ldkt) {
        vf kv[C];
        for (int c = 0; c < C; ++c) kv[c] = load(kt + c * VEC);
        for (int r = 0; r < R; ++r) {
            const float x = qr[r][d];  // a scalar times a vector: one broadcast
            for (int c = 0; c < C; ++c) acc[r][c] += x * kv[c];
        }
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) store(s + r * lds + c * VEC, acc[r][c]);
}

// O[r][c*VEC ..] (+)= sum_j p[r][j] * v[j][c*VEC ..] over nk keys, for C vectors of the value's width.
template <int C>
__attribute__((noinline)) static void value_tile(const float* p, long ldp, long nk, const float* v, long ldv, float* o,
                                                 long ldo, bool more) {
    const float* pr[R];
    for (int r = 0; r < R; ++r) pr[r] = p + r * ldp;
    vf acc[R][C] = {};
    if (more)
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc[r][c] = load(o + r * ldo + c * VEC);
    for (long j = 0; j < nk; ++j, v += ldv) {
        vf vv[C];
        for (int c = 0; c < C; ++c) vv[c] = load(v + c * VEC);
        for (int r = 0; r < R; ++r) {
            const float x = pr[r][j];
            for (int c = 0; c < C; ++c) acc[r][c] += x * vv[c];
        }
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) store(o + r * ldo + c * VEC, acc[r][c]);
}

// o (R x nvec vectors) = p (R x nk) v (nk rows), or += when ``more``.
static void values(const float* p, long ldp, long nk, const float* v, long ldv, long nvec, float* o, long ldo,
                   bool more) {
    long c = 0;
    for (; c + CV <= nvec; c += CV) value_tile<CV>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more);
    switch (nvec - c) {
        case 3: value_tile<3>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more); break;
        case 2: value_tile<2>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more); break;
        case 1: value_tile<1>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more); break;
        default: break;
    }
}

// The keys [kb, ke) of one sequence transposed: kt[d][j - kb], zero past ke - kb up to ldkt.
static void transpose_keys(const float* k, long D, long kb, long ke, float* kt, long ldkt) {
    const long w = ke - kb;
    for (long d = 0; d < D; ++d) std::memset(kt + d * ldkt + w, 0, (ldkt - w) * sizeof(float));
    constexpr long T = 16;
    for (long j0 = 0; j0 < w; j0 += T)
        for (long d0 = 0; d0 < D; d0 += T) {
            const long j1 = j0 + T < w ? j0 + T : w, d1 = d0 + T < D ? d0 + T : D;
            for (long j = j0; j < j1; ++j)
                for (long d = d0; d < d1; ++d) kt[d * ldkt + j] = k[(kb + j) * D + d];
        }
}

// Softmax over each row's own keys, in place: s (R x nvec vectors) becomes p; row r sees the
// columns [lo[r], hi[r]] (lo > hi: none). Writes each row's 1 / sum and log-sum-exp.
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
        const vi a = vi{} + (int32_t)lo[r], b = vi{} + (int32_t)hi[r];
        vf m = ninf;
        for (long c = 0; c < nvec; ++c) {
            const vi j = iota + (int32_t)(c * VEC);
            const vf x = load(row + c * VEC);
            const vf xm = ((j >= a) & (j <= b)) ? x : ninf;
            m = xm > m ? xm : m;
        }
        const float mx = hmax(m);
        const vf mv = splat(mx);
        vf sum = {};
        for (long c = 0; c < nvec; ++c) {
            const vi j = iota + (int32_t)(c * VEC);
            vf e = vexp(load(row + c * VEC) - mv);
            e = ((j >= a) & (j <= b)) ? e : vf{};
            store(row + c * VEC, e);
            sum += e;
        }
        const float total = hsum(sum);
        inv[r] = 1.0f / total;
        lse[r] = mx + std::log(total);
    }
}

#ifndef GROUPS
#define GROUPS 4
#endif
constexpr int G = GROUPS;  // register tiles of R rows done together: a tile of keys (values) loaded
                           // into L1 serves all G of them before the next is loaded
constexpr long KT = CV * VEC;  // keys per tile

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
    // the keys rows r0 .. r1-1 may see, transposed once per sequence; rows of kt padded so that
    // their stride is no multiple of 1 KiB (rows a multiple of 4 KiB apart share an L1 set)
    long ldkt = ((r1 - r0) + before + after + 2 * KT + VEC - 1) / VEC * VEC;
    if (ldkt % 256 == 0) ldkt += VEC;
    const long lds = (span + VEC - 1) / VEC * VEC + VEC;
    const long ldq = (D + 15) / 16 * 16;
    float* kt = scratch(ldkt * D);
    float* s = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * G * R * lds));
    float* qs = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * G * R * ldq));
    float* ob = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * G * R * Dv));
    if (!kt || !s || !qs || !ob) {
        std::free(kt), std::free(s), std::free(qs), std::free(ob);
        return -1;
    }
    const long dvec = Dv / VEC;
    const long kmin = min_key > 0 ? min_key : 0;
    for (long n = n0; n < n1; ++n) {
        const long kmax = n_valid ? (n_valid[n] < L ? n_valid[n] : L) : L;  // keys j < kmax
        const float* qn = q + n * L * D;
        const float* vn = v + n * L * Dv;
        float* on = out + n * L * Dv;
        const long kb = r0 - before > kmin ? r0 - before : kmin;
        const long ke = r1 + after < kmax ? (r1 + after > kb ? r1 + after : kb) : (kmax > kb ? kmax : kb);
        transpose_keys(k + n * L * D, D, kb, ke, kt, ldkt);
        for (long b0 = r0; b0 < r1; b0 += G * R) {
            Rows t[G];
            int groups = 0;
            long tiles = 0;  // key tiles of the longest group
            for (long i0 = b0; i0 < r1 && groups < G; i0 += R, ++groups) {
                t[groups] = rows_at(i0, r1, before, after, kmin, kmax, kb);
                float* qg = qs + groups * R * ldq;
                for (int r = 0; r < R; ++r)
                    for (long d = 0; d < D; ++d) qg[r * ldq + d] = r < t[groups].rows ? qn[(i0 + r) * D + d] * scale : 0.0f;
                const long nt = (t[groups].nk + KT - 1) / KT;
                tiles = nt > tiles ? nt : tiles;
            }
            // scores: tile by tile of keys, each tile for every group (its keys stay in L1)
            for (long c = 0; c < tiles; ++c)
                for (int g = 0; g < groups; ++g) {
                    const long nvec = (t[g].nk + VEC - 1) / VEC - c * CV;
                    if (nvec <= 0) continue;
                    const float* kc = kt + (t[g].jlo - kb) + c * KT;
                    float* sc = s + g * R * lds + c * KT;
                    const float* qg = qs + g * R * ldq;
                    switch (nvec < CV ? nvec : CV) {
                        case 4: score_tile<4>(qg, D, ldq, kc, ldkt, sc, lds); break;
                        case 3: score_tile<3>(qg, D, ldq, kc, ldkt, sc, lds); break;
                        case 2: score_tile<2>(qg, D, ldq, kc, ldkt, sc, lds); break;
                        default: score_tile<1>(qg, D, ldq, kc, ldkt, sc, lds); break;
                    }
                }
            float inv[G][R], ls[G][R];
            for (int g = 0; g < groups; ++g)
                softmax_rows(s + g * R * lds, lds, (t[g].nk + VEC - 1) / VEC, t[g].lo, t[g].hi, inv[g], ls[g]);
            // outputs: tile by tile of value rows, each for every group
            for (int g = 0; g < groups; ++g)
                if (t[g].nk <= 0) std::memset(ob + g * R * Dv, 0, sizeof(float) * R * Dv);
            for (long c = 0; c < tiles; ++c)
                for (int g = 0; g < groups; ++g) {
                    const long nk = t[g].nk - c * KT;
                    if (nk <= 0) continue;
                    values(s + g * R * lds + c * KT, lds, nk < KT ? nk : KT, vn + (t[g].jlo + c * KT) * Dv, Dv, dvec,
                           ob + g * R * Dv, Dv, c > 0);
                }
            for (int g = 0; g < groups; ++g)
                for (int r = 0; r < t[g].rows; ++r) {
                    const long i = t[g].i0 + r;
                    const float* o = ob + (g * R + r) * Dv;
                    for (long c = 0; c < Dv; ++c) on[i * Dv + c] = o[c] * inv[g][r];
                    if (lse) lse[n * L + i] = ls[g][r];
                }
        }
    }
    std::free(kt), std::free(s), std::free(qs), std::free(ob);
    return 0;
}
}
