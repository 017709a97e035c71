// tpch SF 0.01: SELECT o_orderkey, o_totalprice FROM orders ORDER BY o_totalprice DESC, o_orderkey LIMIT 10
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int64_t* __restrict__ out0_values,
    int64_t* __restrict__ out1_values)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan orders ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        // ---- Project o_orderkey#0, o_totalprice#1 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        int64_t p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            p0_0 = c0; p0_0_null = false;
            p0_1 = c1; p0_1_null = false;
        }
        // ---- Materialize -> #0 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
        const uint32_t lane_ = threadIdx.x & 31;
        const uint32_t ballot_ = __ballot_sync(FULL_MASK, active);
        const uint32_t warp_ = threadIdx.x >> 5;
        if (lane_ == 0) warp_base_[warp_] = __popc(ballot_);
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t total_ = 0;
            for (int w = 0; w < 8; w++) { const uint32_t c = warp_base_[w]; warp_base_[w] = total_; total_ += c; }
            block_base_ = total_ ? atomicAdd(out_count, (unsigned long long)total_) : 0ull;
        }
        __syncthreads();
        const uint64_t pos_ = block_base_ + warp_base_[warp_] + __popc(ballot_ & ((1u << lane_) - 1u));
        if (active && pos_ < out_capacity) {
            out0_values[pos_] = p0_0;
            out1_values[pos_] = p0_1;
        }
        __syncthreads();
    }
}
// ==================== module sort #0 ====================
// ======== Sort by [#1 DESC, #0 ASC]: bitonic sort of a row permutation ========
__device__ int compare_rows(uint32_t a, uint32_t b, const int64_t* __restrict__ k1_values, const int64_t* __restrict__ k0_values) {
    // key #1 DESC
    {
        {
            const int c = (k1_values[a] < k1_values[b] ? -1 : (k1_values[a] > k1_values[b] ? 1 : 0));
            if (c != 0) return -c;
        }
    }
    // key #0 ASC
    {
        {
            const int c = (k0_values[a] < k0_values[b] ? -1 : (k0_values[a] > k0_values[b] ? 1 : 0));
            if (c != 0) return c;
        }
    }
    return a < b ? -1 : (a > b ? 1 : 0);
}

extern "C" __global__ void sort_iota(uint32_t* idx, uint32_t npow2) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) idx[i] = i;
}

// The compare-exchange of entry i in step (j, k) of the bitonic network; rows >= n are
// padding and sort last.
__device__ __forceinline__ void bitonic_cx(uint32_t* idx, uint32_t i, uint64_t n, uint32_t j, uint32_t k, const int64_t* __restrict__ k1_values, const int64_t* __restrict__ k0_values) {
    const uint32_t ixj = i ^ j;
    if (ixj <= i) return;
    const uint32_t a = idx[i], b = idx[ixj];
    bool a_after_b;
    if (a >= n || b >= n) a_after_b = a >= n && (b < n || a > b);
    else a_after_b = compare_rows(a, b, k1_values, k0_values) > 0;
    const bool up = (i & k) == 0;
    if (up == a_after_b) { idx[i] = b; idx[ixj] = a; }
}

// One step (j, k) over all entries: a launch per step.
extern "C" __global__ void sort_step(uint32_t* idx, uint32_t npow2, uint64_t n, uint32_t j, uint32_t k, const int64_t* __restrict__ k1_values, const int64_t* __restrict__ k0_values) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) bitonic_cx(idx, i, n, j, k, k1_values, k0_values);
}

