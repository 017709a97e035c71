// ---- CAST of text: twins of gpusql_common::text_cast (same names, same steps) ----
// Each reader returns the value and sets *status to TEXT_OK, TEXT_INVALID (DuckDB's
// "Could not convert string"; NULL under TRY_CAST) or TEXT_UNSUPPORTED (text DuckDB reads
// by rules this engine does not follow: an error under CAST and TRY_CAST alike).
#define TEXT_OK 0
#define TEXT_INVALID 1
#define TEXT_UNSUPPORTED 2

__device__ __forceinline__ bool text_space(uint8_t b) { return b == ' ' || (b >= '\t' && b <= '\r'); }
__device__ __forceinline__ bool text_digit(uint8_t b) { return b >= '0' && b <= '9'; }

// The text without DuckDB's white space around it: bytes [*b, *e).
__device__ __forceinline__ void text_trim(Str s, uint32_t* b, uint32_t* e) {
    uint32_t i = 0, j = s.len;
    while (i < j && text_space(s.p[i])) i++;
    while (j > i && text_space(s.p[j - 1])) j--;
    *b = i;
    *e = j;
}

// A run of digits from *i (underscores between two digits where allowed); *count digits.
// False on an underscore not followed by a digit.
__device__ bool text_digit_run(Str s, uint32_t* i, uint32_t end, bool underscores, int32_t* count) {
    *count = 0;
    while (*i < end) {
        const uint8_t b = s.p[*i];
        if (text_digit(b)) {
            (*count)++;
        } else if (b == '_' && underscores && *count > 0 && text_digit(s.p[*i - 1])) {
            if (!(*i + 1 < end && text_digit(s.p[*i + 1]))) return false;
        } else {
            break;
        }
        (*i)++;
    }
    return true;
}

// `[+-] digits [. digits]` then an optional exponent marker at exp_at (end: none).
struct TextNumber {
    bool neg;
    uint32_t int_b, int_e, frac_b, frac_e, exp_at;
    int32_t int_n, frac_n;
};

__device__ bool text_scan_number(Str s, uint32_t b, uint32_t e, bool underscores, TextNumber* n) {
    uint32_t i = b;
    n->neg = i < e && s.p[i] == '-';
    if (i < e && (s.p[i] == '+' || s.p[i] == '-')) i++;
    n->int_b = i;
    if (!text_digit_run(s, &i, e, underscores, &n->int_n)) return false;
    n->int_e = n->frac_b = n->frac_e = i;
    n->frac_n = 0;
    if (i < e && s.p[i] == '.') {
        i++;
        n->frac_b = i;
        if (!text_digit_run(s, &i, e, underscores, &n->frac_n)) return false;
        n->frac_e = i;
    }
    if (n->int_n == 0 && n->frac_n == 0) return false;
    n->exp_at = e;
    if (i < e) {
        if (s.p[i] != 'e' && s.p[i] != 'E') return false;
        n->exp_at = i;
    }
    return true;
}

__device__ __forceinline__ bool text_radix_prefix(Str s, uint32_t b, uint32_t e) {
    return e - b >= 2 && s.p[b] == '0' && ((s.p[b + 1] | 0x20) == 'x' || (s.p[b + 1] | 0x20) == 'b');
}

// CAST(text AS INTEGER / BIGINT): rounded half away from zero by the first digit after
// the point, within lo..=hi.
__device__ int64_t text_to_int(Str s, int64_t lo, int64_t hi, int* status) {
    uint32_t b, e;
    text_trim(s, &b, &e);
    *status = TEXT_UNSUPPORTED;
    if (text_radix_prefix(s, b, e)) return 0;
    TextNumber n;
    *status = TEXT_INVALID;
    if (!text_scan_number(s, b, e, true, &n)) return 0;
    if (n.exp_at < e) { *status = TEXT_UNSUPPORTED; return 0; }
    uint64_t m = 0;
    for (uint32_t i = n.int_b; i < n.int_e; i++) {
        if (s.p[i] == '_') continue;
        const uint64_t d = s.p[i] - '0';
        if (m > (~0ull - d) / 10) return 0;
        m = m * 10 + d;
    }
    if (n.frac_n > 0 && s.p[n.frac_b] >= '5') {
        if (m == ~0ull) return 0;
        m++;
    }
    const uint64_t limit = n.neg ? (uint64_t)0 - (uint64_t)lo : (uint64_t)hi;
    if (m > limit) return 0;
    *status = TEXT_OK;
    return n.neg ? (int64_t)((uint64_t)0 - m) : (int64_t)m;
}

