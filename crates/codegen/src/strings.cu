// ---- strings: the twins of plan/src/strings.rs (`StringFunc`), same names, same rules ----
// A function that makes a string writes it into the launch's arena: one buffer per
// pipeline run, kept as long as the run's output (whose Str records point into it). A
// function whose result is part of its input (trim, left, split_part, …) returns a view
// of the input and writes nothing. Lengths and positions count code points; the case
// tables are DuckDB's (common/src/case_map.rs, emitted in front of this file).

struct Arena {
    uint8_t* base;
    unsigned long long* used;  // bytes taken so far (past `cap` too: the host's next size)
    unsigned long long cap;
    int* err;
};

// Room for `len` bytes, or null where the arena is full (ERR_ARENA_FULL is raised and the
// host runs the pipeline again with a larger arena). The lanes that arrive together take
// their room with one atomicAdd and their offsets by a prefix sum over the warp.
__device__ uint8_t* arena_alloc(const Arena& a, uint32_t len) {
    const unsigned mask = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(mask) - 1;
    unsigned long long before = 0, total = 0;
    if (mask == FULL_MASK) {  // a scan in five steps
        unsigned long long x = len;
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned long long y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= d) x += y;
        }
        total = __shfl_sync(FULL_MASK, x, 31);
        before = x - len;
    } else {
        for (unsigned m = mask; m != 0u; m &= m - 1u) {
            const int src = __ffs(m) - 1;
            const uint32_t l = __shfl_sync(mask, len, src);
            before += src < lane ? l : 0u;
            total += l;
        }
    }
    unsigned long long at = 0;
    if (lane == leader) at = atomicAdd(a.used, total);
    at = __shfl_sync(mask, at, leader) + before;
    if (at + len > a.cap) {
        raise_error(a.err, ERR_ARENA_FULL);
        return nullptr;
    }
    return a.base + at;
}

// A string made of bytes that already exist (a view: no hash known).
__device__ __forceinline__ Str str_view(const uint8_t* p, uint32_t len) {
    Str s; s.p = p; s.len = len; s.pad_ = 0; return s;
}
// The result of a function whose arena was full (never read: the run is repeated).
__device__ __forceinline__ Str str_lost(Str s) { return str_view(s.p, 0); }

// The code point starting at byte i of s, and where the next one starts.
__device__ uint32_t utf8_decode(Str s, uint32_t i, uint32_t* next) {
    const uint32_t b = s.p[i];
    uint32_t c, n;
    if (b < 0x80u) { c = b; n = 1; }
    else if (b < 0xE0u) { c = b & 0x1Fu; n = 2; }
    else if (b < 0xF0u) { c = b & 0x0Fu; n = 3; }
    else { c = b & 0x07u; n = 4; }
    for (uint32_t k = 1; k < n && i + k < s.len; k++) c = (c << 6) | (s.p[i + k] & 0x3Fu);
    *next = i + n;
    return c;
}
__device__ __forceinline__ uint32_t utf8_width(uint32_t c) { return c < 0x80u ? 1u : c < 0x800u ? 2u : c < 0x10000u ? 3u : 4u; }
__device__ uint32_t utf8_encode(uint32_t c, uint8_t* out) {
    if (c < 0x80u) { out[0] = (uint8_t)c; return 1; }
    if (c < 0x800u) { out[0] = (uint8_t)(0xC0u | c >> 6); out[1] = (uint8_t)(0x80u | (c & 0x3Fu)); return 2; }
    if (c < 0x10000u) {
        out[0] = (uint8_t)(0xE0u | c >> 12); out[1] = (uint8_t)(0x80u | (c >> 6 & 0x3Fu)); out[2] = (uint8_t)(0x80u | (c & 0x3Fu));
        return 3;
    }
    out[0] = (uint8_t)(0xF0u | c >> 18); out[1] = (uint8_t)(0x80u | (c >> 12 & 0x3Fu));
    out[2] = (uint8_t)(0x80u | (c >> 6 & 0x3Fu)); out[3] = (uint8_t)(0x80u | (c & 0x3Fu));
    return 4;
}
// Byte position of character k (0-based) of s, or s.len where s has fewer.
__device__ uint32_t char_offset(Str s, int64_t k) {
    uint32_t i = 0;
    for (; i < s.len && k > 0; k--) i = next_char(s, i);
    return i;
}
__device__ __forceinline__ void copy_bytes(uint8_t* out, const uint8_t* in, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) out[i] = in[i];
}

