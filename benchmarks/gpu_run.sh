#!/usr/bin/env bash
# The GPU measurement, run once on a CUDA machine: the kernel tests on the device, then the
# Complexity page's default sweep (fp32 and bf16, up to L = 65 536) and the kernel comparison.
# Usage: OUT=some/dir bash benchmarks/gpu_run.sh
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
ATTN_TEST_DEVICE=cuda python3 -m pytest -q -p no:cacheprovider tests/unit/test_kernels.py 2>&1 | tail -3
LENGTHS=256,512,1024,2048,4096,8192,16384,32768,65536
python3 -m attn_core bench --device cuda --lengths $LENGTHS --csv "$OUT/bench_cuda_fp32.csv"
python3 -m attn_core bench --device cuda --dtype bf16 --lengths $LENGTHS --csv "$OUT/bench_cuda_bf16.csv"
python3 benchmarks/kernels_bench.py --device cuda --length 16384
python3 benchmarks/kernels_bench.py --device cuda --length 65536
