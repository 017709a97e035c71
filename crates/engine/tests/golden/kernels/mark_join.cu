// tpch SF 0.01: SELECT count(*) FROM customer WHERE c_custkey IN (SELECT o_custkey FROM orders WHERE o_totalprice > 400000) OR c_acctbal < 0
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
    const int64_t* __restrict__ in1_values,
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
    int64_t* __restrict__ out0_values,
    const int64_t lit0)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in1_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in1_values[row + stride_];
        // ---- Scan orders ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        // ---- Filter (o_totalprice#1 > lit0) ----
        if (active) {
            c1 = pf0_cur_;
            const bool t_1 = (c1 > lit0);
            active = (t_1);
        }
        // ---- Project o_custkey#0 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        if (active) {
            c0 = in0_values[row];
            p0_0 = c0; p0_0_null = false;
        }
        // ---- HashBuild -> #0 keys=[o_custkey#0] (global hash table, rows grouped by key) ----
        int gid_ = -1;
        if (active) {
            active = !(p0_0_null);
            if (active) {
                uint64_t h_ = 0x9e3779b97f4a7c15ull;
                h_ = hash_combine(h_, p0_0_null ? 0x5bd1e995ull : hash_u64((uint64_t)(int64_t)(p0_0)));
                uint32_t slot_ = (uint32_t)h_ & ht_mask;
                for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                    int cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -1) {
                        cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                        if (cur_ == -1) {
                            const unsigned long long g_ = warp_aggregated_inc(group_count);
                            if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                            gkey0_values[g_] = p0_0;
                            __threadfence();
                            atomicExch(&ht_slots[slot_], (int)g_);
                            gid_ = (int)g_;
                            break;
                        }
                    }
                    while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -3) break;
                    if ((p0_0 == ld_cg(&gkey0_values[cur_]))) { gid_ = cur_; break; }
                    slot_ = (slot_ + 1) & ht_mask;
                }
                if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
            }
            if (gid_ >= 0 && atomicAdd(&group_rows[gid_], 1u) == 1u) *multi_flag = 1;
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
            out0_values[pos_] = p0_0;
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
    const int64_t* __restrict__ in1_values,
    const uint32_t ht0_mask,
    const uint16_t* __restrict__ rp0_slots,
    const int64_t* __restrict__ rp0_values,
    const uint16_t* __restrict__ rp0_codes,
    const longlong2* __restrict__ ht0_entries,
    int64_t* __restrict__ state0,
    const int64_t lit0)
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
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in1_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in1_values[row + stride_];
        // ---- Scan customer ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        // ---- HashProbe #0 keys=[c_custkey#0] (mark join: keeps every row, appends whether it has a match; bank-replicated table in shared memory) ----
        int hp0_gid = -1;
        if (active) {
            hp0_gid = rp0_sm[rp0_slots[row]];
        }
        const bool hp0_mark = hp0_gid >= 0;
        // ---- Filter (__mark0#2 OR (c_acctbal#1 < lit0)) ----
        if (active) {
            c1 = pf0_cur_;
            bool b_1, bn_2;
            if (!false && (hp0_mark)) {
                b_1 = true; bn_2 = false;
            } else {
                const bool t_3 = (c1 < lit0);
                const bool t_ = (!false && (t_3));
                bn_2 = !t_ && (false || false);
                b_1 = t_;
            }
            active = (!bn_2 & (b_1));
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
