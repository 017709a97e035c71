// ---- INTERVAL: months, days and microseconds (gpusql_common::interval, the CPU twin);
// after prelude.cu in every module (device_constants.rs `prelude`) ----
struct __align__(16) Interval {
    int32_t months;
    int32_t days;
    int64_t micros;
};
__device__ __forceinline__ Interval make_iv(int32_t months, int32_t days, int64_t micros) {
    Interval v; v.months = months; v.days = days; v.micros = micros; return v;
}
// A literal's two parameters: months and days in the low word, microseconds the high.
__device__ __forceinline__ Interval iv_from_bits(uint64_t lo, uint64_t hi) {
    return make_iv((int32_t)(uint32_t)lo, (int32_t)(uint32_t)(lo >> 32), (int64_t)hi);
}
// The fields with microseconds carried into days and days into 30-day months, the
// remainders never negative: what comparisons, grouping and hashing see.
__device__ __forceinline__ void iv_norm(Interval a, int64_t* m, int64_t* d, int64_t* us) {
    const int64_t carry_days = floor_div(a.micros, US_PER_DAY);
    *us = a.micros - carry_days * US_PER_DAY;
    const int64_t days = (int64_t)a.days + carry_days;
    const int64_t carry_months = floor_div(days, 30);
    *d = days - carry_months * 30;
    *m = (int64_t)a.months + carry_months;
}
__device__ __forceinline__ int iv_cmp(Interval a, Interval b) {
    int64_t am, ad, au, bm, bd, bu;
    iv_norm(a, &am, &ad, &au);
    iv_norm(b, &bm, &bd, &bu);
    if (am != bm) return am < bm ? -1 : 1;
    if (ad != bd) return ad < bd ? -1 : 1;
    return au < bu ? -1 : (au > bu ? 1 : 0);
}
__device__ __forceinline__ bool iv_eq(Interval a, Interval b) { return iv_cmp(a, b) == 0; }
__device__ __forceinline__ bool iv_lt(Interval a, Interval b) { return iv_cmp(a, b) < 0; }
__device__ __forceinline__ uint64_t hash_iv(Interval a) {
    int64_t m, d, us;
    iv_norm(a, &m, &d, &us);
    return hash_u64((uint64_t)us ^ hash_u64((uint64_t)d ^ hash_u64((uint64_t)m)));
}
__device__ __forceinline__ int32_t iv_i32(int64_t v, int* err) {
    if (v < -2147483648ll || v > 2147483647ll) { if (err) raise_error(err, ERR_INTERVAL_RANGE); return 0; }
    return (int32_t)v;
}
// 64-bit a + b, a - b, a * b, or an error where they leave BIGINT (`code`).
__device__ __forceinline__ int64_t add_checked(int64_t a, int64_t b, int* err, int code) {
    const int64_t r = (int64_t)((uint64_t)a + (uint64_t)b);
    if (((a ^ r) & (b ^ r)) < 0) { if (err) raise_error(err, code); return 0; }
    return r;
}
__device__ __forceinline__ int64_t sub_checked(int64_t a, int64_t b, int* err, int code) {
    const int64_t r = (int64_t)((uint64_t)a - (uint64_t)b);
    if (((a ^ b) & (a ^ r)) < 0) { if (err) raise_error(err, code); return 0; }
    return r;
}
__device__ __forceinline__ int64_t mul_checked(int64_t a, int64_t b, int* err, int code) {
    const __int128 r = (__int128)a * (__int128)b;
    if (r < -(__int128)0x7fffffffffffffffll - 1 || r > (__int128)0x7fffffffffffffffll) { if (err) raise_error(err, code); return 0; }
    return (int64_t)r;
}
__device__ __forceinline__ int64_t iv_add_i64(int64_t a, int64_t b, int* err) { return add_checked(a, b, err, ERR_INTERVAL_RANGE); }
__device__ __forceinline__ int64_t iv_mul_i64_(int64_t a, int64_t b, int* err) { return mul_checked(a, b, err, ERR_INTERVAL_RANGE); }
__device__ Interval iv_add(Interval a, Interval b, int* err) {
    return make_iv(iv_i32((int64_t)a.months + b.months, err), iv_i32((int64_t)a.days + b.days, err), iv_add_i64(a.micros, b.micros, err));
}
__device__ Interval iv_neg(Interval a, int* err) {
    if (a.months == (-2147483647 - 1) || a.days == (-2147483647 - 1) || a.micros == (-9223372036854775807ll - 1)) {
        if (err) raise_error(err, ERR_INTERVAL_RANGE);
        return make_iv(0, 0, 0);
    }
    return make_iv(-a.months, -a.days, -a.micros);
}
__device__ Interval iv_sub(Interval a, Interval b, int* err) {
    const int64_t us = sub_checked(a.micros, b.micros, err, ERR_INTERVAL_RANGE);
    return make_iv(iv_i32((int64_t)a.months - b.months, err), iv_i32((int64_t)a.days - b.days, err), us);
}
// Times an integer: each field, the factor first taken as a 32-bit integer.
__device__ Interval iv_mul_i64(Interval a, int64_t k, int* err) {
    const int32_t k32 = iv_i32(k, err);
    return make_iv(iv_i32((int64_t)a.months * k32, err), iv_i32((int64_t)a.days * k32, err), iv_mul_i64_(a.micros, k, err));
}
// Times a DOUBLE (PostgreSQL's interval_mul, as DuckDB): whole months and days of the
// products, their fractions cascaded down into days and seconds (rounded to microseconds,
// half to even), the microseconds multiplied last.
__device__ __forceinline__ double iv_round_us(double x) { return __ddiv_rn(rint(__dmul_rn(x, 1000000.0)), 1000000.0); }
__device__ int32_t iv_f64_i32(double d, int* err) {
    if (isnan(d) || d < -2147483648.0 || d > 2147483647.0) { if (err) raise_error(err, ERR_INTERVAL_RANGE); return 0; }
    return (int32_t)d;
}
__device__ Interval iv_mul_f64(Interval a, double k, int* err) {
    const double mk = __dmul_rn((double)a.months, k), dk = __dmul_rn((double)a.days, k);
    const int32_t months = iv_f64_i32(mk, err);
    int32_t days = iv_f64_i32(dk, err);
    const double month_rem = iv_round_us(__dmul_rn(__dsub_rn(mk, (double)months), 30.0));
    const int32_t day_rem = (int32_t)month_rem;
    double sec_rem = iv_round_us(__dmul_rn(__dsub_rn(__dadd_rn(__dsub_rn(dk, (double)days), month_rem), (double)day_rem), 86400.0));
    if (fabs(sec_rem) >= 86400.0) {
        const int32_t whole = (int32_t)__ddiv_rn(sec_rem, 86400.0);
        days = (int32_t)((uint32_t)days + (uint32_t)whole);
        sec_rem = __dsub_rn(sec_rem, __dmul_rn((double)whole, 86400.0));
    }
    days = (int32_t)((uint32_t)days + (uint32_t)day_rem);
    const double us = rint(__dadd_rn(__dmul_rn((double)a.micros, k), __dmul_rn(sec_rem, 1000000.0)));
    if (isnan(us) || us < -9.223372036854775808e18 || us >= 9.223372036854775808e18) {
        if (err) raise_error(err, ERR_INTERVAL_RANGE);
        return make_iv(0, 0, 0);
    }
    return make_iv(months, days, (int64_t)us);
}
__device__ Interval iv_div_f64(Interval a, double k, int* err) {
    if (k == 0.0) { if (err) raise_error(err, ERR_DIV_ZERO); return make_iv(0, 0, 0); }
    return iv_mul_f64(a, __ddiv_rn(1.0, k), err);
}
// TIMESTAMP - TIMESTAMP: the microseconds between them as whole days and the rest (both
// truncated toward zero).
__device__ Interval ts_diff(int64_t a, int64_t b, int* err) {
    const int64_t d = sub_checked(a, b, err, ERR_TIMESTAMP_RANGE);
    return make_iv(0, (int32_t)(d / US_PER_DAY), d % US_PER_DAY);
}
__device__ __forceinline__ int64_t ts_add_iv(int64_t ts, Interval a, int* err) { return ts_add_interval(ts, a.months, a.days, a.micros, err); }
__device__ int64_t ts_sub_iv(int64_t ts, Interval a, int* err) { return ts_add_iv(ts, iv_neg(a, err), err); }
// The whole interval in microseconds (a month as 30 days: DuckDB's GetMicro).
__device__ int64_t iv_total_micros(Interval a, int* err) {
    const int64_t m = mul_checked((int64_t)a.months, 30ll * US_PER_DAY, err, ERR_INTERVAL_RANGE);
    const int64_t d = mul_checked((int64_t)a.days, US_PER_DAY, err, ERR_INTERVAL_RANGE);
    return add_checked(add_checked(a.micros, m, err, ERR_INTERVAL_RANGE), d, err, ERR_INTERVAL_RANGE);
}
// EXTRACT(epoch FROM …): seconds, a year as 365.25 days and a month as 30.
__device__ double iv_epoch(Interval a) {
    const int64_t years = a.months / 12;
    const int64_t days = 365 * years + 30 * (int64_t)(a.months % 12) + a.days;
    const int64_t seconds = days * 86400 + years * 21600;
    return __dadd_rn((double)seconds, __ddiv_rn((double)a.micros, 1000000.0));
}
// MIN / MAX of intervals: IV_NONE (no value yet) is both identities; updates swap the
// whole 16 bytes (sm_90+).
#define IV_NONE (make_iv((-2147483647 - 1), (-2147483647 - 1), (-9223372036854775807ll - 1)))
__device__ __forceinline__ bool iv_is_none(Interval a) { return a.months == (-2147483647 - 1) && a.days == (-2147483647 - 1) && a.micros == (-9223372036854775807ll - 1); }
__device__ __forceinline__ Interval iv_min(Interval a, Interval b) { return iv_is_none(a) ? b : (iv_is_none(b) ? a : (iv_lt(b, a) ? b : a)); }
__device__ __forceinline__ Interval iv_max(Interval a, Interval b) { return iv_is_none(a) ? b : (iv_is_none(b) ? a : (iv_lt(a, b) ? b : a)); }
__device__ __forceinline__ __int128 iv_bits(Interval a) { __int128 b; memcpy(&b, &a, 16); return b; }
__device__ __forceinline__ Interval bits_iv(__int128 b) { Interval a; memcpy(&a, &b, 16); return a; }
__device__ void atomic_pick_iv(Interval* p, Interval v, bool is_min) {
#if __CUDA_ARCH__ >= 900
    if (iv_is_none(v)) return;
    __int128* q = (__int128*)p;
    __int128 old = atomicCAS(q, (__int128)0, (__int128)0);
    while (true) {
        const Interval cur = bits_iv(old);
        if (!iv_is_none(cur)) {
            const int c = iv_cmp(v, cur);
            if (is_min ? c >= 0 : c <= 0) return;
        }
        const __int128 prev = atomicCAS(q, old, iv_bits(v));
        if (prev == old) return;
        old = prev;
    }
#else
    __trap();  // no 16-byte atomics before sm_90
#endif
}
__device__ void atomic_min_iv(Interval* p, Interval v) { atomic_pick_iv(p, v, true); }
__device__ void atomic_max_iv(Interval* p, Interval v) { atomic_pick_iv(p, v, false); }
__device__ __forceinline__ Interval shfl_down_iv(Interval v, int o) {
    return make_iv(__shfl_down_sync(FULL_MASK, v.months, o), __shfl_down_sync(FULL_MASK, v.days, o), (int64_t)__shfl_down_sync(FULL_MASK, (long long)v.micros, o));
}
__device__ __forceinline__ Interval warp_min_iv(Interval v) { for (int o = 16; o > 0; o >>= 1) v = iv_min(v, shfl_down_iv(v, o)); return v; }
__device__ __forceinline__ Interval warp_max_iv(Interval v) { for (int o = 16; o > 0; o >>= 1) v = iv_max(v, shfl_down_iv(v, o)); return v; }