// m * 10 + d, false where that reaches limit.
__device__ __forceinline__ bool text_decimal_digit(unsigned __int128* m, uint32_t d, unsigned __int128 limit) {
    if (*m > (limit - 1 - d) / 10) return false;
    *m = *m * 10 + d;
    return true;
}

// CAST(text AS DECIMAL(precision, scale)): the digits past `scale` rounded half away from
// zero; |value| < limit (10^precision).
__device__ __int128 text_to_decimal(Str s, int32_t scale, unsigned __int128 limit, int* status) {
    uint32_t b, e;
    text_trim(s, &b, &e);
    TextNumber n;
    *status = TEXT_INVALID;
    if (!text_scan_number(s, b, e, true, &n)) return 0;
    if (n.exp_at < e) { *status = TEXT_UNSUPPORTED; return 0; }
    unsigned __int128 m = 0;
    for (uint32_t i = n.int_b; i < n.int_e; i++)
        if (s.p[i] != '_' && !text_decimal_digit(&m, s.p[i] - '0', limit)) return 0;
    // `scale` digits after the point (zeros past its end), then the rounding digit.
    uint32_t i = n.frac_b;
    for (int32_t k = 0; k < scale; k++) {
        if (i < n.frac_e && s.p[i] == '_') i++;
        const uint32_t d = i < n.frac_e ? s.p[i++] - '0' : 0;
        if (!text_decimal_digit(&m, d, limit)) return 0;
    }
    if (i < n.frac_e && s.p[i] == '_') i++;
    if (i < n.frac_e && s.p[i] >= '5') m++;
    if (m >= limit) return 0;
    *status = TEXT_OK;
    return n.neg ? -(__int128)m : (__int128)m;
}

// A u128 to the nearest DOUBLE, ties to even: its top 64 bits with the rest folded into
// the lowest (a sticky bit below the rounding bit), converted once and scaled back.
__device__ double text_u128_to_f64(unsigned __int128 v) {
    const uint64_t high = (uint64_t)(v >> 64);
    if (high == 0) return __ull2double_rn((uint64_t)v);
    const int shift = 64 - __clzll((long long)high);
    const unsigned __int128 rest = v & (((unsigned __int128)1 << shift) - 1);
    const uint64_t top = (uint64_t)(v >> shift) | (uint64_t)(rest != 0);
    return ldexp(__ull2double_rn(top), shift);
}

// w * 10^e rounded to the nearest DOUBLE where 128-bit integers make it exact; false
// elsewhere.
__device__ bool text_exact_double(uint64_t w, int64_t e, double* out) {
    if (e >= 0) {
        if (e > 38) return false;
        unsigned __int128 p = 1;
        for (int64_t k = 0; k < e; k++) p *= 10;
        if ((unsigned __int128)w > (~(unsigned __int128)0) / p) return false;
        *out = text_u128_to_f64((unsigned __int128)w * p);
        return true;
    }
    const int64_t k = -e;
    if (k <= 21) {
        // Shifted so the quotient keeps at least 55 significant bits; the remainder is its
        // sticky bit.
        const int shift = __clzll((long long)w) + 64;
        const unsigned __int128 num = (unsigned __int128)w << shift;
        unsigned __int128 den = 1;
        for (int64_t j = 0; j < k; j++) den *= 10;
        const unsigned __int128 q = num / den, r = num % den;
        *out = ldexp(text_u128_to_f64(q | (unsigned __int128)(r != 0)), -shift);
        return true;
    }
    if (k == 22 && w <= (1ull << 53)) {
        *out = __ddiv_rn((double)w, 1e22);
        return true;
    }
    return false;
}

