"""The CPU's compiled kernels (band.cpp: the sliding window; linear.cpp: causal linear attention;
tiles.h: what they share): built with the machine's C++ compiler at first use (the server starts the
build with itself, ``build_in_background``; the Dockerfile runs ``library()`` at image build time),
cached on disk by the source's and the machine's fingerprint, called through ctypes (which lets go
of the GIL, so other sessions' threads run meanwhile).

Without a compiler the banded engine keeps its PyTorch path; ``ATTN_REQUIRE_NATIVE=1`` makes a
failed build an error instead (the test script sets it, since it installs g++); ``ATTN_NATIVE=0``
turns the kernel off, and ``disabled()`` does so for a block of code (the benchmark's PyTorch-path
contender, the tests that compare the two paths)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import torch

HERE = Path(__file__).parent
SOURCES = [HERE / "band.cpp", HERE / "linear.cpp"]
HEADERS = [HERE / "tiles.h"]
FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-ffp-contract=fast", "-std=c++17", "-shared", "-fPIC"]
_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_why: str | None = None  # why there is no library, once a build was tried
_pool: ThreadPoolExecutor | None = None
_off: ContextVar[bool] = ContextVar("native_off", default=os.environ.get("ATTN_NATIVE") == "0")

# The functions the sources export (their ``extern "C"`` blocks) as ctypes calls them: name -> (result,
# arguments); a C pointer is c_void_p, a long c_long. Written here once: the library is declared from it,
# and tests/unit/test_native_signatures.py checks it against the declarations in the C++ sources.
_P, _LONG = ctypes.c_void_p, ctypes.c_long
SIGNATURES: dict[str, tuple[type, list[type]]] = {
    "band_vector_width": (ctypes.c_int, []),
    "band_attention": (ctypes.c_int, [_P, _P, _P, _P, _P, *[_LONG] * 7, _P, ctypes.c_float, *[_LONG] * 4]),
    "causal_linear_attention": (ctypes.c_int, [_P, _P, _P, _P, *[_LONG] * 6]),
    "linear_attention": (ctypes.c_int, [_P, _P, _P, _P, *[_LONG] * 6]),
}


def _cache_dir() -> Path:
    root = os.environ.get("ATTN_NATIVE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attention-explorer"
    )
    return Path(root)


def _fingerprint(compiler: str) -> str:
    """The source, the flags, the compiler and this CPU (-march=native builds for it alone)."""
    h = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES + HEADERS))
    h.update(" ".join([compiler, *FLAGS, platform.machine()]).encode())
    try:
        flags = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith(("flags", "Features"))]
        h.update((flags[0] if flags else "").encode())
    except OSError:
        pass
    return h.hexdigest()[:16]


def _build() -> ctypes.CDLL:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not compiler:
        raise RuntimeError("no C++ compiler (g++, c++ or clang++) on PATH")
    target = _cache_dir() / f"band-{_fingerprint(compiler)}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)  # built aside, renamed in one step:
        os.close(fd)  # replicas building at once never load a half-written file
        try:
            done = subprocess.run(
                [compiler, *FLAGS, *map(str, SOURCES), "-o", tmp],
                check=False,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode:
                raise RuntimeError(f"{compiler} failed: {done.stderr.strip()[-500:]}")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    lib = ctypes.CDLL(str(target))
    for name, (result, arguments) in SIGNATURES.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = result, arguments
    return lib


def library() -> ctypes.CDLL | None:
    """The built kernel, or None (``why()`` says why) when it cannot be built here."""
    global _lib, _why
    if _lib is not None or _why is not None:
        return _lib
    with _lock:
        if _lib is None and _why is None:
            try:
                _lib = _build()
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                _why = str(e)
                if os.environ.get("ATTN_REQUIRE_NATIVE") == "1":
                    raise
    return _lib


def why() -> str | None:
    return _why


def build_in_background() -> threading.Thread:
    """``library()`` in a thread of its own (a build, or the disk cache's library); returns at once. A
    kernel asked for meanwhile waits for this build rather than starting another."""
    thread = threading.Thread(target=library, name="build-native-kernels", daemon=True)
    thread.start()
    return thread


@contextmanager
def disabled() -> Iterator[None]:
    """The banded engine's PyTorch path inside this block (this thread and task only)."""
    token = _off.set(True)
    try:
        yield
    finally:
        _off.reset(token)


def usable(q: torch.Tensor, *tensors: torch.Tensor) -> bool:
    """Whether the kernel can take these tensors: fp32 on the CPU, no gradient wanted, not
    ``disabled()``, a build."""
    if _off.get():
        return False
    ts = (q, *tensors)
    if any(t.device.type != "cpu" or t.dtype != torch.float32 for t in ts):
        return False
    if torch.is_grad_enabled() and any(t.requires_grad for t in ts):
        return False
    return library() is not None


def band_attention(q, k, v, *, before: int, after: int, scale: float, min_key: int = 0, n_valid=None, need_lse=False):
    """Row i of each (N, L, D) sequence attends to keys i - before .. i + after inside
    [min_key, n_valid): (out (N, L, Dv), lse (N, L) or None); a row with no key gives 0 and -inf.
    The work is split over torch's intra-op thread count, by sequence or by rows."""
    lib = library()
    N, L, D = q.shape
    before, after = max(0, min(before, L - 1)), max(0, min(after, L - 1))  # the same band; scratch sized by L
    q, k, v, out, dv = _operands(lib, q, k, v)
    lse = torch.empty(N, L, dtype=q.dtype) if need_lse else None
    limits = None
    if n_valid is not None:
        limits = torch.as_tensor(n_valid, dtype=torch.int64).reshape(-1).expand(N).contiguous()
    ptr = [t.data_ptr() if t is not None else None for t in (q, k, v, out, lse, limits)]

    def run(n0: int, n1: int, r0: int, r1: int) -> None:
        args = (N, L, D, v.shape[-1], before, after, min_key, ptr[5], float(scale), n0, n1, r0, r1)
        if lib.band_attention(*ptr[:5], *args):
            raise MemoryError("band kernel: no scratch memory")

    _split(run, N, L, N * L * (before + after + 1), by_rows=True)
    return (out[..., :dv].contiguous() if out.shape[-1] != dv else out), lse


def causal_linear(q, k, v, *, chunk: int):
    """Causal elu + 1 linear attention over (N, L, D) q, k and (N, L, Dv) v, in chunks of ``chunk``
    positions (rounded up to the vector width): (N, L, Dv). Sequences are split over the threads;
    one sequence's state runs along it on one."""
    lib = library()
    N, L, D = q.shape
    width = lib.band_vector_width()
    q, k, v, out, dv = _operands(lib, q, k, v)
    ptr = [t.data_ptr() for t in (q, k, v, out)]
    c = -(-chunk // width) * width

    def run(n0: int, n1: int, r0: int, r1: int) -> None:
        if lib.causal_linear_attention(*ptr, L, D, v.shape[-1], c, n0, n1):
            raise MemoryError("causal linear kernel: no scratch memory")

    _split(run, N, L, N * L * D, by_rows=False)
    return out[..., :dv].contiguous() if out.shape[-1] != dv else out  # as any kernel's output: contiguous


def linear(q, k, v):
    """Non-causal elu + 1 linear attention over (N, L, D) q, (N, S, D) k and (N, S, Dv) v: the state
    Σ φ(k_j) v_jᵀ over all keys, then each query's φ(q_i) · state / φ(q_i) · Σ φ(k_j): (N, L, Dv)."""
    lib = library()
    N, L, D = q.shape
    S = k.shape[1]
    q, k, v, out, dv = _operands(lib, q, k, v)
    ptr = [t.data_ptr() for t in (q, k, v, out)]

    def run(n0: int, n1: int, r0: int, r1: int) -> None:
        if lib.linear_attention(*ptr, L, S, D, v.shape[-1], n0, n1):
            raise MemoryError("linear kernel: no scratch memory")

    _split(run, N, L, N * (L + S) * D, by_rows=False)
    return out[..., :dv].contiguous() if out.shape[-1] != dv else out  # as any kernel's output: contiguous


def _operands(lib, q, k, v):
    """Contiguous q, k and v padded to a whole number of vectors wide, the output to write, Dv."""
    dv = v.shape[-1]
    pad = -dv % lib.band_vector_width()
    v = (torch.nn.functional.pad(v, (0, pad)) if pad else v).contiguous()
    out = torch.empty(*q.shape[:-1], dv + pad, dtype=q.dtype)
    return q.contiguous(), k.contiguous(), v, out, dv


def _split(run, N: int, L: int, work: int, *, by_rows: bool) -> None:
    """run(n0, n1, r0, r1) over all N sequences and L rows, in torch's intra-op thread count of parts:
    by sequence, or (``by_rows``, fewer sequences than threads) by rows; small work in this thread."""
    threads = max(1, torch.get_num_threads())
    if threads == 1 or work < 1 << 18 or (N < threads and not by_rows):  # threads would cost more than they save
        run(0, N, 0, L)
    elif N >= threads:
        cuts = [N * t // threads for t in range(threads + 1)]
        _parallel(run, [(cuts[t], cuts[t + 1], 0, L) for t in range(threads)])
    else:
        cuts = [L * t // threads for t in range(threads + 1)]
        _parallel(run, [(0, N, cuts[t], cuts[t + 1]) for t in range(threads)])


def _after_fork() -> None:
    """A forked child has none of its parent's threads: a pool inherited from it would take work and
    never run it. The child starts its own (the library itself stays loaded)."""
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _parallel(run, parts) -> None:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="band")
    futures = [_pool.submit(run, *p) for p in parts[1:]]
    run(*parts[0])
    for f in futures:
        f.result()