__device__ int64_t iv_part(Interval a, int field) {
    const int64_t m = a.months;
    switch (field) {
        case PART_YEAR: return m / 12;
        case PART_MONTH: return m % 12;
        case PART_QUARTER: return m % 12 / 3 + 1;
        case PART_DAY: return a.days;
        case PART_HOUR: return a.micros / US_PER_HOUR;
        case PART_MINUTE: return a.micros % US_PER_HOUR / US_PER_MINUTE;
        case PART_SECOND: return a.micros % US_PER_MINUTE / US_PER_SECOND;
        case PART_MILLISECOND: return a.micros % US_PER_MINUTE / 1000;
        default: return a.micros % US_PER_MINUTE;  // PART_MICROSECOND
    }
}

// L1-bypassing load and warp broadcast of an interval (prelude.cu has the other types').
__device__ __forceinline__ Interval ld_cg(const Interval* p) {
    const ulonglong2 v = __ldcg((const ulonglong2*)p);
    return make_iv((int32_t)(uint32_t)v.x, (int32_t)(uint32_t)(v.x >> 32), (int64_t)v.y);
}
__device__ __forceinline__ Interval bcast(Interval v, int src) {
    return make_iv(__shfl_sync(FULL_MASK, v.months, src), __shfl_sync(FULL_MASK, v.days, src), (int64_t)__shfl_sync(FULL_MASK, (long long)v.micros, src));
}
