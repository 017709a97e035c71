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

// ---- strptime / try_strptime: twin of gpusql_common::strptime (DuckDB's reading of text
// by a format; the binder checked each format). That one splits a format first, for
// DuckDB's messages; this walks it byte by byte (STRPTIME_* statuses: device_constants.rs).
// A format's next token: a literal byte (`%%` is '%'), a specifier (%-d as 'd'; %c %x %X
// %T walk their expansions), or the end.
#define STRPTIME_TOKEN_END 0
#define STRPTIME_TOKEN_LITERAL 1
#define STRPTIME_TOKEN_SPEC 2
struct StrptimeCursor { Str f; uint32_t i; const char* sub; };
__device__ int strptime_next(StrptimeCursor* c, uint8_t* token) {
    while (true) {
        if (c->sub != 0) {
            if (*c->sub == 0) { c->sub = 0; continue; }
            if (*c->sub != '%') { *token = (uint8_t)*c->sub++; return STRPTIME_TOKEN_LITERAL; }
            *token = (uint8_t)c->sub[1];
            c->sub += 2;
            return STRPTIME_TOKEN_SPEC;
        }
        if (c->i >= c->f.len) return STRPTIME_TOKEN_END;
        const uint8_t b = c->f.p[c->i];
        if (b != '%') { c->i++; *token = b; return STRPTIME_TOKEN_LITERAL; }
        const uint32_t unpadded = c->f.p[c->i + 1] == '-' ? 1u : 0u;
        const uint8_t spec = c->f.p[c->i + 1 + unpadded];
        c->i += 2 + unpadded;
        switch (spec) {
            case '%': *token = '%'; return STRPTIME_TOKEN_LITERAL;
            case 'c': c->sub = "%Y-%m-%d %H:%M:%S"; continue;
            case 'x': c->sub = "%Y-%m-%d"; continue;
            case 'X': case 'T': c->sub = "%H:%M:%S"; continue;
            default: *token = spec; return STRPTIME_TOKEN_SPEC;
        }
    }
}

// The digits a numeric specifier reads at most (0: it reads a word or AM / PM).
__device__ uint32_t strptime_width(uint8_t spec) {
    switch (spec) {
        case 'w': case 'u': return 1;
        case 'd': case 'm': case 'y': case 'H': case 'I': case 'M': case 'S': case 'U': case 'W': case 'V': return 2;
        case 'g': case 'j': return 3;
        case 'Y': case 'G': return 4;
        case 'f': return 6;
        default: return 0;
    }
}

__device__ __forceinline__ uint8_t strptime_lower(uint8_t b) { return b >= 'A' && b <= 'Z' ? b + 32 : b; }

// The first of `count` names (their first `most` letters) at *pos in any case: its index,
// *pos moved past it; -1 where none is.
__device__ int strptime_name(Str s, uint32_t* pos, const char (*names)[10], int count, uint32_t most) {
    for (int k = 0; k < count; k++) {
        uint32_t len = 0;
        while (len < most && names[k][len] != 0) len++;
        if (*pos + len > s.len) continue;
        uint32_t j = 0;
        while (j < len && strptime_lower(s.p[*pos + j]) == strptime_lower((uint8_t)names[k][j])) j++;
        if (j == len) { *pos += len; return k; }
    }
    return -1;
}

__device__ __forceinline__ bool strptime_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
__device__ __forceinline__ int64_t strptime_iso_monday(int64_t days) { return days - floor_mod(days + 3, 7); }

// What placed the day so far (strptime.rs's `Placed`).
#define PLACED_NOTHING 0
#define PLACED_MONTH_DAY 1
#define PLACED_YEAR 2
#define PLACED_ISO 3
#define PLACED_WEEK_SUNDAY 4
#define PLACED_WEEK_MONDAY 5
#define PLACED_YEAR_DAY 6

struct StrptimeFields { int64_t year; uint32_t month, day; int64_t hour, minute, second, micros; };