// ---- case ----
__device__ uint32_t map_case(uint32_t c, const CaseRange* t, int n) {
    int lo = 0, hi = n;  // the last entry with first <= c
    while (lo < hi) { const int m = (lo + hi) / 2; if (t[m].first <= c) lo = m + 1; else hi = m; }
    if (lo == 0) return c;
    const CaseRange r = t[lo - 1];
    return c <= r.last && (c - r.first) % r.stride == 0u ? (uint32_t)((int32_t)c + r.delta) : c;
}
__device__ __forceinline__ uint8_t case_ascii(uint8_t b, bool upper) {
    // (ASCII: the table's first entries, as arithmetic.)
    return upper ? (b >= 'a' && b <= 'z' ? b - 32 : b) : (b >= 'A' && b <= 'Z' ? b + 32 : b);
}
// Where the warp's strings lie one after another (a column scanned without gaps) and are all
// ASCII, they are one run of bytes in and one out (arena_alloc places the lanes' rooms in
// lane order): the warp checks the run for non-ASCII bytes a word a lane, then maps it a byte
// a lane, every load and store coalesced. Returns false where that does not hold.
__device__ bool str_case_run(const Arena& a, Str s, bool upper, unsigned mask, Str* result) {
    const uint32_t lane = threadIdx.x & 31, rank = __popc(mask & ((1u << lane) - 1u)), step = __popc(mask);
    // (Empty strings write nothing: only the others need to join.)
    const uint32_t filled = __ballot_sync(mask, s.len != 0u) & mask;
    if (filled == 0u) {
        *result = str_view(s.p, 0);
        return true;
    }
    const uint32_t above = lane == 31u ? 0u : filled & (~0u << (lane + 1u));
    const int next = above != 0u ? __ffs(above) - 1 : (int)lane, first = __ffs(filled) - 1, last = 31 - __clz((int)filled);
    const uint8_t* next_p = (const uint8_t*)__shfl_sync(mask, (unsigned long long)s.p, next);
    if (!__all_sync(mask, s.len == 0u || above == 0u || s.p + s.len == next_p)) return false;
    const uint8_t* in = (const uint8_t*)__shfl_sync(mask, (unsigned long long)s.p, first);
    const uint8_t* end = (const uint8_t*)__shfl_sync(mask, (unsigned long long)(s.p + s.len), last);
    const unsigned long long total = (unsigned long long)(end - in);
    // The aligned words over [in, end); bytes outside it are masked off.
    const uint32_t* w0 = (const uint32_t*)((unsigned long long)in & ~3ull);
    const unsigned long long words = ((unsigned long long)end + 3u - (unsigned long long)w0) / 4u;
    bool high = false;
    for (unsigned long long k = rank; k < words; k += step) {
        uint32_t w = w0[k];
        const uint8_t* at = (const uint8_t*)(w0 + k);
        for (int b = 0; b < 4; b++)
            if (at + b < in || at + b >= end) w &= ~(0xFFu << (8 * b));
        high |= (w & 0x80808080u) != 0u;
    }
    if (__any_sync(mask, high)) return false;
    uint8_t* out = arena_alloc(a, s.len);
    if (__all_sync(mask, out != nullptr)) {
        uint8_t* o = (uint8_t*)__shfl_sync(mask, (unsigned long long)out, first);
        for (unsigned long long i = rank; i < total; i += step) o[i] = case_ascii(in[i], upper);
    }
    *result = out ? str_view(out, s.len) : str_lost(s);
    return true;
}
// Strings up to this many bytes are written each by its own lane: upper() of 60 M strings of
// 1 byte took 2.75 ms so and 5.6 ms walked by the warp (H200); a lane's own walk costs about
// 0.27 ms more per byte of the warp's longest string, the warp's walk a fixed ~3 ms.
#define CASE_LANE_MAX_LEN 8u
// Otherwise each lane first measures its own string's result (its loads hit L1 after the first), then
// the lanes that arrived together write the strings one after another, each lane a byte of
// every 32, so that a store instruction touches one or two lines, not one per lane. Where a string is not ASCII, a
// code point's result may be wider or narrower than it: each lane maps the code point that
// starts at its byte, and its place comes from the widths of the lanes below (three
// ballots, widths being 0-4).
__device__ Str str_case(const Arena& a, Str s, const CaseRange* t, int n) {
    const unsigned mask = __activemask();
    const bool upper = t == CASE_UPPER;
    Str run;
    if (str_case_run(a, s, upper, mask, &run)) return run;
    uint32_t out_len = 0;
    bool ascii = true;
    for (uint32_t i = 0; i < s.len;) {
        if (s.p[i] < 0x80u) { out_len++; i++; continue; }
        ascii = false;
        const uint32_t c = utf8_decode(s, i, &i);
        out_len += utf8_width(map_case(c, t, n));
    }
    uint8_t* out = arena_alloc(a, out_len);
    if (__reduce_max_sync(mask, s.len) <= CASE_LANE_MAX_LEN) {
        // Short strings: each lane writes its own (the warp's walk costs more than it saves).
        if (!out) return str_lost(s);
        for (uint32_t i = 0, o = 0; i < s.len;) {
            if (s.p[i] < 0x80u) { out[o++] = case_ascii(s.p[i++], upper); continue; }
            o += utf8_encode(map_case(utf8_decode(s, i, &i), t, n), out + o);
        }
        return str_view(out, out_len);
    }
    const uint32_t lane = threadIdx.x & 31, below = mask & ((1u << lane) - 1u);
    const uint32_t rank = __popc(below), step = __popc(mask);
    for (unsigned m = mask; m != 0u; m &= m - 1u) {
        const int src = __ffs(m) - 1;
        const uint8_t* p = (const uint8_t*)__shfl_sync(mask, (unsigned long long)s.p, src);
        uint8_t* o = (uint8_t*)__shfl_sync(mask, (unsigned long long)out, src);
        const uint32_t len = __shfl_sync(mask, s.len, src);
        if (o == nullptr) continue;  // (the arena is full: the run is repeated)
        if (__shfl_sync(mask, ascii, src)) {
            for (uint32_t i = rank; i < len; i += step) o[i] = case_ascii(p[i], upper);
            continue;
        }
        uint32_t at = 0;
        for (uint32_t base = 0; base < len; base += step) {
            const uint32_t i = base + rank;
            uint32_t c = 0, w = 0;
            if (i < len) {
                const uint8_t b = p[i];
                if (b < 0x80u) { c = case_ascii(b, upper); w = 1; }
                else if (!utf8_continuation(b)) {
                    uint32_t next;
                    c = map_case(utf8_decode(str_view(p, len), i, &next), t, n);
                    w = utf8_width(c);
                }
            }
            const uint32_t w1 = __ballot_sync(mask, w & 1u), w2 = __ballot_sync(mask, w & 2u), w4 = __ballot_sync(mask, w & 4u);
            if (w != 0u) utf8_encode(c, o + at + __popc(w1 & below) + 2u * __popc(w2 & below) + 4u * __popc(w4 & below));
            at += __popc(w1) + 2u * __popc(w2) + 4u * __popc(w4);
        }
    }
    return out ? str_view(out, out_len) : str_lost(s);
}
__device__ Str str_upper(const Arena& a, Str s) { return str_case(a, s, CASE_UPPER, CASE_UPPER_LEN); }
__device__ Str str_lower(const Arena& a, Str s) { return str_case(a, s, CASE_LOWER, CASE_LOWER_LEN); }

