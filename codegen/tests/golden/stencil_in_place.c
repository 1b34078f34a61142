HS_KERNEL int32_t hs_stencil(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  const int64_t hs_row = 8;
  double *const lr0 = (double *)(part + 0 * 3 * hs_row * 8);
  double *const lh0 = lr0 + 2 * hs_row;
  for (int64_t i0 = begin; i0 < end; i0++) {
    double *const lv0 = lr0 + ((i0 - begin) % 2) * hs_row;
    #pragma omp simd
    for (int64_t i1 = 0; i1 < 8; i1++) {
      const double r0 = (b0[11 + i0 * 10 + i1] + b0[1 + i0 * 10 + i1]);
      const double r1 = (r0 + b0[21 + i0 * 10 + i1]);
      const double r2 = (r1 + b0[10 + i0 * 10 + i1]);
      const double r3 = (r2 + b0[12 + i0 * 10 + i1]);
      const double r4 = (r3 * s0);
      lv0[i1] = (double)r4;
    }
    const int64_t hs_w = i0 - 1;
    if (hs_w >= begin) {
      const double *const src0 = lr0 + ((hs_w - begin) % 2) * hs_row;
      if (hs_w < begin + 1) {
        for (int64_t k = 0; k < hs_row; k++) lh0[(hs_w - begin) * hs_row + k] = src0[k];
      }
      else {
         {
          const int64_t i0 = hs_w;
          #pragma omp simd
          for (int64_t i1 = 0; i1 < 8; i1++) {
            b0[11 + i0 * 10 + i1] = src0[i1];
          }
        }
      }
    }
  }
  return 0;
}
HS_KERNEL int32_t hs_stencil_fin(int64_t begin, int64_t end, char *const *bufs, const char *scal, const int64_t *meta, char *part, int64_t *err) {
  double *restrict b0 = (double *)bufs[0];
  const double s0 = (double)*(const double *)(scal + 0);
  (void)scal; (void)meta; (void)part; (void)err;
  const int64_t hs_row = 8;
  double *const lr0 = (double *)(part + 0 * 3 * hs_row * 8);
  double *const lh0 = lr0 + 2 * hs_row;
  for (int64_t hs_w = begin; hs_w < end; hs_w++) {
    const double *const src0 = hs_w >= end - 1 ? lr0 + ((hs_w - begin) % 2) * hs_row : lh0 + (hs_w - begin) * hs_row;
    if (hs_w >= begin + 1 && hs_w < end - 1) continue;
     {
      const int64_t i0 = hs_w;
      #pragma omp simd
      for (int64_t i1 = 0; i1 < 8; i1++) {
        b0[11 + i0 * 10 + i1] = src0[i1];
      }
    }
  }
  return 0;
}
