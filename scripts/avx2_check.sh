#!/usr/bin/env bash
# Runs the model tests (every golden case in float32, bfloat16 and int8,
# under every CPU kernel mode) and the golden cases over gRPC again with
# oneDNN and ATen capped at AVX2:
#
#   ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
#
# The CPU backend (model/torch/cpu_backend.h) honours the same variables
# for its own kernels, so on an AVX-512 machine this runs what an AVX2-only
# CPU runs (no packed bfloat16, int8 without VNNI, no AVX-512 kernels), and
# CI checks both kinds of CPU whichever it runs on. CpuBackendTest checks
# that the caps took hold.
#
#   scripts/avx2_check.sh [BUILD_DIR]     (default build; built by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
echo "avx2_check: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), capped at AVX2"
"$build/tests/model_tests" --gtest_brief=1
"$build/tests/e2e/e2e_tests" --gtest_brief=1 --gtest_filter='*GoldenServer*'
