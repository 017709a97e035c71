// tpch SF 0.01: SELECT l_orderkey, l_extendedprice * (1 - l_discount) FROM lineitem WHERE l_shipdate >= DATE '1995-01-01' AND l_quantity < 10
// ==================== module pipeline_0 ====================
// ======== Pipeline 0 ========
extern "C" __global__ void __launch_bounds__(256) pipeline_0(
    const uint64_t n_rows,
    int* err,
    const int64_t* __restrict__ in0_values,
    const int64_t* __restrict__ in1_values,
    const int64_t* __restrict__ in2_values,
    const int64_t* __restrict__ in3_values,
    const int32_t* __restrict__ in4_values,
    unsigned long long* out_count,
    const uint64_t out_capacity,
    int64_t* __restrict__ out0_values,
    int64_t* __restrict__ out1_values,
    const int64_t lit0,
    const int32_t lit1,
    const int64_t lit2)
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
        // ---- Scan lineitem ----
        int64_t c0 = 0; 
        int64_t c1 = 0; 
        int64_t c2 = 0; 
        int64_t c3 = 0; 
        int32_t c4 = 0; 
        // ---- Filter (l_quantity#1 < lit0) && (l_shipdate#4 >= lit1) ----
        if (active) {
            c1 = pf0_cur_;
            const bool t_1 = (c1 < lit0);
            active = (t_1);
        }
        if (active) {
            c4 = in4_values[row];
            const bool t_2 = (c4 >= lit1);
            active = (t_2);
        }
        // ---- Project l_orderkey#0, (l_extendedprice#2 * (lit2 - l_discount#3)) ----
        int64_t p0_0 = 0; bool p0_0_null = true;
        int64_t p0_1 = 0; bool p0_1_null = true;
        if (active) {
            c0 = in0_values[row];
            c2 = in2_values[row];
            c3 = in3_values[row];
            p0_0 = c0; p0_0_null = false;
            const int64_t t_3 = ((int64_t)lit2) - ((int64_t)c3);
            const __int128 t_4w = (__int128)((int64_t)c2) * (__int128)((int64_t)t_3);
            if (!(false) && (t_4w <= -1000000000000000000ll || t_4w >= 1000000000000000000ll)) raise_error(err, 68289282);
            const int64_t t_4 = (int64_t)t_4w;
            p0_1 = t_4; p0_1_null = false;
        }
        // ---- Materialize -> #0 (prefix-sum write: ballot/popc per warp, block scan, one atomicAdd per block) ----
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
