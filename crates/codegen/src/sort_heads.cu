// A sort's groups, a template: generate_sort (sort.rs) fills in $K (how many leading keys
// make a group), the comparator over those keys, and their parameters.
// ======== Groups of the first $K keys: heads[i] = 1 where sorted row i starts one ========
__device__ int compare_group(uint32_t a, uint32_t b$DECLS) {
$COMPARE    return 0;
}

extern "C" __global__ void sort_heads(const uint32_t* __restrict__ perm, uint64_t n, uint32_t* __restrict__ heads$DECLS) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) heads[i] = (i == 0 || compare_group(perm[i - 1], perm[i]$ARGS) != 0) ? 1u : 0u;
}
