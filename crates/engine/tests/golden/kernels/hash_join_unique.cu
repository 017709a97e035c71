// tpch SF 0.01: SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey WHERE c_acctbal > 0 GROUP BY n_name
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
    const int64_t* __restrict__ in1_offsets,
    const uint8_t* __restrict__ in1_bytes,
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
    Str* __restrict__ out1_values)
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
        // ---- Scan nation ----
        int64_t c0 = 0; 
        Str c1 = make_str("", 0); 
        // ---- HashBuild -> #0 keys=[n_nationkey#0] (global hash table, rows grouped by key) ----
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
            row_group[pos_] = (uint32_t)gid_;
        }
        __syncthreads();
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
// Init of #1: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_1_init(int* ht_slots, const uint32_t ht_mask, const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
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
    const uint32_t* __restrict__ ht0_offsets,
    const uint32_t* __restrict__ ht0_counts,
    const int64_t* __restrict__ ht0_col0_values,
    const Str* __restrict__ ht0_col1_values,
    int64_t* __restrict__ state0,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* out_count,
    Str* __restrict__ out0_values,
    const int64_t lit0)
{
    // HashProbe #0: shared memory: table of 25 values, one copy each, in 32 slots (1 KiB; rows carry their slot; reads: equal keys share a copy)
    // filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it
    __shared__ int rp0_sm[32];
    for (uint32_t s_ = threadIdx.x; s_ < 25u; s_ += blockDim.x) {
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
    for (uint32_t s_ = 25u + threadIdx.x; s_ < 32u; s_ += blockDim.x) rp0_sm[s_] = rp0_sm[rp0_codes[s_]];
    __syncthreads();
    // HashAggregate #1: a per-block cache of the groups its rows found, 512 slots of {group id, keys} (8704 bytes)
    __shared__ int gc_gid_[512];
    __shared__ unsigned long long gc_k0_0_[512];
    __shared__ uint32_t gc_k0_1_[512];
    __shared__ bool gc_k0_2_[512];
    for (int i = threadIdx.x; i < 512; i += blockDim.x) gc_gid_[i] = -1;
    // HashAggregate: groups < 512 accumulate per block in shared memory, flushed once per block
    __shared__ int64_t sh0_[512];
    for (int i = threadIdx.x; i < 512; i += blockDim.x) sh0_[i] = ((int64_t)0);
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
        // ---- Scan customer ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        // ---- Filter (c_acctbal#1 > lit0) ----
        if (active) {
            c1 = pf0_cur_;
            const bool t_1 = (c1 > lit0);
            active = (t_1);
        }
        // ---- HashProbe #0 keys=[c_nationkey#0] (multi-match: push-down parallelism; bank-replicated table in shared memory) ----
        int hp0_gid = -1;
        if (active) {
            hp0_gid = rp0_sm[rp0_slots[row]];
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
            const int64_t c1_b0 = bcast(c1, hp0_leader);
            const uint32_t row_b0_ = bcast(row, hp0_leader);
            const uint32_t row = row_b0_;
            int64_t j0_0 = 0;
            Str j0_1 = make_str("", 0);
            // ---- Project n_name#3 ----
            Str p0_0 = make_str("", 0); bool p0_0_null = true;
            if (active) {
                j0_1 = ht0_col1_values[hp0_pos];
                p0_0 = j0_1; p0_0_null = false;
            }
            // ---- HashAggregate -> #1 keys=[n_name#0] states=[count(*)] (global hash table, atomicCAS insert) ----
            int gid_ = -1;
            if (active) {
                if (active) {
                    // the block's group cache first; the global table where it misses
                    uint64_t h_ = 0x9e3779b97f4a7c15ull;
                    h_ = hash_combine(h_, p0_0_null ? 0x5bd1e995ull : hash_str(p0_0));
                    const uint32_t gch_ = (uint32_t)(h_ >> 32) & 511u;
                    int gcf_ = -1; // a free slot seen, for this row's group
                    for (uint32_t t_ = 0; t_ < 2u; t_++) {
                        const uint32_t gcs_ = (gch_ + t_) & 511u;
                        const int gcg_ = ld_acquire_cta(&gc_gid_[gcs_]);
                        if (gcg_ == -1) { gcf_ = (int)gcs_; break; }
                        if (gcg_ >= 0 && (gc_k0_2_[gcs_] == p0_0_null && (p0_0_null || (gc_k0_0_[gcs_] == (unsigned long long)p0_0.p && gc_k0_1_[gcs_] == p0_0.len)))) { gid_ = gcg_; break; }
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
                                    __threadfence();
                                    atomicExch(&ht_slots[slot_], (int)g_);
                                    gid_ = (int)g_;
                                    break;
                                }
                            }
                            while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                            if (cur_ == -3) break;
                            if (str_eq_cg(p0_0, ld_cg(&out0_values[cur_]))) { gid_ = cur_; break; }
                            slot_ = (slot_ + 1) & ht_mask;
                        }
                        if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
                        if (gid_ >= 0 && gcf_ >= 0 && atomicCAS(&gc_gid_[gcf_], -1, -2) == -1) {
                            gc_k0_0_[gcf_] = (unsigned long long)p0_0.p;
                            gc_k0_1_[gcf_] = p0_0.len;
                            gc_k0_2_[gcf_] = p0_0_null;
                            __threadfence_block();
                            atomicExch(&gc_gid_[gcf_], gid_);
                        }
                    }
                }
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
                { const int64_t v_ = warp_sum_i64((rest_ ? (int64_t)1 : ((int64_t)0))); if (lane_ == 0) atomic_add_i64(g0_ < 512 ? &sh0_[g0_] : &state0[g0_], v_); }
            } else if (rest_) {
                atomic_add_i64(gid_ < 512 ? &sh0_[gid_] : &state0[gid_], 1);
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 512 && i < (int)max_groups; i += blockDim.x) {
        if (!(sh0_[i] == ((int64_t)0))) atomic_add_i64(&state0[i], sh0_[i]);
    }
}
// ==================== module pipeline_2 ====================
// ======== Pipeline 2 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_2(
    const uint64_t n_rows,
    int* err,
    const Str* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    Str* __restrict__ out0_values,
    int64_t* __restrict__ out1_values)
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
        // ---- Scan intermediate #1 ----
        Str c0 = make_str("", 0); 
        int64_t c1 = 0; 
        // ---- Project n_name#0, count(*)#1 ----
        Str p0_0 = make_str("", 0); bool p0_0_null = true;
        int64_t p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = in0_values[row];
            c1 = pf0_cur_;
            p0_0 = c0; p0_0_null = false;
            p0_1 = c1; p0_1_null = false;
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
        }
        __syncthreads();
    }
}
