// Kernels that stand in for costlier nodes in a captured CUDA graph (`graph.rs`). In a
// chain of kernels a kernel node costs a launch ~0.8 us of GPU time and nothing on the
// host; a memset node ~1.8 us and ~1.6 us of host time, an event record node ~2.4 us and
// ~3 us (examples/graph_node_costs.rs, on an H100).

// Writes the GPU's nanosecond clock (%globaltimer, 32 ns steps on an H100) into `at`, in
// mapped host memory: a timing mark (`timer.rs`).
extern "C" __global__ void gpusql_stamp(unsigned long long* at) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *at = t;
}

// Zeroes the n bytes at p, a buffer allocated zeroed (`GpuDevice::alloc_zeros`). p is
// 16-byte aligned (checked by the caller): whole 16-byte words, then the tail's bytes.
extern "C" __global__ void gpusql_zero_bytes(unsigned char* p, unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long words = n / 16;
    uint4* w = (uint4*)p;
    for (unsigned long long i = first; i < words; i += stride) w[i] = make_uint4(0u, 0u, 0u, 0u);
    for (unsigned long long i = words * 16 + first; i < n; i += stride) p[i] = 0;
}
