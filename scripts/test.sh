#!/usr/bin/env bash
# Runs the whole test suite on a machine without a GPU (the CPU reference backend), and
# compile-checks every generated kernel with NVRTC from the pip package (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."

# NVRTC (libnvrtc.so.13 under site-packages/nvidia/cu13/lib); found by crates/cuda.
if ! python3 -c 'import importlib.util,sys; sys.exit(0 if importlib.util.find_spec("nvidia") else 1)' 2>/dev/null \
   || ! ls "$(python3 -c 'import site; print(site.getsitepackages()[0])')"/nvidia/cu13/lib/libnvrtc.so.13* >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-nvrtc==13.0.88
fi
export GPUSQL_REQUIRE_NVRTC=1

cargo test --workspace