// Small inputs (n <= 4096): a rank sort. Row i's rank is how many rows sort before it
// (ties break on the row index, so ranks are distinct); one warp per (row i, 32 rows j)
// counts them with a ballot and adds them with one atomic. The n^2 compares are
// independent and spread over the whole GPU: a bitonic network in one block ran its
// ~log^2 n steps one after another, each a chain of global loads (0.35 ms for 800 rows
// sorted by three keys, two of them strings).
extern "C" __global__ void sort_rank(uint32_t* __restrict__ rank, uint64_t n, const int64_t* __restrict__ k1_values, const int64_t* __restrict__ k0_values) {
    const uint64_t chunks = (n + 31) / 32, warps = n * chunks;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t stride = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < warps; w += stride) {
        const uint32_t i = (uint32_t)(w / chunks), j = (uint32_t)((w % chunks) * 32 + lane);
        const bool before = j < n && j != i && compare_rows(j, i, k1_values, k0_values) < 0;
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
// A sort's keys encoded for the radix sort (radix_sort.cu), a template: generate_sort
// (sort.rs) fills in each key's encoding. Per key: a NULL byte where the column has NULLs
// (1 for a value; 0 or 2 for NULL, as NULLs sort first or last), then the value's bytes in
// an order the bytes compare in (integers with the sign bit flipped; doubles with -0.0 as
// 0.0, every NaN one NaN above +inf; a string's bytes padded with zeros to its key's
// longest string, then its length, so that a prefix sorts first), inverted for DESC.
// ======== Sort by [#1 DESC, #0 ASC]: keys encoded as big-endian words ========
struct KeyWords {
    uint32_t* words;
    uint64_t n, row;
    uint32_t pos, acc;
};

__device__ __forceinline__ void kw_byte(KeyWords& k, uint32_t b) {
    k.acc = (k.acc << 8) | (b & 255u);
    if ((++k.pos & 3u) == 0) k.words[(uint64_t)(k.pos / 4u - 1u) * k.n + k.row] = k.acc;
}
__device__ __forceinline__ void kw_u32(KeyWords& k, uint32_t v, uint32_t flip) {
    v ^= flip;
    if ((k.pos & 3u) == 0) {
        k.pos += 4u;
        k.words[(uint64_t)(k.pos / 4u - 1u) * k.n + k.row] = v;
        return;
    }
    for (int s = 24; s >= 0; s -= 8) kw_byte(k, v >> s);
}
__device__ __forceinline__ void kw_u64(KeyWords& k, uint64_t v, uint32_t flip) {
    kw_u32(k, (uint32_t)(v >> 32), flip);
    kw_u32(k, (uint32_t)v, flip);
}
__device__ __forceinline__ void kw_zeros(KeyWords& k, uint32_t bytes) {
    for (uint32_t i = 0; i < bytes; i++) kw_byte(k, 0u);
}
__device__ __forceinline__ void kw_str(KeyWords& k, Str s, uint32_t slot, uint32_t flip) {
    uint32_t i = 0;
    while (i < slot) {
        if ((k.pos & 3u) == 0 && slot - i >= 4u) {
            const uint32_t m = i < s.len ? min(4u, s.len - i) : 0u;
            kw_u32(k, m != 0 ? load_be_bytes(s.p + i, m, s.len - i) : 0u, flip);
            i += 4u;
        } else {
            kw_byte(k, (i < s.len ? s.p[i] : 0u) ^ flip);
            i++;
        }
    }
    kw_u32(k, s.len, flip);
}
__device__ __forceinline__ uint64_t f64_order_bits(double d) {
    uint64_t b;
    if (d == 0.0) d = 0.0;
    if (isnan(d)) b = 0x7ff8000000000000ull;
    else memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : b ^ 0x8000000000000000ull;
}

// Row i's key into words[w * n + i] (slots[j]: string key j's longest string).
extern "C" __global__ void sort_encode(uint32_t* __restrict__ words, uint64_t n, const uint32_t* __restrict__ slots, const int64_t* __restrict__ k1_values, const int64_t* __restrict__ k0_values) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        KeyWords k;
        k.words = words; k.n = n; k.row = i; k.pos = 0; k.acc = 0;
        const uint64_t a = i;
        // key #1 DESC
        {
            kw_u64(k, (uint64_t)k1_values[a] ^ 0x8000000000000000ull, 0xffffffffu);
        }
        // key #0 ASC
        {
            kw_u64(k, (uint64_t)k0_values[a] ^ 0x8000000000000000ull, 0u);
        }
        while (k.pos & 3u) kw_byte(k, 0u);
    }
}
