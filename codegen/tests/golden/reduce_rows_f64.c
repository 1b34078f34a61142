HS_KERNEL int32_t hs_reduce64(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  double *restrict b1 = (double *)bufs[1];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  for (int64_t i0 = begin; i0 < end; i0++) {
    double acc0[8];
    for (int l = 0; l < 8; l++) acc0[l] = ((double)0);
    int64_t ib = 0;
    for (; ib + 8 <= 64; ib += 8) {
      #pragma omp simd
      for (int64_t l = 0; l < 8; l++) {
        const int64_t i1 = ib + l;
        const double v0 = b0[i0 * 64 + i1];
        acc0[l] = (acc0[l] + v0);
      }
    }
    for (int64_t i1 = ib; i1 < 64; i1++) {
      const double v0 = b0[i0 * 64 + i1];
      acc0[0] = (acc0[0] + v0);
    }
    double fold0 = acc0[0];
    fold0 = (fold0 + acc0[1]);
    fold0 = (fold0 + acc0[2]);
    fold0 = (fold0 + acc0[3]);
    fold0 = (fold0 + acc0[4]);
    fold0 = (fold0 + acc0[5]);
    fold0 = (fold0 + acc0[6]);
    fold0 = (fold0 + acc0[7]);
    const double r0 = fold0;
    const double r1 = (r0 * s0);
    b1[i0] = (double)r1;
  }
  return 0;
}
