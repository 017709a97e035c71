// ssb SF 0.01: select c_nation, s_nation, d_year, sum(lo_revenue) as revenue
// from customer, lineorder, supplier, date
// where lo_custkey = c_custkey
//   and lo_suppkey = s_suppkey
//   and lo_orderdate = d_datekey
//   and c_region = 'ASIA'
//   and s_region = 'ASIA'
//   and d_year >= 1992 and d_year <= 1997
// group by c_nation, s_nation, d_year
// order by d_year asc, revenue desc;
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
// Init of #0: empty hash slots
extern "C" __global__ void pipeline_0_init(int* ht_slots, const uint32_t ht_mask) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int32_t* __restrict__ in0_values,
    const int32_t* __restrict__ in1_values,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* group_count,
    uint32_t* __restrict__ group_rows,
    uint32_t* __restrict__ row_group,
    int* multi_flag,
    int32_t* __restrict__ gkey0_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int32_t* __restrict__ out0_values,
    int32_t* __restrict__ out1_values,
    const int32_t lit0,
    const int32_t lit1)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int32_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in1_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int32_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int32_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in1_values[row + stride_];
        // ---- Scan date ----
        int32_t c0 = 0; 
        int32_t c1 = 0; 
        // ---- Filter (d_year#1 >= lit0) && (d_year#1 <= lit1) ----
        if (active) {
            c1 = pf0_cur_;
            const bool t_1 = (c1 >= lit0);
            active = (t_1);
        }
        if (active) {
            const bool t_2 = (c1 <= lit1);
            active = (t_2);
        }
        // ---- HashBuild -> #0 keys=[d_datekey#0] (global hash table, rows grouped by key) ----
        int gid_ = -1;
        if (active) {
            c0 = in0_values[row];
        }
        // sorted runs: a lane with the previous lane's key takes that run's group (one insert per run)
        const long long kprev_ = __shfl_up_sync(FULL_MASK, (long long)(c0), 1);
        const bool aprev_ = __shfl_up_sync(FULL_MASK, active, 1);
        const bool follower_ = active && (threadIdx.x & 31) > 0 && aprev_ && kprev_ == (long long)(c0);
        const uint32_t run_leaders_ = __ballot_sync(FULL_MASK, active && !follower_);
        if (active && !follower_) {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(c0)));
            uint32_t slot_ = (uint32_t)h_ & ht_mask;
            for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                int cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -1) {
                    cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                    if (cur_ == -1) {
                        const unsigned long long g_ = warp_aggregated_inc(group_count);
                        if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                        gkey0_values[g_] = c0;
                        __threadfence();
                        atomicExch(&ht_slots[slot_], (int)g_);
                        gid_ = (int)g_;
                        break;
                    }
                }
                while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -3) break;
                if ((c0 == ld_cg(&gkey0_values[cur_]))) { gid_ = cur_; break; }
                slot_ = (slot_ + 1) & ht_mask;
            }
            if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
        }
        const uint32_t lane_bits_ = 0xffffffffu >> (31 - (threadIdx.x & 31));
        const int run_leader_ = 31 - __clz(run_leaders_ & lane_bits_);
        const int run_gid_ = __shfl_sync(FULL_MASK, gid_, run_leader_ < 0 ? 0 : run_leader_);
        if (follower_) gid_ = run_gid_;
        const uint32_t ends_ = ~__ballot_sync(FULL_MASK, follower_) & ~lane_bits_;
        const uint32_t run_len_ = (ends_ ? (uint32_t)__ffs(ends_) - 1u : 32u) - (threadIdx.x & 31);
        if (active) {
            if (gid_ >= 0 && !follower_ && atomicAdd(&group_rows[gid_], run_len_) + run_len_ >= 2u) *multi_flag = 1;
            active = gid_ >= 0;
        }
        // ---- HashBuild -> #0 payload (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
            out0_values[pos_] = c0;
            out1_values[pos_] = c1;
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
// Init of #1: empty hash slots
extern "C" __global__ void pipeline_1_init(int* ht_slots, const uint32_t ht_mask) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const int32_t* __restrict__ in0_values,
    const uint16_t* __restrict__ in1_dictcodes,
    const Str* __restrict__ in1_dictvalues,
    const uint16_t* __restrict__ in2_dictcodes,
    const Str* __restrict__ in2_dictvalues,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* group_count,
    uint32_t* __restrict__ group_rows,
    uint32_t* __restrict__ row_group,
    int* multi_flag,
    int32_t* __restrict__ gkey0_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int32_t* __restrict__ out0_values,
    Str* __restrict__ out1_values,
    Str* __restrict__ out2_values,
    const uint8_t* __restrict__ lit0_bytes,
    const uint32_t lit0_len,
    const uint32_t lit0_hash)
{
    // the query's constants passed in parts (kernel parameters: codegen literals.rs)
    const Str lit0 = make_str_h((const char*)lit0_bytes, lit0_len, lit0_hash);
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int32_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int32_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int32_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan customer ----
        int32_t c0 = 0; 
        Str c1 = make_str("", 0); 
        Str c2 = make_str("", 0); 
        // ---- Filter (c_region#2 = lit0) ----
        if (active) {
            c2 = in2_dictvalues[in2_dictcodes[row]];  /* dictionary-encoded */
            const bool t_1 = str_eq(c2, lit0);
            active = (t_1);
        }
        // ---- HashBuild -> #1 keys=[c_custkey#0] (global hash table, rows grouped by key) ----
        int gid_ = -1;
        if (active) {
            c0 = pf0_cur_;
        }
        // sorted runs: a lane with the previous lane's key takes that run's group (one insert per run)
        const long long kprev_ = __shfl_up_sync(FULL_MASK, (long long)(c0), 1);
        const bool aprev_ = __shfl_up_sync(FULL_MASK, active, 1);
        const bool follower_ = active && (threadIdx.x & 31) > 0 && aprev_ && kprev_ == (long long)(c0);
        const uint32_t run_leaders_ = __ballot_sync(FULL_MASK, active && !follower_);
        if (active && !follower_) {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(c0)));
            uint32_t slot_ = (uint32_t)h_ & ht_mask;
            for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                int cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -1) {
                    cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                    if (cur_ == -1) {
                        const unsigned long long g_ = warp_aggregated_inc(group_count);
                        if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                        gkey0_values[g_] = c0;
                        __threadfence();
                        atomicExch(&ht_slots[slot_], (int)g_);
                        gid_ = (int)g_;
                        break;
                    }
                }
                while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -3) break;
                if ((c0 == ld_cg(&gkey0_values[cur_]))) { gid_ = cur_; break; }
                slot_ = (slot_ + 1) & ht_mask;
            }
            if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
        }
        const uint32_t lane_bits_ = 0xffffffffu >> (31 - (threadIdx.x & 31));
        const int run_leader_ = 31 - __clz(run_leaders_ & lane_bits_);
        const int run_gid_ = __shfl_sync(FULL_MASK, gid_, run_leader_ < 0 ? 0 : run_leader_);
        if (follower_) gid_ = run_gid_;
        const uint32_t ends_ = ~__ballot_sync(FULL_MASK, follower_) & ~lane_bits_;
        const uint32_t run_len_ = (ends_ ? (uint32_t)__ffs(ends_) - 1u : 32u) - (threadIdx.x & 31);
        if (active) {
            if (gid_ >= 0 && !follower_ && atomicAdd(&group_rows[gid_], run_len_) + run_len_ >= 2u) *multi_flag = 1;
            active = gid_ >= 0;
        }
        // ---- HashBuild -> #1 payload (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
        if (active) {
            c1 = in1_dictvalues[in1_dictcodes[row]];  /* dictionary-encoded */
        }
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
            out0_values[pos_] = c0;
            out1_values[pos_] = c1;
            out2_values[pos_] = c2;
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_2 ====================
// ======== Pipeline 2 ========
// Init of #2: empty hash slots
extern "C" __global__ void pipeline_2_init(int* ht_slots, const uint32_t ht_mask) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_2(
    const uint64_t n_rows,
    int* err,
    const int32_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_offsets,
    const uint8_t* __restrict__ in1_bytes,
    const uint16_t* __restrict__ in2_dictcodes,
    const Str* __restrict__ in2_dictvalues,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* group_count,
    uint32_t* __restrict__ group_rows,
    uint32_t* __restrict__ row_group,
    int* multi_flag,
    int32_t* __restrict__ gkey0_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int32_t* __restrict__ out0_values,
    Str* __restrict__ out1_values,
    Str* __restrict__ out2_values,
    const uint8_t* __restrict__ lit0_bytes,
    const uint32_t lit0_len,
    const uint32_t lit0_hash)
{
    // the query's constants passed in parts (kernel parameters: codegen literals.rs)
    const Str lit0 = make_str_h((const char*)lit0_bytes, lit0_len, lit0_hash);
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int32_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int32_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int32_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan supplier ----
        int32_t c0 = 0; 
        Str c1 = make_str("", 0); 
        Str c2 = make_str("", 0); 
        // ---- Filter (s_region#2 = lit0) ----
        if (active) {
            c2 = in2_dictvalues[in2_dictcodes[row]];  /* dictionary-encoded */
            const bool t_1 = str_eq(c2, lit0);
            active = (t_1);
        }
        // ---- HashBuild -> #2 keys=[s_suppkey#0] (global hash table, rows grouped by key) ----
        int gid_ = -1;
        if (active) {
            c0 = pf0_cur_;
        }
        // sorted runs: a lane with the previous lane's key takes that run's group (one insert per run)
        const long long kprev_ = __shfl_up_sync(FULL_MASK, (long long)(c0), 1);
        const bool aprev_ = __shfl_up_sync(FULL_MASK, active, 1);
        const bool follower_ = active && (threadIdx.x & 31) > 0 && aprev_ && kprev_ == (long long)(c0);
        const uint32_t run_leaders_ = __ballot_sync(FULL_MASK, active && !follower_);
        if (active && !follower_) {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(c0)));
            uint32_t slot_ = (uint32_t)h_ & ht_mask;
            for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                int cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -1) {
                    cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                    if (cur_ == -1) {
                        const unsigned long long g_ = warp_aggregated_inc(group_count);
                        if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                        gkey0_values[g_] = c0;
                        __threadfence();
                        atomicExch(&ht_slots[slot_], (int)g_);
                        gid_ = (int)g_;
                        break;
                    }
                }
                while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -3) break;
                if ((c0 == ld_cg(&gkey0_values[cur_]))) { gid_ = cur_; break; }
                slot_ = (slot_ + 1) & ht_mask;
            }
            if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
        }
        const uint32_t lane_bits_ = 0xffffffffu >> (31 - (threadIdx.x & 31));
        const int run_leader_ = 31 - __clz(run_leaders_ & lane_bits_);
        const int run_gid_ = __shfl_sync(FULL_MASK, gid_, run_leader_ < 0 ? 0 : run_leader_);
        if (follower_) gid_ = run_gid_;
        const uint32_t ends_ = ~__ballot_sync(FULL_MASK, follower_) & ~lane_bits_;
        const uint32_t run_len_ = (ends_ ? (uint32_t)__ffs(ends_) - 1u : 32u) - (threadIdx.x & 31);
        if (active) {
            if (gid_ >= 0 && !follower_ && atomicAdd(&group_rows[gid_], run_len_) + run_len_ >= 2u) *multi_flag = 1;
            active = gid_ >= 0;
        }
        // ---- HashBuild -> #2 payload (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
        if (active) {
            c1 = load_str(in1_offsets, in1_bytes, row);
        }
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
            out0_values[pos_] = c0;
            out1_values[pos_] = c1;
            out2_values[pos_] = c2;
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_3 ====================
// ======== Pipeline 3 ========
// Init of #3: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_3_init(int* ht_slots, const uint32_t ht_mask, const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_3(
    const uint64_t n_rows,
    int* err,
    const int32_t* __restrict__ in0_values,
    const int32_t* __restrict__ in1_values,
    const int32_t* __restrict__ in2_values,
    const int32_t* __restrict__ in3_values,
    const uint32_t ht2_mask,
    const uint16_t* __restrict__ rp0_slots,
    const int32_t* __restrict__ rp0_values,
    const uint16_t* __restrict__ rp0_codes,
    const int2* __restrict__ ht2_entries,
    const uint32_t* __restrict__ ht2_offsets,
    const uint32_t* __restrict__ ht2_counts,
    const int32_t* __restrict__ ht2_col0_values,
    const Str* __restrict__ ht2_col1_values,
    const Str* __restrict__ ht2_col2_values,
    const uint32_t ht1_mask,
    const uint16_t* __restrict__ rp1_slots,
    const int32_t* __restrict__ rp1_values,
    const uint16_t* __restrict__ rp1_codes,
    const int2* __restrict__ ht1_entries,
    const uint32_t* __restrict__ ht1_offsets,
    const uint32_t* __restrict__ ht1_counts,
    const int32_t* __restrict__ ht1_col0_values,
    const Str* __restrict__ ht1_col1_values,
    const Str* __restrict__ ht1_col2_values,
    const uint32_t ht0_mask,
    const int2* __restrict__ ht0_entries,
    const uint32_t* __restrict__ ht0_offsets,
    const uint32_t* __restrict__ ht0_counts,
    const int32_t* __restrict__ ht0_col0_values,
    const int32_t* __restrict__ ht0_col1_values,
    __int128* __restrict__ state0,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* out_count,
    Str* __restrict__ out0_values,
    Str* __restrict__ out1_values,
    int32_t* __restrict__ out2_values)
{
    // HashProbe #2: shared memory: table of 20 values, one copy each, in 32 slots (1 KiB; rows carry their slot; reads: equal keys share a copy)
    // filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it
    __shared__ int rp0_sm[32];
    for (uint32_t s_ = threadIdx.x; s_ < 20u; s_ += blockDim.x) {
        const int32_t key_ = rp0_values[s_];
        int g_ = -1;
         {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(key_)));
            uint32_t slot_ = (uint32_t)h_ & ht2_mask;
            for (uint32_t probe_ = 0; probe_ <= ht2_mask; probe_++) {
                const int2 e_ = __ldg(&ht2_entries[slot_]);
                if (e_.y < 0) break;
                if (e_.x == key_) { g_ = (int)e_.y; break; }
                slot_ = (slot_ + 1) & ht2_mask;
            }
        }
        rp0_sm[s_] = g_;
    }
    __syncthreads();
    for (uint32_t s_ = 20u + threadIdx.x; s_ < 32u; s_ += blockDim.x) rp0_sm[s_] = rp0_sm[rp0_codes[s_]];
    __syncthreads();
    // HashProbe #1: shared memory: table of 200 values, one copy each, in 224 slots (1 KiB; rows carry their slot; reads: equal keys share a copy)
    // filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it
    __shared__ int rp1_sm[224];
    for (uint32_t s_ = threadIdx.x; s_ < 200u; s_ += blockDim.x) {
        const int32_t key_ = rp1_values[s_];
        int g_ = -1;
         {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(key_)));
            uint32_t slot_ = (uint32_t)h_ & ht1_mask;
            for (uint32_t probe_ = 0; probe_ <= ht1_mask; probe_++) {
                const int2 e_ = __ldg(&ht1_entries[slot_]);
                if (e_.y < 0) break;
                if (e_.x == key_) { g_ = (int)e_.y; break; }
                slot_ = (slot_ + 1) & ht1_mask;
            }
        }
        rp1_sm[s_] = g_;
    }
    __syncthreads();
    for (uint32_t s_ = 200u + threadIdx.x; s_ < 224u; s_ += blockDim.x) rp1_sm[s_] = rp1_sm[rp1_codes[s_]];
    __syncthreads();
    // HashAggregate #3: a per-block cache of the groups its rows found, 256 slots of {group id, keys} (8960 bytes)
    __shared__ int gc_gid_[256];
    __shared__ unsigned long long gc_k0_0_[256];
    __shared__ uint32_t gc_k0_1_[256];
    __shared__ bool gc_k0_2_[256];
    __shared__ unsigned long long gc_k1_0_[256];
    __shared__ uint32_t gc_k1_1_[256];
    __shared__ bool gc_k1_2_[256];
    __shared__ int32_t gc_k2_0_[256];
    __shared__ bool gc_k2_1_[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) gc_gid_[i] = -1;
    // HashAggregate: groups < 512 accumulate per block in shared memory, flushed once per block
    __shared__ __int128 sh0_[512];
    for (int i = threadIdx.x; i < 512; i += blockDim.x) sh0_[i] = ((__int128)0);
    __syncthreads();
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    uint32_t iter_ = 0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        if ((iter_++ & 7u) == 0u && __any_sync(FULL_MASK, *(volatile int*)err != 0)) break;
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        // ---- Scan lineorder ----
        int32_t c0 = 0; 
        int32_t c1 = 0; 
        int32_t c2 = 0; 
        int32_t c3 = 0; 
        // ---- HashProbe #2 keys=[lo_suppkey#1] (multi-match: push-down parallelism; bank-replicated table in shared memory) ----
        int hp2_gid = -1;
        if (active) {
            hp2_gid = rp0_sm[rp0_slots[row]];
            active = hp2_gid >= 0;
        }
        uint32_t hp2_beg = 0, hp2_end = 0;
        if (active) { hp2_beg = ht2_offsets[hp2_gid]; hp2_end = hp2_beg + ht2_counts[hp2_gid]; }
        const bool hp2_has = active;
        const bool hp2_found = hp2_gid >= 0;
        while (true) {
            const uint32_t hp2_todo = __ballot_sync(FULL_MASK, hp2_has && hp2_beg < hp2_end);
            if (hp2_todo == 0) break;
            const int hp2_leader = hp2_todo ? __ffs(hp2_todo) - 1 : 0;
            const uint32_t hp2_lb = __shfl_sync(FULL_MASK, hp2_beg, hp2_leader), hp2_le = __shfl_sync(FULL_MASK, hp2_end, hp2_leader);
            if ((int)(threadIdx.x & 31) == hp2_leader) hp2_beg += 32;
            const uint32_t hp2_pos = hp2_lb + (threadIdx.x & 31);
            bool active = hp2_todo != 0 && hp2_pos < hp2_le;
            const bool hp2_m = bcast(hp2_found, hp2_leader);
            // broadcast the leader lane's row to the warp
            const uint32_t row_b2_ = bcast(row, hp2_leader);
            const uint32_t row = row_b2_;
            int32_t j2_0 = 0;
            Str j2_1 = make_str("", 0);
            Str j2_2 = make_str("", 0);
            // ---- HashProbe #1 keys=[lo_custkey#0] (multi-match: push-down parallelism; bank-replicated table in shared memory) ----
            int hp1_gid = -1;
            if (active) {
                hp1_gid = rp1_sm[rp1_slots[row]];
                active = hp1_gid >= 0;
            }
            uint32_t hp1_beg = 0, hp1_end = 0;
            if (active) { hp1_beg = ht1_offsets[hp1_gid]; hp1_end = hp1_beg + ht1_counts[hp1_gid]; }
            const bool hp1_has = active;
            const bool hp1_found = hp1_gid >= 0;
            while (true) {
                const uint32_t hp1_todo = __ballot_sync(FULL_MASK, hp1_has && hp1_beg < hp1_end);
                if (hp1_todo == 0) break;
                const int hp1_leader = hp1_todo ? __ffs(hp1_todo) - 1 : 0;
                const uint32_t hp1_lb = __shfl_sync(FULL_MASK, hp1_beg, hp1_leader), hp1_le = __shfl_sync(FULL_MASK, hp1_end, hp1_leader);
                if ((int)(threadIdx.x & 31) == hp1_leader) hp1_beg += 32;
                const uint32_t hp1_pos = hp1_lb + (threadIdx.x & 31);
                bool active = hp1_todo != 0 && hp1_pos < hp1_le;
                const bool hp1_m = bcast(hp1_found, hp1_leader);
                // broadcast the leader lane's row to the warp
                const uint32_t row_b1_ = bcast(row, hp1_leader);
                const uint32_t row = row_b1_;
                const uint32_t hp2_pos_b1_ = bcast(hp2_pos, hp1_leader);
                const uint32_t hp2_pos = hp2_pos_b1_;
                const bool hp2_m_b1_ = bcast(hp2_m, hp1_leader);
                const bool hp2_m = hp2_m_b1_;
                int32_t j1_0 = 0;
                Str j1_1 = make_str("", 0);
                Str j1_2 = make_str("", 0);
                // ---- LaneRefill threshold=24/32: left out, the rows here are inside a multi-match expansion loop ----
                // ---- HashProbe #0 keys=[lo_orderdate#2] (multi-match: push-down parallelism; {key, group} entries) ----
                int hp0_gid = -1;
                if (active) {
                    c2 = in2_values[row];
                     {
                        uint64_t h_ = 0x9e3779b97f4a7c15ull;
                        h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(c2)));
                        uint32_t slot_ = (uint32_t)h_ & ht0_mask;
                        for (uint32_t probe_ = 0; probe_ <= ht0_mask; probe_++) {
                            const int2 e_ = __ldg(&ht0_entries[slot_]);
                            if (e_.y < 0) break;
                            if (e_.x == c2) { hp0_gid = (int)e_.y; break; }
                            slot_ = (slot_ + 1) & ht0_mask;
                        }
                    }
                    active = hp0_gid >= 0;
                }
                uint32_t hp0_beg = 0, hp0_end = 0;
                if (active) { hp0_beg = ht0_offsets[hp0_gid]; hp0_end = hp0_beg + ht0_counts[hp0_gid]; }
                const bool hp0_has = active;
                const bool hp0_found = hp0_gid >= 0;
                while (true) {
                    const uint32_t hp0_todo = __ballot_sync(FULL_MASK, hp0_has && hp0_beg < hp0_end);
                    if (hp0_todo == 0) break;
                    const int hp0_leader = hp0_todo ? __ffs(hp0_todo) - 1 : 0;
                    const uint32_t hp0_lb = __shfl_sync(FULL_MASK, hp0_beg, hp0_leader), hp0_le = __shfl_sync(FULL_MASK, hp0_end, hp0_leader);
                    if ((int)(threadIdx.x & 31) == hp0_leader) hp0_beg += 32;
                    const uint32_t hp0_pos = hp0_lb + (threadIdx.x & 31);
                    bool active = hp0_todo != 0 && hp0_pos < hp0_le;
                    const bool hp0_m = bcast(hp0_found, hp0_leader);
                    // broadcast the leader lane's row to the warp
                    const int32_t c2_b0 = bcast(c2, hp0_leader);
                    const uint32_t row_b0_ = bcast(row, hp0_leader);
                    const uint32_t row = row_b0_;
                    const uint32_t hp2_pos_b0_ = bcast(hp2_pos, hp0_leader);
                    const uint32_t hp2_pos = hp2_pos_b0_;
                    const bool hp2_m_b0_ = bcast(hp2_m, hp0_leader);
                    const bool hp2_m = hp2_m_b0_;
                    const uint32_t hp1_pos_b0_ = bcast(hp1_pos, hp0_leader);
                    const uint32_t hp1_pos = hp1_pos_b0_;
                    const bool hp1_m_b0_ = bcast(hp1_m, hp0_leader);
                    const bool hp1_m = hp1_m_b0_;
                    int32_t j0_0 = 0;
                    int32_t j0_1 = 0;
                    // ---- Project c_nation#8, lo_revenue#3, s_nation#5, d_year#11 ----
                    Str p0_0 = make_str("", 0); bool p0_0_null = true;
                    int32_t p0_1 = 0; bool p0_1_null = true;
                    Str p0_2 = make_str("", 0); bool p0_2_null = true;
                    int32_t p0_3 = 0; bool p0_3_null = true;
                    if (active) {
                        c3 = in3_values[row];
                        j2_1 = ht2_col1_values[hp2_pos];
                        j1_1 = ht1_col1_values[hp1_pos];
                        j0_1 = ht0_col1_values[hp0_pos];
                        p0_0 = j1_1; p0_0_null = false;
                        p0_1 = c3; p0_1_null = false;
                        p0_2 = j2_1; p0_2_null = false;
                        p0_3 = j0_1; p0_3_null = false;
                    }
                    // ---- HashAggregate -> #3 keys=[c_nation#0, s_nation#2, d_year#3] states=[sum(lo_revenue#1)] (global hash table, atomicCAS insert) ----
                    int gid_ = -1;
                    int32_t a0_ = 0;
                    if (active) {
                        if (active) {
                            // the block's group cache first; the global table where it misses
                            uint64_t h_ = 0x9e3779b97f4a7c15ull;
                            h_ = hash_combine(h_, p0_0_null ? 0x5bd1e995ull : hash_str(p0_0));
                            h_ = hash_combine(h_, p0_2_null ? 0x5bd1e995ull : hash_str(p0_2));
                            h_ = hash_combine(h_, p0_3_null ? 0x5bd1e995ull : hash_u64((uint64_t)(int64_t)(p0_3)));
                            const uint32_t gch_ = (uint32_t)(h_ >> 32) & 255u;
                            int gcf_ = -1; // a free slot seen, for this row's group
                            for (uint32_t t_ = 0; t_ < 2u; t_++) {
                                const uint32_t gcs_ = (gch_ + t_) & 255u;
                                const int gcg_ = ld_acquire_cta(&gc_gid_[gcs_]);
                                if (gcg_ == -1) { gcf_ = (int)gcs_; break; }
                                if (gcg_ >= 0 && (gc_k0_2_[gcs_] == p0_0_null && (p0_0_null || (gc_k0_0_[gcs_] == (unsigned long long)p0_0.p && gc_k0_1_[gcs_] == p0_0.len))) && (gc_k1_2_[gcs_] == p0_2_null && (p0_2_null || (gc_k1_0_[gcs_] == (unsigned long long)p0_2.p && gc_k1_1_[gcs_] == p0_2.len))) && (gc_k2_1_[gcs_] == p0_3_null && (p0_3_null || (gc_k2_0_[gcs_] == p0_3)))) { gid_ = gcg_; break; }
                            }
                            if (gid_ < 0) {
                                uint32_t slot_ = (uint32_t)h_ & ht_mask;
                                for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                                    int cur_ = *(volatile int*)&ht_slots[slot_];
                                    if (cur_ == -1) {
                                        cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                                        if (cur_ == -1) {
                                            const unsigned long long g_ = warp_aggregated_inc(out_count);
                                            if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                                            out0_values[g_] = p0_0;
                                            out1_values[g_] = p0_2;
                                            out2_values[g_] = p0_3;
                                            __threadfence();
                                            atomicExch(&ht_slots[slot_], (int)g_);
                                            gid_ = (int)g_;
                                            break;
                                        }
                                    }
                                    while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                                    if (cur_ == -3) break;
                                    if (str_eq_cg(p0_0, ld_cg(&out0_values[cur_])) && str_eq_cg(p0_2, ld_cg(&out1_values[cur_])) && (p0_3 == ld_cg(&out2_values[cur_]))) { gid_ = cur_; break; }
                                    slot_ = (slot_ + 1) & ht_mask;
                                }
                                if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
                                if (gid_ >= 0 && gcf_ >= 0 && atomicCAS(&gc_gid_[gcf_], -1, -2) == -1) {
                                    gc_k0_0_[gcf_] = (unsigned long long)p0_0.p;
                                    gc_k0_1_[gcf_] = p0_0.len;
                                    gc_k0_2_[gcf_] = p0_0_null;
                                    gc_k1_0_[gcf_] = (unsigned long long)p0_2.p;
                                    gc_k1_1_[gcf_] = p0_2.len;
                                    gc_k1_2_[gcf_] = p0_2_null;
                                    gc_k2_0_[gcf_] = p0_3;
                                    gc_k2_1_[gcf_] = p0_3_null;
                                    __threadfence_block();
                                    atomicExch(&gc_gid_[gcf_], gid_);
                                }
                            }
                        }
                        a0_ = p0_1;
                    }
                    const bool has_ = active && gid_ >= 0;
                    const bool rest_ = has_;
                    // local resolution: where the warp holds one group, a warp reduction and one update; otherwise
                    // each lane updates its own group (shared-memory atomics for the first groups)
                    const uint32_t lane_ = threadIdx.x & 31;
                    const uint32_t peers_ = __match_any_sync(FULL_MASK, rest_ ? gid_ : -1);
                    const int groups_ = __popc(__ballot_sync(FULL_MASK, rest_ && (__ffs(peers_) - 1) == (int)lane_));
                    const int g0_ = __shfl_sync(FULL_MASK, gid_, __ffs(__ballot_sync(FULL_MASK, rest_)) - 1);
                    if (groups_ == 1) {
                        { const __int128 v_ = warp_sum_i128((rest_ ? (__int128)(__int128)(a0_) : ((__int128)0))); if (lane_ == 0) atomic_add_i128(g0_ < 512 ? &sh0_[g0_] : &state0[g0_], v_); }
                    } else if (rest_) {
                        atomic_add_i128(gid_ < 512 ? &sh0_[gid_] : &state0[gid_], (__int128)(a0_));
                    }
                }
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 512 && i < (int)max_groups; i += blockDim.x) {
        if (!(sh0_[i] == ((__int128)0))) atomic_add_i128(&state0[i], sh0_[i]);
    }
}
// ==================== module pipeline_4 ====================
// ======== Pipeline 4 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_4(
    const uint64_t n_rows,
    int* err,
    const Str* __restrict__ in0_values,
    const Str* __restrict__ in1_values,
    const int32_t* __restrict__ in2_values,
    const __int128* __restrict__ in3_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    Str* __restrict__ out0_values,
    Str* __restrict__ out1_values,
    int32_t* __restrict__ out2_values,
    int64_t* __restrict__ out3_values,
    uint8_t* __restrict__ out3_validity)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int32_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in2_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int32_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int32_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in2_values[row + stride_];
        // ---- Scan intermediate #3 ----
        Str c0 = make_str("", 0); 
        Str c1 = make_str("", 0); 
        int32_t c2 = 0; 
        __int128 c3 = 0; 
        // ---- Project c_nation#0, s_nation#1, d_year#2, CAST(sum(lo_revenue#1)#3 AS BIGINT) ----
        Str p0_0 = make_str("", 0); bool p0_0_null = true;
        Str p0_1 = make_str("", 0); bool p0_1_null = true;
        int32_t p0_2 = 0; bool p0_2_null = true;
        int64_t p0_3 = 0; bool p0_3_null = true;
        if (active) {
            c0 = in0_values[row];
            c1 = in1_values[row];
            c2 = pf0_cur_;
            c3 = in3_values[row];
            p0_0 = c0; p0_0_null = false;
            p0_1 = c1; p0_1_null = false;
            p0_2 = c2; p0_2_null = false;
            const __int128 w_1 = div_round((__int128)c3, ((__int128)((int64_t)1ll)));
            if (!false && (w_1 < ((__int128)(-9223372036854775807ll - 1)) || w_1 > ((__int128)9223372036854775807ll))) raise_error(err, 514);
            const int64_t t_2 = ((int64_t)w_1);
            p0_3 = t_2; p0_3_null = false;
        }
        // ---- Materialize -> #4 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
            out1_values[pos_] = p0_1;
            out2_values[pos_] = p0_2;
            out3_values[pos_] = p0_3;
            out3_validity[pos_] = !p0_3_null;
        }
        __syncthreads();
    }
}
// ==================== module sort #4 ====================
// ======== Sort by [#2 ASC, #3 DESC]: bitonic sort of a row permutation ========
__device__ int compare_rows(uint32_t a, uint32_t b, const int32_t* __restrict__ k2_values, const int64_t* __restrict__ k3_values, const uint8_t* __restrict__ k3_validity) {
    // key #2 ASC
    {
        {
            const int c = (k2_values[a] < k2_values[b] ? -1 : (k2_values[a] > k2_values[b] ? 1 : 0));
            if (c != 0) return c;
        }
    }
    // key #3 DESC
    {
        const bool an = k3_validity[a] == 0, bn = k3_validity[b] == 0;
        if (an != bn) return an ? 1 : -1;
        if (!an) {
            const int c = (k3_values[a] < k3_values[b] ? -1 : (k3_values[a] > k3_values[b] ? 1 : 0));
            if (c != 0) return -c;
        }
    }
    return a < b ? -1 : (a > b ? 1 : 0);
}

