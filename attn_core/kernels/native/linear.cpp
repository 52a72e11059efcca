// Causal linear attention with elu + 1 features on the CPU, fp32, without autograd:
//
//   out_i = phi(q_i) . sum_{j<=i} phi(k_j) v_j^T  /  phi(q_i) . sum_{j<=i} phi(k_j),   phi(x) = elu(x) + 1,
//
// in chunks of C positions (Katharopoulos et al. 2020): inside a chunk the masked product
// A = phi(Q) phi(K)^T (j <= i), across chunks the running state S = sum phi(k_j) v_j^T and its
// normaliser z = sum phi(k_j). For each chunk, on the register tiles of tiles.h:
//
//   features  phi(Q), phi(K) of the chunk (phi(K) transposed), exp as 2^x;
//   inside    A (rows of scores against phi(K)^T), masked, its row sums the inside denominators;
//   output    A V + phi(Q) S, divided by the inside denominators + phi(Q) . z, straight into out;
//   state     S += phi(K)^T V (rows of phi(K)^T times rows of V), z += the columns of phi(K)^T.
//
// The same arithmetic as attn_core/kernels/linear_sums.py's chunked form, without its passes over
// memory between the products; one sequence at a time per thread (the state runs along it).
// Non-causal (linear_attention): the state over all S keys first, then every query reads it.

#include <cfloat>

#include "tiles.h"

// elu(x) + 1: x + 1 above 0, e^x below (as 2^(x log2 e)).
static inline vf elu1(vf x) {
    const vf neg = x < vf{} ? x : vf{};
    const vf e = vexp2(neg * splat(1.44269504088896341f));
    return x > vf{} ? x + 1.0f : e;
}

// phi of n rows of x (D wide, row stride D) into f (row stride ldf), rows n .. rows - 1 zero.
static void features(const float* x, long n, long rows, long D, float* f, long ldf) {
    for (long i = 0; i < rows; ++i) {
        float* fi = f + i * ldf;
        if (i >= n) {
            std::memset(fi, 0, sizeof(float) * ldf);
            continue;
        }
        const float* xi = x + i * D;
        long d = 0;
        for (; d + VEC <= D; d += VEC) store(fi + d, elu1(load(xi + d)));
        for (; d < D; ++d) fi[d] = xi[d] > 0.0f ? xi[d] + 1.0f : std::exp(xi[d]);
        for (; d < ldf; ++d) fi[d] = 0.0f;
    }
}

// phi of c key rows (of C; D wide) as phi(K)^T into kt (Dp rows of C, zero past D and past c); fk is
// scratch for the rows (C rows of ldf).
static void key_features(const float* k, long c, long C, long D, long Dp, float* fk, long ldf, float* kt) {
    features(k, c, C, D, fk, ldf);
    for (long d = 0; d < Dp; ++d)
        for (long j = 0; j < C; ++j) kt[d * C + j] = d < D ? fk[j * ldf + d] : 0.0f;
}

// The running state after c more keys: S (Dp x Dv) += phi(K)^T V, z += the columns of phi(K)^T.
static void add_to_state(const float* kt, long c, long C, long D, long Dp, const float* v, long Dv, float* state,
                         float* z) {
    for (long d0 = 0; d0 < Dp; d0 += R)
        values(kt + d0 * C, C, c, v, Dv, Dv / VEC, state + d0 * Dv, Dv, true, nullptr, nullptr);
    for (long d = 0; d < D; ++d) {  // the columns of phi(K)^T past c are zero
        vf s = {};
        for (long j = 0; j < C; j += VEC) s += load(kt + d * C + j);
        z[d] += hsum(s);
    }
}

// A call's scratch buffers, 64-byte aligned, freed together when the call returns; ok(): every one was had.
struct Scratch {
    float* held[8] = {};
    int n = 0;
    float* take(long floats) {
        return held[n++] = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * floats));
    }
    bool ok() const {
        for (int i = 0; i < n; ++i)
            if (!held[i]) return false;
        return true;
    }
    ~Scratch() {
        for (int i = 0; i < n; ++i) std::free(held[i]);
    }
};

// A sequence's running state S (Dp x Dv) and normaliser z (zs floats) back to zero.
static void clear_state(float* state, long Dp, long Dv, float* z, long zs) {
    std::memset(state, 0, sizeof(float) * Dp * Dv);
    std::memset(z, 0, sizeof(float) * zs);
}

