// The sort stage of one ORDER BY, a template: generate_sort (sort.rs) fills in the words
// starting with a dollar sign (the keys, the comparator over the key columns, their
// parameters and the arguments passing them on, the rank-sort limit).
// ======== Sort by [$KEYS]: bitonic sort of a row permutation ========
__device__ int compare_rows(uint32_t a, uint32_t b$DECLS) {
$COMPARE    return a < b ? -1 : (a > b ? 1 : 0);
}

extern "C" __global__ void sort_iota(uint32_t* idx, uint32_t npow2) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) idx[i] = i;
}

// The compare-exchange of entry i in step (j, k) of the bitonic network; rows >= n are
// padding and sort last.
__device__ __forceinline__ void bitonic_cx(uint32_t* idx, uint32_t i, uint64_t n, uint32_t j, uint32_t k$DECLS) {
    const uint32_t ixj = i ^ j;
    if (ixj <= i) return;
    const uint32_t a = idx[i], b = idx[ixj];
    bool a_after_b;
    if (a >= n || b >= n) a_after_b = a >= n && (b < n || a > b);
    else a_after_b = compare_rows(a, b$ARGS) > 0;
    const bool up = (i & k) == 0;
    if (up == a_after_b) { idx[i] = b; idx[ixj] = a; }
}

// One step (j, k) over all entries: a launch per step.
extern "C" __global__ void sort_step(uint32_t* idx, uint32_t npow2, uint64_t n, uint32_t j, uint32_t k$DECLS) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) bitonic_cx(idx, i, n, j, k$ARGS);
}

// Small inputs (n <= $SMALL): a rank sort. Row i's rank is how many rows sort before it
// (ties break on the row index, so ranks are distinct); one warp per (row i, 32 rows j)
// counts them with a ballot and adds them with one atomic. The n^2 compares are
// independent and spread over the whole GPU: a bitonic network in one block ran its
// ~log^2 n steps one after another, each a chain of global loads (0.35 ms for 800 rows
// sorted by three keys, two of them strings).
extern "C" __global__ void sort_rank(uint32_t* __restrict__ rank, uint64_t n$DECLS) {
    const uint64_t chunks = (n + 31) / 32, warps = n * chunks;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t stride = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < warps; w += stride) {
        const uint32_t i = (uint32_t)(w / chunks), j = (uint32_t)((w % chunks) * 32 + lane);
        const bool before = j < n && j != i && compare_rows(j, i$ARGS) < 0;
        const uint32_t c = __popc(__ballot_sync(FULL_MASK, before));
        if (lane == 0 && c != 0) atomicAdd(&rank[i], c);
    }
}

extern "C" __global__ void sort_scatter(const uint32_t* __restrict__ rank, uint32_t* __restrict__ perm, uint64_t n) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) perm[rank[i]] = (uint32_t)i;
}

// Top-N: after a compare-exchange at distance c (all ascending), the first c entries of
// each 2c block hold that block's c first rows (as a bitonic run); keep only those.
extern "C" __global__ void sort_keep_halves(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t c, uint32_t out_len) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_len) out[i] = in[(i / c) * 2u * c + i % c];
}
