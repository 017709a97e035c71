// tpch SF 0.01: SELECT count(*) FROM customer WHERE NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)
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
    const int64_t* __restrict__ in0_values,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* group_count,
    uint32_t* __restrict__ group_rows,
    uint32_t* __restrict__ row_group,
    int* multi_flag,
    int64_t* __restrict__ gkey0_values,
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
        // ---- Scan orders ----
        int64_t c0 = 0; 
        // ---- HashBuild -> #0 keys=[o_custkey#0] (global hash table, rows grouped by key) ----
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
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
// Init of #1: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_1_init(const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    
}

extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const uint32_t ht0_mask,
    const uint16_t* __restrict__ rp0_slots,
    const int64_t* __restrict__ rp0_values,
    const uint16_t* __restrict__ rp0_codes,
    const longlong2* __restrict__ ht0_entries,
    int64_t* __restrict__ state0)
{
    // HashProbe #0: shared memory: table of 1500 values, one copy each, in 1504 slots (6 KiB; rows carry their slot; reads: equal keys share a copy)
    // filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it
    __shared__ int rp0_sm[1504];
    for (uint32_t s_ = threadIdx.x; s_ < 1500u; s_ += blockDim.x) {
        const int64_t key_ = rp0_values[s_];
        int g_ = -1;
         {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(key_)));
            uint32_t slot_ = (uint32_t)h_ & ht0_mask;
            for (uint32_t probe_ = 0; probe_ <= ht0_mask; probe_++) {
                const longlong2 e_ = __ldg(&ht0_entries[slot_]);
                if (e_.y < 0) break;
                if (e_.x == key_) { g_ = (int)e_.y; break; }
                slot_ = (slot_ + 1) & ht0_mask;
            }
        }
        rp0_sm[s_] = g_;
    }
    __syncthreads();
    for (uint32_t s_ = 1500u + threadIdx.x; s_ < 1504u; s_ += blockDim.x) rp0_sm[s_] = rp0_sm[rp0_codes[s_]];
    __syncthreads();
    int64_t acc0_ = ((int64_t)0);
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        // ---- Scan customer ----
        int64_t c0 = 0; 
        // ---- HashProbe #0 keys=[c_custkey#0] (anti join: keeps rows without a match; bank-replicated table in shared memory) ----
        int hp0_gid = -1;
        if (active) {
            hp0_gid = rp0_sm[rp0_slots[row]];
            active = hp0_gid < 0;
        }
        // ---- GlobalAggregate -> #1 [count(*)] (block reduction, one atomic per block) ----
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
// ==================== module pipeline_2 ====================
// ======== Pipeline 2 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_2(
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
        // ---- Scan intermediate #1 ----
        int64_t c0 = 0; 
        // ---- Project count(*)#0 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        if (active) {
            c0 = pf0_cur_;
            p0_0 = c0; p0_0_null = false;
        }
        // ---- Materialize -> #2 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
