__kernel void hs_sum(int64_t begin, int64_t end, __global double *restrict b0, __global double *restrict b1, __global const char *scal, __global const int64_t *meta, __global char *part, __global int64_t *err) {
  const double s0 = (double)*(__global const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  __local double lacc1[8];
   {
    const int64_t c0 = begin + (int64_t)get_group_id(0) * 8192;
    if (c0 >= end) return;
    const int64_t c1 = c0 + 8192 < end ? c0 + 8192 : end;
    const int lane = (int)get_local_id(0);
    double acc1[1];
    for (int l = 0; l < 1; l++) acc1[l] = ((double)0);
    int64_t ib = c0;
    #pragma unroll 1
    for (; ib + 8 <= c1; ib += 8) {
      const int64_t i0 = ib + lane;
      const double r0 = (b0[i0] * s0);
      const double v1 = r0;
      acc1[0] = (acc1[0] + v1);
    }
    if (lane == 0) {
      for (int64_t i0 = ib; i0 < c1; i0++) {
        const double r0 = (b0[i0] * s0);
        const double v1 = r0;
        acc1[0] = (acc1[0] + v1);
      }
    }
    lacc1[lane] = acc1[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
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
  double acc1 = ((double)0);
  for (int64_t c = begin; c < end; c++) acc1 = (acc1 + *(__global const double *)(part + (c * 1 + 0) * 16));
  const double r1 = acc1;
  b1[0] = (double)r1;
}
