// A sort's keys encoded for the radix sort (radix_sort.cu), a template: generate_sort
// (sort.rs) fills in each key's encoding. Per key: a NULL byte where the column has NULLs
// (1 for a value; 0 or 2 for NULL, as NULLs sort first or last), then the value's bytes in
// an order the bytes compare in (integers with the sign bit flipped; doubles with -0.0 as
// 0.0, every NaN one NaN above +inf; a string's bytes padded with zeros to its key's
// longest string, then its length, so that a prefix sorts first), inverted for DESC.
// ======== Sort by [$KEYS]: keys encoded as big-endian words ========
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
extern "C" __global__ void sort_encode(uint32_t* __restrict__ words, uint64_t n, const uint32_t* __restrict__ slots$DECLS) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        KeyWords k;
        k.words = words; k.n = n; k.row = i; k.pos = 0; k.acc = 0;
        const uint64_t a = i;
$ENCODE        while (k.pos & 3u) kw_byte(k, 0u);
    }
}
