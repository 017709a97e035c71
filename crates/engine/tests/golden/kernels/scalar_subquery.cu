// tpch SF 0.01: SELECT count(*) FROM part WHERE p_retailprice > (SELECT avg(p_retailprice) FROM part)
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
// Init of #0: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_0_init(const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    
}

extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    int64_t* __restrict__ state0,
    __int128* __restrict__ state1)
{
    int64_t acc0_ = ((int64_t)0);
    __int128 acc1_ = ((__int128)0);
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan part ----
        int64_t c0 = 0; 
        // ---- GlobalAggregate -> #0 [count(*), sum(p_retailprice#0)] (block reduction, one atomic per block) ----
        int64_t a1_ = 0;
        if (active) {
            c0 = pf0_cur_;
            a1_ = c0;
            acc0_ += (true ? (int64_t)1 : ((int64_t)0));
            acc1_ += (true ? (__int128)(__int128)(a1_) : ((__int128)0));
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
     {
        __shared__ __int128 red_[8];
        __int128 v_ = warp_sum_i128(acc1_);
        if (lane_ == 0) red_[warp_] = v_;
        __syncthreads();
        if (warp_ == 0) {
            v_ = lane_ < 8 ? red_[lane_] : ((__int128)0);
            v_ = warp_sum_i128(v_);
            if (lane_ == 0) atomic_add_i128(state1, v_);
        }
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
    const int64_t* __restrict__ in0_values,
    const __int128* __restrict__ in1_values,
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
    double* __restrict__ out0_values,
    uint8_t* __restrict__ out0_validity,
    const int64_t lit0)
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
        __int128 c1 = 0; 
        // ---- Project CASE WHEN (count(*)#0 = lit0) THEN NULL ELSE (CAST(sum(p_retailprice#0)#1 AS DOUBLE) / CAST(count(*)#0 AS DOUBLE)) END ----
        double p0_0 = 0; bool p0_0_null = true;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            double c_1; bool cn_2;
            const bool t_3 = (c0 == lit0);
            if (!false && (t_3)) {
                c_1 = ((double)0); cn_2 = true;
            } else {
                const double t_4 = decimal_to_f64((__int128)c1, ((__int128)((int64_t)100ll)), __longlong_as_double(0x4059000000000000ll));
                const double t_5 = ((double)c0);
                const double t_6 = ((double)t_4) / ((double)t_5);
                c_1 = t_6; cn_2 = false;
            }
            p0_0 = c_1; p0_0_null = cn_2;
        }
        // ---- HashBuild -> #1 keys=[0] (global hash table, rows grouped by key) ----
        int gid_ = -1;
        if (active) {
            if (active) {
                uint64_t h_ = 0x9e3779b97f4a7c15ull;
                h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(((int32_t)0))));
                uint32_t slot_ = (uint32_t)h_ & ht_mask;
                for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                    int cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -1) {
                        cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                        if (cur_ == -1) {
                            const unsigned long long g_ = warp_aggregated_inc(group_count);
                            if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                            gkey0_values[g_] = ((int32_t)0);
                            __threadfence();
                            atomicExch(&ht_slots[slot_], (int)g_);
                            gid_ = (int)g_;
                            break;
                        }
                    }
                    while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -3) break;
                    if ((((int32_t)0) == ld_cg(&gkey0_values[cur_]))) { gid_ = cur_; break; }
                    slot_ = (slot_ + 1) & ht_mask;
                }
                if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
            }
            if (gid_ >= 0 && atomicAdd(&group_rows[gid_], 1u) == 1u) *multi_flag = 1;
            active = gid_ >= 0;
        }
        // ---- HashBuild -> #1 payload (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
            out0_validity[pos_] = !p0_0_null;
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_2 ====================
// ======== Pipeline 2 ========
// Init of #2: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_2_init(const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    
}

extern "C" __global__ void __launch_bounds__(256) pipeline_2(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const uint32_t ht1_mask,
    const int2* __restrict__ ht1_entries,
    const uint32_t* __restrict__ ht1_offsets,
    const uint32_t* __restrict__ ht1_counts,
    const double* __restrict__ ht1_col0_values,
    const uint8_t* __restrict__ ht1_col0_validity,
    int64_t* __restrict__ state0)
{
    int64_t acc0_ = ((int64_t)0);
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        // ---- Scan part ----
        int64_t c0 = 0; 
        // ---- HashProbe #1 keys=[0] (multi-match: push-down parallelism; {key, group} entries) ----
        int hp1_gid = -1;
        if (active) {
             {
                uint64_t h_ = 0x9e3779b97f4a7c15ull;
                h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(((int32_t)0))));
                uint32_t slot_ = (uint32_t)h_ & ht1_mask;
                for (uint32_t probe_ = 0; probe_ <= ht1_mask; probe_++) {
                    const int2 e_ = __ldg(&ht1_entries[slot_]);
                    if (e_.y < 0) break;
                    if (e_.x == ((int32_t)0)) { hp1_gid = (int)e_.y; break; }
                    slot_ = (slot_ + 1) & ht1_mask;
                }
            }
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
            double j1_0 = 0;
            bool j1_0_null = true;
            // ---- Filter (CAST(p_retailprice#0 AS DOUBLE) > __scalar0#1) ----
            if (active) {
                c0 = in0_values[row];
                j1_0_null = !hp1_m || ht1_col0_validity[hp1_pos] == 0; if (!j1_0_null) { j1_0 = ht1_col0_values[hp1_pos]; }
                const double t_1 = decimal_to_f64((__int128)c0, ((__int128)((int64_t)100ll)), __longlong_as_double(0x4059000000000000ll));
                const bool t_2 = f64_lt(j1_0, t_1);
                active = (!j1_0_null & (t_2));
            }
            // ---- Project  ----
            if (active) {
            }
            // ---- GlobalAggregate -> #2 [count(*)] (block reduction, one atomic per block) ----
            if (active) {
                acc0_ += (true ? (int64_t)1 : ((int64_t)0));
            }
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
// ==================== module pipeline_3 ====================
// ======== Pipeline 3 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_3(
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
        // ---- Scan intermediate #2 ----
        int64_t c0 = 0; 
        // ---- Project count(*)#0 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        if (active) {
            c0 = pf0_cur_;
            p0_0 = c0; p0_0_null = false;
        }
        // ---- Materialize -> #3 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
