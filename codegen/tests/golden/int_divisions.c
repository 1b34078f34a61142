HS_KERNEL int32_t hs_div(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  int64_t *restrict b0 = (int64_t *)bufs[0];
  int64_t *restrict b1 = (int64_t *)bufs[1];
  int64_t *restrict b2 = (int64_t *)bufs[2];
  const int64_t s0 = (int64_t)*(const int64_t *)(scal + 0);
  const int64_t s1 = (int64_t)*(const int64_t *)(scal + 16);
  (void)scal; (void)meta; (void)part; (void)err;
  if (s0 > 0 && (s0 & (s0 - 1)) == 0 && s1 > 0 && (s1 & (s1 - 1)) == 0) {
    const int sh1 = __builtin_ctzll((uint64_t)s1);
    #pragma omp simd
    for (int64_t i0 = begin; i0 < end; i0++) {
      const int64_t r0 = ((int64_t)(b1[i0] & (s0 - 1)));
      b0[i0] = (int64_t)r0;
      const int64_t r1 = ((int64_t)(b1[i0] >> sh1));
      b2[i0] = (int64_t)r1;
    }
  }
  else if (HS_WIDE_FCVT && s0 > 0 && s0 < 2097152 && s1 > 0 && s1 < 2097152) {
    const double inv0 = (double)1 / (double)s0;
    const double inv1 = (double)1 / (double)s1;
    #pragma omp simd
    for (int64_t i0 = begin; i0 < end; i0++) {
      const int64_t r0 = hs_smod_int64(b1[i0], s0, inv0);
      b0[i0] = (int64_t)r0;
      const int64_t r1 = hs_sdiv_int64(b1[i0], s1, inv1);
      b2[i0] = (int64_t)r1;
    }
  }
  else {
    #pragma omp simd
    for (int64_t i0 = begin; i0 < end; i0++) {
      const int64_t r0 = hs_mod_int64(b1[i0], s0);
      b0[i0] = (int64_t)r0;
      const int64_t r1 = hs_floordiv_int64(b1[i0], s1);
      b2[i0] = (int64_t)r1;
    }
  }
  return 0;
}
