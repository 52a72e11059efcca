"""The compiled kernels (attn_core/kernels/native): the band's every row against a float64 oracle of
the masked softmax, causal linear attention against the float64 quadratic form, each equal to the
PyTorch path, the thread splits equal to one thread, and what happens without a compiler."""

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from tolerance import assert_close, close

from attn_core.kernels import KERNELS, native

ROOT = Path(__file__).resolve().parents[2]
# scripts/test.sh (CI) installs g++ and sets ATTN_REQUIRE_NATIVE=1: there the kernel must build, and these
# tests never skip. Elsewhere, without a compiler, they skip with the reason.
REQUIRED = os.environ.get("ATTN_REQUIRE_NATIVE") == "1"
pytestmark = pytest.mark.skipif(
    native.library() is None and not REQUIRED, reason=f"no band kernel here: {native.why()}"
)


def oracle(q, k, v, before, after, scale, min_key=0, n_valid=None):
    """softmax over j in [i - before, i + after] ∩ [min_key, n_valid) in float64, row by row of the
    whole L x L product: out (N, L, Dv), lse (N, L) (-inf and 0 for a row with no key)."""
    N, L, _ = q.shape
    i, j = torch.arange(L).view(-1, 1), torch.arange(L).view(1, -1)
    ok = ((j >= i - before) & (j <= i + after) & (j >= min_key)).expand(N, L, L)
    if n_valid is not None:
        ok = ok & (j.view(1, 1, -1) < torch.as_tensor(n_valid).view(-1, 1, 1))
    s = (q.double() @ k.double().transpose(-1, -2) * scale).masked_fill(~ok, -math.inf)
    lse = torch.logsumexp(s, -1)
    return torch.softmax(s, -1).nan_to_num(0.0) @ v.double(), lse


def test_the_kernel_builds_when_ci_requires_it():
    if not REQUIRED:
        pytest.skip("ATTN_REQUIRE_NATIVE is not set (scripts/test.sh sets it)")
    assert native.library() is not None, f"the band kernel did not build in CI: {native.why()} (install g++)"


CASES = [  # N, L, D, Dv, before, after, min_key, n_valid
    (4, 300, 64, 64, 128, 128, 0, None),  # the benchmark's band, several tiles of keys
    (2, 1000, 64, 64, 128, 0, 0, None),  # causal
    (3, 50, 8, 5, 3, 3, 0, None),  # Dv no multiple of the vector width: padded
    (3, 77, 16, 16, 5, 5, 4, [70, 3, 77]),  # keys below min_key and past each sequence's own end
    (1, 7, 3, 2, 2, 2, 9, None),  # min_key past the end: no row has a key
    (2, 2000, 32, 48, 40, 40, 1, None),
    (2, 13, 7, 16, 100, 100, 0, None),  # the window wider than the sequence: full attention
    (1, 1, 4, 4, 2, 2, 0, None),
]


@pytest.mark.parametrize("N,L,D,Dv,before,after,min_key,n_valid", CASES)
def test_every_row_equals_the_float64_masked_softmax(N, L, D, Dv, before, after, min_key, n_valid):
    g = torch.Generator().manual_seed(L)
    q, k, v = torch.randn(N, L, D, generator=g), torch.randn(N, L, D, generator=g), torch.randn(N, L, Dv, generator=g)
    scale = 1 / math.sqrt(D)
    out, lse = native.band_attention(
        q, k, v, before=before, after=after, scale=scale, min_key=min_key, n_valid=n_valid, need_lse=True
    )
    ref, ref_lse = oracle(q, k, v, before, after, scale, min_key, n_valid)
    assert out.shape == (N, L, Dv) and lse.shape == (N, L) and out.is_contiguous()  # padded inside, not outside
    assert_close(out, ref, rtol=1e-6)  # a float64 oracle: tight, relative
    seen = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), seen)  # -inf exactly where a row has no key ...
    assert not seen.any() or close(lse[seen], ref_lse[seen], rtol=1e-6)
    assert (out[~seen] == 0).all()  # ... and its output is 0, not NaN


