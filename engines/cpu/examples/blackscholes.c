/* Black-Scholes call prices, 1M options x 10 steps, as a plain C loop: the yardstick for
 * scalar libm vs glibc's vector math (libmvec). Compiled by examples/measure.rs twice:
 * once as is, once with the engine's libmvec declarations prepended. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void price(int64_t n, const double *restrict s, const double *restrict x, const double *restrict t,
                  double r, double v, double *restrict out) {
  for (int64_t i = 0; i < n; i++) {
    double sq = sqrt(t[i]);
    double d1 = (log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sq);
    double d2 = d1 - v * sq;
    /* cumulative normal via erfc-free polynomial (Abramowitz-Stegun 26.2.17) */
    double k1 = 1.0 / (1.0 + 0.2316419 * fabs(d1));
    double k2 = 1.0 / (1.0 + 0.2316419 * fabs(d2));
    double p1 = k1 * (0.319381530 + k1 * (-0.356563782 + k1 * (1.781477937 + k1 * (-1.821255978 + k1 * 1.330274429))));
    double p2 = k2 * (0.319381530 + k2 * (-0.356563782 + k2 * (1.781477937 + k2 * (-1.821255978 + k2 * 1.330274429))));
    double c1 = 1.0 - 0.3989422804014327 * exp(-0.5 * d1 * d1) * p1;
    double c2 = 1.0 - 0.3989422804014327 * exp(-0.5 * d2 * d2) * p2;
    c1 = d1 < 0 ? 1.0 - c1 : c1;
    c2 = d2 < 0 ? 1.0 - c2 : c2;
    out[i] = s[i] * c1 - x[i] * exp(-r * t[i]) * c2;
  }
}

int main(void) {
  const int64_t n = 1000000;
  double *s = malloc(n * sizeof *s), *x = malloc(n * sizeof *x), *t = malloc(n * sizeof *t), *o = malloc(n * sizeof *o);
  for (int64_t i = 0; i < n; i++) {
    s[i] = 10.0 + (double)(i % 1000) / 10.0;
    x[i] = 20.0 + (double)(i % 777) / 10.0;
    t[i] = 0.5 + (double)(i % 333) / 100.0;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  double acc = 0;
  for (int step = 0; step < 10; step++) {
    price(n, s, x, t, 0.02 + step * 0.001, 0.3, o);
    acc += o[step * 1000];
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.4f %g\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9, acc);
  return 0;
}
