#!/usr/bin/env bash
# The golden checks of every pipeline under each CPU-dependent code path forced on this machine
# (docs/development.md, "Byte-identical on other CPUs"): what another CPU would compute, as far
# as the libraries that pick kernels by CPU are concerned. Usage:
#   scripts/cross_cpu.sh [VARIANT ...]     (default: all; results in cross_cpu/<variant>.log)
# Variants:
#   intel-mkl       Intel MKL's Intel path (its AVX-512 kernels on an AVX-512 CPU): tests/
#                   mkl_intel_path.c preloaded; dataforge's MKL_CBWR pin stays in effect
#   intel-mkl-free  the same without the pin (MKL_CBWR=AUTO): what the pin prevents
#   openblas-skx    OpenBLAS's SkylakeX kernels instead of the pinned Haswell ones
#   numpy-avx2      numpy's AVX2 loops (an AVX2-only CPU)
#   numpy-base      numpy's baseline loops (SSE3)
#   llvm-sse41      llvmpipe / lavapipe JIT-compiled for SSE4.1 only
#   llvm-1thread    llvmpipe / lavapipe with one rasteriser thread
# Needs the venv (make install) and a C compiler for the MKL variants. About 3 minutes each.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p cross_cpu
SHIM=cross_cpu/libmkl_intel_path.so
ALL="intel-mkl intel-mkl-free openblas-skx numpy-avx2 numpy-base llvm-sse41 llvm-1thread"
AVX512="AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
status=0
for variant in ${@:-$ALL}; do
    case $variant in
        intel-mkl|intel-mkl-free) cc -shared -fPIC -O2 -o "$SHIM" tests/mkl_intel_path.c ;;
    esac
    case $variant in
        intel-mkl) env=(LD_PRELOAD="$PWD/$SHIM") ;;
        intel-mkl-free) env=(LD_PRELOAD="$PWD/$SHIM" MKL_CBWR=AUTO) ;;
        openblas-skx) env=(OPENBLAS_CORETYPE=SkylakeX) ;;
        numpy-avx2) env=(NPY_DISABLE_CPU_FEATURES="$AVX512") ;;
        numpy-base) env=(NPY_DISABLE_CPU_FEATURES="$AVX512 AVX2 FMA3 F16C AVX") ;;
        llvm-sse41) env=(GALLIUM_OVERRIDE_CPU_CAPS=sse4.1) ;;
        llvm-1thread) env=(LP_NUM_THREADS=1) ;;
        *) echo "unknown variant $variant (one of: $ALL)" >&2; exit 2 ;;
    esac
    echo "== $variant: ${env[*]}"
    env "${env[@]}" "$PY" -m pytest -q -p no:cacheprovider tests/test_conformance.py -k golden \
        > "cross_cpu/$variant.log" 2>&1
    rc=$?
    grep -E "passed|failed" "cross_cpu/$variant.log" | tail -1
    grep -E "^E +AssertionError" "cross_cpu/$variant.log" | cut -c1-240
    [ $rc -eq 0 ] || status=1
done
exit $status
