// ======== Window stage (codegen/src/window.rs): rows sorted by the partition keys, then
// the order keys. window_heads marks where partitions and peer groups start (and where
// partitions end); frame aggregates that run from a partition's start (or to its end)
// read segmented scans; window_calls computes every call of the window per row. ========
#define WVALID(v, i) ((v) == nullptr || (v)[i] != 0)
#define NO_ROW 0xffffffffu
// A sum of integers or decimals (exact) and of DOUBLEs, with the count of values added.
struct SumI { __int128 s; unsigned long long n; };
struct SumF { double s; unsigned long long n; };
// The count, mean and sum of squared differences from the mean of DOUBLEs (var_pop,
// var_samp, stddev_pop, stddev_samp), combined as DuckDB combines its states.
struct Moments { unsigned long long n; double mean; double m2; };
__device__ __forceinline__ Moments moments_combine(Moments a, Moments b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double an = (double)a.n, bn = (double)b.n, n = an + bn;
    const double delta = b.mean - a.mean;
    return Moments{a.n + b.n, (bn * b.mean + an * a.mean) / n, b.m2 + a.m2 + delta * delta * bn * an / n};
}

// IGNORE NULLS: the row of the n-th (from 1) non-NULL value among rows [lo, hi) of the
// partition starting at ps, from `counts` (a scan: the non-NULL values from ps through
// each row); NO_ROW64 where there are fewer (exec's CPU twin: nth_non_null).
#define NO_ROW64 0xffffffffffffffffull
__device__ uint64_t window_nth_non_null(const unsigned long long* counts, uint64_t ps, uint64_t lo, uint64_t hi, unsigned long long n) {
    if (n == 0 || hi <= lo) return NO_ROW64;
    const unsigned long long base = lo > ps ? counts[lo - 1] : 0ull;
    if (counts[hi - 1] - base < n) return NO_ROW64;
    const unsigned long long target = base + n;
    while (lo < hi) {
        const uint64_t m = (lo + hi) / 2;
        if (counts[m] < target) lo = m + 1; else hi = m;
    }
    return lo;
}

// ntile(n)'s bucket (1-based) of the row at 0-based `index` of a partition of `rows` rows
// (gpusql_plan::window::ntile).
__device__ int64_t window_ntile(int64_t n, int64_t index, int64_t rows) {
    n = n < rows ? n : rows;
    if (n < 1) n = 1;
    const int64_t size = rows / n, larger = rows % n, in_larger = larger * (size + 1);
    return index < in_larger ? index / (size + 1) + 1 : larger + (index - in_larger) / size + 1;
}

__device__ int compare_partition(uint64_t a, uint64_t b$DECLS) {
$PARTITION    return 0;
}

__device__ int compare_peers(uint64_t a, uint64_t b$DECLS) {
$PEERS    return 0;
}

extern "C" __global__ void window_heads(uint64_t n, uint32_t* __restrict__ part_heads, uint32_t* __restrict__ peer_heads, uint32_t* __restrict__ part_ends$DECLS) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const bool part = i == 0 || compare_partition(i - 1, i$ARGS) != 0;
        part_heads[i] = part ? 1u : 0u;
        peer_heads[i] = part || compare_peers(i - 1, i$ARGS) != 0 ? 1u : 0u;
        part_ends[i] = i + 1 == n || compare_partition(i, i + 1$ARGS) != 0 ? 1u : 0u;
    }
}