extern "C" {

// q, k (N, L, D) and v, out (N, L, Dv) contiguous fp32, Dv a multiple of band_vector_width(); chunks
// of C positions (C a multiple of it); sequences n0 .. n1-1. Returns 0, or -1 without scratch memory.
int causal_linear_attention(const float* q, const float* k, const float* v, float* out, long L, long D, long Dv,
                            long C, long n0, long n1) {
    if (C <= 0 || C % VEC) return -2;
    const long Cp = (C + R - 1) / R * R;  // chunk rows, whole register tiles
    const long Dp = (D + R - 1) / R * R;  // state rows, whole register tiles
    const long ldf = (D + VEC - 1) / VEC * VEC;
    const long zs = Dp > ldf ? Dp : ldf;
    Scratch mem;
    float *fq = mem.take(Cp * ldf), *fk = mem.take(Cp * ldf), *fkt = mem.take(Dp * C), *a = mem.take(Cp * C);
    float *num = mem.take((Cp + R) * Dv), *state = mem.take(Dp * Dv), *z = mem.take(zs), *den = mem.take(Cp);
    if (!mem.ok()) return -1;
    float* junk = num + Cp * Dv;  // where the output of a row past the end goes
    const long dvec = Dv / VEC;
    for (long n = n0; n < n1; ++n) {
        const float *qn = q + n * L * D, *kn = k + n * L * D, *vn = v + n * L * Dv;
        float* on = out + n * L * Dv;
        clear_state(state, Dp, Dv, z, zs);
        for (long t0 = 0; t0 < L; t0 += C) {
            const long c = L - t0 < C ? L - t0 : C;
            features(qn + t0 * D, c, Cp, D, fq, ldf);
            key_features(kn + t0 * D, c, C, D, Dp, fk, ldf, fkt);
            // inside the chunk: A = phi(Q) phi(K)^T, j <= i, its row sums; then + phi(Q) . z
            for (long i0 = 0; i0 < Cp; i0 += R) {
                const float* qr[R];
                for (int r = 0; r < R; ++r) qr[r] = fq + (i0 + r) * ldf;
                for (long c0 = 0; c0 < C / VEC; c0 += CV)
                    scores(qr, D, 1.0f, fkt + c0 * VEC, C, C / VEC - c0, a + i0 * C + c0 * VEC, C);
            }
            vi iota;
            for (int l = 0; l < VEC; ++l) iota[l] = l;
            for (long i = 0; i < Cp; ++i) {
                float* ai = a + i * C;
                vf s = {};
                for (long j = 0; j < C; j += VEC) {
                    const vf x = (iota + (int32_t)j) <= (int32_t)i ? load(ai + j) : vf{};
                    store(ai + j, x);
                    s += x;
                }
                const float* fi = fq + i * ldf;
                for (long d = 0; d < ldf; d += VEC) s += load(fi + d) * load(z + d);
                den[i] = hsum(s);
            }
            // the output: A V (the chunk's keys), then + phi(Q) S (those before it), divided
            for (long i0 = 0; i0 < Cp; i0 += R) {
                float* dst[R];
                float inv[R];
                for (int r = 0; r < R; ++r) {
                    const long i = i0 + r;
                    dst[r] = i < c ? on + (t0 + i) * Dv : junk;
                    inv[r] = 1.0f / (den[i] > FLT_MIN ? den[i] : FLT_MIN);
                }
                values(a + i0 * C, C, c, vn + t0 * Dv, Dv, dvec, num + i0 * Dv, Dv, false, nullptr, nullptr);
                values(fq + i0 * ldf, ldf, D, state, Dv, dvec, num + i0 * Dv, Dv, true, dst, inv);
            }
            add_to_state(fkt, c, C, D, Dp, vn + t0 * Dv, Dv, state, z);  // the state after the chunk
        }
    }
    return 0;
}

// q (N, L, D), k (N, S, D), v (N, S, Dv), out (N, L, Dv) contiguous fp32, Dv a multiple of
// band_vector_width(); sequences n0 .. n1-1. Returns 0, or -1 without scratch memory.
int linear_attention(const float* q, const float* k, const float* v, float* out, long L, long S, long D, long Dv,
                     long n0, long n1) {
    constexpr long C = 8 * VEC;                // keys (queries) per step
    const long Dp = (D + R - 1) / R * R;       // state rows, whole register tiles
    const long Cp = (C + R - 1) / R * R;
    const long ldf = (D + VEC - 1) / VEC * VEC;
    const long zs = Dp > ldf ? Dp : ldf;
    Scratch mem;
    float *f = mem.take(Cp * ldf), *fkt = mem.take(Dp * C), *num = mem.take((Cp + R) * Dv);
    float *state = mem.take(Dp * Dv), *z = mem.take(zs);
    if (!mem.ok()) return -1;
    float* junk = num + Cp * Dv;
    for (long n = n0; n < n1; ++n) {
        const float *qn = q + n * L * D, *kn = k + n * S * D, *vn = v + n * S * Dv;
        float* on = out + n * L * Dv;
        clear_state(state, Dp, Dv, z, zs);
        for (long t0 = 0; t0 < S; t0 += C) {  // the state: S += phi(K)^T V, z += sum phi(k)
            const long c = S - t0 < C ? S - t0 : C;
            key_features(kn + t0 * D, c, C, D, Dp, f, ldf, fkt);
            add_to_state(fkt, c, C, D, Dp, vn + t0 * Dv, Dv, state, z);
        }
        for (long t0 = 0; t0 < L; t0 += C) {  // every query: phi(q) S / phi(q) . z
            const long c = L - t0 < C ? L - t0 : C;
            features(qn + t0 * D, c, Cp, D, f, ldf);
            for (long i0 = 0; i0 < Cp; i0 += R) {
                float* dst[R];
                float inv[R];
                for (int r = 0; r < R; ++r) {
                    const long i = i0 + r;
                    vf s = {};
                    for (long d = 0; d < ldf; d += VEC) s += load(f + i * ldf + d) * load(z + d);
                    const float den = hsum(s);
                    dst[r] = i < c ? on + (t0 + i) * Dv : junk;
                    inv[r] = 1.0f / (den > FLT_MIN ? den : FLT_MIN);
                }
                values(f + i0 * ldf, ldf, D, state, Dv, Dv / VEC, num + i0 * Dv, Dv, false, dst, inv);
            }
        }
    }
    return 0;
}
}
