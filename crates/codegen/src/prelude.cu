// ---- gpusql prelude: types and device helpers shared by every generated kernel ----
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

#define FULL_MASK 0xffffffffu

// A string value: pointer into GPU-resident bytes (a column or a literal) and a length.
// 16-byte aligned so MIN/MAX states can be swapped with one 16-byte atomicCAS. `pad_` is
// the string's str_hash32 where known (dictionary-encoded columns: computed at load time
// on the host), else 0; anything that makes a new string from another sets it to 0.
struct __align__(16) Str {
    const uint8_t* p;
    uint32_t len;
    uint32_t pad_;
};

__device__ __forceinline__ Str make_str(const char* p, uint32_t len) {
    Str s; s.p = (const uint8_t*)p; s.len = len; s.pad_ = 0; return s;
}
// A literal, with its str_hash32 computed when the kernel was generated.
__device__ __forceinline__ Str make_str_h(const char* p, uint32_t len, uint32_t hash) {
    Str s; s.p = (const uint8_t*)p; s.len = len; s.pad_ = hash; return s;
}

// A table string column: 64-bit offsets, so a column may hold more than 2^31 bytes.
__device__ __forceinline__ Str load_str(const int64_t* offsets, const uint8_t* bytes, uint64_t row) {
    const int64_t a = offsets[row], b = offsets[row + 1];
    Str s; s.p = bytes + a; s.len = (uint32_t)(b - a); s.pad_ = 0; return s;
}

// The m <= 4 bytes at p (any alignment) as a big-endian word, p[0] in the top byte and
// zeros below the m bytes: words compare like the bytes. `avail` (>= m) is how many of the
// string's bytes start at p. Reads the aligned words holding the m bytes where those words
// end within the string; a word that would run past the string's end (the last string of
// a buffer ends where its allocation does) is read byte by byte instead.
__device__ __forceinline__ uint32_t load_be_bytes(const uint8_t* p, uint32_t m, uint32_t avail) {
    const uint64_t a = (uint64_t)p;
    const uint32_t off = (uint32_t)(a & 3u);
    const bool two = off + m > 4u;
    if ((two ? 8u : 4u) - off > avail) {
        uint32_t be = 0;
        for (uint32_t k = 0; k < m; k++) be |= (uint32_t)p[k] << (24u - 8u * k);
        return be;
    }
    const uint32_t* w = (const uint32_t*)(a - off);
    const uint32_t lo = w[0], hi = two ? w[1] : 0u;
    const uint32_t le = __funnelshift_r(lo, hi, off * 8u);  // p[0] in the low byte
    const uint32_t be = __byte_perm(le, 0u, 0x0123);
    return m >= 4u ? be : be & ~(0xffffffffu >> (m * 8u));
}

