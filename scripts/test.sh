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

# DuckDB, the oracle the fuzz tests also compare with (the version the .slt answers and
# the value semantics follow).
if ! python3 -c 'import duckdb, sys; sys.exit(0 if duckdb.__version__ == "2.0.1" else 1)' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check duckdb==2.0.1
fi

# TPC-DS at SF 0.01: Parquet tables from DuckDB's dsdgen and DuckDB 2.0.1's answers
# (the tpcds_answers_on_cpu test; made once per checkout, ~30 s).
export GPUSQL_TPCDS_DIR="$PWD/target/tpcds-sf0.01" GPUSQL_REQUIRE_TPCDS=1
if [ ! -f "$GPUSQL_TPCDS_DIR/answers/types.txt" ]; then
  mkdir -p target
  python3 scripts/tpcds_data.py --sf 0.01 --out "$GPUSQL_TPCDS_DIR" >target/tpcds-sf0.01.log 2>&1 \
    || { cat target/tpcds-sf0.01.log; exit 1; }
fi

# Formatting (rustfmt.toml) and lints (the workspace's in Cargo.toml), as errors; the
# rustup components are added where missing.
for tool in "fmt rustfmt" "clippy clippy"; do
  set -- $tool
  cargo "$1" --version >/dev/null 2>&1 || rustup component add "$2"
done
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The embedding API without the data generators (feature `datagen`).
cargo clippy -p gpusql --no-default-features --quiet -- -D warnings

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary (cargo's last line may be a doc-test run of 0).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