extern "C" __global__ void sort_iota(uint32_t* idx, uint32_t npow2) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) idx[i] = i;
}

// The compare-exchange of entry i in step (j, k) of the bitonic network; rows >= n are
// padding and sort last.
__device__ __forceinline__ void bitonic_cx(uint32_t* idx, uint32_t i, uint64_t n, uint32_t j, uint32_t k, const int32_t* __restrict__ k2_values, const int64_t* __restrict__ k3_values, const uint8_t* __restrict__ k3_validity) {
    const uint32_t ixj = i ^ j;
    if (ixj <= i) return;
    const uint32_t a = idx[i], b = idx[ixj];
    bool a_after_b;
    if (a >= n || b >= n) a_after_b = a >= n && (b < n || a > b);
    else a_after_b = compare_rows(a, b, k2_values, k3_values, k3_validity) > 0;
    const bool up = (i & k) == 0;
    if (up == a_after_b) { idx[i] = b; idx[ixj] = a; }
}

// One step (j, k) over all entries: a launch per step.
extern "C" __global__ void sort_step(uint32_t* idx, uint32_t npow2, uint64_t n, uint32_t j, uint32_t k, const int32_t* __restrict__ k2_values, const int64_t* __restrict__ k3_values, const uint8_t* __restrict__ k3_validity) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) bitonic_cx(idx, i, n, j, k, k2_values, k3_values, k3_validity);
}