// Byte-wise comparison (memcmp order, shorter prefix first), like the CPU backend; four
// bytes per step, and none for two pointers to the same bytes (equal dictionary values).
__device__ int str_cmp(Str a, Str b) {
    const uint32_t n = a.len < b.len ? a.len : b.len;
    if (a.p != b.p) {
        for (uint32_t i = 0; i < n; i += 4) {
            const uint32_t m = n - i < 4u ? n - i : 4u;
            const uint32_t x = load_be_bytes(a.p + i, m, a.len - i), y = load_be_bytes(b.p + i, m, b.len - i);
            if (x != y) return x < y ? -1 : 1;
        }
    }
    return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

// Records the first error of a launch; the host checks the flag after the kernel.
__device__ __forceinline__ void raise_error(int* err, int code) { atomicCAS(err, 0, code); }

// ---- value semantics: twins of gpusql_common::semantics (same names, same rules) ----
// DOUBLE comparison (comparisons, MIN/MAX, ORDER BY): -0.0 = 0.0; NaN equals NaN and is
// above every other value.
__device__ __forceinline__ int f64_cmp(double a, double b) {
    const bool an = isnan(a), bn = isnan(b);
    if (an || bn) return (int)an - (int)bn;
    return (int)(a > b) - (int)(a < b);
}
__device__ __forceinline__ bool f64_eq(double a, double b) { return a == b || (isnan(a) && isnan(b)); }
__device__ __forceinline__ bool f64_lt(double a, double b) { return a < b || (isnan(b) && !isnan(a)); }
// Bits a DOUBLE group or join key hashes by: -0.0 folded into 0.0, every NaN one NaN.
__device__ __forceinline__ uint64_t f64_key_bits(double d) {
    return d == 0.0 ? 0ull : (isnan(d) ? 0x7ff8000000000000ull : (uint64_t)__double_as_longlong(d));
}
// The math functions of plan/src/math.rs that C lacks. SIGN: 0 for ±0.0 and NaN.
__device__ __forceinline__ double f64_sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }
__device__ __forceinline__ double f64_degrees(double x) { return __dmul_rn(x, 180.0 / 3.141592653589793); }
__device__ __forceinline__ double f64_radians(double x) { return __dmul_rn(x, 3.141592653589793 / 180.0); }
// FLOOR / CEIL / TRUNC of a DECIMAL's scaled integer v by p = 10^scale (exact).
template <typename T> __device__ __forceinline__ T scaled_trunc(T v, T p) { return v / p; }
template <typename T> __device__ __forceinline__ T scaled_floor(T v, T p) { const T q = v / p; return (v % p != 0 && v < 0) ? q - 1 : q; }
template <typename T> __device__ __forceinline__ T scaled_ceil(T v, T p) { const T q = v / p; return (v % p != 0 && v > 0) ? q + 1 : q; }
// round(x, -n) of an integer or a decimal's scaled integer v: the nearest multiple of
// q = 10^(scale + n), halves away from zero, times m = 10^n (the value at scale 0).
__device__ __forceinline__ __int128 round_tens(__int128 v, __int128 q, __int128 m) {
    __int128 d = v / q;
    const __int128 r = v % q < 0 ? -(v % q) : v % q;
    if (r >= q - r) d += (v < 0 ? -1 : 1);
    return d * m;
}
// round(x, digits): m = 10^|digits| (from the host). For digits >= 0 the product rounded
// half away from zero, where an apparent tie is checked against the exact product (fma
// gives its rounding error); then divided back. Non-finite scaled values give x.
__device__ double round_f64(double x, double m, bool digits_negative) {
    if (!isfinite(x)) return x;
    if (digits_negative) {
        const double r = __dmul_rn(round(__ddiv_rn(x, m)), m);
        return isnan(r) ? 0.0 : (isinf(r) ? x : r);
    }
    const double v = __dmul_rn(x, m);
    if (!isfinite(v)) return x;
    double r = round(v);
    if (fabs(__dsub_rn(v, trunc(v))) == 0.5) {
        const double err = fma(x, m, -v);
        if (err != 0.0 && (err > 0.0) != (v > 0.0)) r = trunc(v);
    }
    return __ddiv_rn(r, m);
}
// CAST of a DOUBLE to an integer type: half to even; outside [lo, hi) error `code` (the
// overflow of the type, device_constants.rs out_of_range_code).
__device__ __forceinline__ bool f64_int_fits(double x, double lo, double hi) {
    const double r = rint(x);
    return r >= lo && r < hi;
}
__device__ __forceinline__ int64_t f64_to_int(double x, double lo, double hi, int* err, int code) {
    if (!f64_int_fits(x, lo, hi)) { if (err) raise_error(err, code); return 0; }
    return (int64_t)rint(x);
}
// CAST of a DOUBLE to a DECIMAL: x * 10^scale (m) rounded half away from zero; |result|
// must stay below `limit` (10^precision), else error `code`.
__device__ __forceinline__ bool f64_scaled_fits(double x, double m, double limit) {
    return fabs(round(__dmul_rn(x, m))) < limit;
}
__device__ __int128 f64_to_scaled(double x, double m, double limit, int* err, int code) {
    const double r = round(__dmul_rn(x, m));
    if (!f64_scaled_fits(x, m, limit)) { if (err) raise_error(err, code); return 0; }
    if (fabs(r) < 9.2e18) return (__int128)(int64_t)r;
    // Wider than 64 bits: two exact halves (r is an integer of at most 53 significant bits).
    const double hi = floor(r / 18446744073709551616.0);
    const double lo = r - hi * 18446744073709551616.0;
    return (__int128)(((unsigned __int128)(uint64_t)(int64_t)hi << 64) | (uint64_t)lo);
}
// Whether a byte continues a UTF-8 character (10xxxxxx); characters start at the others.
__device__ __forceinline__ bool utf8_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }
// The byte position of the character after the one that starts at i.
__device__ __forceinline__ uint32_t next_char(Str s, uint32_t i) {
    for (i++; i < s.len && utf8_continuation(s.p[i]); i++) {}
    return i;
}

// x IN a literal set (codegen in_set.rs): binary search of n ascending values.
template <typename T>
__device__ bool in_sorted(const T* __restrict__ v, uint32_t n, T x) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t m = lo + (hi - lo) / 2u;
        if (v[m] < x) lo = m + 1u; else hi = m;
    }
    return lo < n && v[lo] == x;
}

// Characters of a UTF-8 string: bytes that do not continue a sequence (10xxxxxx).
__device__ int64_t str_chars(Str s) {
    int64_t n = 0;
    for (uint32_t i = 0; i < s.len; i++) n += !utf8_continuation(s.p[i]);
    return n;
}

__device__ __forceinline__ bool str_eq(Str a, Str b) {
    if (a.len != b.len) return false;
    // Same bytes (one dictionary value), or known hashes that differ: no bytes to read.
    if (a.p == b.p) return true;
    if (a.pad_ != 0 && b.pad_ != 0 && a.pad_ != b.pad_) return false;
    for (uint32_t i = 0; i < a.len; i++) if (a.p[i] != b.p[i]) return false;
    return true;
}

// Equality and order with a string another thread may have just made (a group key, a
// MIN/MAX state; strings.cu's arena): bytes read past the L1 cache, which may hold a stale
// copy of an arena line this SM read before the other thread wrote it. (Its writer fences
// before publishing the string.)
__device__ bool str_eq_cg(Str a, Str b) {
    if (a.len != b.len) return false;
    if (a.p == b.p) return true;
    if (a.pad_ != 0 && b.pad_ != 0 && a.pad_ != b.pad_) return false;
    for (uint32_t i = 0; i < a.len; i++) if (__ldcg(a.p + i) != __ldcg(b.p + i)) return false;
    return true;
}
__device__ int str_cmp_cg(Str a, Str b) {
    const uint32_t n = a.len < b.len ? a.len : b.len;
    if (a.p != b.p) {
        for (uint32_t i = 0; i < n; i++) {
            const uint8_t x = __ldcg(a.p + i), y = __ldcg(b.p + i);
            if (x != y) return x < y ? -1 : 1;
        }
    }
    return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

// x IN a literal string set: binary search of n values in byte order (offsets and bytes
// as a table's string column).
__device__ bool in_sorted_str(const int64_t* __restrict__ offsets, const uint8_t* __restrict__ bytes, uint32_t n, Str x) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t m = lo + (hi - lo) / 2u;
        if (str_cmp(load_str(offsets, bytes, m), x) < 0) lo = m + 1u; else hi = m;
    }
    return lo < n && str_eq(load_str(offsets, bytes, lo), x);
}

