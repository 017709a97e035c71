// ---- $S: $WHAT, a segmented inclusive scan $DIRECTION ----
// Chunks of `chunk` rows, each walked by one thread, restarting where `heads` says; the
// chunks' last states are scanned the same way ($S_states), and each chunk's rows before
// its first restart then take the scanned state of the chunks before it ($S_carry).
__device__ __forceinline__ $STATE $S_ident() { return $IDENT; }
__device__ __forceinline__ $STATE $S_combine($STATE a, $STATE b$DECLS) {
$COMBINE}
__device__ __forceinline__ $STATE $S_load(uint64_t i$DECLS) {
$LOAD}

extern "C" __global__ void $S_rows(uint64_t n, uint64_t chunk, const uint32_t* __restrict__ heads, $STATE* __restrict__ out, $STATE* __restrict__ last, uint32_t* __restrict__ restarted$DECLS) {
    const uint64_t chunks = (n + chunk - 1) / chunk;
    for (uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t lo = c * chunk, hi = min(n, lo + chunk);
        $STATE s = $S_ident();
        uint32_t any = 0;
        for (uint64_t k = 0; k < hi - lo; k++) {
            const uint64_t i = $FORWARD ? lo + k : hi - 1 - k;
            if (heads[i]) { s = $S_ident(); any = 1; }
            s = $S_combine(s, $S_load(i$ARGS)$ARGS);
            out[i] = s;
        }
        last[c] = s;
        restarted[c] = any;
    }
}

extern "C" __global__ void $S_states(uint64_t n, uint64_t chunk, const uint32_t* __restrict__ heads, const $STATE* __restrict__ in, $STATE* __restrict__ out, $STATE* __restrict__ last, uint32_t* __restrict__ restarted$DECLS) {
    const uint64_t chunks = (n + chunk - 1) / chunk;
    for (uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t lo = c * chunk, hi = min(n, lo + chunk);
        $STATE s = $S_ident();
        uint32_t any = 0;
        for (uint64_t k = 0; k < hi - lo; k++) {
            const uint64_t i = $FORWARD ? lo + k : hi - 1 - k;
            if (heads[i]) { s = $S_ident(); any = 1; }
            s = $S_combine(s, in[i]$ARGS);
            out[i] = s;
        }
        last[c] = s;
        restarted[c] = any;
    }
}

extern "C" __global__ void $S_carry(uint64_t n, uint64_t chunk, const uint32_t* __restrict__ heads, $STATE* __restrict__ out, const $STATE* __restrict__ scanned$DECLS) {
    const uint64_t chunks = (n + chunk - 1) / chunk;
    for (uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (uint64_t)gridDim.x * blockDim.x) {
        if ($FORWARD ? c == 0 : c + 1 == chunks) continue;
        const $STATE carry = scanned[$FORWARD ? c - 1 : c + 1];
        const uint64_t lo = c * chunk, hi = min(n, lo + chunk);
        for (uint64_t k = 0; k < hi - lo; k++) {
            const uint64_t i = $FORWARD ? lo + k : hi - 1 - k;
            if (heads[i]) break;
            out[i] = $S_combine(carry, out[i]$ARGS);
        }
    }
}