// Small inputs (n <= 4096): a rank sort. Row i's rank is how many rows sort before it
// (ties break on the row index, so ranks are distinct); one warp per (row i, 32 rows j)
// counts them with a ballot and adds them with one atomic. The n^2 compares are
// independent and spread over the whole GPU: a bitonic network in one block ran its
// ~log^2 n steps one after another, each a chain of global loads (0.35 ms for 800 rows
// sorted by three keys, two of them strings).
extern "C" __global__ void sort_rank(uint32_t* __restrict__ rank, uint64_t n, const int32_t* __restrict__ k2_values, const int64_t* __restrict__ k3_values, const uint8_t* __restrict__ k3_validity) {
    const uint64_t chunks = (n + 31) / 32, warps = n * chunks;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t stride = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < warps; w += stride) {
        const uint32_t i = (uint32_t)(w / chunks), j = (uint32_t)((w % chunks) * 32 + lane);
        const bool before = j < n && j != i && compare_rows(j, i, k2_values, k3_values, k3_validity) < 0;
        const uint32_t c = __popc(__ballot_sync(FULL_MASK, before));
        if (lane == 0 && c != 0) atomicAdd(&rank[i], c);
    }
}

extern "C" __global__ void sort_scatter(const uint32_t* __restrict__ rank, uint32_t* __restrict__ perm, uint64_t n) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) perm[rank[i]] = (uint32_t)i;
}

