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
