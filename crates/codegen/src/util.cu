// Result assembly and hash-build helpers, compiled once (sort.rs: util_module). The
// kernels over 4- and 8-byte keys are in keyed_tables.cu, instantiated for both widths.
// ======== Result assembly: gathers through a row permutation, string byte copies ========
#define GATHER(NAME, T) extern "C" __global__ void NAME(const T* __restrict__ in, const uint32_t* __restrict__ idx, T* __restrict__ out, uint64_t n) { \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = in[idx[i]]; }
GATHER(gather_1, uint8_t)
GATHER(gather_4, uint32_t)
GATHER(gather_8, uint64_t)
GATHER(gather_16, ulonglong2)

// Copies each string's bytes to out + offsets[i], clipped at cap (a replay sizes out by
// the total its log holds, checked only after the copy).
extern "C" __global__ void copy_strings(const Str* __restrict__ strs, const uint64_t* __restrict__ offsets, uint8_t* __restrict__ out, uint64_t n, uint64_t cap) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const Str s = strs[i];
        const uint64_t at = offsets[i];
        const uint64_t len = at >= cap ? 0 : min((uint64_t)s.len, cap - at);
        for (uint64_t b = 0; b < len; b++) out[at + b] = s.p[b];
    }
}

// ---- exclusive prefix sums (hash-join build: rows per key; result assembly: string offsets) ----
// Exclusive scan of 256 values per block; block totals go to sums (scanned again by the
// host loop, scan.rs: exclusive_scan). IN_T values summed as OUT_T.
#define SCAN_BLOCKS(NAME, IN_T, OUT_T) extern "C" __global__ void NAME(const IN_T* __restrict__ in, OUT_T* __restrict__ out, OUT_T* __restrict__ sums, uint64_t n) { \
    __shared__ OUT_T warp_tot[8]; \
    const uint64_t i = (uint64_t)blockIdx.x * 256 + threadIdx.x; \
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5; \
    const OUT_T v = i < n ? (OUT_T)in[i] : (OUT_T)0; \
    OUT_T x = v; \
    for (int o = 1; o < 32; o <<= 1) { const OUT_T y = __shfl_up_sync(FULL_MASK, x, o); if (lane >= (uint32_t)o) x += y; } \
    if (lane == 31) warp_tot[warp] = x; \
    __syncthreads(); \
    if (warp == 0) { \
        OUT_T t = lane < 8 ? warp_tot[lane] : (OUT_T)0; \
        for (int o = 1; o < 8; o <<= 1) { const OUT_T y = __shfl_up_sync(FULL_MASK, t, o); if (lane >= (uint32_t)o) t += y; } \
        if (lane < 8) warp_tot[lane] = t; \
    } \
    __syncthreads(); \
    const OUT_T before = warp > 0 ? warp_tot[warp - 1] : (OUT_T)0; \
    if (i < n) out[i] = before + x - v; \
    if (threadIdx.x == 255) sums[blockIdx.x] = before + x; }
SCAN_BLOCKS(scan_blocks_4_4, uint32_t, uint32_t)
SCAN_BLOCKS(scan_blocks_4_8, uint32_t, uint64_t)
SCAN_BLOCKS(scan_blocks_8_8, uint64_t, uint64_t)
#define ADD_BLOCK_OFFSETS(NAME, T) extern "C" __global__ void NAME(T* __restrict__ out, const T* __restrict__ offs, uint64_t n) { \
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; \
    if (i < n) out[i] += offs[i / 256]; }
ADD_BLOCK_OFFSETS(add_block_offsets_4, uint32_t)
ADD_BLOCK_OFFSETS(add_block_offsets_8, uint64_t)

