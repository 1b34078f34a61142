HS_KERNEL int32_t hs_stencil(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  double *restrict b1 = (double *)bufs[1];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  for (int64_t i0 = begin; i0 < end; i0++) {
    #pragma omp simd
    for (int64_t i1 = 0; i1 < 8; i1++) {
      const double r0 = (b0[11 + i0 * 10 + i1] + b0[1 + i0 * 10 + i1]);
      const double r1 = (r0 + b0[21 + i0 * 10 + i1]);
      const double r2 = (r1 + b0[10 + i0 * 10 + i1]);
      const double r3 = (r2 + b0[12 + i0 * 10 + i1]);
      const double r4 = (r3 * s0);
      b1[11 + i0 * 10 + i1] = (double)r4;
    }
  }
  return 0;
}