// ---- concatenation ----
// parts[k] where present[k], with sep between them (concat_ws; || and concat have sep '').
__device__ Str str_concat_ws(const Arena& a, Str sep, const Str* parts, const bool* present, int n) {
    uint32_t len = 0, count = 0;
    for (int k = 0; k < n; k++) if (present[k]) { len += parts[k].len; count++; }
    if (count > 1u) len += (count - 1u) * sep.len;
    uint8_t* out = arena_alloc(a, len);
    if (!out) return str_lost(sep);
    uint32_t o = 0;
    bool first = true;
    for (int k = 0; k < n; k++) {
        if (!present[k]) continue;
        if (!first) { copy_bytes(out + o, sep.p, sep.len); o += sep.len; }
        copy_bytes(out + o, parts[k].p, parts[k].len);
        o += parts[k].len;
        first = false;
    }
    return str_view(out, len);
}

// ---- trim: views ----
__device__ bool is_trim_space(uint32_t c) {
    for (int k = 0; k < TRIM_SPACES_LEN; k++) if (TRIM_SPACES[k] == c) return true;
    return false;
}
// Whether code point c is one of `chars`'s (`chars` none: Unicode's space separators).
__device__ bool in_trim_set(uint32_t c, Str chars) {
    if (str_is_none(chars)) return is_trim_space(c);
    for (uint32_t i = 0; i < chars.len;) if (utf8_decode(chars, i, &i) == c) return true;
    return false;
}
__device__ Str str_trim_sides(Str s, Str chars, bool left, bool right) {
    uint32_t begin = 0, end = s.len;
    if (left) {
        while (begin < end) {
            uint32_t next;
            if (!in_trim_set(utf8_decode(s, begin, &next), chars)) break;
            begin = next;
        }
    }
    if (right) {
        while (end > begin) {
            uint32_t start = end - 1, next;
            while (start > begin && utf8_continuation(s.p[start])) start--;
            if (!in_trim_set(utf8_decode(s, start, &next), chars)) break;
            end = start;
        }
    }
    return str_view(s.p + begin, end - begin);
}
__device__ Str str_trim(Str s, Str chars) { return str_trim_sides(s, chars, true, true); }
__device__ Str str_ltrim(Str s, Str chars) { return str_trim_sides(s, chars, true, false); }
__device__ Str str_rtrim(Str s, Str chars) { return str_trim_sides(s, chars, false, true); }

