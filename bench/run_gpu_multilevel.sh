#!/usr/bin/env bash
# The multilevel benchmark on a GPU machine without R (issue: multilevel
# models): bench_multilevel.cpp on the device, then numpyro's NUTS on the
# same data in the same call. From the repository root, with Eigen in
# .bench-deps (a copy of RcppEigen's include/Eigen):
#   [ITER=1000 WARMUP=1000 CHAINS="16 64"] bash bench/run_gpu_multilevel.sh [n] [k] [groups] \
#       [numpyro warmup] [numpyro samples]
set -u
n=${1:-1000000}; k=${2:-20}; groups=${3:-10000}; nw=${4:-500}; ns=${5:-500}
iter=${ITER:-1000}; warmup=${WARMUP:-1000}; chain_counts=${CHAINS:-"16 64"}
mkdir -p /tmp/icd && echo /usr/lib/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
# glibc's allocator keeps freed blocks for reuse instead of mapping every
# multi-megabyte workspace afresh (page faults were 80% of a call's host time
# with 10^4 groups; RESULTS.md, Multilevel models)
export MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824
g++ -std=c++17 -O3 -march=native -fopenmp -DCLBAYES_OPENCL -Iinst/include -Ibench \
  -isystem .bench-deps bench/bench_multilevel.cpp -o /tmp/bench_multilevel -lOpenCL || exit 1
mkdir -p /tmp/mldata
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
for chains in $chain_counts; do
  /tmp/bench_multilevel --device --n "$n" --k "$k" --groups "$groups" --chains "$chains" \
    --iter "$iter" --warmup "$warmup" --write-data /tmp/mldata
done
date -u
PYTHONUNBUFFERED=1 timeout "${NUMPYRO_TIMEOUT:-420}" python3 bench/anchors_numpyro_multilevel.py --data /tmp/mldata \
  --n "$n" --k "$k" --groups "$groups" --chains 16 --warmup "$nw" --samples "$ns" ||
  echo "numpyro: did not finish within ${NUMPYRO_TIMEOUT:-420} s (exit $?)"
date -u
