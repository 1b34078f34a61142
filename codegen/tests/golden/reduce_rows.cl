__kernel void hs_reduce(int64_t begin, int64_t end, __global float *restrict b0, __global float *restrict b1, __global const char *scal, __global const int64_t *meta, __global char *part, __global int64_t *err) {
  const float s0 = (float)*(__global const float *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  __local float t0[256];
  __local float lacc0[8];
   {
    const int64_t i0 = begin + (int64_t)get_group_id(0);
    if (i0 >= end) return;
    const int lid = (int)get_local_id(0);
    const int64_t wide = (int64_t)get_local_size(0);
    float acc0[1];
    for (int l = 0; l < 1; l++) acc0[l] = ((float)0);
    #pragma unroll 1
    for (int64_t rb = 0; rb < 64; rb += wide) {
      const int64_t rn = 64 - rb < wide ? 64 - rb : wide;
      if (lid < rn) {
        const int64_t i1 = rb + lid;
        const float v0 = b0[i0 * 64 + i1];
        t0[lid] = v0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < 8) {
        const int64_t full = rn - rn % 8;
        #pragma unroll 1
        for (int64_t k = lid; k < full; k += 8) {
          acc0[0] = (acc0[0] + t0[k]);
        }
        if (lid == 0) {
          for (int64_t k = full; k < rn; k++) {
            acc0[0] = (acc0[0] + t0[k]);
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 8) {
      lacc0[lid] = acc0[0];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      float fold0 = lacc0[0];
      fold0 = (fold0 + lacc0[1]);
      fold0 = (fold0 + lacc0[2]);
      fold0 = (fold0 + lacc0[3]);
      fold0 = (fold0 + lacc0[4]);
      fold0 = (fold0 + lacc0[5]);
      fold0 = (fold0 + lacc0[6]);
      fold0 = (fold0 + lacc0[7]);
      const float r0 = fold0;
      const float r1 = (r0 * s0);
      b1[i0] = (float)r1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