// ---- left, right, split_part: views ----
__device__ Str str_left(Str s, int64_t n) {
    const int64_t chars = str_chars(s);
    const int64_t keep = n >= 0 ? (n < chars ? n : chars) : (chars + n > 0 ? chars + n : 0);
    return str_view(s.p, char_offset(s, keep));
}
__device__ Str str_right(Str s, int64_t n) {
    const int64_t chars = str_chars(s);
    const int64_t keep = n >= 0 ? (n < chars ? n : chars) : (chars + n > 0 ? chars + n : 0);
    const uint32_t from = char_offset(s, chars - keep);
    return str_view(s.p + from, s.len - from);
}
// Whether t occurs in s at byte i.
__device__ __forceinline__ bool str_at(Str s, uint32_t i, Str t) {
    if (i + t.len > s.len) return false;
    for (uint32_t k = 0; k < t.len; k++) if (s.p[i + k] != t.p[k]) return false;
    return true;
}
__device__ Str str_split_part(Str s, Str sep, int64_t index) {
    if (index == 0) return str_view(s.p, 0);
    // Parts: [starts[k], ends[k]); counted first where the index counts from the end.
    int64_t parts = 1;
    if (sep.len == 0) parts = str_chars(s) > 0 ? str_chars(s) : 1;
    else for (uint32_t i = 0; i + sep.len <= s.len;) { if (str_at(s, i, sep)) { parts++; i += sep.len; } else i++; }
    const int64_t k = index > 0 ? index - 1 : parts + index;
    if (k < 0 || k >= parts) return str_view(s.p, 0);
    if (sep.len == 0) {
        const uint32_t from = char_offset(s, k);
        return str_view(s.p + from, from < s.len ? next_char(s, from) - from : 0);
    }
    uint32_t begin = 0;
    int64_t part = 0;
    for (uint32_t i = 0; i + sep.len <= s.len;) {
        if (str_at(s, i, sep)) {
            if (part == k) return str_view(s.p + begin, i - begin);
            part++;
            i += sep.len;
            begin = i;
        } else {
            i++;
        }
    }
    return str_view(s.p + begin, s.len - begin);
}

// ---- replace, repeat, lpad / rpad ----
__device__ Str str_replace(const Arena& a, Str s, Str from, Str to) {
    if (from.len == 0) return s;
    uint32_t count = 0;
    for (uint32_t i = 0; i + from.len <= s.len;) { if (str_at(s, i, from)) { count++; i += from.len; } else i++; }
    if (count == 0) return s;
    const uint32_t len = s.len - count * from.len + count * to.len;
    uint8_t* out = arena_alloc(a, len);
    if (!out) return str_lost(s);
    uint32_t o = 0;
    for (uint32_t i = 0; i < s.len;) {
        if (str_at(s, i, from)) { copy_bytes(out + o, to.p, to.len); o += to.len; i += from.len; }
        else out[o++] = s.p[i++];
    }
    return str_view(out, len);
}
__device__ Str str_repeat(const Arena& a, Str s, int64_t n) {
    if (n <= 0 || s.len == 0) return str_view(s.p, 0);
    const uint32_t len = (uint32_t)(s.len * n);
    uint8_t* out = arena_alloc(a, len);
    if (!out) return str_lost(s);
    for (int64_t k = 0; k < n; k++) copy_bytes(out + k * s.len, s.p, s.len);
    return str_view(out, len);
}
// s cut or padded with `fill` to n characters, on the left (lpad) or right.
__device__ Str str_pad(const Arena& a, Str s, int64_t n, Str fill, bool left) {
    if (n < 0) n = 0;
    const int64_t chars = str_chars(s);
    if (chars >= n) return str_view(s.p, char_offset(s, n));
    if (fill.len == 0) {
        raise_error(a.err, left ? ERR_PADDING_LEFT : ERR_PADDING_RIGHT);
        return str_view(s.p, 0);
    }
    // The padding: whole copies of fill, then the first characters of one more.
    const int64_t need = n - chars, fill_chars = str_chars(fill);
    const int64_t whole = need / fill_chars;
    const uint32_t rest = char_offset(fill, need % fill_chars);
    const uint32_t pad = (uint32_t)(whole * fill.len) + rest, len = pad + s.len;
    uint8_t* out = arena_alloc(a, len);
    if (!out) return str_lost(s);
    uint8_t* p = out + (left ? 0 : s.len);
    for (int64_t k = 0; k < whole; k++) copy_bytes(p + k * fill.len, fill.p, fill.len);
    copy_bytes(p + whole * fill.len, fill.p, rest);
    copy_bytes(out + (left ? pad : 0), s.p, s.len);
    return str_view(out, len);
}
__device__ Str str_lpad(const Arena& a, Str s, int64_t n, Str fill) { return str_pad(a, s, n, fill, true); }
__device__ Str str_rpad(const Arena& a, Str s, int64_t n, Str fill) { return str_pad(a, s, n, fill, false); }

