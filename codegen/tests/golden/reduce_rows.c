HS_KERNEL int32_t hs_reduce(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  float *restrict b0 = (float *)bufs[0];
  float *restrict b1 = (float *)bufs[1];
  const float s0 = (float)*(const float *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  for (int64_t i0 = begin; i0 < end; i0++) {
    float acc0[8];
    for (int l = 0; l < 8; l++) acc0[l] = ((float)0);
    for (int64_t bb = 0; bb < 64; bb += 256) {
      const int64_t be = bb + 256 < 64 ? bb + 256 : 64;
      float t0[256];
      #pragma omp simd
      for (int64_t i1 = bb; i1 < be; i1++) {
        const float v0 = b0[i0 * 64 + i1];
        t0[i1 - bb] = v0;
      }
      int64_t k = 0;
      for (; k + 8 <= be - bb; k += 8) {
        for (int l = 0; l < 8; l++) {
          acc0[l] = (acc0[l] + t0[k + l]);
        }
      }
      for (; k < be - bb; k++) {
        acc0[0] = (acc0[0] + t0[k]);
      }
    }
    float fold0 = acc0[0];
    fold0 = (fold0 + acc0[1]);
    fold0 = (fold0 + acc0[2]);
    fold0 = (fold0 + acc0[3]);
    fold0 = (fold0 + acc0[4]);
    fold0 = (fold0 + acc0[5]);
    fold0 = (fold0 + acc0[6]);
    fold0 = (fold0 + acc0[7]);
    const float r0 = fold0;
    const float r1 = (r0 * s0);
    b1[i0] = (float)r1;
  }
  return 0;
}
