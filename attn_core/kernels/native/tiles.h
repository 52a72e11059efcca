// What the compiled kernels share: GCC's vector types (AVX-512, AVX2 or NEON code from one source),
// 2^x and the two register-tiled products (a row of scores against transposed keys; weights times rows
// of values). Each function is static: every kernel file gets its own copy.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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

// 2^x for x <= 0 (scores, in log2 units, minus their row maximum): x = n + r, |r| <= 1/2, 2^r by its
// Taylor series to r^6 (relative error ~1.2e-7), 2^n from the exponent bits; x < -126 gives ~1e-38.
static inline vf vexp2(vf x) {
    const vf lo = splat(-126.0f);
    x = x < lo ? lo : x;
    const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer, kept in the low bits
    const vf t = x + magic;
    const vf r = x - (t - magic);
    vf p = splat(1.5403530393381606e-4f);
    p = p * r + splat(1.3333558146428443e-3f);
    p = p * r + splat(9.6181291076284772e-3f);
    p = p * r + splat(5.5504108664821580e-2f);
    p = p * r + splat(2.4022650695910071e-1f);
    p = p * r + splat(6.9314718055994531e-1f);
    p = p * r + splat(1.0f);
    vi bits, m;
    std::memcpy(&bits, &t, sizeof bits);
    std::memcpy(&m, &magic, sizeof m);
    bits = (bits + (127 - m)) << 23;  // (n + 127) << 23
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

// S[r][c*VEC ..] = scale * sum_d q_r[d] * kt[d][c*VEC ..] for C vectors of keys, q_r the R query rows.
// Not inlined: alone, the compiler keeps its R x C accumulators and R row pointers in registers.
template <int C>
__attribute__((noinline)) static void score_tile(const float* const* qr, long D, float scale, const float* kt,
                                                 long ldkt, float* s, long lds) {
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
        for (int c = 0; c < C; ++c) store(s + r * lds + c * VEC, acc[r][c] * scale);
}

static void scores(const float* const* qr, long D, float scale, const float* kt, long ldkt, long nvec, float* s,
                   long lds) {
    switch (nvec < CV ? nvec : CV) {
        case 4: score_tile<4>(qr, D, scale, kt, ldkt, s, lds); break;
        case 3: score_tile<3>(qr, D, scale, kt, ldkt, s, lds); break;
        case 2: score_tile<2>(qr, D, scale, kt, ldkt, s, lds); break;
        default: score_tile<1>(qr, D, scale, kt, ldkt, s, lds); break;
    }
}

// O[r][c*VEC ..] (+)= sum_j p[r][j] * v[j][c*VEC ..] over nk keys, for C vectors of the value's width,
// into the buffer o, or, for the last keys (``last``: R output rows, ``inv`` their 1 / sum), scaled
// straight into the output rows.
template <int C>
__attribute__((noinline)) static void value_tile(const float* p, long ldp, long nk, const float* v, long ldv, float* o,
                                                 long ldo, bool more, float* const* last, const float* inv) {
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
        for (int c = 0; c < C; ++c)
            if (last) store(last[r] + c * VEC, acc[r][c] * inv[r]);
            else store(o + r * ldo + c * VEC, acc[r][c]);
}

// The value's width (nvec vectors) a register tile at a time; column c0 of o and of the rows in last.
static void values(const float* p, long ldp, long nk, const float* v, long ldv, long nvec, float* o, long ldo,
                   bool more, float* const* last, const float* inv) {
    for (long c = 0; c < nvec; c += CV) {
        float* rows[R];
        if (last)
            for (int r = 0; r < R; ++r) rows[r] = last[r] + c * VEC;
        float* const* to = last ? rows : nullptr;
        switch (nvec - c < CV ? nvec - c : CV) {
            case 4: value_tile<4>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more, to, inv); break;
            case 3: value_tile<3>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more, to, inv); break;
            case 2: value_tile<2>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more, to, inv); break;
            default: value_tile<1>(p, ldp, nk, v + c * VEC, ldv, o + c * VEC, ldo, more, to, inv); break;
        }
    }
}
