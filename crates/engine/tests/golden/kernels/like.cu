// tpch SF 0.01: SELECT count(*) FROM part WHERE p_name LIKE '%green%' AND p_type NOT LIKE 'PROMO%'
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
// Init of #0: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_0_init(const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    
}

extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_offsets,
    const uint8_t* __restrict__ in0_bytes,
    const uint16_t* __restrict__ in1_dictcodes,
    const Str* __restrict__ in1_dictvalues,
    const uint32_t* __restrict__ in0_pivoted,
    int64_t* __restrict__ state0,
    const uint8_t* __restrict__ lit0_kmp_bytes,
    const uint8_t* __restrict__ lit0_kmp_next,
    const uint8_t* __restrict__ lit0_kmp_ends,
    const uint32_t lit0_kmp_segments,
    const uint8_t* __restrict__ lit0_dfa_classes,
    const uint16_t* __restrict__ lit0_dfa_next,
    const uint32_t lit0_dfa_columns,
    const uint32_t lit0_dfa_start,
    const uint32_t lit0_dfa_entries,
    const uint8_t* __restrict__ lit0_bytes,
    const uint8_t* __restrict__ lit0_kinds,
    const uint32_t lit0_len,
    const uint8_t* __restrict__ lit1_bytes,
    const uint8_t* __restrict__ lit1_kinds,
    const uint32_t lit1_len,
    const uint8_t* __restrict__ lit1_dfa_classes,
    const uint16_t* __restrict__ lit1_dfa_next,
    const uint32_t lit1_dfa_columns,
    const uint32_t lit1_dfa_start,
    const uint32_t lit1_dfa_entries)
{
    // the query's constants passed in parts (kernel parameters: codegen literals.rs)
    // lit0: its DFA's byte classes and table in shared memory
    __shared__ uint8_t lit0_classes_[256];
    __shared__ uint16_t lit0_next_[512];
    for (uint32_t i = threadIdx.x; i < 256u; i += blockDim.x) lit0_classes_[i] = lit0_dfa_classes[i];
    for (uint32_t i = threadIdx.x; i < lit0_dfa_entries; i += blockDim.x) lit0_next_[i] = lit0_dfa_next[i];
    __syncthreads();
    // lit1: its DFA's byte classes and table in shared memory
    __shared__ uint8_t lit1_classes_[256];
    __shared__ uint16_t lit1_next_[256];
    for (uint32_t i = threadIdx.x; i < 256u; i += blockDim.x) lit1_classes_[i] = lit1_dfa_classes[i];
    for (uint32_t i = threadIdx.x; i < lit1_dfa_entries; i += blockDim.x) lit1_next_[i] = lit1_dfa_next[i];
    __syncthreads();
    int64_t acc0_ = ((int64_t)0);
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        // ---- Scan part ----
        Str c0 = make_str("", 0); 
        Str c1 = make_str("", 0); 
        // ---- Filter p_name#0 LIKE lit0 && p_type#1 NOT LIKE lit1 ----
        if (active) {
            c0 = load_str(in0_offsets, in0_bytes, row);
            // LIKE lit0: its DFA where the executor passes one, else lock-step KMP over the Pivot-4 copy where the column has one
            bool kmp_1;
            if (lit0_dfa_entries != 0u) {
                kmp_1 = dfa_match(c0, lit0_classes_, lit0_next_, lit0_dfa_columns, lit0_dfa_start);
            } else if (in0_pivoted != nullptr) {
                kmp_1 = like_kmp_pivot4(in0_pivoted, n_rows, row, c0.len, lit0_kmp_bytes, lit0_kmp_next, lit0_kmp_ends, lit0_kmp_segments);
            } else {
                const bool like_2 = (lit0_dfa_entries != 0u ? dfa_match(c0, lit0_classes_, lit0_next_, lit0_dfa_columns, lit0_dfa_start) : like_match(c0, lit0_bytes, lit0_kinds, lit0_len));
                kmp_1 = like_2;
            }
            active = (kmp_1);
        }
        if (active) {
            c1 = in1_dictvalues[in1_dictcodes[row]];  /* dictionary-encoded */
            const bool like_3 = (lit1_dfa_entries != 0u ? dfa_match(c1, lit1_classes_, lit1_next_, lit1_dfa_columns, lit1_dfa_start) : like_match(c1, lit1_bytes, lit1_kinds, lit1_len));
            active = ((!like_3));
        }
        // ---- GlobalAggregate -> #0 [count(*)] (block reduction, one atomic per block) ----
        if (active) {
            acc0_ += (true ? (int64_t)1 : ((int64_t)0));
        }
    }
    // GlobalAggregate: warp shuffle reduction, block reduction in shared memory, one atomic per block
    const uint32_t lane_ = threadIdx.x & 31, warp_ = threadIdx.x >> 5;
     {
        __shared__ int64_t red_[8];
        int64_t v_ = warp_sum_i64(acc0_);
        if (lane_ == 0) red_[warp_] = v_;
        __syncthreads();
        if (warp_ == 0) {
            v_ = lane_ < 8 ? red_[lane_] : ((int64_t)0);
            v_ = warp_sum_i64(v_);
            if (lane_ == 0) atomic_add_i64(state0, v_);
        }
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int64_t* __restrict__ out0_values)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan intermediate #0 ----
        int64_t c0 = 0; 
        // ---- Project count(*)#0 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        if (active) {
            c0 = pf0_cur_;
            p0_0 = c0; p0_0_null = false;
        }
        // ---- Materialize -> #1 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
        const uint32_t lane_ = threadIdx.x & 31;
        const uint32_t ballot_ = __ballot_sync(FULL_MASK, active);
        const uint32_t warp_ = threadIdx.x >> 5;
        if (lane_ == 0) warp_base_[warp_] = __popc(ballot_);
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t total_ = 0;
            for (int w = 0; w < 8; w++) { const uint32_t c = warp_base_[w]; warp_base_[w] = total_; total_ += c; }
            block_base_ = total_ ? atomicAdd(out_count, (unsigned long long)total_) : 0ull;
        }
        __syncthreads();
        const uint64_t pos_ = block_base_ + warp_base_[warp_] + __popc(ballot_ & ((1u << lane_) - 1u));
        if (active && pos_ < out_capacity) {
            out0_values[pos_] = p0_0;
        }
        __syncthreads();
    }
}
