#!/bin/bash
# The multi-predicate filter statements of filters.sql (median kernel ms, TPC-H SF 10).
# Usage: run_filters.sh BINARY
exec "$(dirname "$0")/run_timed.sh" "$1" "$(dirname "$0")/filters.sql" "--tpch 10"