// ---- hash-join build: group the payload rows by key ----
// Position of each payload row: its group's first slot plus its rank inside the group.
extern "C" __global__ void assign_positions(const uint32_t* __restrict__ row_group, const uint32_t* __restrict__ offsets, uint32_t* __restrict__ fill, uint32_t* __restrict__ pos, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t g = row_group[i];
        pos[i] = offsets[g] + atomicAdd(&fill[g], 1u);
    }
}
#define SCATTER(NAME, T) extern "C" __global__ void NAME(const T* __restrict__ in, const uint32_t* __restrict__ pos, T* __restrict__ out, uint64_t n) { \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[pos[i]] = in[i]; }
SCATTER(scatter_1, uint8_t)
SCATTER(scatter_4, uint32_t)
SCATTER(scatter_8, uint64_t)
SCATTER(scatter_16, ulonglong2)

// ---- band joins: the running maximum of the build rows' upper bounds ----
// The rows are sorted by their lower bounds; a probe searches this non-decreasing column for
// the first row that can still reach it (plan/src/band.rs). One block: each thread takes a
// contiguous chunk, the chunks' maxima are scanned by one thread, then each chunk is
// rewritten from the maximum before it. Band tables are small (a range table), so one
// block's n / blockDim.x sequential steps cost little.
__device__ __forceinline__ int32_t sql_max(int32_t a, int32_t b) { return b > a ? b : a; }
__device__ __forceinline__ int64_t sql_max(int64_t a, int64_t b) { return b > a ? b : a; }
// NaN is above every number, as SQL orders it (f64_lt).
__device__ __forceinline__ double sql_max(double a, double b) { return f64_lt(a, b) ? b : a; }
#define RUNNING_MAX(NAME, T) extern "C" __global__ void NAME(const T* __restrict__ in, T* __restrict__ out, uint64_t n) { \
    __shared__ T chunk_max[1024]; \
    const uint64_t t = threadIdx.x, per = (n + blockDim.x - 1) / blockDim.x; \
    const uint64_t b = min(n, t * per), e = min(n, b + per); \
    if (b < e) { T m = in[b]; for (uint64_t i = b + 1; i < e; i++) m = sql_max(m, in[i]); chunk_max[t] = m; } \
    __syncthreads(); \
    if (t == 0) for (uint64_t c = 1; c < blockDim.x && c * per < n; c++) chunk_max[c] = sql_max(chunk_max[c - 1], chunk_max[c]); \
    __syncthreads(); \
    if (b < e) { T m = t > 0 ? chunk_max[t - 1] : in[b]; for (uint64_t i = b; i < e; i++) { m = sql_max(m, in[i]); out[i] = m; } } }
RUNNING_MAX(running_max_i32, int32_t)
RUNNING_MAX(running_max_i64, int64_t)
RUNNING_MAX(running_max_f64, double)

// Probe tables of single integer keys: {key, group id} per slot (-1: empty), rehashed into
// a table sized for the groups actually built (a filtered dimension shrinks to a few KB and
// fits in shared memory). Same hash as the generated probes (hash_table.rs: emit_hash).
__device__ __forceinline__ uint32_t entry_slot(int64_t key, uint32_t mask) {
    return (uint32_t)hash_combine(HASH_SEED, hash_u64((uint64_t)key)) & mask;
}
extern "C" __global__ void make_entries_4(const int32_t* __restrict__ keys, uint64_t groups, int2* __restrict__ out, uint32_t mask) {
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {
        const int32_t k = keys[g];
        const unsigned long long packed = ((unsigned long long)(uint32_t)g << 32) | (uint32_t)k;
        const unsigned long long empty = 0xffffffff00000000ull;
        for (uint32_t slot = entry_slot(k, mask);; slot = (slot + 1) & mask) {
            if (atomicCAS((unsigned long long*)&out[slot], empty, packed) == empty) break;
        }
    }
}
extern "C" __global__ void make_entries_8(const int64_t* __restrict__ keys, uint64_t groups, longlong2* __restrict__ out, uint32_t mask) {
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {
        const int64_t k = keys[g];
        for (uint32_t slot = entry_slot(k, mask);; slot = (slot + 1) & mask) {
            if (atomicCAS((unsigned long long*)&out[slot].y, (unsigned long long)-1ll, (unsigned long long)g) == (unsigned long long)-1ll) { out[slot].x = k; break; }
        }
    }
}

