// ======== LSD radix sort of encoded keys (exec's gpu/sort.rs drives it) ========
// Each row's sort key is encoded as W big-endian 32-bit words (the sort module's
// sort_encode: words[w * n + row]) whose unsigned order is the rows' order. The sort runs
// over the words from the last to the first, 8 bits per pass, each pass stable, carrying
// the row permutation and the word being sorted. Passes whose digit is the same in every
// row are skipped (radix_constant_bits finds them: keys of small ranges, common string
// prefixes).

// Per word w: or_bits[w] |= every row's word, nand_bits[w] |= every row's ~word (its AND,
// inverted, so that both start at zero). A digit is constant where or ^ ~nand is 0.
extern "C" __global__ void radix_constant_bits(const uint32_t* __restrict__ words, uint64_t n, uint32_t nwords,
                                               uint32_t* __restrict__ or_bits, uint32_t* __restrict__ nand_bits) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint32_t w = 0; w < nwords; w++) {
        uint32_t o = 0, a = 0xffffffffu;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            const uint32_t x = words[(uint64_t)w * n + i];
            o |= x;
            a &= x;
        }
        o = __reduce_or_sync(FULL_MASK, o);
        a = __reduce_and_sync(FULL_MASK, a);
        if ((threadIdx.x & 31) == 0) {
            if (o != 0) atomicOr(&or_bits[w], o);
            if (~a != 0) atomicOr(&nand_bits[w], ~a);
        }
    }
}

// The longest string of a string key (its slot in the encoded key); null rows hold empty
// or ignored strings and only make the slot longer.
extern "C" __global__ void radix_max_length(const Str* __restrict__ strs, uint64_t n, uint32_t* __restrict__ out) {
    uint32_t m = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        m = max(m, strs[i].len);
    m = __reduce_max_sync(FULL_MASK, m);
    if ((threadIdx.x & 31) == 0 && m != 0) atomicMax(out, m);
}

// One pass, step 1: how many rows of tile b (RADIX_TILE rows) have digit d:
// counts[d * tiles + b], so that an exclusive prefix sum of counts gives each tile's
// first position for each digit (digit-major, tiles in order: the pass is stable).
extern "C" __global__ void __launch_bounds__(256) radix_tile_counts(const uint32_t* __restrict__ cur, uint64_t n, uint32_t shift,
                                                                    uint32_t* __restrict__ counts, uint32_t tiles) {
    __shared__ uint32_t c[256];
    c[threadIdx.x] = 0;
    __syncthreads();
    const uint64_t start = (uint64_t)blockIdx.x * RADIX_TILE;
    const uint64_t end = min(start + RADIX_TILE, n);
    for (uint64_t i = start + threadIdx.x; i < end; i += blockDim.x) atomicAdd(&c[(cur[i] >> shift) & 255u], 1u);
    __syncthreads();
    counts[(uint64_t)threadIdx.x * tiles + blockIdx.x] = c[threadIdx.x];
}

#define RADIX_WARPS 8
#define RADIX_WARP_ROWS (RADIX_TILE / RADIX_WARPS)

// One pass, step 2: tile b's rows to their places. Each warp owns RADIX_WARP_ROWS
// consecutive rows of the tile; their order within a digit is warp, then row order,
// ranked with __match_any_sync. The tile is first arranged by digit in shared memory and
// written from there, so that each digit's rows go out as one contiguous run.
extern "C" __global__ void __launch_bounds__(256) radix_scatter(
    const uint32_t* __restrict__ cur_in, const uint32_t* __restrict__ perm_in, uint32_t* __restrict__ cur_out,
    uint32_t* __restrict__ perm_out, uint64_t n, uint32_t shift, const uint64_t* __restrict__ offsets, uint32_t tiles) {
    __shared__ uint32_t warp_next[RADIX_WARPS][256];  // per warp and digit: its next row's tile slot
    __shared__ uint32_t digit_start[256];             // the tile's first slot of each digit
    __shared__ uint64_t digit_base[256];              // where the tile's rows of each digit go
    __shared__ uint32_t s_key[RADIX_TILE], s_perm[RADIX_TILE];
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = threadIdx.x;
    const uint64_t tile_start = (uint64_t)blockIdx.x * RADIX_TILE;
    const uint64_t warp_start = tile_start + (uint64_t)warp * RADIX_WARP_ROWS;
    for (uint32_t w = 0; w < RADIX_WARPS; w++) warp_next[w][t] = 0;
    __syncthreads();
    // Rows per warp and digit (the lowest lane of each digit's peers adds them).
    for (uint32_t k = 0; k < RADIX_WARP_ROWS; k += 32) {
        const uint64_t i = warp_start + k + lane;
        const uint32_t d = i < n ? (cur_in[i] >> shift) & 255u : 256u;
        const uint32_t peers = __match_any_sync(FULL_MASK, d);
        if (d < 256u && lane == (uint32_t)__ffs(peers) - 1) warp_next[warp][d] += __popc(peers);
    }
    __syncthreads();
    // Thread t, digit t: each warp's first slot among the tile's rows of digit t, and the
    // tile's first slot of digit t (a scan over the digits).
    uint32_t total = 0;
    for (uint32_t w = 0; w < RADIX_WARPS; w++) {
        const uint32_t c = warp_next[w][t];
        warp_next[w][t] = total;
        total += c;
    }
    digit_start[t] = total;
    __syncthreads();
    for (uint32_t off = 1; off < 256; off <<= 1) {
        const uint32_t v = t >= off ? digit_start[t - off] : 0u;
        __syncthreads();
        digit_start[t] += v;
        __syncthreads();
    }
    const uint32_t start = digit_start[t] - total;
    for (uint32_t w = 0; w < RADIX_WARPS; w++) warp_next[w][t] += start;
    digit_base[t] = offsets[(uint64_t)t * tiles + blockIdx.x];
    __syncthreads();
    digit_start[t] = start;
    // Rows into their tile slots, in digit order.
    for (uint32_t k = 0; k < RADIX_WARP_ROWS; k += 32) {
        const uint64_t i = warp_start + k + lane;
        const bool live = i < n;
        const uint32_t key = live ? cur_in[i] : 0u;
        const uint32_t d = live ? (key >> shift) & 255u : 256u;
        const uint32_t peers = __match_any_sync(FULL_MASK, d);
        if (live) {
            const uint32_t slot = warp_next[warp][d] + __popc(peers & ((1u << lane) - 1u));
            s_key[slot] = key;
            s_perm[slot] = perm_in[i];
        }
        __syncwarp();
        if (live && lane == (uint32_t)__ffs(peers) - 1) warp_next[warp][d] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    const uint32_t rows = (uint32_t)min((uint64_t)RADIX_TILE, n - tile_start);
    for (uint32_t j = t; j < rows; j += blockDim.x) {
        const uint32_t key = s_key[j];
        const uint32_t d = (key >> shift) & 255u;
        const uint64_t to = digit_base[d] + (j - digit_start[d]);
        cur_out[to] = key;
        perm_out[to] = s_perm[j];
    }
}
