HS_KERNEL int32_t hs_short(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  double *restrict b1 = (double *)bufs[1];
  double *restrict b2 = (double *)bufs[2];
  (void)scal; (void)meta; (void)part; (void)err;
  #pragma omp simd
  for (int64_t i0 = begin; i0 < end; i0++) {
    double acc1 = ((double)0);
    #pragma GCC unroll 8
    for (int64_t i1 = 0; i1 < 3; i1++) {
      const double r0 = (b1[i0 * 3 + i1] * b1[i0 * 3 + i1]);
      b0[i0 * 3 + i1] = (double)r0;
      const double v1 = r0;
      acc1 = (acc1 + v1);
    }
    const double r1 = acc1;
    b2[i0] = (double)r1;
  }
  return 0;
}