// ---- tests: BOOLEAN ----
__device__ bool str_starts_with(Str s, Str t) { return str_at(s, 0, t); }
__device__ bool str_ends_with(Str s, Str t) { return t.len <= s.len && str_at(s, s.len - t.len, t); }
__device__ bool str_contains(Str s, Str t) {
    for (uint32_t i = 0; i + t.len <= s.len; i++) if (str_at(s, i, t)) return true;
    return false;
}

// ---- positions and sizes ----
__device__ int64_t str_position(Str s, Str t) {
    int64_t chars = 0;
    for (uint32_t i = 0; i + t.len <= s.len; i++) {
        if (str_at(s, i, t)) return chars + 1;
        chars += !utf8_continuation(s.p[i]);
    }
    return 0;
}
__device__ __forceinline__ int64_t str_strlen(Str s) { return (int64_t)s.len; }
__device__ int32_t str_ascii(Str s) {
    if (s.len == 0) return 0;
    uint32_t next;
    return (int32_t)utf8_decode(s, 0, &next);
}

// ---- CAST(x AS VARCHAR) ----
// n bytes built in a local buffer, copied into the arena.
__device__ Str arena_copy(const Arena& a, const uint8_t* bytes, uint32_t n) {
    uint8_t* out = arena_alloc(a, n);
    if (!out) return str_view(a.base, 0);
    copy_bytes(out, bytes, n);
    return str_view(out, n);
}
// Digits of v (>= 0) written backwards ending at `end`; returns how many.
__device__ uint32_t digits_back(unsigned __int128 v, uint8_t* end, uint32_t min_digits) {
    uint32_t n = 0;
    do { *--end = (uint8_t)('0' + (uint32_t)(v % 10u)); v /= 10u; n++; } while (v != 0u || n < min_digits);
    return n;
}
// A scaled integer as text: 12345 at scale 2 is "123.45" (scale 0: an integer).
__device__ Str str_from_scaled(const Arena& a, __int128 v, uint32_t scale) {
    uint8_t buf[48];
    uint8_t* end = buf + 48;
    const bool neg = v < 0;
    const unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    uint32_t n;
    if (scale == 0) {
        n = digits_back(u, end, 1);
    } else {
        unsigned __int128 p = 1;
        for (uint32_t k = 0; k < scale; k++) p *= 10u;
        n = digits_back(u % p, end, scale);
        end[-(int)n - 1] = '.';
        n += 1;
        n += digits_back(u / p, end - n, 1);
    }
    if (neg) { end[-(int)n - 1] = '-'; n++; }
    return arena_copy(a, end - n, n);
}
__device__ Str str_from_bool(const Arena& a, bool b) {
    const uint32_t n = b ? 4u : 5u;
    return arena_copy(a, (const uint8_t*)(b ? "true" : "false"), n);
}
// YYYY-MM-DD (years before 1: "0001-03-01 (BC)", year 0 being 1 BC) into buf; its length.
__device__ uint32_t date_text(int32_t days, uint8_t* buf) {
    int64_t y; uint32_t m, d;
    civil_from_days(days, &y, &m, &d);
    const bool bc = y <= 0;
    if (bc) y = 1 - y;
    uint8_t tmp[24];
    const uint32_t yn = digits_back((unsigned __int128)y, tmp + 24, 4);
    copy_bytes(buf, tmp + 24 - yn, yn);
    uint32_t n = yn;
    buf[n++] = '-'; buf[n++] = (uint8_t)('0' + m / 10); buf[n++] = (uint8_t)('0' + m % 10);
    buf[n++] = '-'; buf[n++] = (uint8_t)('0' + d / 10); buf[n++] = (uint8_t)('0' + d % 10);
    if (bc) { copy_bytes(buf + n, (const uint8_t*)" (BC)", 5); n += 5; }
    return n;
}
__device__ Str str_from_date(const Arena& a, int32_t days) {
    uint8_t buf[40];
    const uint32_t n = date_text(days, buf);
    return arena_copy(a, buf, n);
}
// YYYY-MM-DD HH:MM:SS, then the fraction of a second without trailing zeros where it is not 0.
__device__ Str str_from_ts(const Arena& a, int64_t us) {
    uint8_t buf[64];
    const int64_t days = floor_div(us, US_PER_DAY), t = floor_mod(us, US_PER_DAY);
    uint32_t n = date_text((int32_t)days, buf);
    const uint32_t h = (uint32_t)(t / 3600000000ll), mi = (uint32_t)(t / 60000000ll % 60), s = (uint32_t)(t / 1000000ll % 60);
    uint32_t f = (uint32_t)(t % 1000000ll);
    buf[n++] = ' ';
    buf[n++] = (uint8_t)('0' + h / 10); buf[n++] = (uint8_t)('0' + h % 10); buf[n++] = ':';
    buf[n++] = (uint8_t)('0' + mi / 10); buf[n++] = (uint8_t)('0' + mi % 10); buf[n++] = ':';
    buf[n++] = (uint8_t)('0' + s / 10); buf[n++] = (uint8_t)('0' + s % 10);
    if (f != 0) {
        buf[n++] = '.';
        uint32_t digits = 6;
        while (f % 10 == 0) { f /= 10; digits--; }
        digits_back(f, buf + n + digits, digits);
        n += digits;
    }
    return arena_copy(a, buf, n);
}
// An interval as DuckDB writes it (Interval::to_text): `1 year 2 months 3 days 04:05:06.789`,
// each part only where not 0, `00:00:00` for an empty interval.
__device__ uint32_t iv_unit_text(int64_t v, const char* name, uint32_t name_len, uint8_t* buf, uint32_t n) {
    if (v == 0) return n;
    if (n != 0) buf[n++] = ' ';
    const bool neg = v < 0;
    uint8_t digits[24];
    const uint32_t k = digits_back(neg ? (unsigned __int128)(-(__int128)v) : (unsigned __int128)v, digits + 24, 1);
    if (neg) buf[n++] = '-';
    for (uint32_t i = 0; i < k; i++) buf[n++] = digits[24 - k + i];
    buf[n++] = ' ';
    for (uint32_t i = 0; i < name_len; i++) buf[n++] = (uint8_t)name[i];
    if (v != 1 && v != -1) buf[n++] = 's';
    return n;
}
__device__ Str str_from_iv(const Arena& a, Interval v) {
    uint8_t buf[96];
    uint32_t n = 0;
    if (v.months != 0) {
        const int32_t years = v.months / 12;
        n = iv_unit_text(years, "year", 4, buf, n);
        n = iv_unit_text(v.months - years * 12, "month", 5, buf, n);
    }
    n = iv_unit_text(v.days, "day", 3, buf, n);
    if (v.micros != 0) {
        if (n != 0) buf[n++] = ' ';
        const bool neg = v.micros < 0;
        const unsigned long long m = neg ? 0ull - (unsigned long long)v.micros : (unsigned long long)v.micros;
        if (neg) buf[n++] = '-';
        const unsigned long long h = m / 3600000000ull, mi = m / 60000000ull % 60, s = m / 1000000ull % 60;
        unsigned long long f = m % 1000000ull;
        uint8_t digits[24];
        const uint32_t k = digits_back(h, digits + 24, 2);
        for (uint32_t i = 0; i < k; i++) buf[n++] = digits[24 - k + i];
        buf[n++] = ':';
        buf[n++] = (uint8_t)('0' + mi / 10); buf[n++] = (uint8_t)('0' + mi % 10); buf[n++] = ':';
        buf[n++] = (uint8_t)('0' + s / 10); buf[n++] = (uint8_t)('0' + s % 10);
        if (f != 0) {
            buf[n++] = '.';
            uint32_t d = 6;
            while (f % 10 == 0) { f /= 10; d--; }
            digits_back(f, buf + n + d, d);
            n += d;
        }
    } else if (n == 0) {
        const char* zero = "00:00:00";
        for (uint32_t i = 0; i < 8; i++) buf[n++] = (uint8_t)zero[i];
    }
    return arena_copy(a, buf, n);
}

