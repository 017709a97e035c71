// ---- DOUBLE as text, as DuckDB 2.0.1 writes it (CAST(x AS VARCHAR), ||, concat) ----
// The shortest digits that read back as the same double (the closest such where several
// are), by Ryu ([Adams 2018], "Ryu: fast float-to-string conversion"): the interval of
// reals that round to x is scaled by a power of ten with 64-bit arithmetic on 128-bit
// powers of five (double_text_tables.cu), and digits are dropped while its ends still
// differ. The layout is DuckDB's: fixed notation for decimal exponents -4 to 15
// (`100.0`, `0.0001`), else `1e+16`, `1.5e-05`; `nan` (any NaN, as common/src/double_text.rs
// explains), `inf`, `-inf`, `-0.0`.
// common/src/double_text.rs is the CPU twin; a host test compiles this file with the C
// compiler and compares the two over every exponent (C but for the arena writer at the end,
// which only CUDA compiles). Not part of the prelude: a module that writes a double gets it
// after the prelude (device_constants.rs, `double_text`), so the others do not parse it.

__device__ __forceinline__ uint32_t f64_pow5_bits(int32_t e) {
    // ceil(log2(5^e)) for 1 <= e <= 3528, and 1 for e = 0
    return (uint32_t)(((uint32_t)e * 1217359u) >> 19) + 1u;
}
__device__ __forceinline__ uint32_t f64_log10_pow2(int32_t e) {
    // floor(log10(2^e)) for 0 <= e <= 1650
    return ((uint32_t)e * 78913u) >> 18;
}
__device__ __forceinline__ uint32_t f64_log10_pow5(int32_t e) {
    // floor(log10(5^e)) for 0 <= e <= 2620
    return ((uint32_t)e * 732923u) >> 20;
}
__device__ __forceinline__ bool f64_multiple_of_pow5(uint64_t v, uint32_t p) {
    uint32_t n = 0;
    while (v != 0u && v % 5u == 0u) { v /= 5u; n++; }
    return n >= p;
}
__device__ __forceinline__ bool f64_multiple_of_pow2(uint64_t v, uint32_t p) {
    return (v & ((1ull << p) - 1u)) == 0u;
}
// (m * mul) >> j, mul a 128-bit number {low, high}, 64 < j < 192 as Ryu's bounds keep it.
__device__ __forceinline__ uint64_t f64_mul_shift(uint64_t m, const uint64_t* mul, int32_t j) {
    const unsigned __int128 b0 = (unsigned __int128)m * mul[0];
    const unsigned __int128 b2 = (unsigned __int128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

// The shortest digits of a finite, non-zero |x| (by its bits): *digits * 10^*exp.
__device__ void f64_shortest(uint64_t bits, uint64_t* digits, int32_t* exp) {
    const uint64_t mantissa = bits & ((1ull << 52) - 1u);
    const uint32_t biased = (uint32_t)((bits >> 52) & 0x7ffu);
    // x = m2 * 2^e2; the bounds of the reals that round to x are (4m2 - 1 - mm_shift) and
    // (4m2 + 2) times 2^(e2 - 2), halfway to the neighbouring doubles.
    const int32_t e2 = (biased == 0u ? 1 : (int32_t)biased) - 1023 - 52 - 2;
    const uint64_t m2 = biased == 0u ? mantissa : (1ull << 52) | mantissa;
    const bool accept_bounds = (m2 & 1u) == 0u;  // round half to even keeps x at a bound
    const uint64_t mv = 4u * m2;
    const uint32_t mm_shift = (mantissa != 0u || biased <= 1u) ? 1u : 0u;
    uint64_t vr, vp, vm;
    int32_t e10;
    bool vm_trailing_zeros = false, vr_trailing_zeros = false;
    if (e2 >= 0) {
        const uint32_t q = f64_log10_pow2(e2) - (e2 > 3 ? 1u : 0u);
        e10 = (int32_t)q;
        const int32_t k = F64_POW5_BITS + (int32_t)f64_pow5_bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = f64_mul_shift(4u * m2, f64_pow5_inv(q), i);
        vp = f64_mul_shift(4u * m2 + 2u, f64_pow5_inv(q), i);
        vm = f64_mul_shift(4u * m2 - 1u - mm_shift, f64_pow5_inv(q), i);
        if (q <= 21u) {
            // Only one of mp, mv, mm can be a multiple of 5, if any.
            if (mv % 5u == 0u) vr_trailing_zeros = f64_multiple_of_pow5(mv, q);
            else if (accept_bounds) vm_trailing_zeros = f64_multiple_of_pow5(mv - 1u - mm_shift, q);
            else vp -= f64_multiple_of_pow5(mv + 2u, q) ? 1u : 0u;
        }
    } else {
        const uint32_t q = f64_log10_pow5(-e2) - (-e2 > 1 ? 1u : 0u);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = (int32_t)f64_pow5_bits(i) - F64_POW5_BITS;
        const int32_t j = (int32_t)q - k;
        vr = f64_mul_shift(4u * m2, f64_pow5((uint32_t)i), j);
        vp = f64_mul_shift(4u * m2 + 2u, f64_pow5((uint32_t)i), j);
        vm = f64_mul_shift(4u * m2 - 1u - mm_shift, f64_pow5((uint32_t)i), j);
        if (q <= 1u) {
            // mv has at least q trailing zero bits (it is a multiple of 4).
            vr_trailing_zeros = true;
            if (accept_bounds) vm_trailing_zeros = mm_shift == 1u;  // mm = mv - 2 then
            else vp -= 1u;  // mp = mv + 2 has them too
        } else if (q < 63u) {
            // Exact where mv * 5^i / 2^q is an integer: 2^q divides mv.
            vr_trailing_zeros = f64_multiple_of_pow2(mv, q);
        }
    }
    // Drop digits while the interval's ends differ in what is left.
    int32_t removed = 0;
    uint32_t last_removed = 0;
    uint64_t out;
    if (vm_trailing_zeros || vr_trailing_zeros) {
        // (Rare: the exact ends and midpoints need tracking.)
        while (vp / 10u > vm / 10u) {
            vm_trailing_zeros &= vm % 10u == 0u;
            vr_trailing_zeros &= last_removed == 0u;
            last_removed = (uint32_t)(vr % 10u);
            vr /= 10u; vp /= 10u; vm /= 10u;
            removed++;
        }
        if (vm_trailing_zeros) {
            while (vm % 10u == 0u) {
                vr_trailing_zeros &= last_removed == 0u;
                last_removed = (uint32_t)(vr % 10u);
                vr /= 10u; vp /= 10u; vm /= 10u;
                removed++;
            }
        }
        // An exact half rounds to even.
        if (vr_trailing_zeros && last_removed == 5u && vr % 2u == 0u) last_removed = 4u;
        out = vr + (((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last_removed >= 5u) ? 1u : 0u);
    } else {
        bool round_up = false;
        if (vp / 100u > vm / 100u) {
            round_up = vr % 100u >= 50u;
            vr /= 100u; vp /= 100u; vm /= 100u;
            removed += 2;
        }
        while (vp / 10u > vm / 10u) {
            round_up = vr % 10u >= 5u;
            vr /= 10u; vp /= 10u; vm /= 10u;
            removed++;
        }
        out = vr + ((vr == vm || round_up) ? 1u : 0u);
    }
    *digits = out;
    *exp = e10 + removed;
}

// DuckDB's text of x into buf (at least F64_TEXT_MAX bytes); its length.
#define F64_TEXT_MAX 25
__device__ uint32_t f64_text(double x, uint8_t* buf) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    uint32_t n = 0;
    const bool neg = (bits >> 63) != 0u;
    if (((bits >> 52) & 0x7ffu) == 0x7ffu) {
        if ((bits & ((1ull << 52) - 1u)) != 0u) { buf[0] = 'n'; buf[1] = 'a'; buf[2] = 'n'; return 3; }
        if (neg) buf[n++] = '-';
        buf[n++] = 'i'; buf[n++] = 'n'; buf[n++] = 'f';
        return n;
    }
    if (neg) buf[n++] = '-';
    if ((bits << 1) == 0u) { buf[n++] = '0'; buf[n++] = '.'; buf[n++] = '0'; return n; }
    uint64_t d;
    int32_t e;
    f64_shortest(bits & ~(1ull << 63), &d, &e);
    uint8_t dig[20];
    int32_t len = 0;
    for (uint64_t v = d; v != 0u; v /= 10u) dig[len++] = (uint8_t)('0' + v % 10u);  // backwards
    const int32_t sci = e + len - 1;  // the exponent of the first digit
    if (sci >= -4 && sci < 16) {
        if (e >= 0) {
            for (int32_t k = len - 1; k >= 0; k--) buf[n++] = dig[k];
            for (int32_t k = 0; k < e; k++) buf[n++] = '0';
            buf[n++] = '.'; buf[n++] = '0';
        } else if (sci >= 0) {
            for (int32_t k = len - 1; k >= 0; k--) {
                buf[n++] = dig[k];
                if (k == -e) buf[n++] = '.';
            }
        } else {
            buf[n++] = '0'; buf[n++] = '.';
            for (int32_t k = 0; k < -sci - 1; k++) buf[n++] = '0';
            for (int32_t k = len - 1; k >= 0; k--) buf[n++] = dig[k];
        }
        return n;
    }
    buf[n++] = dig[len - 1];
    if (len > 1) {
        buf[n++] = '.';
        for (int32_t k = len - 2; k >= 0; k--) buf[n++] = dig[k];
    }
    buf[n++] = 'e';
    buf[n++] = sci < 0 ? '-' : '+';
    const int32_t a = sci < 0 ? -sci : sci;
    if (a >= 100) buf[n++] = (uint8_t)('0' + a / 100);
    buf[n++] = (uint8_t)('0' + a / 10 % 10);
    buf[n++] = (uint8_t)('0' + a % 10);
    return n;
}

#ifdef __CUDACC__
// A DOUBLE as text in the kernel's arena (strings.cu).
__device__ Str str_from_f64(const Arena& a, double x) {
    uint8_t buf[F64_TEXT_MAX];
    return arena_copy(a, buf, f64_text(x, buf));
}
#endif