// LIKE '%s1%s2%…%' by lock-step KMP over a Pivot-4 copy ([Sitaridi 2016] §5.3.2, "KMP-hybrid"):
// piece k of row r is the word piv[k * n_rows + r]. The outer loop takes one piece per
// step, so a warp's lanes read the same piece column together; the inner loop consumes
// its bytes, following the failure links `nxt` (absolute positions into the concatenated
// segments `pat`) on a mismatch. Segment s ends at ends[s]; the next starts there.
__device__ bool like_kmp_pivot4(const uint32_t* piv, uint64_t n_rows, uint64_t row, uint32_t len,
                                const uint8_t* pat, const uint8_t* nxt, const uint8_t* ends, uint32_t n_segs) {
    uint32_t seg = 0, sb = 0, se = ends[0], j = 0;
    for (uint32_t i = 0; i < len; i += 4) {
        uint32_t t = piv[(uint64_t)(i >> 2) * n_rows + row];
        const uint32_t kn = len - i < 4u ? len - i : 4u;
        for (uint32_t k = 0; k < kn;) {
            const bool cmp = pat[j] == (uint8_t)t;
            if (cmp || j == sb) { t >>= 8; k++; } else { j = nxt[j]; }
            j += cmp;
            if (j == se) {
                if (++seg == n_segs) return true;
                sb = se;
                se = ends[seg];
            }
        }
    }
    return false;
}

// LIKE: greedy wildcard matching with backtracking to the last '%' (kinds: 0 literal byte,
// 1 '_' any one character, 2 '%' any run of characters); the CPU backend runs the same
// algorithm (LikePattern::matches). Positions stay at character starts.
__device__ bool like_match(Str s, const uint8_t* p, const uint8_t* k, uint32_t n) {
    uint32_t si = 0, pi = 0, star_p = 0xffffffffu, star_s = 0;
    while (si < s.len) {
        if (pi < n && k[pi] == 2) { star_p = pi++; star_s = si; }
        else if (pi < n && k[pi] == 1) { si = next_char(s, si); pi++; }
        else if (pi < n && p[pi] == s.p[si]) { si++; pi++; }
        else if (star_p != 0xffffffffu) { pi = star_p + 1; si = star_s = next_char(s, star_s); }
        else return false;
    }
    while (pi < n && k[pi] == 2) pi++;
    return pi == n;
}

// Regular expressions: a walk of a minimal DFA's table (gpusql_plan::regex, whose
// RegexDfa::matches is the CPU twin). States 0 and 1 are the absorbing "no" and "yes"
// sinks; the table's last column is the end of the input. After the bytes up to a 4-byte
// boundary, one aligned load brings 4 bytes and 4 steps run without a test (a sink stays
// a sink); the lane leaves once a sink is reached. (An aligned word holding a string byte
// lies inside the string's allocation.)
__device__ bool dfa_match(Str s, const uint8_t* classes, const uint16_t* next, uint32_t columns, uint32_t start) {
    const uint8_t* p = s.p;
    uint32_t st = start, i = 0;
    const uint32_t head = min((uint32_t)((4u - ((unsigned long long)p & 3u)) & 3u), s.len);
    for (; i < head && st > 1u; i++) st = next[st * columns + classes[p[i]]];
    for (; i + 4u <= s.len && st > 1u; i += 4u) {
        const uint32_t w = *(const uint32_t*)(p + i);
        st = next[st * columns + classes[w & 0xffu]];
        st = next[st * columns + classes[(w >> 8) & 0xffu]];
        st = next[st * columns + classes[(w >> 16) & 0xffu]];
        st = next[st * columns + classes[w >> 24]];
    }
    for (; i < s.len && st > 1u; i++) st = next[st * columns + classes[p[i]]];
    return next[st * columns + columns - 1u] == 1u;
}

