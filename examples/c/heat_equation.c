/*
 * heat_equation.c: heat diffusion on a 2-D plate by Jacobi iteration, with Hassium.
 *
 * The plate is an (n+2) x (n+2) grid whose top edge is held at 100 degrees and whose
 * other edges are held at 0. Each step replaces every interior point by the average of
 * itself and its four neighbours, until the total change of a step falls below epsilon.
 *
 * The Hassium version is written with whole-array operations on views of the grid; the
 * runtime records them and runs each step as fused, compiled loops when the convergence
 * test reads the change back (hs_item). The same computation as plain C loops follows,
 * and the program checks that both agree.
 *
 * Build and run:
 *     cc -O2 heat_equation.c $(pkg-config --cflags --libs hassium) -lm -o heat_equation
 *     ./heat_equation [n] [max_iterations]
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <hassium.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const double EPSILON = 1e-3;

/* Every Hassium call reports failure by a status or a NULL handle; hs_last_error() says
 * which function failed and why. This example stops at the first error. */
static void fail(const char *what) {
    fprintf(stderr, "heat_equation: %s failed: %s\n", what, hs_last_error());
    exit(2);
}
#define CHECK(call) do { if ((call) != HS_OK) fail(#call); } while (0)

static hs_array *must(hs_array *a, const char *what) {
    if (a == NULL) fail(what);
    return a;
}
#define H(call) must((call), #call)

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The Hassium version: returns the grid (the caller frees it) and the iteration count. */
static hs_array *solve_hassium(size_t n, int max_iterations, int *iterations) {
    size_t shape[2] = {n + 2, n + 2};
    hs_array *grid = H(hs_zeros(HS_FLOAT64, 2, shape));

    /* Hold the top edge at 100 degrees: assign into a view of row 0. */
    hs_array *top = H(hs_index(grid, 0, 0));
    CHECK(hs_assign(top, hs_float(100.0)));
    hs_free(top);

    /* Views of the interior and of its four neighbours. They share the grid's memory, so
     * they see every update; slices take Python's start/stop/step, negatives included. */
    hs_array *rows = H(hs_slice(grid, 0, 1, -1, 1));  /* grid[1:-1, :]   */
    hs_array *above = H(hs_slice(grid, 0, 0, -2, 1)); /* grid[0:-2, :]   */
    hs_array *below = H(hs_slice(grid, 0, 2, HS_NONE, 1)); /* grid[2:, :] */
    hs_array *center = H(hs_slice(rows, 1, 1, -1, 1));     /* grid[1:-1, 1:-1] */
    hs_array *north = H(hs_slice(above, 1, 1, -1, 1));     /* grid[0:-2, 1:-1] */
    hs_array *south = H(hs_slice(below, 1, 1, -1, 1));     /* grid[2:, 1:-1]   */
    hs_array *west = H(hs_slice(rows, 1, 0, -2, 1));       /* grid[1:-1, 0:-2] */
    hs_array *east = H(hs_slice(rows, 1, 2, HS_NONE, 1));  /* grid[1:-1, 2:]   */

    int it = 0;
    double delta = INFINITY;
    while (it < max_iterations && delta >= EPSILON) {
        /* next = 0.2 * (north + south + west + east + center) */
        hs_array *s1 = H(hs_add(hs_arr(north), hs_arr(south)));
        hs_array *s2 = H(hs_add(hs_arr(s1), hs_arr(west)));
        hs_array *s3 = H(hs_add(hs_arr(s2), hs_arr(east)));
        hs_array *s4 = H(hs_add(hs_arr(s3), hs_arr(center)));
        hs_array *next = H(hs_multiply(hs_arr(s4), hs_float(0.2)));

        /* The convergence test: delta = sum(|next - center|), a reduction to 0-d. */
        hs_array *diff = H(hs_subtract(hs_arr(next), hs_arr(center)));
        hs_array *change = H(hs_abs(diff));
        hs_array *total = H(hs_sum(change, HS_AXIS_ALL));

        /* grid[1:-1, 1:-1] = next */
        CHECK(hs_assign(center, hs_arr(next)));

        /* Free temporaries before reading a result: the runtime then sees them die inside
         * this step and can keep them in registers instead of memory. */
        hs_free(s1);
        hs_free(s2);
        hs_free(s3);
        hs_free(s4);
        hs_free(next);
        hs_free(diff);
        hs_free(change);

        /* Reading delta runs everything recorded so far, as fused, compiled loops. */
        CHECK(hs_item(total, &delta));
        hs_free(total);
        it++;
    }
    hs_free(rows);
    hs_free(above);
    hs_free(below);
    hs_free(center);
    hs_free(north);
    hs_free(south);
    hs_free(west);
    hs_free(east);
    *iterations = it;
    return grid;
}

/* The same computation as plain C loops, summing in the same order. */
static double *solve_plain(size_t n, int max_iterations, int *iterations) {
    size_t w = n + 2;
    double *grid = calloc(w * w, sizeof(double));
    double *next = calloc(n * n, sizeof(double));
    if (grid == NULL || next == NULL) {
        fprintf(stderr, "heat_equation: out of memory\n");
        exit(2);
    }
    for (size_t j = 0; j < w; j++) grid[j] = 100.0;

    int it = 0;
    double delta = INFINITY;
    while (it < max_iterations && delta >= EPSILON) {
        delta = 0.0;
        for (size_t i = 1; i <= n; i++) {
            for (size_t j = 1; j <= n; j++) {
                double sum = grid[(i - 1) * w + j] + grid[(i + 1) * w + j];
                sum = sum + grid[i * w + j - 1];
                sum = sum + grid[i * w + j + 1];
                sum = sum + grid[i * w + j];
                double v = sum * 0.2;
                next[(i - 1) * n + (j - 1)] = v;
                delta += fabs(v - grid[i * w + j]);
            }
        }
        for (size_t i = 1; i <= n; i++)
            for (size_t j = 1; j <= n; j++) grid[i * w + j] = next[(i - 1) * n + (j - 1)];
        it++;
    }
    free(next);
    *iterations = it;
    return grid;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200;
    int max_iterations = argc > 2 ? atoi(argv[2]) : 1000;

    double t0 = seconds();
    int hs_iterations = 0;
    hs_array *grid = solve_hassium(n, max_iterations, &hs_iterations);
    /* Copy the result out in C order (hs_data would give a pointer instead). */
    double *result = malloc((n + 2) * (n + 2) * sizeof(double));
    if (result == NULL) return 2;
    CHECK(hs_copy_to(grid, result, (n + 2) * (n + 2) * sizeof(double)));
    double t_hassium = seconds() - t0;
    hs_free(grid);

    t0 = seconds();
    int plain_iterations = 0;
    double *expected = solve_plain(n, max_iterations, &plain_iterations);
    double t_plain = seconds() - t0;

    double max_diff = 0.0;
    for (size_t k = 0; k < (n + 2) * (n + 2); k++) {
        double d = fabs(result[k] - expected[k]);
        if (!(d <= max_diff)) max_diff = d; /* also catches NaN */
    }
    int ok = hs_iterations == plain_iterations && max_diff <= 1e-9;
    printf("heat_equation: n=%zu, %d iterations (plain C: %d), hassium %.3f s, plain C %.3f s, "
           "max abs diff %.3g: %s\n",
           n, hs_iterations, plain_iterations, t_hassium, t_plain, max_diff, ok ? "OK" : "MISMATCH");
    if (getenv("HASSIUM_STATS") != NULL) {
        fflush(stdout);
        hs_stats_print();
    }
    free(result);
    free(expected);
    return ok ? 0 : 1;
}
