HS_KERNEL int32_t hs_reduce(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  float *restrict b0 = (float *)bufs[0];
  float *restrict b1 = (float *)bufs[1];
  const float s0 = (float)*(const float *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  for (int64_t i0 = begin; i0 < end; i0++) {
    float acc0[8];
    for (int l = 0; l < 8; l++) acc0[l] = ((float)0);
    int64_t ib = 0;
    for (; ib + 8 <= 64; ib += 8) {
      for (int l = 0; l < 8; l++) {
        const int64_t i1 = ib + l;
        const float v0 = b0[i0 * 64 + i1];
        acc0[l] = (acc0[l] + v0);
      }
    }
    for (int64_t i1 = ib; i1 < 64; i1++) {
      const float v0 = b0[i0 * 64 + i1];
      acc0[0] = (acc0[0] + v0);
    }
    const float r0 = (((((((acc0[0] + acc0[1]) + acc0[2]) + acc0[3]) + acc0[4]) + acc0[5]) + acc0[6]) + acc0[7]);
    const float r1 = (r0 * s0);
    b1[i0] = (float)r1;
  }
  return 0;
}
