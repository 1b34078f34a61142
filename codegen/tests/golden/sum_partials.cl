__kernel void hs_sum(int64_t begin, int64_t end, __global double *restrict b0, __global double *restrict b1, __global const char *scal, __global const int64_t *meta, __global char *part, __global int64_t *err) {
  const double s0 = (double)*(__global const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  __local double t1[256];
  __local double lacc1[8];
   {
    const int64_t c0 = begin + (int64_t)get_group_id(0) * 8192;
    if (c0 >= end) return;
    const int64_t c1 = c0 + 8192 < end ? c0 + 8192 : end;
    const int lid = (int)get_local_id(0);
    const int64_t wide = (int64_t)get_local_size(0);
    double acc1[1];
    for (int l = 0; l < 1; l++) acc1[l] = ((double)0);
    #pragma unroll 1
    for (int64_t rb = c0; rb < c1; rb += wide) {
      const int64_t rn = c1 - rb < wide ? c1 - rb : wide;
      if (lid < rn) {
        const int64_t i0 = rb + lid;
        const double r0 = (b0[i0] * s0);
        const double v1 = r0;
        t1[lid] = v1;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < 8) {
        const int64_t full = rn - rn % 8;
        #pragma unroll 1
        for (int64_t k = lid; k < full; k += 8) {
          acc1[0] = (acc1[0] + t1[k]);
        }
        if (lid == 0) {
          for (int64_t k = full; k < rn; k++) {
            acc1[0] = (acc1[0] + t1[k]);
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 8) {
      lacc1[lid] = acc1[0];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      double fold1 = lacc1[0];
      fold1 = (fold1 + lacc1[1]);
      fold1 = (fold1 + lacc1[2]);
      fold1 = (fold1 + lacc1[3]);
      fold1 = (fold1 + lacc1[4]);
      fold1 = (fold1 + lacc1[5]);
      fold1 = (fold1 + lacc1[6]);
      fold1 = (fold1 + lacc1[7]);
      *(__global double *)(part + ((c0 / 8192) * 1 + 0) * 16) = fold1;
    }
  }
}
__kernel void hs_sum_fin(int64_t begin, int64_t end, __global double *restrict b0, __global double *restrict b1, __global const char *scal, __global const int64_t *meta, __global char *part, __global int64_t *err) {
  const double s0 = (double)*(__global const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  __local double t1[256];
  const int lid = (int)get_local_id(0);
  const int64_t wide = (int64_t)get_local_size(0);
  double acc1 = ((double)0);
  #pragma unroll 1
  for (int64_t cb = begin; cb < end; cb += wide) {
    const int64_t cn = end - cb < wide ? end - cb : wide;
    if (lid < cn) {
      t1[lid] = *(__global const double *)(part + ((cb + lid) * 1 + 0) * 16);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      for (int64_t k = 0; k < cn; k++) {
        acc1 = (acc1 + t1[k]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    const double r1 = acc1;
    b1[0] = (double)r1;
  }
}