// ---- strftime (common/src/strftime.rs): DuckDB's specifiers; the binder checked the
// format and that it writes at most STRFTIME_BYTES ----
__device__ const char STRFTIME_DAYS[7][10] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
__device__ const char STRFTIME_MONTHS[12][10] = {"January", "February", "March", "April", "May", "June", "July",
                                                 "August", "September", "October", "November", "December"};
__device__ uint32_t put_text(uint8_t* b, uint32_t n, const char* s, uint32_t most) {
    for (uint32_t k = 0; k < most && s[k] != 0; k++) b[n++] = (uint8_t)s[k];
    return n;
}
// v with at least `width` digits (zeros in front), a '-' before a negative v.
__device__ uint32_t put_num(uint8_t* b, uint32_t n, int64_t v, uint32_t width) {
    uint8_t tmp[24];
    const bool neg = v < 0;
    const uint32_t k = digits_back(neg ? (unsigned __int128)(0 - (uint64_t)v) : (unsigned __int128)v, tmp + 24, width);
    if (neg) b[n++] = '-';
    copy_bytes(b + n, tmp + 24 - k, k);
    return n + k;
}
// %Y: four digits from 0 to 9999, else as it is (12345, -44).
__device__ __forceinline__ uint32_t put_year(uint8_t* b, uint32_t n, int64_t y) {
    return put_num(b, n, y, y >= 0 && y <= 9999 ? 4 : 1);
}
__device__ uint32_t strftime_into(uint8_t* b, int64_t us, Str f) {
    const int64_t days = floor_div(us, US_PER_DAY), t = floor_mod(us, US_PER_DAY);
    int64_t y, iy;
    uint32_t m, d, im, id;
    civil_from_days(days, &y, &m, &d);
    const int64_t h = t / 3600000000ll, mi = t / 60000000ll % 60, s = t / 1000000ll % 60, micros = t % 1000000ll;
    const int64_t wday = floor_mod(days + 4, 7), isodow = floor_mod(days + 3, 7) + 1;
    const int64_t yday = days - days_from_civil(y, 1, 1) + 1;
    // The ISO week's Thursday decides its year.
    const int64_t thursday = days - (isodow - 1) + 3;
    civil_from_days(thursday, &iy, &im, &id);
    const int64_t iweek = (thursday - days_from_civil(iy, 1, 1)) / 7 + 1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < f.len;) {
        if (f.p[i] != '%') { b[n++] = f.p[i++]; continue; }
        const bool unpadded = i + 1 < f.len && f.p[i + 1] == '-';
        const uint8_t spec = f.p[unpadded ? i + 2 : i + 1];
        i += unpadded ? 3 : 2;
        const uint32_t w2 = unpadded ? 1 : 2;
        switch (spec) {
            case 'a': n = put_text(b, n, STRFTIME_DAYS[wday], 3); break;
            case 'A': n = put_text(b, n, STRFTIME_DAYS[wday], 10); break;
            case 'w': n = put_num(b, n, wday, 1); break;
            case 'u': n = put_num(b, n, isodow, 1); break;
            case 'd': n = put_num(b, n, d, w2); break;
            case 'b': case 'h': n = put_text(b, n, STRFTIME_MONTHS[m - 1], 3); break;
            case 'B': n = put_text(b, n, STRFTIME_MONTHS[m - 1], 10); break;
            case 'm': n = put_num(b, n, m, w2); break;
            case 'y': n = put_num(b, n, y % 100 < 0 ? -(y % 100) : y % 100, w2); break;
            case 'Y': n = put_year(b, n, y); break;
            case 'G': n = put_year(b, n, iy); break;
            case 'H': n = put_num(b, n, h, w2); break;
            case 'I': n = put_num(b, n, h % 12 == 0 ? 12 : h % 12, w2); break;
            case 'p': n = put_text(b, n, h < 12 ? "AM" : "PM", 2); break;
            case 'M': n = put_num(b, n, mi, w2); break;
            case 'S': n = put_num(b, n, s, w2); break;
            case 'f': n = put_num(b, n, micros, 6); break;
            case 'g': n = put_num(b, n, micros / 1000, 3); break;
            case 'n': n = put_num(b, n, micros * 1000, 9); break;
            case 'z': n = put_text(b, n, "+00", 3); break;
            case 'Z': break;
            case 'j': n = put_num(b, n, yday, unpadded ? 1 : 3); break;
            case 'U': n = put_num(b, n, (yday - 1 + 7 - wday) / 7, 2); break;
            case 'W': n = put_num(b, n, (yday - 1 + 7 - (wday + 6) % 7) / 7, 2); break;
            case 'V': n = put_num(b, n, iweek, 2); break;
            case 'c': case 'x':
                n = put_year(b, n, y); b[n++] = '-'; n = put_num(b, n, m, 2); b[n++] = '-'; n = put_num(b, n, d, 2);
                if (spec == 'x') break;
                b[n++] = ' ';
                // fall through: the time
            case 'X': case 'T':
                n = put_num(b, n, h, 2); b[n++] = ':'; n = put_num(b, n, mi, 2); b[n++] = ':'; n = put_num(b, n, s, 2);
                break;
            default: b[n++] = '%';
        }
    }
    return n;
}
__device__ Str str_strftime(const Arena& a, int64_t us, Str f) {
    uint8_t buf[STRFTIME_BYTES];
    const uint32_t n = strftime_into(buf, us, f);
    return arena_copy(a, buf, n);
}

