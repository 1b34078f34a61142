__kernel void hs_reduce(int64_t begin, int64_t end, __global float *restrict b0, __global float *restrict b1, __global const char *scal, __global const int64_t *meta, __global char *part, __global int64_t *err) {
  const float s0 = (float)*(__global const float *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  __local float lacc0[8];
   {
    const int64_t i0 = begin + (int64_t)get_group_id(0);
    if (i0 >= end) return;
    const int lane = (int)get_local_id(0);
    float acc0[1];
    for (int l = 0; l < 1; l++) acc0[l] = ((float)0);
    int64_t ib = 0;
    #pragma unroll 1
    for (; ib + 8 <= 64; ib += 8) {
      const int64_t i1 = ib + lane;
      const float v0 = b0[i0 * 64 + i1];
      acc0[0] = (acc0[0] + v0);
    }
    if (lane == 0) {
      for (int64_t i1 = ib; i1 < 64; i1++) {
        const float v0 = b0[i0 * 64 + i1];
        acc0[0] = (acc0[0] + v0);
      }
    }
    lacc0[lane] = acc0[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
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
