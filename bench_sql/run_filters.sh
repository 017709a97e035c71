#!/bin/bash
# The multi-predicate filter statements of filters.sql (median kernel ms, TPC-H SF 10).
# Usage: run_filters.sh BINARY
exec python3 "$(dirname "$0")/run_timed.py" "$1" "$(dirname "$0")/filters.sql" --data "--tpch 10"
