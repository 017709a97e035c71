// ======== string_agg: the runs of sorted rows concatenated (exec/gpu/concat_runs.rs) ========
// A run starts at each row whose position (within its group, from the sort's segments)
// is 0. Row i adds its value to its run's string, after the separator unless it starts
// the run; a NULL adds nothing. The bytes' exclusive prefix sum places each row's piece,
// so a run's string is the bytes from its first row's offset to the next run's.

// The bytes row i adds, and whether it starts a run (valid may be null: no NULLs).
extern "C" __global__ void run_bytes(const Str* __restrict__ values, const uint8_t* __restrict__ valid, const int64_t* __restrict__ pos, uint64_t sep_len, uint64_t* __restrict__ bytes, uint32_t* __restrict__ heads, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const bool head = i == 0 || pos[i] == 0;
        const bool present = valid == nullptr || valid[i];
        bytes[i] = present ? (uint64_t)values[i].len + (head ? 0 : sep_len) : 0;
        heads[i] = head ? 1u : 0u;
    }
}

// Row i's separator and value at out + offsets[i], clipped at cap (a replay sizes out by
// the total its log holds, checked only after the launch).
extern "C" __global__ void run_write(const Str* __restrict__ values, const uint8_t* __restrict__ valid, const int64_t* __restrict__ pos, const uint8_t* __restrict__ sep, uint64_t sep_len, const uint64_t* __restrict__ offsets, uint8_t* __restrict__ out, uint64_t n, uint64_t cap) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        if (valid != nullptr && !valid[i]) continue;
        uint64_t at = offsets[i];
        if (i != 0 && pos[i] != 0) {
            for (uint64_t b = 0; b < sep_len && at < cap; b++, at++) out[at] = sep[b];
        }
        const Str s = values[i];
        for (uint32_t b = 0; b < s.len && at < cap; b++, at++) out[at] = s.p[b];
    }
}

// Each run's first row, at the run's index: the heads' exclusive prefix sum at that row.
extern "C" __global__ void run_firsts(const uint32_t* __restrict__ heads, const uint32_t* __restrict__ run_of, uint32_t* __restrict__ firsts, uint64_t n, uint64_t cap) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        if (heads[i] && run_of[i] < cap) firsts[run_of[i]] = (uint32_t)i;
    }
}

// Run r's string: the bytes from its first row's offset to the next run's first row's
// (the total after the last run), NULL where its first value is NULL. A string past
// 2^32 - 1 bytes (a Str's length) is counted in too_long.
extern "C" __global__ void run_strings(const uint32_t* __restrict__ firsts, const uint64_t* __restrict__ offsets, const uint8_t* __restrict__ valid, const uint8_t* __restrict__ out, Str* __restrict__ strs, uint8_t* __restrict__ strs_valid, uint64_t runs, uint64_t n, unsigned long long* __restrict__ too_long) {
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t first = firsts[r];
        const uint64_t a = offsets[first];
        const uint64_t b = r + 1 < runs ? offsets[firsts[r + 1]] : offsets[n];
        if (b - a > 0xffffffffull) atomicAdd(too_long, 1ull);
        Str s; s.p = out + a; s.len = (uint32_t)(b - a); s.pad_ = 0;
        strs[r] = s;
        strs_valid[r] = valid == nullptr || valid[first] ? 1 : 0;
    }
}
