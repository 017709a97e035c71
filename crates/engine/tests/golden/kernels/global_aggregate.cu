// tpch SF 0.01: SELECT sum(l_extendedprice * l_discount), count(*) FROM lineitem WHERE l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24
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
    const int64_t* __restrict__ in1_values,
    const int64_t* __restrict__ in2_values,
    int64_t* __restrict__ state0,
    __int128* __restrict__ state1,
    const int64_t lit0,
    const int64_t lit1,
    const int64_t lit2)
{
    int64_t acc0_ = ((int64_t)0);
    __int128 acc1_ = ((__int128)0);
    const uint32_t stride_ = (uint32_t)gridDim.x * blockDim.x;
    const uint32_t nr_ = (uint32_t)n_rows; // < 2^31 rows: 32-bit row indices
    // prefetch: the columns every row reads are loaded one iteration early
    int64_t pf0_next_ = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x < nr_ ? in2_values[(uint32_t)blockIdx.x * blockDim.x + threadIdx.x] : (int64_t)0;
    for (uint32_t base_ = (uint32_t)blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {
        const uint32_t row = base_ + threadIdx.x;
        bool active = row < nr_;
        const int64_t pf0_cur_ = pf0_next_;
        if (row + stride_ < nr_) pf0_next_ = in2_values[row + stride_];
        // ---- Scan lineitem ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        int64_t c2 = 0; 
        // ---- Filter (l_discount#2 >= lit0) && (l_discount#2 <= lit1) && (l_quantity#0 < lit2) ----
        if (active) {
            c2 = pf0_cur_;
            const bool t_1 = (c2 >= lit0);
            active = (t_1);
        }
        if (active) {
            const bool t_2 = (c2 <= lit1);
            active = (t_2);
        }
        if (active) {
            c0 = in0_values[row];
            const bool t_3 = (c0 < lit2);
            active = (t_3);
        }
        // ---- GlobalAggregate -> #0 [count(*), sum((l_extendedprice#1 * l_discount#2))] (block reduction, one atomic per block) ----
        int64_t a1_ = 0;
        if (active) {
            c1 = in1_values[row];
            const __int128 t_4w = (__int128)((int64_t)c1) * (__int128)((int64_t)c2);
            if (!(false) && (t_4w <= -1000000000000000000ll || t_4w >= 1000000000000000000ll)) raise_error(err, 68289282);
            const int64_t t_4 = (int64_t)t_4w;
            a1_ = t_4;
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
extern "C" __global__ void __launch_bounds__(256) pipeline_1(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const __int128* __restrict__ in1_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    __int128* __restrict__ out0_values,
    uint8_t* __restrict__ out0_validity,
    int64_t* __restrict__ out1_values,
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
        // ---- Project CASE WHEN (count(*)#0 = lit0) THEN NULL ELSE sum((l_extendedprice#1 * l_discount#2))#1 END, count(*)#0 ----
        __int128 p0_0 = 0; bool p0_0_null = true;
        int64_t p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = pf0_cur_;
            c1 = in1_values[row];
            __int128 c_1; bool cn_2;
            const bool t_3 = (c0 == lit0);
            if (!false && (t_3)) {
                c_1 = ((__int128)0); cn_2 = true;
            } else {
                c_1 = c1; cn_2 = false;
            }
            p0_0 = c_1; p0_0_null = cn_2;
            p0_1 = c0; p0_1_null = false;
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
            out0_validity[pos_] = !p0_0_null;
            out1_values[pos_] = p0_1;
        }
        __syncthreads();
    }
}