// The fields of s (from b, past its leading white space) read by format f; false where f
// does not read it (strptime.rs's `Format::read`).
__device__ bool strptime_read(Str s, uint32_t b, Str f, StrptimeFields* r) {
    r->year = 1900; r->month = 1; r->day = 1;
    r->hour = 0; r->minute = 0; r->second = 0; r->micros = 0;
    int placed = PLACED_NOTHING, ampm = 0;  // ampm: 1 AM, 2 PM
    int64_t week = 0, weekday = -1, year_day = 0, iso_year = -1, iso_week = -1, iso_weekday = -1;
    uint32_t pos = b;
    StrptimeCursor c = {f, 0u, 0};
    uint8_t token;
    for (int kind = strptime_next(&c, &token); kind != STRPTIME_TOKEN_END; kind = strptime_next(&c, &token)) {
        if (kind == STRPTIME_TOKEN_LITERAL) {
            if (text_space(token)) {
                // A run of white space in the format matches a run of at least one.
                if (!(pos < s.len && text_space(s.p[pos]))) return false;
                while (pos < s.len && text_space(s.p[pos])) pos++;
                while (true) {
                    StrptimeCursor peek = c;
                    uint8_t next;
                    if (strptime_next(&peek, &next) != STRPTIME_TOKEN_LITERAL || !text_space(next)) break;
                    c = peek;
                }
            } else {
                if (!(pos < s.len && s.p[pos] == token)) return false;
                pos++;
            }
            continue;
        }
        const uint8_t spec = token;
        const uint32_t width = strptime_width(spec);
        if (width == 0) {
            if (spec == 'p') {
                if (pos + 2 > s.len || strptime_lower(s.p[pos + 1]) != 'm') return false;
                const uint8_t ap = strptime_lower(s.p[pos]);
                if (ap != 'a' && ap != 'p') return false;
                ampm = ap == 'a' ? 1 : 2;
                pos += 2;
                continue;
            }
            const bool day_name = spec == 'a' || spec == 'A';
            const uint32_t most = spec == 'A' || spec == 'B' ? 10u : 3u;
            const int which = day_name ? strptime_name(s, &pos, STRFTIME_DAYS, 7, most)
                                       : strptime_name(s, &pos, STRFTIME_MONTHS, 12, most);
            if (which < 0) return false;
            if (!day_name) r->month = (uint32_t)which + 1;
            continue;
        }
        int64_t n = 0;
        uint32_t digits = 0;
        while (digits < width && pos < s.len && text_digit(s.p[pos])) {
            n = n * 10 + (s.p[pos] - '0');
            pos++;
            digits++;
        }
        if (digits == 0) return false;
        // DuckDB's checks, in its order: the specifiers that place the day first.
        switch (spec) {
            case 'd':
                if (n < 1 || n > 31) return false;
                r->day = (uint32_t)n;
                placed = PLACED_MONTH_DAY;
                break;
            case 'm':
                if (n < 1 || n > 12) return false;
                r->month = (uint32_t)n;
                placed = PLACED_MONTH_DAY;
                break;
            case 'y': case 'Y':
                if (placed == PLACED_NOTHING || placed == PLACED_ISO) placed = PLACED_YEAR;
                r->year = spec == 'Y' ? n : (n >= 69 ? 1900 + n : 2000 + n);
                break;
            case 'G':
                if (placed == PLACED_NOTHING) placed = PLACED_ISO;
                else if (placed == PLACED_ISO) { if (iso_year >= 0) return false; }
                else if (placed != PLACED_MONTH_DAY && placed != PLACED_YEAR) return false;
                iso_year = n;
                break;
            case 'H': if (n >= 24) return false; r->hour = n; break;
            case 'I': if (n < 1 || n > 12) return false; r->hour = n; break;
            case 'M': if (n >= 60) return false; r->minute = n; break;
            case 'S': if (n >= 60) return false; r->second = n; break;
            // Fractions: the digits read, as if padded with zeros to the width.
            case 'f': for (uint32_t k = digits; k < 6; k++) n *= 10; r->micros = n; break;
            case 'g': for (uint32_t k = digits; k < 3; k++) n *= 10; r->micros = n * 1000; break;
            case 'U': case 'W':
                if (placed == PLACED_YEAR || placed == PLACED_NOTHING) placed = spec == 'W' ? PLACED_WEEK_MONDAY : PLACED_WEEK_SUNDAY;
                else if (placed != PLACED_MONTH_DAY) return false;
                if (n > 53) return false;
                week = n;
                break;
            case 'w': if (n > 6) return false; weekday = n; break;
            case 'V':
                if (placed == PLACED_NOTHING) placed = PLACED_ISO;
                else if (placed == PLACED_ISO) { if (iso_week >= 0) return false; }
                else if (placed != PLACED_MONTH_DAY) return false;
                if (n < 1 || n > 53) return false;
                iso_week = n;
                break;
            case 'u':
                if (iso_weekday >= 0 || n < 1 || n > 7) return false;
                iso_weekday = n;
                break;
            default:  // 'j'
                if (placed == PLACED_YEAR || placed == PLACED_NOTHING) placed = PLACED_YEAR_DAY;
                else if (placed != PLACED_MONTH_DAY) return false;
                if (n < 1 || n > 366) return false;
                year_day = n;
        }
    }
    while (pos < s.len && text_space(s.p[pos])) pos++;
    if (pos != s.len) return false;
    if (ampm != 0) {
        if (r->hour > 12) return false;
        if (ampm == 1 && r->hour == 12) r->hour = 0;
        if (ampm == 2 && r->hour != 12) r->hour += 12;
    }
    int64_t day;
    if (placed == PLACED_ISO) {
        // ISO week 1 is the one with January 4th; it starts on a Monday.
        const int64_t week1 = strptime_iso_monday(days_from_civil(iso_year >= 0 ? iso_year : 1900, 1, 4));
        day = week1 + ((iso_week >= 0 ? iso_week : 1) - 1) * 7 + (iso_weekday >= 0 ? iso_weekday : 1) - 1;
    } else if (placed == PLACED_WEEK_SUNDAY || placed == PLACED_WEEK_MONDAY) {
        const bool monday_first = placed == PLACED_WEEK_MONDAY;
        const int64_t wd = weekday >= 0 ? (weekday + 7 - (monday_first ? 1 : 0)) % 7 : 0;
        const int64_t jan1 = days_from_civil(r->year, 1, 1);
        int64_t start = strptime_iso_monday(jan1) - (monday_first ? 0 : 1);
        // Week 0 holds the days before the year's first Sunday / Monday.
        if (start >= jan1) start -= 7;
        day = start + week * 7 + wd;
    } else if (placed == PLACED_YEAR_DAY) {
        if (year_day > 365 + (strptime_leap(r->year) ? 1 : 0)) return false;
        day = days_from_civil(r->year, 1, 1) + year_day - 1;
    } else {
        return true;
    }
    civil_from_days(day, &r->year, &r->month, &r->day);
    return true;
}