__device__ bool text_word(Str s, uint32_t b, uint32_t e, const char* word, uint32_t len) {
    if (e - b != len) return false;
    for (uint32_t i = 0; i < len; i++) if ((s.p[b + i] | 0x20) != word[i]) return false;
    return true;
}

// CAST(text AS DOUBLE): digits (underscores between them), a point, an exponent; inf,
// infinity and nan in any case. At most 19 significant digits.
__device__ double text_to_double(Str s, int* status) {
    uint32_t b, e;
    text_trim(s, &b, &e);
    const bool neg = b < e && s.p[b] == '-';
    const uint32_t body = b < e && (s.p[b] == '+' || s.p[b] == '-') ? b + 1 : b;
    *status = TEXT_OK;
    if (text_word(s, body, e, "inf", 3) || text_word(s, body, e, "infinity", 8)) return __longlong_as_double(neg ? (long long)0xfff0000000000000ull : 0x7ff0000000000000ll);
    if (text_word(s, body, e, "nan", 3)) return __longlong_as_double(0x7ff8000000000000ll);
    TextNumber n;
    *status = TEXT_INVALID;
    if (!text_scan_number(s, b, e, true, &n)) return 0.0;
    int64_t exponent = 0;
    if (n.exp_at < e) {
        uint32_t j = n.exp_at + 1;
        const bool eneg = j < e && s.p[j] == '-';
        if (j < e && (s.p[j] == '+' || s.p[j] == '-')) j++;
        const uint32_t start = j;
        int32_t count;
        if (!text_digit_run(s, &j, e, true, &count) || count == 0 || j != e) return 0.0;
        for (uint32_t i = start; i < e; i++) {
            if (s.p[i] == '_') continue;
            exponent = exponent * 10 + (s.p[i] - '0');
            if (exponent > 100000) exponent = 100000;
        }
        if (eneg) exponent = -exponent;
    }
    // w * 10^e from the significant digits: leading zeros skipped, trailing zeros into e.
    uint64_t w = 0;
    int64_t index = 0, last = -1, pending = 0, significant = 0;
    bool started = false;
    for (uint32_t i = n.int_b; i < n.frac_e; i++) {
        const uint8_t c = s.p[i];
        if (!text_digit(c)) continue;  // '_' and the point
        const uint32_t d = c - '0';
        if (!started && d == 0) { index++; continue; }
        started = true;
        if (d == 0) {
            pending++;
        } else {
            significant += pending + 1;
            if (significant > 19) { *status = TEXT_UNSUPPORTED; return 0.0; }
            for (; pending > 0; pending--) w *= 10;
            w = w * 10 + d;
            last = index;
        }
        index++;
    }
    *status = TEXT_OK;
    if (!started) return n.neg ? -0.0 : 0.0;
    const int64_t e10 = exponent - n.frac_n + (index - 1 - last);
    double v;
    if (!text_exact_double(w, e10, &v)) { *status = TEXT_UNSUPPORTED; return 0.0; }
    return n.neg ? -v : v;
}

// CAST(text AS BOOLEAN): true / t / yes / y / 1, false / f / no / n / 0, any case, no
// white space.
__device__ bool text_to_bool(Str s, int* status) {
    *status = TEXT_OK;
    const uint32_t e = s.len;
    if (text_word(s, 0, e, "true", 4) || text_word(s, 0, e, "t", 1) || text_word(s, 0, e, "yes", 3) ||
        text_word(s, 0, e, "y", 1) || (e == 1 && s.p[0] == '1'))
        return true;
    if (text_word(s, 0, e, "false", 5) || text_word(s, 0, e, "f", 1) || text_word(s, 0, e, "no", 2) ||
        text_word(s, 0, e, "n", 1) || (e == 1 && s.p[0] == '0'))
        return false;
    *status = TEXT_INVALID;
    return false;
}

