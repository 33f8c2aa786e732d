#!/bin/bash
# The OpenCL GEMM kernel through CUDA, for ptxas, cuobjdump and Nsight
# Compute (log 2026-11-25-h200-gemm-mbarrier). On an NVIDIA machine with
# CUDA (nvcc, ptxas, ncu) and NVIDIA's OpenCL, from the repository root:
#   bash bench/cuda/ptx_profile.sh OUT_DIR [n] [kernel defines ...]
# Defaults: n = 8192 and the large tiles on the tensor cores, op NN.
# Writes OUT_DIR/gemm.ptx, gemm.sass and ncu.txt, and prints the timings
# (ptx_gemm.cu) beside cublasDgemm.
set -e
out=${1:?OUT_DIR}; n=${2:-8192}; shift $(( $# < 2 ? $# : 2 ))
defines=${*:-"TM=128 TN=128 TK=8 WPTM=8 WPTN=8 TRANS_A=0 TRANS_B=0 PERSISTENT=0 MMA=1"}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
make -s -C "$here/.." kernel_report
"$here/../kernel_report" gemm $defines --ptx "$out/gemm.bin" > "$out/build.log"
# The OpenCL global offset lives in %envreg registers; outside OpenCL it is 0.
tr -d '\000' < "$out/gemm.bin" | sed -E 's/%envreg[0-9]+/0/g' |
  sed '/^\.metadata_section/,$d' > "$out/gemm.ptx"
ptxas -arch=sm_90 -v "$out/gemm.ptx" -o "$out/gemm.cubin" 2>&1 | tail -2
cuobjdump -sass "$out/gemm.cubin" > "$out/gemm.sass"
nvcc -O3 -arch=sm_90 "$here/ptx_gemm.cu" -o "$out/ptx_gemm" -lcuda -lcublas
define() { echo " $defines " | sed -nE "s/.* $1=([0-9]+) .*/\1/p"; }
tm=$(define TM); tn=$(define TN); wm=$(define WPTM); wn=$(define WPTN)
launch="$n 5 $tm $tn $((tm / wm)) $((tn / wn))"
"$out/ptx_gemm" "$out/gemm.ptx" $launch
NO_CUBLAS=1 ncu --clock-control none -k gemm -c 1 --section SpeedOfLight \
  --section WarpStateStats --section SchedulerStats --section SourceCounters \
  --print-details all "$out/ptx_gemm" "$out/gemm.ptx" $launch > "$out/ncu.txt" 2>&1 || true
grep -E 'Compute \(SM\) Throughput|^ +stall_[a-z_]+ ' "$out/ncu.txt" | grep -v 'Not Issued' || true
