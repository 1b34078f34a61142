HS_KERNEL int32_t hs_chain(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  double *restrict b1 = (double *)bufs[1];
  double *restrict b2 = (double *)bufs[2];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  #pragma omp simd
  for (int64_t i0 = begin; i0 < end; i0++) {
    const double r0 = (b0[i0] + b1[i0]);
    const double r1 = (r0 * s0);
    const double r2 = exp(r1);
    b2[i0] = (double)r2;
  }
  return 0;
}
