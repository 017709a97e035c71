// tpch SF 0.01: SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*) FROM lineitem GROUP BY l_returnflag, l_linestatus
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
// Init of #0: empty hash slots, MIN/MAX identities
extern "C" __global__ void pipeline_0_init(int* ht_slots, const uint32_t ht_mask, const uint32_t max_groups) {
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;
}

extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    const uint16_t* __restrict__ in2_dictcodes,
    const Str* __restrict__ in2_dictvalues,
    const uint16_t* __restrict__ in3_dictcodes,
    const Str* __restrict__ in3_dictvalues,
    __int128* __restrict__ state0,
    int64_t* __restrict__ state1,
    __int128* __restrict__ state2,
    int* __restrict__ ht_slots,
    const uint32_t ht_mask,
    const uint32_t max_groups,
    unsigned long long* out_count,
    Str* __restrict__ out0_values,
    Str* __restrict__ out1_values)
{
    // HashAggregate #0: the group of each combination of the keys' dictionary codes this block saw (6 entries)
    __shared__ int ci_gid_[6];
    for (int i = threadIdx.x; i < 6; i += blockDim.x) ci_gid_[i] = -1;
    // HashAggregate: groups < 256 accumulate per block in shared memory, flushed once per block
    __shared__ __int128 sh0_[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) sh0_[i] = ((__int128)0);
    __shared__ int64_t sh1_[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) sh1_[i] = ((int64_t)0);
    __shared__ __int128 sh2_[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) sh2_[i] = ((__int128)0);
    // HashAggregate: the partials of this lane's own group (the first it meets) in its registers
    int lg_ = -1;
    int64_t lp0_ = 0;
    int64_t lp1_ = ((int64_t)0);
    int64_t lp2_ = 0;
    __syncthreads();
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in0_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    uint32_t iter_ = 0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        if ((iter_++ & 7u) == 0u && __any_sync(FULL_MASK, *(volatile int*)err != 0)) break;
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in0_values[row + stride_];
        // ---- Scan lineitem ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        Str c2 = make_str("", 0); 
        Str c3 = make_str("", 0); 
        // ---- HashAggregate -> #0 keys=[l_returnflag#2, l_linestatus#3] states=[sum(l_quantity#0), count(*), sum(l_discount#1)] (global hash table, atomicCAS insert) ----
        int gid_ = -1;
        int64_t a0_ = 0;
        int64_t a2_ = 0;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            const uint32_t ck0_ = (uint32_t)in2_dictcodes[row];
            const uint32_t ck1_ = (uint32_t)in3_dictcodes[row];
            // the block's entry for the row's codes first; the global table where it has none
            // (a code outside its dictionary would take none: the global table decides)
            const uint32_t cs_ = ck0_ < 3u && ck1_ < 2u ? (ck0_) * 2u + ck1_ : 6u;
            if (cs_ < 6u) gid_ = ci_gid_[cs_];
            if (gid_ < 0) {
                c2 = in2_dictvalues[in2_dictcodes[row]];  /* dictionary-encoded */
                c3 = in3_dictvalues[in3_dictcodes[row]];  /* dictionary-encoded */
                uint64_t h_ = 0x9e3779b97f4a7c15ull;
                h_ = hash_combine(h_, hash_str(c2));
                h_ = hash_combine(h_, hash_str(c3));
                uint32_t slot_ = (uint32_t)h_ & ht_mask;
                for (uint32_t probe_ = 0; probe_ <= ht_mask; probe_++) {
                    int cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -1) {
                        cur_ = atomicCAS(&ht_slots[slot_], -1, -2);
                        if (cur_ == -1) {
                            const unsigned long long g_ = warp_aggregated_inc(out_count);
                            if (g_ >= max_groups) { raise_error(err, ERR_GROUPS_FULL); atomicMax((unsigned*)&err[1], (unsigned)min(n_rows - row, (uint64_t)0xffffffffull)); atomicExch(&ht_slots[slot_], -3); break; }
                            out0_values[g_] = c2;
                            out1_values[g_] = c3;
                            __threadfence();
                            atomicExch(&ht_slots[slot_], (int)g_);
                            gid_ = (int)g_;
                            break;
                        }
                    }
                    while (cur_ == -2) cur_ = *(volatile int*)&ht_slots[slot_];
                    if (cur_ == -3) break;
                    if (str_eq_cg(c2, ld_cg(&out0_values[cur_])) && str_eq_cg(c3, ld_cg(&out1_values[cur_]))) { gid_ = cur_; break; }
                    slot_ = (slot_ + 1) & ht_mask;
                }
                if (gid_ < 0) raise_error(err, ERR_GROUPS_FULL);
                if (gid_ >= 0 && cs_ < 6u) ci_gid_[cs_] = gid_;
            }
            a0_ = c0;
            a2_ = c1;
        }
        const bool has_ = active && gid_ >= 0;
        // the lane's own group (the first it met): into its registers
        if (has_ && lg_ < 0) lg_ = gid_;
        const bool mine_ = has_ && gid_ == lg_;
        if (mine_) {
            { const int64_t v_ = (int64_t)((__int128)(a0_)); const int64_t s_ = (int64_t)((uint64_t)lp0_ + (uint64_t)v_); if (((lp0_ ^ s_) & (v_ ^ s_)) < 0) { atomic_add_i128(lg_ < 256 ? &sh0_[lg_] : &state0[lg_], (__int128)lp0_); lp0_ = v_; } else lp0_ = s_; }
            lp1_ += 1;
            { const int64_t v_ = (int64_t)((__int128)(a2_)); const int64_t s_ = (int64_t)((uint64_t)lp2_ + (uint64_t)v_); if (((lp2_ ^ s_) & (v_ ^ s_)) < 0) { atomic_add_i128(lg_ < 256 ? &sh2_[lg_] : &state2[lg_], (__int128)lp2_); lp2_ = v_; } else lp2_ = s_; }
        }
        const bool rest_ = has_ && !mine_;
        if (__any_sync(FULL_MASK, rest_)) {
            // local resolution: where the warp holds one group, a warp reduction and one update; otherwise
            // each lane updates its own group (shared-memory atomics for the first groups)
            const uint32_t lane_ = threadIdx.x & 31;
            const uint32_t peers_ = __match_any_sync(FULL_MASK, rest_ ? gid_ : -1);
            const int groups_ = __popc(__ballot_sync(FULL_MASK, rest_ && (__ffs(peers_) - 1) == (int)lane_));
            const int g0_ = __shfl_sync(FULL_MASK, gid_, __ffs(__ballot_sync(FULL_MASK, rest_)) - 1);
            if (groups_ == 1) {
                { const __int128 v_ = warp_sum_i128((rest_ ? (__int128)(__int128)(a0_) : ((__int128)0))); if (lane_ == 0) atomic_add_i128(g0_ < 256 ? &sh0_[g0_] : &state0[g0_], v_); }
                { const int64_t v_ = warp_sum_i64((rest_ ? (int64_t)1 : ((int64_t)0))); if (lane_ == 0) atomic_add_i64(g0_ < 256 ? &sh1_[g0_] : &state1[g0_], v_); }
                { const __int128 v_ = warp_sum_i128((rest_ ? (__int128)(__int128)(a2_) : ((__int128)0))); if (lane_ == 0) atomic_add_i128(g0_ < 256 ? &sh2_[g0_] : &state2[g0_], v_); }
            } else if (rest_) {
                atomic_add_i128(gid_ < 256 ? &sh0_[gid_] : &state0[gid_], (__int128)(a0_));
                atomic_add_i64(gid_ < 256 ? &sh1_[gid_] : &state1[gid_], 1);
                atomic_add_i128(gid_ < 256 ? &sh2_[gid_] : &state2[gid_], (__int128)(a2_));
            }
        }
    }
    // the lanes' own groups: resolved in the warp as the rows were
     {
        const bool lf_ = lg_ >= 0;
        // local resolution: where the warp holds one group, a warp reduction and one update; otherwise
        // each lane updates its own group (shared-memory atomics for the first groups)
        const uint32_t lane_ = threadIdx.x & 31;
        const uint32_t peers_ = __match_any_sync(FULL_MASK, lf_ ? lg_ : -1);
        const int groups_ = __popc(__ballot_sync(FULL_MASK, lf_ && (__ffs(peers_) - 1) == (int)lane_));
        const int g0_ = __shfl_sync(FULL_MASK, lg_, __ffs(__ballot_sync(FULL_MASK, lf_)) - 1);
        if (groups_ == 1) {
            { const __int128 v_ = warp_sum_i128((lf_ ? (__int128)lp0_ : ((__int128)0))); if (lane_ == 0) atomic_add_i128(g0_ < 256 ? &sh0_[g0_] : &state0[g0_], v_); }
            { const int64_t v_ = warp_sum_i64((lf_ ? (int64_t)lp1_ : ((int64_t)0))); if (lane_ == 0) atomic_add_i64(g0_ < 256 ? &sh1_[g0_] : &state1[g0_], v_); }
            { const __int128 v_ = warp_sum_i128((lf_ ? (__int128)lp2_ : ((__int128)0))); if (lane_ == 0) atomic_add_i128(g0_ < 256 ? &sh2_[g0_] : &state2[g0_], v_); }
        } else if (lf_) {
            atomic_add_i128(lg_ < 256 ? &sh0_[lg_] : &state0[lg_], (__int128)lp0_);
            atomic_add_i64(lg_ < 256 ? &sh1_[lg_] : &state1[lg_], (int64_t)lp1_);
            atomic_add_i128(lg_ < 256 ? &sh2_[lg_] : &state2[lg_], (__int128)lp2_);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256 && i < (int)max_groups; i += blockDim.x) {
        if (!(sh0_[i] == ((__int128)0))) atomic_add_i128(&state0[i], sh0_[i]);
        if (!(sh1_[i] == ((int64_t)0))) atomic_add_i64(&state1[i], sh1_[i]);
        if (!(sh2_[i] == ((__int128)0))) atomic_add_i128(&state2[i], sh2_[i]);
    }
}
// ==================== module pipeline_1 ====================
// ======== Pipeline 1 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const Str* __restrict__ in0_values,
    const Str* __restrict__ in1_values,
    const __int128* __restrict__ in2_values,
    const int64_t* __restrict__ in3_values,
    const __int128* __restrict__ in4_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    Str* __restrict__ out0_values,
    Str* __restrict__ out1_values,
    __int128* __restrict__ out2_values,
    uint8_t* __restrict__ out2_validity,
    double* __restrict__ out3_values,
    uint8_t* __restrict__ out3_validity,
    int64_t* __restrict__ out4_values,
    const int64_t lit0)
{
    __shared__ uint32_t warp_base_[8];
    __shared__ unsigned long long block_base_;
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    __int128 pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in2_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (__int128)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const __int128 pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in2_values[row + stride_];
        // ---- Scan intermediate #0 ----
        Str c0 = make_str("", 0); 
        Str c1 = make_str("", 0); 
        __int128 c2 = 0; 
        int64_t c3 = 0; 
        __int128 c4 = 0; 
        // ---- Project l_returnflag#0, l_linestatus#1, sum(l_quantity#0)#2, CASE WHEN (count(*)#3 = lit0) THEN NULL ELSE (CAST(sum(l_discount#1)#4 AS DOUBLE) / CAST(count(*)#3 AS DOUBLE)) END, count(*)#3 ----
        Str p0_0 = make_str("", 0); bool p0_0_null = true;
        Str p0_1 = make_str("", 0); bool p0_1_null = true;
        __int128 p0_2 = 0; bool p0_2_null = true;
        double p0_3 = 0; bool p0_3_null = true;
        int64_t p0_4 = 0; bool p0_4_null = true;
        if (active) {
            c0 = in0_values[row];
            c1 = in1_values[row];
            c2 = pf0_cur_;
            c3 = in3_values[row];
            c4 = in4_values[row];
            p0_0 = c0; p0_0_null = false;
            p0_1 = c1; p0_1_null = false;
            p0_2 = c2; p0_2_null = false;
            double c_1; bool cn_2;
            const bool t_3 = (c3 == lit0);
            if (!false && (t_3)) {
                c_1 = ((double)0); cn_2 = true;
            } else {
                const double t_4 = decimal_to_f64((__int128)c4, ((__int128)((int64_t)100ll)), __longlong_as_double(0x4059000000000000ll));
                const double t_5 = ((double)c3);
                const double t_6 = ((double)t_4) / ((double)t_5);
                c_1 = t_6; cn_2 = false;
            }
            p0_3 = c_1; p0_3_null = cn_2;
            p0_4 = c3; p0_4_null = false;
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
            out1_values[pos_] = p0_1;
            out2_values[pos_] = p0_2;
            out2_validity[pos_] = !p0_2_null;
            out3_values[pos_] = p0_3;
            out3_validity[pos_] = !p0_3_null;
            out4_values[pos_] = p0_4;
        }
        __syncthreads();
    }
}
