// tpch SF 0.01: SELECT count(DISTINCT l_suppkey), min(l_quantity * 2 - abs(l_tax)) FROM lineitem
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
// Init of #0: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_0_init(int* ht_slots, const uint32_t ht_mask, __int128* state0, const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
    for (uint64_t i = tid; i < max_groups; i += stride) state0[i] = I128_MAX;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    const int64_t* __restrict__ in2_values,
    __int128* __restrict__ state0,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* out_count,
    int64_t* __restrict__ out0_values,
    const uint16_t* __restrict__ rp0_slots,
    const int64_t* __restrict__ rp0_values,
    const int64_t lit0)
{
    // HashAggregate #0: per slot, the block's partial states and whether its rows touched it
    // (32-bit counts and 64-bit sums of 32-bit values hold while a block takes < 2^31 rows)
    if (n_rows / gridDim.x >= (1ull << 31)) { if (threadIdx.x == 0) raise_error(err, ERR_OVERFLOW); return; }
    __shared__ __int128 rs0_[864];
    for (int i = threadIdx.x; i < 864; i += blockDim.x) rs0_[i] = I128_MAX;
    __shared__ uint8_t rs_hit_[864];
    for (int i = threadIdx.x; i < 864; i += blockDim.x) rs_hit_[i] = 0;
    __syncthreads();
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in1_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    uint32_t iter_ = 0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        if ((iter_++ & 7u) == 0u && __any_sync(FULL_MASK, *(volatile int*)err != 0)) break;
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in1_values[row + stride_];
        // ---- Scan lineitem ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        int64_t c2 = 0; 
        // ---- HashAggregate -> #0 keys=[l_suppkey#0] states=[min(((l_quantity#1 * lit0) - CAST(abs(l_tax#2) AS DECIMAL(18,2))))] (shared memory: bank-replicated table of 100 values, 846 copies in 864 slots (15 KiB; rows carry their slot; writes: a copy per lane, merged into the global groups per block)) ----
        __int128 a0_ = 0;
        if (active) {
            c1 = pf0_cur_;
            c2 = in2_values[row];
            const __int128 t_1w = (__int128)((int64_t)c1) * (__int128)((int64_t)lit0);
            if (!(false) && (t_1w <= -1000000000000000000ll || t_1w >= 1000000000000000000ll)) raise_error(err, 34734850);
            const int64_t t_1 = (int64_t)t_1w;
            const int64_t t_2 = c2;
            const int64_t t_3 = ((int64_t)((int64_t)(t_2 < 0 ? -t_2 : t_2) * ((int64_t)1ll)));
            const __int128 t_4 = i128_sub(((__int128)t_1), ((__int128)t_3));
            a0_ = t_4;
            const uint32_t s_ = rp0_slots[row];
            rs_hit_[s_] = 1;
            atomic_min_i128(&rs0_[s_], (__int128)(a0_));
        }
    }
    // merge: each slot the block touched into its key's global group
    __syncthreads();
    for (int i = threadIdx.x; i < 864; i += blockDim.x) {
        const bool active = rs_hit_[i] != 0;
        const uint64_t row = n_rows - 1;
        int gid_ = -1;
        const int64_t k_ = rp0_values[i];
        if (active) {
            uint64_t h_ = 0x9e3779b97f4a7c15ull;
            h_ = hash_combine(h_, hash_u64((uint64_t)(int64_t)(k_)));
            uint32_t slot_ = (uint32_t)h_ & ht_mask;
            for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                int cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -1) {
                    cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                    if (cur_ == -1) {
                        const unsigned long long g_ = warp_aggregated_inc(out_count);
                        if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                        out0_values[g_] = k_;
                        __threadfence();
                        atomicExch(&ht_slots[slot_], (int)g_);
                        gid_ = (int)g_;
                        break;
                    }
                }
                while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                if (cur_ == -3) break;
                if ((k_ == ld_cg(&out0_values[cur_]))) { gid_ = cur_; break; }
                slot_ = (slot_ + 1) & ht_mask;
            }
            if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
        }
        if (gid_ >= 0) {
            if (!(rs0_[i] == I128_MAX)) atomic_min_i128(&state0[gid_], (__int128)rs0_[i]);
        }
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
// Init of #1: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_1_init(__int128* state2, const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i < max_groups; i += stride) state2[i] = I128_MAX;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const __int128* __restrict__ in1_values,
    int64_t* __restrict__ state0,
    int64_t* __restrict__ state1,
    __int128* __restrict__ state2)
{
    int64_t acc0_ = ((int64_t)0);
    int64_t acc1_ = ((int64_t)0);
    __int128 acc2_ = I128_MAX;
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
        // ---- Project __distinct#0, min(…)#1 ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        __int128 p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            p0_0 = c0; p0_0_null = false;
            p0_1 = c1; p0_1_null = false;
        }
        // ---- GlobalAggregate -> #1 [count(*), count(min(…)#1), min(min(…)#1)] (block reduction, one atomic per block) ----
        __int128 a1_ = 0;
        bool a1_null = true;
        __int128 a2_ = 0;
        bool a2_null = true;
        if (active) {
            a1_ = p0_1;
            a1_null = p0_1_null;
            a2_ = p0_1;
            a2_null = p0_1_null;
            acc0_ += (true ? (int64_t)1 : ((int64_t)0));
            acc1_ += ((true && !a1_null) ? (int64_t)1 : ((int64_t)0));
            { const __int128 x_ = ((true && !a2_null) ? (__int128)(__int128)(a2_) : I128_MAX); if (x_ < acc2_) acc2_ = x_; }
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
        __shared__ int64_t red_[8];
        int64_t v_ = warp_sum_i64(acc1_);
        if (lane_ == 0) red_[warp_] = v_;
        __syncthreads();
        if (warp_ == 0) {
            v_ = lane_ < 8 ? red_[lane_] : ((int64_t)0);
            v_ = warp_sum_i64(v_);
            if (lane_ == 0) atomic_add_i64(state1, v_);
        }
    }
     {
        __shared__ __int128 red_[8];
        __int128 v_ = warp_min_i128(acc2_);
        if (lane_ == 0) red_[warp_] = v_;
        __syncthreads();
        if (warp_ == 0) {
            v_ = lane_ < 8 ? red_[lane_] : I128_MAX;
            v_ = warp_min_i128(v_);
            if (lane_ == 0) atomic_min_i128(state2, v_);
        }
    }
}
// ==================== module pipeline_2 ====================
// ======== Pipeline 2 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_2(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    const __int128* __restrict__ in2_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int64_t* __restrict__ out0_values,
    __int128* __restrict__ out1_values,
    uint8_t* __restrict__ out1_validity,
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
        // ---- Scan intermediate #1 ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        __int128 c2 = 0; 
        // ---- Project count(*)#0, CASE WHEN (count(…)#1 = lit0) THEN NULL ELSE min(…)#2 END ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        __int128 p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            c2 = in2_values[row];
            p0_0 = c0; p0_0_null = false;
            __int128 c_1; bool cn_2;
            const bool t_3 = (c1 == lit0);
            if (!false && (t_3)) {
                c_1 = ((__int128)0); cn_2 = true;
            } else {
                c_1 = c2; cn_2 = false;
            }
            p0_1 = c_1; p0_1_null = cn_2;
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
            out1_values[pos_] = p0_1;
            out1_validity[pos_] = !p0_1_null;
        }
        __syncthreads();
    }
}
