HS_KERNEL int32_t hs_arange_sin(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  int64_t *restrict b0 = (int64_t *)bufs[0];
  double *restrict b1 = (double *)bufs[1];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  #pragma omp simd
  for (int64_t i0 = begin; i0 < end; i0++) {
    const double r0 = hs_i64_f64((i0));
    const double r1 = (r0 * s0);
    const double r2 = sin(r1);
    const double r3 = hs_i64_f64(b0[i0]);
    const double r4 = (r2 + r3);
    b1[i0] = (double)r4;
  }
  return 0;
}
