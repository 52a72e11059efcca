#!/usr/bin/env bash
# The GPU measurement, run once on a CUDA machine: the kernel tests on the device, the Complexity
# page's default sweep (fp32 and bf16, up to L = 65 536) and the kernel comparison, all into one
# dated log that names the commit, the GPU, the driver, Python and torch.
#
# Usage: OUT=some/dir bash benchmarks/gpu_run.sh        (default OUT: benchmarks/results)
#        WHEELS=dir  a folder holding the pinned torch's CUDA wheel, installed first when the
#                    machine's torch is another version (a device machine reaches no index)
# Writes: $OUT/gpu_run_<UTC stamp>.txt, $OUT/bench_cuda_fp32.csv, $OUT/bench_cuda_bf16.csv
set -u
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
STAMP=$(date -u +%Y-%m-%dT%H%MZ)
LOG="$OUT/gpu_run_$STAMP.txt"
PIN=$(sed -n 's/^torch==\([0-9.]*\).*/\1/p' requirements.txt | head -1)
LENGTHS=256,512,1024,2048,4096,8192,16384,32768,65536

torch_version() { python3 -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || echo none; }

{
  echo "# benchmarks/gpu_run.sh, $STAMP UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  found=$(torch_version)
  if [ "$found" != "$PIN" ] && [ -n "${WHEELS:-}" ]; then
    echo "# torch $found here, pinned $PIN: installing it from $WHEELS"
    python3 -m pip install -q --no-index --find-links "$WHEELS" "torch==$PIN" || echo "# install failed"
    found=$(torch_version)
  fi
  if [ "$found" != "$PIN" ]; then
    echo "# NOTE: torch $found on this machine, requirements.txt pins $PIN (no wheel for it here): measured with $found"
  fi
  python3 -c 'import sys, torch; print("# python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| cuDNN", torch.backends.cudnn.version(), "|", torch.cuda.get_device_name(0))'
  echo "## kernel tests on the device (ATTN_TEST_DEVICE=cuda)"
  ATTN_TEST_DEVICE=cuda python3 -m pytest -q -p no:cacheprovider tests/unit/test_kernels.py tests/unit/test_kernels_limits.py 2>&1 | tail -5
  echo "## the Complexity page's sweep, fp32"
  python3 -m attn_core bench --device cuda --lengths $LENGTHS --csv "$OUT/bench_cuda_fp32.csv"
  echo "## the Complexity page's sweep, bf16"
  python3 -m attn_core bench --device cuda --dtype bf16 --lengths $LENGTHS --csv "$OUT/bench_cuda_bf16.csv"
  echo "## the kernels beside their peers (those installed here)"
  python3 benchmarks/kernels_bench.py --device cuda --lengths 4096,16384,65536 --rounds 5 --skip scales
  echo "# done $(date -u +%Y-%m-%dT%H:%MZ)"
} 2>&1 | tee "$LOG"
