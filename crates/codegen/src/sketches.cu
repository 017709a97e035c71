// ---- approx_count_distinct's HyperLogLog and the quantiles' positions and blends
// (gpusql_plan::hyperloglog and gpusql_plan::quantile, the CPU twins); after interval.cu ----
// approx_count_distinct as DuckDB computes it (gpusql_plan::hyperloglog, the CPU twin):
// DuckDB's hashes of a value's physical type, the register and rank a hash gives (P = 10
// index bits), and Ertl's estimate from a group's histogram of register values.
__device__ __forceinline__ uint64_t murmur64(uint64_t x) {
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    return x ^ (x >> 32);
}
__device__ __forceinline__ uint64_t duck_hash_u32(uint32_t x) { return murmur64((uint64_t)x); }
__device__ __forceinline__ uint64_t duck_hash_i128(__int128 x) {
    return murmur64((uint64_t)x) ^ murmur64((uint64_t)((unsigned __int128)x >> 64));
}
__device__ __forceinline__ uint64_t duck_hash_f64(double x) {
    if (x == 0.0) x = 0.0;
    else if (isnan(x)) return murmur64(0x7ff8000000000000ull);
    return murmur64((uint64_t)__double_as_longlong(x));
}
__device__ uint64_t duck_hash_bytes(const uint8_t* p, uint32_t len) {
    uint64_t h = 0xe17a1465ull ^ ((uint64_t)len * 0xc6a4a7935bd1e995ull);
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        const uint32_t n = len - i < 8 ? len - i : 8;
        for (uint32_t j = 0; j < n; j++) w |= (uint64_t)p[i + j] << (8 * j);
        h ^= w;
        h *= 0xd6e8feb86659fd93ull;
    }
    return murmur64(h);
}
#define HLL_P 10
#define HLL_M 1024
#define HLL_Q 54
__device__ __forceinline__ int32_t hll_register(uint64_t h) { return (int32_t)(h & (HLL_M - 1)); }
__device__ __forceinline__ int32_t hll_rank(uint64_t h) { return __ffsll((long long)((h >> HLL_P) | (1ull << HLL_Q))); }
__device__ double hll_sigma(double x) {
    if (x == 1.0) return __longlong_as_double(0x7ff0000000000000ll);
    double y = 1.0, z = x, before;
    do { x = __dmul_rn(x, x); before = z; z = __dadd_rn(z, __dmul_rn(x, y)); y = __dadd_rn(y, y); } while (before != z);
    return z;
}
__device__ double hll_tau(double x) {
    if (x == 0.0 || x == 1.0) return 0.0;
    double y = 1.0, z = __dsub_rn(1.0, x), before;
    do {
        x = sqrt(x); before = z; y = __dmul_rn(y, 0.5);
        const double d = __dsub_rn(1.0, x);
        z = __dsub_rn(z, __dmul_rn(__dmul_rn(d, d), y));
    } while (before != z);
    return __ddiv_rn(z, 3.0);
}
// c[k]: how many of the group's registers hold k (k = 0 .. HLL_Q).
__device__ int64_t hll_estimate(const int64_t* c) {
    const double m = (double)HLL_M;
    double z = __dmul_rn(m, hll_tau(__ddiv_rn(__dsub_rn(m, (double)c[HLL_Q]), m)));
    for (int k = HLL_Q; k >= 1; --k) z = __dmul_rn(__dadd_rn(z, (double)c[k]), 0.5);
    z = __dadd_rn(z, __dmul_rn(m, hll_sigma(__ddiv_rn((double)c[0], m))));
    return llround(__ddiv_rn(__dmul_rn(__dmul_rn(0.721347520444481703680, m), m), z));
}
// quantile_cont / quantile_disc over a group's n sorted non-NULL values, as DuckDB
// computes them (gpusql_plan::quantile, the CPU twin): positions, then the blend of the
// values at the lower and upper position.
__device__ __forceinline__ int64_t quantile_cont_lower(int64_t n, double q) { return (int64_t)floor(__dmul_rn((double)(n - 1), q)); }
__device__ __forceinline__ int64_t quantile_cont_upper(int64_t n, double q) { return (int64_t)ceil(__dmul_rn((double)(n - 1), q)); }
__device__ __forceinline__ double quantile_fraction(int64_t n, double q) {
    const double rn = __dmul_rn((double)(n - 1), q);
    return __dsub_rn(rn, floor(rn));
}
__device__ __forceinline__ int64_t quantile_disc_position(int64_t n, int64_t floored) { return (n - floored > 1 ? n - floored : 1) - 1; }
__device__ __forceinline__ int64_t quantile_disc_f64(int64_t n, double q) {
    return quantile_disc_position(n, (int64_t)floor(__dsub_rn((double)n, __dmul_rn((double)n, q))));
}
// A fraction written as a DECIMAL: integral / scaling, in exact integers (scaling <= 10^18).
__device__ __forceinline__ int64_t quantile_disc_decimal(int64_t n, __int128 integral, __int128 scaling) {
    return quantile_disc_position(n, (int64_t)(i128_sub((__int128)n * scaling, (__int128)n * integral) / scaling));
}
// As DuckDB's build evaluates them (plan/src/quantile.rs): fma(lo, 1 - d, hi * d) for
// DOUBLE; lo + llround((hi - lo) * d) for TIMESTAMP; the truncated fma(hi - lo, d, lo) for
// DECIMAL of at most 18 digits.
__device__ __forceinline__ double quantile_interpolate_f64(double lo, double hi, double d) {
    return d == 0.0 ? lo : __fma_rn(lo, __dsub_rn(1.0, d), __dmul_rn(hi, d));
}
__device__ __forceinline__ int64_t quantile_interpolate_ts(int64_t lo, int64_t hi, double d) {
    return d == 0.0 ? lo : (int64_t)((uint64_t)lo + (uint64_t)llround(__dmul_rn((double)((__int128)hi - lo), d)));
}
__device__ __forceinline__ int64_t quantile_interpolate_dec64(int64_t lo, int64_t hi, double d) {
    return d == 0.0 ? lo : (int64_t)__fma_rn((double)(hi - lo), d, (double)lo);
}
// A DOUBLE truncated to 128 bits (its integer part has at most 53 significant bits).
__device__ __int128 f64_trunc_i128(double x) {
    const double t = trunc(x);
    if (fabs(t) < 9.2e18) return (__int128)(int64_t)t;
    const double hi = floor(t / 18446744073709551616.0);
    const double lo = t - hi * 18446744073709551616.0;
    return (__int128)(((unsigned __int128)(uint64_t)(int64_t)hi << 64) | (uint64_t)lo);
}
// Wide DECIMALs: lo plus the truncated product of the exact difference; where that
// difference overflows, the blend of both as DOUBLEs.
__device__ __int128 quantile_interpolate_dec128(__int128 lo, __int128 hi, double d) {
    if (d == 0.0) return lo;
    const __int128 delta = i128_sub(hi, lo);
    const bool overflow = (hi < 0) != (lo < 0) && (delta < 0) != (hi < 0);
    if (overflow) return f64_trunc_i128(quantile_interpolate_f64(decimal_to_f64(lo, 1, 1.0), decimal_to_f64(hi, 1, 1.0), d));
    return lo + f64_trunc_i128(__dmul_rn(decimal_to_f64(delta, 1, 1.0), d));
}
// DuckDB's hash of an interval: of its normalized fields (hyperloglog::duckdb_hash).
__device__ uint64_t duck_hash_iv(Interval a) {
    int64_t m, d, us;
    iv_norm(a, &m, &d, &us);
    return murmur64((uint64_t)d) ^ murmur64((uint64_t)m) ^ murmur64((uint64_t)us);
}
// median of INTERVALs (quantile::interpolate_interval): lo plus the rounded share of the
// microseconds between them, as whole days and the rest.
__device__ Interval quantile_interpolate_iv(Interval lo, Interval hi, double d, int* err) {
    if (d == 0.0) return lo;
    const int64_t a = iv_total_micros(lo, err), b = iv_total_micros(hi, err);
    const int64_t step = llround(__dmul_rn((double)(int64_t)((uint64_t)b - (uint64_t)a), d));
    const int64_t t = (int64_t)((uint64_t)a + (uint64_t)step);
    return make_iv(0, (int32_t)(t / US_PER_DAY), t % US_PER_DAY);
}