// ---- regexp_extract / regexp_replace: the walk of plan/src/regex.rs's find DFAs ----
// `RegexDfa::new_find`: one table of a forward and a reverse DFA whose entries carry
// DFA_MATCH_FLAG where they lead to a match state (a match ends, or in reverse starts,
// before the byte just read), followed by the start states of each per byte before the
// search's start (256: none). `find_at` and `replace` are the CPU's twins.
struct DfaFind { const uint8_t* classes; const uint16_t* next; uint32_t columns; uint32_t entries; };

// The leftmost-first match that starts at or after `from`: the forward DFA's last match
// end before it dies, then the reverse DFA's leftmost start from there.
__device__ bool dfa_find(const DfaFind& d, Str s, uint32_t from, uint32_t* begin, uint32_t* end) {
    const uint16_t* starts = d.next + d.entries - 2u * DFA_FIND_CONTEXTS;
    const uint32_t none = DFA_FIND_CONTEXTS - 1u;
    uint32_t st = starts[from > 0u ? s.p[from - 1u] : none];
    int64_t found = -1;
    for (uint32_t i = from; i < s.len; i++) {
        const uint32_t e = d.next[st * d.columns + d.classes[s.p[i]]];
        if (e & DFA_MATCH_FLAG) found = i;
        st = e & ~DFA_MATCH_FLAG;
        if (st == 0u) break;
    }
    if (st != 0u && (d.next[st * d.columns + d.columns - 1u] & DFA_MATCH_FLAG)) found = s.len;
    if (found < 0) return false;
    const uint32_t stop = (uint32_t)found;
    st = starts[DFA_FIND_CONTEXTS + (stop < s.len ? s.p[stop] : none)];
    uint32_t start = stop;
    for (uint32_t i = stop; i > from; i--) {
        const uint32_t e = d.next[st * d.columns + d.classes[s.p[i - 1u]]];
        if (e & DFA_MATCH_FLAG) start = i;
        st = e & ~DFA_MATCH_FLAG;
        if (st == 0u) break;
    }
    if (st != 0u) {
        const uint32_t e = from > 0u ? d.next[st * d.columns + d.classes[s.p[from - 1u]]] : d.next[st * d.columns + d.columns - 1u];
        if (e & DFA_MATCH_FLAG) start = from;
    }
    *begin = start;
    *end = stop;
    return true;
}