def test_large_scores_do_not_overflow_and_rows_near_one_hot_are_as_exact_as_pytorchs():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 600, 64, generator=g) * 6 for _ in range(3))  # scores ~ 36·8: exp overflows fp32
    out, _ = native.band_attention(q[0], k[0], v[0], before=128, after=128, scale=1.0)
    ref, _ = oracle(q[0], k[0], v[0], 128, 128, 1.0)
    with native.disabled():
        theirs = KERNELS["sliding_window"].fn(q, k, v, window=128, scale=1.0)[0]
    assert torch.isfinite(out).all()
    # fp32 scores this large are exact to ~1e-5 only, so both paths miss the float64 oracle: by as much
    assert (out.double() - ref).abs().max() <= 2 * (theirs.double() - ref).abs().max() + 1e-6


SPARSE = [
    ("sliding_window", {"window": 128}),
    ("sliding_window", {"window": 3}),
    ("dilated", {"window": 4, "dilation": 3}),
    ("global_window", {"window": 16, "global_tokens": 3}),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name,opts", SPARSE)
def test_the_windowed_kernels_agree_on_both_paths(name, opts, causal):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 700, 32, generator=g) for _ in range(3))
    fn = KERNELS[name].fn
    fast = fn(q, k, v, causal=causal, **opts)
    with native.disabled():
        assert not native.usable(q, k, v)
        slow = fn(q, k, v, causal=causal, **opts)
    assert_close(fast, slow)


def test_the_pytorch_path_keeps_gradients_and_other_dtypes():
    q = torch.randn(1, 2, 40, 16, requires_grad=True)
    k, v = torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)
    assert not native.usable(q, k, v)  # a gradient wanted: the kernel has no backward
    KERNELS["sliding_window"].fn(q, k, v, window=4).sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    with torch.no_grad():
        assert native.usable(q, k, v)
    assert not native.usable(q.detach().double(), k.double(), v.double())


@pytest.mark.parametrize("N", [1, 3])  # split by rows (N < threads), by sequences (N >= threads)
def test_the_threads_split_gives_what_one_thread_gives(N):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(N, 3001, 64, generator=g) for _ in range(3))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one, lse1 = native.band_attention(q, k, v, before=100, after=37, scale=0.125, min_key=2, need_lse=True)
        torch.set_num_threads(3)
        many, lse3 = native.band_attention(q, k, v, before=100, after=37, scale=0.125, min_key=2, need_lse=True)
    finally:
        torch.set_num_threads(before)
    assert close(one, many, rtol=1e-6) and torch.equal(torch.isfinite(lse1), torch.isfinite(lse3))
    ref, _ = oracle(q, k, v, 100, 37, 0.125, 2)
    assert_close(many, ref, rtol=1e-6)


def linear_oracle(q, k, v, causal=True):
    """elu + 1 linear attention as its quadratic form in float64: (φ(Q) φ(K)ᵀ, masked to j <= i when causal) V,
    each row divided by its sum."""
    f = [torch.where(x > 0, x + 1, x.exp()) for x in (q.double(), k.double())]  # not elu(x) + 1: that is 0 below -37
    a = f[0] @ f[1].transpose(-1, -2)
    a = a.tril() if causal else a
    return (a @ v.double()) / a.sum(-1, keepdim=True)


LINEAR = [  # causal, B, H, L, S, D, Dv: causal with S = L; non-causal keys and values of another length too
    (True, 1, 4, 1000, 1000, 64, 64),
    (True, 2, 3, 33, 33, 16, 16),
    (True, 1, 1, 31, 31, 8, 5),
    (True, 1, 2, 1, 1, 4, 4),
    (True, 1, 2, 100, 100, 20, 30),
    (True, 1, 1, 64, 64, 7, 64),
    (False, 1, 4, 1000, 1000, 64, 64),
    (False, 2, 3, 33, 50, 16, 16),
    (False, 1, 1, 31, 200, 8, 5),
    (False, 1, 2, 300, 7, 20, 30),
]


@pytest.mark.parametrize("causal,B,H,L,S,D,Dv", LINEAR)
def test_linear_equals_its_quadratic_form_on_both_paths(causal, B, H, L, S, D, Dv):
    g = torch.Generator().manual_seed(L + S + D)
    q, k, v = (torch.randn(B, H, n, d, generator=g) for n, d in ((L, D), (S, D), (S, Dv)))
    name = "causal_linear" if causal else "linear_elu"
    fast = KERNELS[name].fn(q, k, v)
    with native.disabled():
        slow = KERNELS[name].fn(q, k, v)
    ref = linear_oracle(q, k, v, causal=causal)
    assert fast.shape == (B, H, L, Dv) and fast.is_contiguous()
    assert close(fast, ref) and close(slow, ref)
    if causal:
        assert torch.equal(fast, KERNELS["linear_elu"].fn(q, k, v, causal=True))  # the same kernel by either name