// Up to `max` digits from *i; false where there are none.
__device__ bool text_date_digits(Str s, uint32_t* i, uint32_t e, uint32_t max, uint32_t* v) {
    const uint32_t start = *i;
    *v = 0;
    while (*i < e && text_digit(s.p[*i]) && *i - start < max) *v = *v * 10 + (s.p[(*i)++] - '0');
    return *i > start;
}

// The time of day from r (the space or 'T' after the date) to e: [ T]H:M[:S[.ffffff]] in
// microseconds; false where it is not of that form (unsupported).
__device__ bool text_time_of_day(Str s, uint32_t r, uint32_t e, int64_t* micros) {
    uint32_t i = r, hour, minute, second = 0, fraction = 0;
    if (s.p[i] == 'T') i++;
    else while (i < e && s.p[i] == ' ') i++;
    if (!text_date_digits(s, &i, e, 2, &hour) || !(i < e && s.p[i] == ':')) return false;
    i++;
    if (!text_date_digits(s, &i, e, 2, &minute)) return false;
    if (i < e && s.p[i] == ':') {
        i++;
        if (!text_date_digits(s, &i, e, 2, &second)) return false;
        if (i < e && s.p[i] == '.') {
            i++;
            const uint32_t start = i;
            text_date_digits(s, &i, e, 6, &fraction);
            for (uint32_t k = i - start; k < 6; k++) fraction *= 10;
        }
    }
    if (i != e || hour > 23 || minute > 59 || second > 59) return false;
    *micros = (((int64_t)hour * 60 + minute) * 60 + second) * 1000000ll + fraction;
    return true;
}

// CAST(text AS DATE / TIMESTAMP): Y-M-D or Y/M/D, 1-6 digits of year, 1-2 of month and
// day, then optionally a time of day; the day, and the time in *micros.
__device__ int64_t text_date_time(Str s, int64_t* micros, int* status) {
    uint32_t b, e;
    text_trim(s, &b, &e);
    *status = TEXT_UNSUPPORTED;
    if (text_word(s, b, e, "infinity", 8) || text_word(s, b, e, "-infinity", 9) || text_word(s, b, e, "epoch", 5)) return 0;
    if (e - b >= 2 && s.p[b] == '-' && text_digit(s.p[b + 1])) return 0;
    uint32_t i = b, year, month, day;
    *status = TEXT_INVALID;
    if (!text_date_digits(s, &i, e, 6, &year)) return 0;
    if (i < e && text_digit(s.p[i])) {
        // A longer year: DuckDB reads 1234567-01-01, not 20240105.
        while (i < e && text_digit(s.p[i])) i++;
        if (i < e && (s.p[i] == '-' || s.p[i] == '/')) *status = TEXT_UNSUPPORTED;
        return 0;
    }
    if (!(i < e && (s.p[i] == '-' || s.p[i] == '/'))) return 0;
    const uint8_t separator = s.p[i++];
    if (!text_date_digits(s, &i, e, 2, &month)) return 0;
    if (!(i < e && s.p[i] == separator)) return 0;
    i++;
    if (!text_date_digits(s, &i, e, 2, &day)) return 0;
    *micros = 0;
    if (i < e) {
        if (s.p[i] == '(') { *status = TEXT_UNSUPPORTED; return 0; }
        if (s.p[i] != ' ' && s.p[i] != 'T') return 0;
        if (!text_time_of_day(s, i, e, micros)) { *status = TEXT_UNSUPPORTED; return 0; }
    }
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const uint32_t dim[12] = {31, leap ? 29u : 28u, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day == 0 || day > dim[month - 1]) return 0;
    *status = TEXT_OK;
    return days_from_civil(year, month, day);
}
__device__ int32_t text_to_date(Str s, int* status) {
    int64_t micros;
    return (int32_t)text_date_time(s, &micros, status);
}
__device__ int64_t text_to_timestamp(Str s, int* status) {
    int64_t micros;
    const int64_t days = text_date_time(s, &micros, status);
    if (*status != TEXT_OK) return 0;
    if (!ts_fits(days, micros)) { *status = TEXT_INVALID; return 0; }
    return ts_make(days, micros, (int*)0);
}