// The first match, or '' (a view of the input).
__device__ Str str_regexp_extract(const DfaFind& d, Str s) {
    uint32_t b, e;
    if (!dfa_find(d, s, 0u, &b, &e)) return str_view(s.p, 0);
    return str_view(s.p + b, e - b);
}

// The rewrite with `\0` the match and `\\` a backslash (checked on the host): its length,
// its bytes written to `out` unless null.
__device__ uint32_t regexp_rewrite(uint8_t* out, Str rw, const uint8_t* m, uint32_t m_len) {
    uint32_t o = 0;
    for (uint32_t i = 0; i < rw.len; i++) {
        if (rw.p[i] == '\\' && i + 1u < rw.len) {
            i++;
            if (rw.p[i] == '0') {
                if (out) copy_bytes(out + o, m, m_len);
                o += m_len;
                continue;
            }
        }
        if (out) out[o] = rw.p[i];
        o++;
    }
    return o;
}

// One pass of RE2's Replace (GlobalReplace where `global`), as regex.rs's `replace`: after
// a match the search goes on at its end; an empty match where the last one ended is not
// taken, and the next character is copied instead. Returns the result's length (its bytes
// written to `out` unless null) and the number of replacements in `count`.
__device__ uint32_t regexp_replace_pass(const DfaFind& d, Str s, Str rw, bool global, uint8_t* out, uint32_t* count) {
    uint32_t p = 0, o = 0, n = 0;
    int64_t last_end = -1;
    while (p <= s.len) {
        uint32_t b, e;
        if (!dfa_find(d, s, p, &b, &e)) break;
        if (out) copy_bytes(out + o, s.p + p, b - p);
        o += b - p;
        if (b == e && (int64_t)b == last_end) {
            uint32_t w = 1u, c = 0u;
            if (p < s.len) {
                const uint8_t lead = s.p[p];
                w = min(lead >= 0xf0 ? 4u : lead >= 0xe0 ? 3u : lead >= 0xc0 ? 2u : 1u, s.len - p);
                c = w;
            }
            if (out) copy_bytes(out + o, s.p + p, c);
            o += c;
            p += w;
            continue;
        }
        o += regexp_rewrite(out ? out + o : nullptr, rw, s.p + b, e - b);
        p = e;
        last_end = e;
        n++;
        if (!global) break;
    }
    if (p < s.len) {
        if (out) copy_bytes(out + o, s.p + p, s.len - p);
        o += s.len - p;
    }
    *count = n;
    return o;
}

// The sizes in one pass, the bytes in a second (no match: the input itself).
__device__ Str str_regexp_replace(const Arena& a, const DfaFind& d, Str s, Str rw, bool global) {
    uint32_t n = 0;
    const uint32_t len = regexp_replace_pass(d, s, rw, global, nullptr, &n);
    if (n == 0u) return s;
    uint8_t* out = arena_alloc(a, len);
    if (!out) return str_lost(s);
    regexp_replace_pass(d, s, rw, global, out, &n);
    return str_view(out, len);
}