def test_causal_linear_features_far_below_zero_keep_their_ratio():
    # φ(x) = eˣ below 0: at x ~ -60 every feature is ~1e-26. The kernel takes eˣ itself, so the ratio survives
    # (elu(x) + 1 as written would be -1 + 1e-26 + 1 = 0 in fp32, and the output 0).
    g = torch.Generator().manual_seed(4)
    q, k, v = (
        torch.randn(1, 2, 200, 16, generator=g) - 60,
        torch.randn(1, 2, 200, 16, generator=g),
        torch.randn(1, 2, 200, 16),
    )
    out = KERNELS["causal_linear"].fn(q, k, v)
    ref = linear_oracle(q, k, v)
    assert torch.isfinite(ref).all() and ref.abs().max() > 0.1
    assert_close(out, ref)


def test_causal_linear_chunks_and_threads_do_not_change_the_result():
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(6, 700, 64, generator=g) for _ in range(3))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = native.causal_linear(q, k, v, chunk=32)
        wide = native.causal_linear(q, k, v, chunk=64)
        plain = native.linear(q, k, v)
        torch.set_num_threads(3)
        split = native.causal_linear(q, k, v, chunk=32)
        plain_split = native.linear(q, k, v)
    finally:
        torch.set_num_threads(before)
    assert close(one, split, rtol=1e-6) and close(plain, plain_split, rtol=1e-6)  # whatever the thread count
    assert_close(plain, linear_oracle(q, k, v, causal=False))
    assert_close(one, wide)
    assert_close(one, linear_oracle(q, k, v))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_splits_over_threads_of_its_own():
    q = torch.randn(2, 3000, 64)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        want, _ = native.band_attention(q, q, q, before=64, after=64, scale=0.125)  # the parent's pool now has threads
        pid = os.fork()
        if pid == 0:  # the child: the same call, split over two threads again, must finish and agree
            try:  # (compared as bytes: torch's own OpenMP pool may not survive a fork, and is not what is tested)
                got, _ = native.band_attention(q, q, q, before=64, after=64, scale=0.125)
                os._exit(0 if got.numpy().tobytes() == want.numpy().tobytes() else 3)
            finally:
                os._exit(4)
        deadline = time.monotonic() + 60
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child never finished: it waited on its parent's threads")
        assert os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        torch.set_num_threads(before)


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


CHECK = (
    "import torch; from attn_core.kernels import KERNELS, native; q = torch.randn(1, 2, 50, 8);"
    "print(native.library() is None, native.why());"
    "print(float(KERNELS['sliding_window'].fn(q, q, q, window=3).abs().sum()) > 0)"
)


def test_without_a_compiler_the_pytorch_path_runs_and_says_why(tmp_path):
    done = _python(CHECK, CXX="/nonexistent/c++", ATTN_NATIVE_CACHE=str(tmp_path), ATTN_REQUIRE_NATIVE="0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("True") and "nonexistent" in done.stdout
    assert done.stdout.splitlines()[1] == "True"


def test_a_required_kernel_that_cannot_build_is_an_error(tmp_path):
    done = _python(CHECK, CXX="/nonexistent/c++", ATTN_NATIVE_CACHE=str(tmp_path), ATTN_REQUIRE_NATIVE="1")
    assert done.returncode != 0 and "nonexistent" in done.stderr


def test_a_build_is_cached_by_fingerprint_and_reused(tmp_path):
    first = _python(CHECK, ATTN_NATIVE_CACHE=str(tmp_path))
    assert first.returncode == 0 and first.stdout.startswith("False"), first.stderr
    (built,) = tmp_path.glob("band-*.so")
    stamp = built.stat().st_mtime_ns
    again = _python(
        CHECK, ATTN_NATIVE_CACHE=str(tmp_path), CXX="/nonexistent/c++", ATTN_REQUIRE_NATIVE="0"
    )  # another compiler: rebuilt ...
    assert again.stdout.startswith("True")
    reused = _python(CHECK, ATTN_NATIVE_CACHE=str(tmp_path))  # ... the same: loaded, not built
    assert reused.stdout.startswith("False") and built.stat().st_mtime_ns == stamp
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".so" and not p.name.startswith("band-")]