// strptime(s, formats…): the first format that reads s decides, an error where its day
// does not exist; try_strptime (each_until_valid): the first that reads s as a day that
// exists. Sets *status to STRPTIME_OK or the failure; `epoch`, `infinity`, `-infinity`
// (in any case, alone but for white space) are read before any format.
__device__ int64_t strptime_parse(Str s, const Str* formats, uint32_t count, bool each_until_valid, int* status) {
    uint32_t b = 0;
    while (b < s.len && text_space(s.p[b])) b++;
    // (DuckDB looks for the words only in texts of more than 4 bytes.)
    if (s.len - b > 4) {
        const char* words[3] = {"infinity", "epoch", "-infinity"};
        const uint32_t lengths[3] = {8, 5, 9};
        for (int w = 0; w < 3; w++) {
            if ((w < 2) != ((s.p[b] | 32) >= 'a' && (s.p[b] | 32) <= 'z')) continue;
            const uint32_t len = lengths[w];
            if (b + len > s.len) continue;
            uint32_t j = 0;
            while (j < len && strptime_lower(s.p[b + j]) == (uint8_t)words[w][j]) j++;
            if (j < len) continue;
            uint32_t end = b + len;
            while (end < s.len && text_space(s.p[end])) end++;
            *status = end != s.len ? STRPTIME_NO_MATCH : (w == 1 ? STRPTIME_OK : STRPTIME_INFINITE);
            return 0;
        }
    }
    StrptimeFields r;
    for (uint32_t k = 0; k < count; k++) {
        if (!strptime_read(s, b, formats[k], &r)) continue;
        const bool leap = strptime_leap(r.year);
        const uint32_t dim[12] = {31, leap ? 29u : 28u, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (r.day <= dim[r.month - 1]) {
            *status = STRPTIME_OK;
            // (Years 0 to 9999: far inside the range.)
            return days_from_civil(r.year, r.month, r.day) * US_PER_DAY + r.hour * US_PER_HOUR +
                   r.minute * US_PER_MINUTE + r.second * US_PER_SECOND + r.micros;
        }
        if (!each_until_valid) { *status = STRPTIME_DATE_RANGE; return 0; }
    }
    *status = STRPTIME_NO_MATCH;
    return 0;
}
