// Kernels over single integer keys of a hash build, a template instantiated by sort.rs
// (util_module) for 4-byte keys (int32_t, entries int2) and 8-byte keys (int64_t,
// longlong2): the words starting with a dollar sign are the width, key and entry types.
extern "C" __global__ void fill_entries_$W($ENTRY* __restrict__ out, uint64_t n) {
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) { $ENTRY e; e.x = 0; e.y = -1; out[s] = e; }
}
// Entries in the build's own slot order (large tables keep its low load factor).
extern "C" __global__ void copy_entries_$W(const int* __restrict__ slots, const $KEY* __restrict__ keys, $ENTRY* __restrict__ out, uint64_t n) {
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) {
        const int g = slots[s]; $ENTRY e; e.x = g >= 0 ? keys[g] : 0; e.y = g; out[s] = e;
    }
}
// Dense integer keys: the key range, then a direct-mapped table of group ids (-1: none).
extern "C" __global__ void key_range_$W(const $KEY* __restrict__ keys, uint64_t n, long long* __restrict__ minmax) {
    long long lo = 0x7fffffffffffffffll, hi = -0x7fffffffffffffffll - 1;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) { const long long k = keys[i]; lo = k < lo ? k : lo; hi = k > hi ? k : hi; }
    atomicMin(&minmax[0], lo); atomicMax(&minmax[1], hi);
}
// A bit per key value over [min, max] (a probe's pre-filter).
extern "C" __global__ void key_bitmap_$W(const $KEY* __restrict__ keys, uint64_t groups, long long min, uint32_t* __restrict__ bits) {
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) { const uint64_t d = (uint64_t)((long long)keys[g] - min); atomicOr(&bits[d >> 5], 1u << (d & 31)); }
}
extern "C" __global__ void direct_table_$W(const $KEY* __restrict__ keys, uint64_t groups, long long min, int* __restrict__ out) {
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) out[(long long)keys[g] - min] = (int)g;
}
