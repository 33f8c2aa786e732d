#!/usr/bin/env bash
# On the GPU machine (issue 49): unpacks bench/r_payload.sh's payload at R's
# own paths, installs clbayes from its source tarball against NVIDIA's
# OpenCL, and runs R scripts with it. With the payload carried:
#   run(carry = [".bench-deps"], command = "bash bench/run_gpu_r.sh bench/bench_x.R [args]")
set -euo pipefail
mkdir -p /tmp/icd && echo /usr/lib/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
xz -dc .bench-deps/r-payload.tar.xz | $SUDO tar -xf - -C /
export PATH=/usr/lib/R/bin:$PATH
export LD_LIBRARY_PATH=/opt/rdeps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export R_LIBS=/opt/rdeps/rlib
mkdir -p "$R_LIBS"
t0=$(date +%s)
MAKEFLAGS=-j$(nproc) R CMD INSTALL --no-test-load /opt/rdeps/clbayes_*.tar.gz > /tmp/r_install.log 2>&1 ||
  { tail -40 /tmp/r_install.log; exit 1; }
grep -E "OpenCL found|building without OpenCL" /tmp/r_install.log || true
echo "installed in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
script=$1; shift
Rscript "$script" "$@"