// ---- hashing (murmur3 finalizer; FNV-1a over string bytes) ----
__device__ __forceinline__ uint64_t hash_u64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33; return x;
}
__device__ __forceinline__ uint64_t hash_i128(__int128 v) { return hash_u64((uint64_t)v ^ hash_u64((uint64_t)(v >> 64))); }
__device__ __forceinline__ uint64_t hash_f64(double d) { return hash_u64(f64_key_bits(d)); }
// FNV-1a over the bytes, folded to 32 bits, low bit set (0 means "not known"). The host
// computes the same for dictionary values and literals (gpusql_common::str_hash32).
__device__ uint32_t str_hash32(Str s) {
    if (s.pad_ != 0) return s.pad_;
    uint64_t h = STR_HASH_BASIS;
    for (uint32_t i = 0; i < s.len; i++) { h ^= s.p[i]; h *= STR_HASH_PRIME; }
    return (uint32_t)(h ^ (h >> 32)) | 1u;
}
__device__ uint64_t hash_str(Str s) { return hash_u64(str_hash32(s)); }
__device__ __forceinline__ uint64_t hash_combine(uint64_t h, uint64_t k) { return h ^ (k + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

// ---- decimal and date helpers ----
// Divides by 10^k rounding half away from zero (decimal scale reduction).
__device__ __forceinline__ __int128 div_round(__int128 v, __int128 d) {
    __int128 q = v / d, r = v % d;
    if (r < 0) r = -r;
    if (2 * r >= d) q += (v < 0 ? -1 : 1);
    return q;
}
// a - b on 128 bits, written as ~(~a + b) in PTX so ptxas cannot see a subtraction.
// ptxas (CUDA 13.0, sm_90) miscompiles `sub.cc`/`subc` whose subtrahend's low word is an
// `abs.s64`: it adds -|x| instead, which loses the borrow when x == 0, so 2 - |0| came out
// 2 - 2^64. NVVM emits abs.s64 for ABS and for CASE WHEN x < 0 THEN -x ELSE x END alike,
// so every 128-bit subtraction and negation in generated code goes through here.
__device__ __forceinline__ __int128 i128_sub(__int128 a, __int128 b) {
    uint64_t lo, hi;
    asm("{\n\t.reg .u64 l, h;\n\tnot.b64 l, %2;\n\tnot.b64 h, %3;\n\tadd.cc.u64 l, l, %4;\n\taddc.u64 h, h, %5;\n\tnot.b64 %0, l;\n\tnot.b64 %1, h;\n\t}"
        : "=l"(lo), "=l"(hi)
        : "l"((uint64_t)a), "l"((uint64_t)((unsigned __int128)a >> 64)), "l"((uint64_t)b), "l"((uint64_t)((unsigned __int128)b >> 64)));
    return (__int128)(((unsigned __int128)hi << 64) | lo);
}
// a × b for a DECIMAL product of 38 digits (DuckDB caps wider products there): an error
// (`code`) where |a × b| reaches 10^38, unless the product is NULL.
__device__ __int128 dec128_mul(__int128 a, __int128 b, bool null, int* err, int code) {
    const bool neg = (a < 0) != (b < 0);
    unsigned __int128 x = (unsigned __int128)(a < 0 ? i128_sub(0, a) : a);
    unsigned __int128 y = (unsigned __int128)(b < 0 ? i128_sub(0, b) : b);
    if (x < y) { const unsigned __int128 z = x; x = y; y = z; }
    const unsigned __int128 limit = (unsigned __int128)10000000000000000000ull * 10000000000000000000ull;
    bool over = (y >> 64) != 0;  // both at least 2^64
    unsigned __int128 p = 0;
    if (!over) {
        const uint64_t y0 = (uint64_t)y;
        const unsigned __int128 lo = (unsigned __int128)(uint64_t)x * y0;
        const unsigned __int128 hi = (unsigned __int128)(uint64_t)(x >> 64) * y0;
        p = lo + (hi << 64);
        over = (hi >> 64) != 0 || p < lo || p >= limit;
    }
    if (over && !null) raise_error(err, code);
    return over ? (__int128)0 : (neg ? i128_sub(0, (__int128)p) : (__int128)p);
}
// A DECIMAL (unscaled v, p = 10^scale, pd = p as a double when exact, else 0) as the
// nearest DOUBLE (gpusql_common::semantics::decimal_to_f64). Below 2^53 both operands of
// the division are exact; above, the quotient's bits are found by long division (integer
// part, then fraction bits) to 55 bits plus a sticky bit, and rounded half to even.
__device__ double decimal_to_f64(__int128 v, __int128 p, double pd) {
    const bool neg = v < 0;
    const unsigned __int128 a = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    if (a == 0) return 0.0;
    if (a < ((unsigned __int128)1 << 53) && pd != 0.0) return (double)(int64_t)v / pd;
    const unsigned __int128 P = (unsigned __int128)p;
    unsigned __int128 m = a / P, r = a % P;
    const uint64_t mhi = (uint64_t)(m >> 64);
    const int bits = mhi ? 128 - __clzll((long long)mhi) : 64 - __clzll((long long)(uint64_t)m);
    int exp = 0;
    bool sticky;
    if (bits > 55) {
        const int shift = bits - 55;
        sticky = (m & (((unsigned __int128)1 << shift) - 1)) != 0 || r != 0;
        m >>= shift;
        exp = shift;
    } else {
        while ((m >> 54) == 0) {  // fraction bits until m has 55 bits (r < P < 2^127: r << 1 fits)
            r <<= 1;
            m <<= 1;
            if (r >= P) { m |= 1; r -= P; }
            exp--;
        }
        sticky = r != 0;
    }
    const uint32_t low = (uint32_t)(m & 3);
    uint64_t mant = (uint64_t)(m >> 2);
    if (low > 2 || (low == 2 && (sticky || (mant & 1)))) mant++;
    const double d = ldexp((double)mant, exp + 2);
    return neg ? -d : d;
}
__device__ int64_t days_from_civil(int64_t y, uint32_t m, uint32_t d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (int64_t)((m + 9) % 12) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}
__device__ int32_t date_add_months(int32_t days, int32_t months) {
    int64_t z = (int64_t)days + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    const uint32_t d = (uint32_t)(doy - (153 * mp + 2) / 5 + 1);
    const uint32_t m = (uint32_t)(mp < 10 ? mp + 3 : mp - 9);
    if (m <= 2) y += 1;
    int64_t total = y * 12 + (m - 1) + months;
    int64_t ny = total >= 0 ? total / 12 : (total - 11) / 12;
    uint32_t nm = (uint32_t)(total - ny * 12) + 1;
    const bool leap = (ny % 4 == 0 && ny % 100 != 0) || ny % 400 == 0;
    const uint32_t dim[12] = {31, leap ? 29u : 28u, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return (int32_t)days_from_civil(ny, nm, d < dim[nm - 1] ? d : dim[nm - 1]);
}

// EXTRACT: 0 year, 1 month, 2 day.
__device__ int64_t date_part(int32_t days, int which) {
    const int64_t z = (int64_t)days + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    const int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const int64_t m = mp < 10 ? mp + 3 : mp - 9;
    const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    return which == 0 ? y : (which == 1 ? m : d);
}

// ---- TIMESTAMP helpers: int64 microseconds since 1970-01-01 00:00:00, no time zone. The
// integer arithmetic of gpusql_common::date (the CPU backend), step for step. A result
// outside int64 raises ERR_TIMESTAMP_RANGE where `err` is given (not for NULL values). ----
#define US_PER_SECOND 1000000ll
#define US_PER_MINUTE 60000000ll
#define US_PER_HOUR 3600000000ll
#define US_PER_DAY 86400000000ll

// Floored division and its non-negative remainder (b > 0): 1969-12-31 23:00 is day -1.
__device__ __forceinline__ int64_t floor_div(int64_t a, int64_t b) { const int64_t q = a / b; return (a % b < 0) ? q - 1 : q; }
__device__ __forceinline__ int64_t floor_mod(int64_t a, int64_t b) { const int64_t r = a % b; return r < 0 ? r + b : r; }

// Civil date (y, m, d) of days since 1970-01-01 (H. Hinnant's civil_from_days).
__device__ void civil_from_days(int64_t z, int64_t* y, uint32_t* m, uint32_t* d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (uint32_t)(doy - (153 * mp + 2) / 5 + 1);
    *m = (uint32_t)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

// days * US_PER_DAY + us, exactly (in 128 bits), if it fits in int64 (date::make_timestamp).
__device__ __forceinline__ bool ts_fits(int64_t days, __int128 us) {
    const __int128 v = (__int128)days * US_PER_DAY + us;
    return !(v > (__int128)0x7fffffffffffffffll || v < -(__int128)0x7fffffffffffffffll - 1);
}
__device__ int64_t ts_make(int64_t days, __int128 us, int* err) {
    const __int128 v = (__int128)days * US_PER_DAY + us;
    if (!ts_fits(days, us)) {
        if (err) raise_error(err, ERR_TIMESTAMP_RANGE);
        return 0;
    }
    return (int64_t)v;
}

// CAST(date AS TIMESTAMP): its midnight. CAST(ts AS DATE): its day.
__device__ __forceinline__ int64_t ts_from_date(int32_t days, int* err) { return ts_make(days, 0, err); }
__device__ __forceinline__ int32_t ts_to_date(int64_t us) { return (int32_t)floor_div(us, US_PER_DAY); }

// ts + INTERVAL: the months move the date, clamping the day to the month's length and
// keeping the time of day; then the days and microseconds are added (date::add_interval).
__device__ int64_t ts_add_interval(int64_t us, int32_t months, int32_t days, int64_t micros, int* err) {
    int64_t day = floor_div(us, US_PER_DAY);
    const int64_t tod = floor_mod(us, US_PER_DAY);
    if (months != 0) {
        int64_t y; uint32_t m, d;
        civil_from_days(day, &y, &m, &d);
        const int64_t total = y * 12 + (m - 1) + months;
        const int64_t ny = total >= 0 ? total / 12 : (total - 11) / 12;
        const uint32_t nm = (uint32_t)(total - ny * 12) + 1;
        const bool leap = (ny % 4 == 0 && ny % 100 != 0) || ny % 400 == 0;
        const uint32_t dim[12] = {31, leap ? 29u : 28u, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        day = days_from_civil(ny, nm, d < dim[nm - 1] ? d : dim[nm - 1]);
    }
    return ts_make(day, (__int128)tod + (__int128)days * US_PER_DAY + micros, err);
}

// date_trunc units (date::TruncUnit); WEEK is ISO (back to Monday).
#define TRUNC_YEAR 0
#define TRUNC_QUARTER 1
#define TRUNC_MONTH 2
#define TRUNC_WEEK 3
#define TRUNC_DAY 4
#define TRUNC_HOUR 5
#define TRUNC_MINUTE 6
#define TRUNC_SECOND 7
#define TRUNC_MILLISECOND 8
#define TRUNC_MICROSECOND 9
__device__ int64_t ts_trunc(int64_t us, int unit, int* err) {
    if (unit >= TRUNC_HOUR) {
        const int64_t step = unit == TRUNC_HOUR ? US_PER_HOUR : unit == TRUNC_MINUTE ? US_PER_MINUTE : unit == TRUNC_SECOND ? US_PER_SECOND : unit == TRUNC_MILLISECOND ? 1000ll : 1ll;
        return ts_make(0, (__int128)us - floor_mod(us, step), err);
    }
    int64_t day = floor_div(us, US_PER_DAY);
    if (unit == TRUNC_WEEK) {
        day -= floor_mod(day + 3, 7);
    } else if (unit != TRUNC_DAY) {
        int64_t y; uint32_t m, d;
        civil_from_days(day, &y, &m, &d);
        day = days_from_civil(y, unit == TRUNC_YEAR ? 1u : unit == TRUNC_QUARTER ? (m - 1) / 3 * 3 + 1 : m, 1);
    }
    return ts_make(day, 0, err);
}

// EXTRACT fields (date::timestamp_part); EPOCH is a DOUBLE, computed inline.
#define PART_YEAR 0
#define PART_QUARTER 1
#define PART_MONTH 2
#define PART_DAY 3
#define PART_HOUR 4
#define PART_MINUTE 5
#define PART_SECOND 6
#define PART_MILLISECOND 7
#define PART_MICROSECOND 8
#define PART_DOW 9
#define PART_DOY 10
#define PART_ISODOW 11
#define PART_WEEK 12
#define PART_ISOYEAR 13
__device__ int64_t ts_part(int64_t us, int field) {
    int64_t day = floor_div(us, US_PER_DAY);
    const int64_t t = floor_mod(us, US_PER_DAY);
    const int64_t isodow = floor_mod(day + 3, 7) + 1;  // 1 = Monday
    if (field == PART_WEEK || field == PART_ISOYEAR) day = day - (isodow - 1) + 3;  // the ISO week's Thursday
    switch (field) {
        case PART_ISODOW: return isodow;
        case PART_HOUR: return t / US_PER_HOUR;
        case PART_MINUTE: return t / US_PER_MINUTE % 60;
        case PART_SECOND: return t / US_PER_SECOND % 60;
        case PART_MILLISECOND: return t % US_PER_MINUTE / 1000;
        case PART_MICROSECOND: return t % US_PER_MINUTE;
        case PART_DOW: return floor_mod(day + 4, 7);  // 0 = Sunday; 1970-01-01 was a Thursday
        default: break;
    }
    int64_t y; uint32_t m, d;
    civil_from_days(day, &y, &m, &d);
    switch (field) {
        case PART_YEAR: return y;
        case PART_QUARTER: return (m - 1) / 3 + 1;
        case PART_MONTH: return m;
        case PART_DAY: return d;
        case PART_ISOYEAR: return y;
        case PART_WEEK: return (day - days_from_civil(y, 1, 1)) / 7 + 1;
        default: return day - days_from_civil(y, 1, 1) + 1;  // PART_DOY
    }
}

// The EXTRACT fields of an interval (gpusql_common::interval::part).
// SUBSTRING in characters (UTF-8: continuation bytes 10xxxxxx do not start a character);
// the range rule is the CPU backend's substring_range.
__device__ Str str_substring(Str s, int64_t start, int64_t len, bool has_len) {
    int64_t chars = 0;
    for (uint32_t i = 0; i < s.len; i++) chars += !utf8_continuation(s.p[i]);
    const int64_t end = has_len ? start + (len > 0 ? len : 0) : 0x7fffffffffffffffll;
    int64_t from = (start > 1 ? start : 1) - 1; if (from > chars) from = chars;
    int64_t to = end - 1; if (to < from) to = from; if (to > chars) to = chars;
    uint32_t b_from = s.len, b_to = s.len; int64_t c = 0;
    for (uint32_t i = 0; i < s.len; i++) {
        if (!utf8_continuation(s.p[i])) { if (c == from) b_from = i; if (c == to) { b_to = i; break; } c++; }
    }
    if (from == chars) b_from = s.len;
    Str r; r.p = s.p + b_from; r.len = b_to - b_from; r.pad_ = 0; return r;
}

// ---- warp-aggregated counter ----
// Every new group takes the next dense id from one counter; with one atomicAdd per lane,
// 10^7 inserts serialize on that single address (several ms). The lanes that reach this
// point together take their ids with one atomicAdd and their rank among themselves.
__device__ __forceinline__ unsigned long long warp_aggregated_inc(unsigned long long* counter) {
    const unsigned m = __activemask();
    const unsigned lane = threadIdx.x & 31;
    const int leader = __ffs(m) - 1;
    unsigned long long base = 0;
    if ((int)lane == leader) base = atomicAdd(counter, (unsigned long long)__popc(m));
    base = __shfl_sync(m, base, leader);
    return base + __popc(m & ((1u << lane) - 1u));
}

// ---- atomics for aggregate states ----
// 128-bit add as two 64-bit atomics: the low word's carry goes into the high word.
__device__ __forceinline__ void atomic_add_i128(__int128* addr, __int128 v) {
    uint64_t* p = (uint64_t*)addr;
    const uint64_t lo = (uint64_t)v;
    const uint64_t old = atomicAdd(p, lo);
    const uint64_t carry = (old + lo < old) ? 1ull : 0ull;
    const uint64_t hi = (uint64_t)(v >> 64) + carry;
    if (hi != 0) atomicAdd(p + 1, hi);
}
__device__ __forceinline__ void atomic_add_i32(int32_t* a, int32_t v) { atomicAdd(a, v); }
__device__ __forceinline__ void atomic_add_i64(int64_t* a, int64_t v) { atomicAdd((unsigned long long*)a, (unsigned long long)v); }
__device__ __forceinline__ void atomic_add_f64(double* a, double v) { atomicAdd(a, v); }
__device__ __forceinline__ void atomic_min_i64(int64_t* a, int64_t v) { atomicMin((long long*)a, (long long)v); }
__device__ __forceinline__ void atomic_max_i64(int64_t* a, int64_t v) { atomicMax((long long*)a, (long long)v); }
__device__ __forceinline__ void atomic_min_i32(int32_t* a, int32_t v) { atomicMin(a, v); }
__device__ __forceinline__ void atomic_max_i32(int32_t* a, int32_t v) { atomicMax(a, v); }
// 128-bit MIN/MAX (DECIMAL(p > 18)): a 16-byte compare-and-swap loop (sm_90 and later).
// The current value is read with a CAS too, so a torn 2 x 64-bit read cannot end the
// loop early.
#define I128_MAX ((__int128)(~(unsigned __int128)0 >> 1))
#define I128_MIN (-I128_MAX - 1)
__device__ void atomic_min_i128(__int128* a, __int128 v) {
#if __CUDA_ARCH__ >= 900
    __int128 old = atomicCAS(a, I128_MAX, I128_MAX);
    while (v < old) { const __int128 prev = atomicCAS(a, old, v); if (prev == old) return; old = prev; }
#else
    __trap();  // no 16-byte atomics before sm_90
#endif
}
__device__ void atomic_max_i128(__int128* a, __int128 v) {
#if __CUDA_ARCH__ >= 900
    __int128 old = atomicCAS(a, I128_MIN, I128_MIN);
    while (v > old) { const __int128 prev = atomicCAS(a, old, v); if (prev == old) return; old = prev; }
#else
    __trap();
#endif
}
// MIN/MAX of strings: the state is a Str; p == nullptr (all bits 0) means no value yet, so
// it is both MIN's and MAX's identity. Updates swap the whole 16-byte record (sm_90+); the
// bytes it points at (a column's, or a literal's) never move.
#define STR_NONE (make_str_none())
__device__ __forceinline__ Str make_str_none() { Str s; s.p = nullptr; s.len = 0; s.pad_ = 0; return s; }
__device__ __forceinline__ bool str_is_none(Str s) { return s.p == nullptr; }
__device__ __forceinline__ Str str_min(Str a, Str b) { return str_is_none(a) ? b : (str_is_none(b) ? a : (str_cmp(b, a) < 0 ? b : a)); }
__device__ __forceinline__ Str str_max(Str a, Str b) { return str_is_none(a) ? b : (str_is_none(b) ? a : (str_cmp(b, a) > 0 ? b : a)); }
__device__ __forceinline__ __int128 str_bits(Str s) { __int128 b; memcpy(&b, &s, 16); return b; }
__device__ __forceinline__ Str bits_str(__int128 b) { Str s; memcpy(&s, &b, 16); return s; }
__device__ __forceinline__ void atomic_pick_str(Str* a, Str v, bool is_min) {
#if __CUDA_ARCH__ >= 900
    if (str_is_none(v)) return;
    // (v may be a string this thread just made: its bytes are visible before the state
    // points to them.)
    __threadfence();
    __int128* p = (__int128*)a;
    __int128 old = atomicCAS(p, (__int128)0, (__int128)0);
    while (true) {
        const Str cur = bits_str(old);
        if (!str_is_none(cur)) {
            const int c = str_cmp_cg(v, cur);
            if (is_min ? c >= 0 : c <= 0) return;
        }
        const __int128 prev = atomicCAS(p, old, str_bits(v));
        if (prev == old) return;
        old = prev;
    }
#else
    __trap();  // no 16-byte atomics before sm_90
#endif
}
__device__ void atomic_min_str(Str* a, Str v) { atomic_pick_str(a, v, true); }
__device__ void atomic_max_str(Str* a, Str v) { atomic_pick_str(a, v, false); }
__device__ __forceinline__ Str shfl_down_str(Str v, int o) {
    Str r;
    r.p = (const uint8_t*)__shfl_down_sync(FULL_MASK, (unsigned long long)v.p, o);
    r.len = __shfl_down_sync(FULL_MASK, v.len, o);
    r.pad_ = __shfl_down_sync(FULL_MASK, v.pad_, o);
    return r;
}
__device__ __forceinline__ Str warp_min_str(Str v) { for (int o = 16; o > 0; o >>= 1) v = str_min(v, shfl_down_str(v, o)); return v; }
__device__ __forceinline__ Str warp_max_str(Str v) { for (int o = 16; o > 0; o >>= 1) v = str_max(v, shfl_down_str(v, o)); return v; }

__device__ void atomic_min_f64(double* a, double v) {
    unsigned long long* p = (unsigned long long*)a;
    unsigned long long old = *p, assumed;
    do { assumed = old; if (!f64_lt(v, __longlong_as_double(assumed))) return; old = atomicCAS(p, assumed, __double_as_longlong(v)); } while (assumed != old);
}
__device__ void atomic_max_f64(double* a, double v) {
    unsigned long long* p = (unsigned long long*)a;
    unsigned long long old = *p, assumed;
    do { assumed = old; if (!f64_lt(__longlong_as_double(assumed), v)) return; old = atomicCAS(p, assumed, __double_as_longlong(v)); } while (assumed != old);
}

// ---- warp reductions (all 32 lanes take part) ----
__device__ __forceinline__ __int128 warp_sum_i128(__int128 v) {
    for (int o = 16; o > 0; o >>= 1) {
        const uint64_t lo = __shfl_down_sync(FULL_MASK, (uint64_t)v, o);
        const uint64_t hi = __shfl_down_sync(FULL_MASK, (uint64_t)(v >> 64), o);
        v += (__int128)(((unsigned __int128)hi << 64) | lo);
    }
    return v;
}
__device__ __forceinline__ __int128 shfl_down_i128(__int128 v, int o) {
    const uint64_t lo = __shfl_down_sync(FULL_MASK, (uint64_t)v, o);
    const uint64_t hi = __shfl_down_sync(FULL_MASK, (uint64_t)(v >> 64), o);
    return (__int128)(((unsigned __int128)hi << 64) | lo);
}
__device__ __forceinline__ __int128 warp_min_i128(__int128 v) { for (int o = 16; o > 0; o >>= 1) { __int128 x = shfl_down_i128(v, o); v = x < v ? x : v; } return v; }
__device__ __forceinline__ __int128 warp_max_i128(__int128 v) { for (int o = 16; o > 0; o >>= 1) { __int128 x = shfl_down_i128(v, o); v = x > v ? x : v; } return v; }
__device__ __forceinline__ int64_t warp_sum_i64(int64_t v) { for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o); return v; }
__device__ __forceinline__ double warp_sum_f64(double v) { for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o); return v; }
__device__ __forceinline__ int64_t warp_min_i64(int64_t v) { for (int o = 16; o > 0; o >>= 1) { int64_t x = __shfl_down_sync(FULL_MASK, v, o); v = x < v ? x : v; } return v; }
__device__ __forceinline__ int64_t warp_max_i64(int64_t v) { for (int o = 16; o > 0; o >>= 1) { int64_t x = __shfl_down_sync(FULL_MASK, v, o); v = x > v ? x : v; } return v; }
__device__ __forceinline__ int32_t warp_min_i32(int32_t v) { for (int o = 16; o > 0; o >>= 1) { int32_t x = __shfl_down_sync(FULL_MASK, v, o); v = x < v ? x : v; } return v; }
__device__ __forceinline__ int32_t warp_max_i32(int32_t v) { for (int o = 16; o > 0; o >>= 1) { int32_t x = __shfl_down_sync(FULL_MASK, v, o); v = x > v ? x : v; } return v; }
__device__ __forceinline__ double warp_min_f64(double v) { for (int o = 16; o > 0; o >>= 1) { double x = __shfl_down_sync(FULL_MASK, v, o); v = f64_lt(x, v) ? x : v; } return v; }
__device__ __forceinline__ double warp_max_f64(double v) { for (int o = 16; o > 0; o >>= 1) { double x = __shfl_down_sync(FULL_MASK, v, o); v = f64_lt(v, x) ? x : v; } return v; }

// ---- shared-memory acquire load: later loads see what the writer stored before releasing ----
// (A block's group cache: a slot's keys are stored, then its id is published with
// __threadfence_block + atomicExch; a reader that sees the id reads the keys after it.)
__device__ __forceinline__ int ld_acquire_cta(const int* p) {
    int v;
    asm volatile("ld.acquire.cta.shared::cta.b32 %0, [%1];" : "=r"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
    return v;
}

// ---- L1-bypassing loads for hash-table entries other blocks may have just written ----
__device__ __forceinline__ int32_t ld_cg(const int32_t* p) { return __ldcg(p); }
__device__ __forceinline__ int64_t ld_cg(const int64_t* p) { return __ldcg((const long long*)p); }
__device__ __forceinline__ double ld_cg(const double* p) { return __ldcg(p); }
__device__ __forceinline__ uint8_t ld_cg(const uint8_t* p) { return __ldcg(p); }
__device__ __forceinline__ bool ld_cg(const bool* p) { return __ldcg((const unsigned char*)p) != 0; }
__device__ __forceinline__ __int128 ld_cg(const __int128* p) {
    const ulonglong2 v = __ldcg((const ulonglong2*)p);
    return (__int128)(((unsigned __int128)v.y << 64) | v.x);
}
__device__ __forceinline__ Str ld_cg(const Str* p) {
    const ulonglong2 v = __ldcg((const ulonglong2*)p);
    Str s; s.p = (const uint8_t*)v.x; s.len = (uint32_t)v.y; s.pad_ = (uint32_t)(v.y >> 32); return s;
}
template <typename T> __device__ __forceinline__ T ld_plain(const T* p) { return *p; }

// ---- warp broadcast of one lane's values (push-down parallelism) ----
__device__ __forceinline__ bool bcast(bool v, int src) { return __shfl_sync(FULL_MASK, (int)v, src) != 0; }
__device__ __forceinline__ int32_t bcast(int32_t v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ uint32_t bcast(uint32_t v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ int64_t bcast(int64_t v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ uint64_t bcast(uint64_t v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ double bcast(double v, int src) { return __shfl_sync(FULL_MASK, v, src); }
__device__ __forceinline__ __int128 bcast(__int128 v, int src) {
    const uint64_t lo = __shfl_sync(FULL_MASK, (uint64_t)v, src), hi = __shfl_sync(FULL_MASK, (uint64_t)(v >> 64), src);
    return (__int128)(((unsigned __int128)hi << 64) | lo);
}
__device__ __forceinline__ Str bcast(Str s, int src) {
    Str r; r.p = (const uint8_t*)__shfl_sync(FULL_MASK, (uint64_t)s.p, src); r.len = __shfl_sync(FULL_MASK, s.len, src); r.pad_ = __shfl_sync(FULL_MASK, s.pad_, src); return r;
}
// ---- end of prelude ----