// Top-N: after a compare-exchange at distance c (all ascending), the first c entries of
// each 2c block hold that block's c first rows (as a bitonic run); keep only those.
extern "C" __global__ void sort_keep_halves(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t c, uint32_t out_len) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_len) out[i] = in[(i / c) * 2u * c + i % c];
}
// A sort's keys encoded for the radix sort (radix_sort.cu), a template: generate_sort
// (sort.rs) fills in each key's encoding. Per key: a NULL byte where the column has NULLs
// (1 for a value; 0 or 2 for NULL, as NULLs sort first or last), then the value's bytes in
// an order the bytes compare in (integers with the sign bit flipped; doubles with -0.0 as
// 0.0, every NaN one NaN above +inf; a string's bytes padded with zeros to its key's
// longest string, then its length, so that a prefix sorts first), inverted for DESC.
// ======== Sort by [#2 ASC, #3 DESC]: keys encoded as big-endian words ========
struct KeyWords {
    uint32_t* words;
    uint64_t n, row;
    uint32_t pos, acc;
};

__device__ __forceinline__ void kw_byte(KeyWords& k, uint32_t b) {
    k.acc = (k.acc << 8) | (b & 255u);
    if ((++k.pos & 3u) == 0) k.words[(uint64_t)(k.pos / 4u - 1u) * k.n + k.row] = k.acc;
}
__device__ __forceinline__ void kw_u32(KeyWords& k, uint32_t v, uint32_t flip) {
    v ^= flip;
    if ((k.pos & 3u) == 0) {
        k.pos += 4u;
        k.words[(uint64_t)(k.pos / 4u - 1u) * k.n + k.row] = v;
        return;
    }
    for (int s = 24; s >= 0; s -= 8) kw_byte(k, v >> s);
}
__device__ __forceinline__ void kw_u64(KeyWords& k, uint64_t v, uint32_t flip) {
    kw_u32(k, (uint32_t)(v >> 32), flip);
    kw_u32(k, (uint32_t)v, flip);
}
__device__ __forceinline__ void kw_zeros(KeyWords& k, uint32_t bytes) {
    for (uint32_t i = 0; i < bytes; i++) kw_byte(k, 0u);
}
__device__ __forceinline__ void kw_str(KeyWords& k, Str s, uint32_t slot, uint32_t flip) {
    uint32_t i = 0;
    while (i < slot) {
        if ((k.pos & 3u) == 0 && slot - i >= 4u) {
            const uint32_t m = i < s.len ? min(4u, s.len - i) : 0u;
            kw_u32(k, m != 0 ? load_be_bytes(s.p + i, m, s.len - i) : 0u, flip);
            i += 4u;
        } else {
            kw_byte(k, (i < s.len ? s.p[i] : 0u) ^ flip);
            i++;
        }
    }
    kw_u32(k, s.len, flip);
}
__device__ __forceinline__ uint64_t f64_order_bits(double d) {
    uint64_t b;
    if (d == 0.0) d = 0.0;
    if (isnan(d)) b = 0x7ff8000000000000ull;
    else memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : b ^ 0x8000000000000000ull;
}

// Row i's key into words[w * n + i] (slots[j]: string key j's longest string).
extern "C" __global__ void sort_encode(uint32_t* __restrict__ words, uint64_t n, const uint32_t* __restrict__ slots, const int32_t* __restrict__ k2_values, const int64_t* __restrict__ k3_values, const uint8_t* __restrict__ k3_validity) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        KeyWords k;
        k.words = words; k.n = n; k.row = i; k.pos = 0; k.acc = 0;
        const uint64_t a = i;
        // key #2 ASC
        {
            kw_u32(k, (uint32_t)k2_values[a] ^ 0x80000000u, 0u);
        }
        // key #3 DESC
        {
            const bool null_ = k3_validity[a] == 0;
            kw_byte(k, null_ ? 2u : 1u);
            if (null_) kw_zeros(k, 8); else {
            kw_u64(k, (uint64_t)k3_values[a] ^ 0x8000000000000000ull, 0xffffffffu);
            }
        }
        while (k.pos & 3u) kw_byte(k, 0u);
    }
}