extern "C" __global__ void fill_minus_one(int* __restrict__ out, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = -1;
}

// 0, 1, 2, ...: the match offsets of a unique-key hash table, for a generic probe.
extern "C" __global__ void iota_u32(uint32_t* __restrict__ out, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = (uint32_t)i;
}

// 0, 1, 2, ... as BIGINTs: the positions of sliced rows (an Enumerate's column).
extern "C" __global__ void iota_i64(int64_t* __restrict__ out, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = (int64_t)i;
}

// Positions within a sort's groups (sort_heads marks where each starts; `first` is the
// exclusive prefix sum of the marks, n + 1 entries): each group's first sorted row, then
// each row's distance from it.
extern "C" __global__ void segment_starts(const uint32_t* __restrict__ heads, const uint64_t* __restrict__ first, uint64_t* __restrict__ starts, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        if (heads[i]) starts[first[i + 1] - 1] = i;
}
extern "C" __global__ void segment_positions(const uint64_t* __restrict__ first, const uint64_t* __restrict__ starts, int64_t* __restrict__ out, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = (int64_t)(i - starts[first[i + 1] - 1]);
}

// The Pivot-4 copy of a string column (bytes, rows + 1 offsets): piece k (4 bytes,
// zero-padded) of row r at out[k * n + r], so consecutive threads write consecutive words.
extern "C" __global__ void pivot_strings(const uint8_t* __restrict__ bytes, const int64_t* __restrict__ offsets, uint32_t* __restrict__ out, uint64_t n, uint32_t pieces) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n * pieces; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t k = i / n, r = i - k * n;
        const int64_t b = offsets[r] + 4 * (int64_t)k, e = offsets[r + 1];
        uint32_t w = 0;
        for (int j = 0; j < 4; j++) {
            if (b + j < e) w |= (uint32_t)bytes[b + j] << (8 * j);
        }
        out[i] = w;
    }
}

// String lengths (to size the byte buffer on the host).
extern "C" __global__ void string_lengths(const Str* __restrict__ strs, uint32_t* __restrict__ lens, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) lens[i] = strs[i].len;
}

// ---- set operations: UNION ALL's copies, INTERSECT ALL / EXCEPT ALL's repeated rows ----
#define COPY(NAME, T) extern "C" __global__ void NAME(const T* __restrict__ in, T* __restrict__ out, uint64_t n) { \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = in[i]; }
COPY(copy_1, uint8_t)
COPY(copy_4, uint32_t)
COPY(copy_8, uint64_t)
COPY(copy_16, ulonglong2)
// Validity of rows from an input whose column has no NULLs.
extern "C" __global__ void fill_valid(uint8_t* __restrict__ out, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = 1;
}
// How many times each row is repeated: its BIGINT count, none where NULL (valid may be
// null: no NULLs) or below 1.
extern "C" __global__ void repeat_counts(const int64_t* __restrict__ times, const uint8_t* __restrict__ valid, uint64_t* __restrict__ counts, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const int64_t t = times[i];
        counts[i] = (valid != nullptr && !valid[i]) || t < 1 ? 0 : (uint64_t)t;
    }
}
// Row i's index at output positions [offsets[i], offsets[i + 1]), clipped at cap (a
// replay sizes the output by its log's total, checked after the launch).
extern "C" __global__ void repeat_rows(const uint64_t* __restrict__ offsets, uint32_t* __restrict__ idx, uint64_t n, uint64_t cap) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t end = min(offsets[i + 1], cap);
        for (uint64_t j = offsets[i]; j < end; j++) idx[j] = (uint32_t)i;
    }
}
