// black_scholes.cpp: European call option prices by the Black-Scholes formula, with
// Hassium from C++.
//
// A thin RAII class (Array) owns an hs_array* handle and frees it when it goes out of
// scope, and arithmetic operators record Hassium operations, so the formula reads as
// maths. Nothing runs until a result is read (here: the mean price of each time step);
// then the runtime fuses the recorded operations into compiled loops.
//
// The same computation as a plain C++ loop follows, and the program checks both agree.
//
// Build and run:
//     c++ -O2 black_scholes.cpp $(pkg-config --cflags --libs hassium) -o black_scholes
//     ./black_scholes [n_options] [n_steps]
#include <hassium.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hs {

// Hassium reports errors by status or NULL handle; in C++ we turn them into exceptions.
[[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string(what) + ": " + hs_last_error());
}

// Owns one handle. Move-only: a handle is freed exactly once.
class Array {
  public:
    explicit Array(hs_array* h, const char* what = "hassium") : h_(h) {
        if (h_ == nullptr) fail(what);
    }
    Array(Array&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Array& operator=(Array&& o) noexcept {
        std::swap(h_, o.h_);
        return *this;
    }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    ~Array() { hs_free(h_); }

    hs_array* get() const { return h_; }
    size_t size() const { return hs_size(h_); }

    // The value of a one-element array (runs what it depends on).
    double item() const {
        double v = 0.0;
        if (hs_item(h_, &v) != HS_OK) fail("hs_item");
        return v;
    }
    // A copy of the elements in C order.
    std::vector<double> to_vector() const {
        std::vector<double> out(size());
        if (hs_copy_to(h_, out.data(), out.size() * sizeof(double)) != HS_OK) fail("hs_copy_to");
        return out;
    }

  private:
    hs_array* h_;
};

// Either an array or a number: what Hassium's operations take (hs_operand).
struct Value {
    hs_operand op;
    Value(const Array& a) : op(hs_arr(a.get())) {}
    Value(double x) : op(hs_float(x)) {}
};

inline Array operator+(Value a, Value b) { return Array(hs_add(a.op, b.op), "hs_add"); }
inline Array operator-(Value a, Value b) { return Array(hs_subtract(a.op, b.op), "hs_subtract"); }
inline Array operator*(Value a, Value b) { return Array(hs_multiply(a.op, b.op), "hs_multiply"); }
inline Array operator/(Value a, Value b) { return Array(hs_divide(a.op, b.op), "hs_divide"); }
inline Array operator<(Value a, Value b) { return Array(hs_less(a.op, b.op), "hs_less"); }
inline Array exp(const Array& a) { return Array(hs_exp(a.get()), "hs_exp"); }
inline Array log(const Array& a) { return Array(hs_log(a.get()), "hs_log"); }
inline Array abs(const Array& a) { return Array(hs_abs(a.get()), "hs_abs"); }
inline Array where(Value c, Value x, Value y) { return Array(hs_where(c.op, x.op, y.op), "hs_where"); }
inline Array mean(const Array& a) {
    Array total(hs_sum(a.get(), HS_AXIS_ALL), "hs_sum");
    return total / static_cast<double>(a.size());
}
inline Array random(size_t n, uint64_t seed) { return Array(hs_random(seed, 0, 1, &n), "hs_random"); }

}  // namespace hs

// Constants of the cumulative normal distribution's polynomial approximation
// (Abramowitz & Stegun 26.2.17).
constexpr double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978,
                 A5 = 1.330274429, RSQRT2PI = 0.39894228040143267794;
constexpr double RATE = 0.08, VOLATILITY = 0.30, STRIKE = 65.0;

// The cumulative normal distribution, with Hassium.
hs::Array cnd(const hs::Array& x) {
    using namespace hs;
    Array l = abs(x);
    Array k = 1.0 / (1.0 + 0.2316419 * l);
    Array poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))));
    Array w = 1.0 - RSQRT2PI * exp(-0.5 * l * l) * poly;
    return where(x < 0.0, 1.0 - w, w);
}

// Call prices for stock prices `s` at time to expiry `t`, with Hassium.
hs::Array black_scholes(const hs::Array& s, double t) {
    using namespace hs;
    double vt = VOLATILITY * std::sqrt(t);
    Array d1 = (log(s / STRIKE) + (RATE + VOLATILITY * VOLATILITY / 2.0) * t) / vt;
    Array d2 = d1 - vt;
    return s * cnd(d1) - STRIKE * std::exp(-RATE * t) * cnd(d2);
}

// The same, as plain C++ loops over one value.
double cnd_plain(double x) {
    double l = std::fabs(x);
    double k = 1.0 / (1.0 + 0.2316419 * l);
    double poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))));
    double w = 1.0 - RSQRT2PI * std::exp(-0.5 * l * l) * poly;
    return x < 0.0 ? 1.0 - w : w;
}

double black_scholes_plain(double s, double t) {
    double vt = VOLATILITY * std::sqrt(t);
    double d1 = (std::log(s / STRIKE) + (RATE + VOLATILITY * VOLATILITY / 2.0) * t) / vt;
    double d2 = d1 - vt;
    return s * cnd_plain(d1) - STRIKE * std::exp(-RATE * t) * cnd_plain(d2);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
    size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
    int steps = argc > 2 ? std::atoi(argv[2]) : 10;
    try {
        // Stock prices uniform in [58, 62), the same in both versions.
        hs::Array s = 4.0 * hs::random(n, 42) + 58.0;
        std::vector<double> s_plain = s.to_vector();

        auto t0 = std::chrono::steady_clock::now();
        std::vector<double> means;
        for (int i = 0; i < steps; i++) {
            double t = 0.1 + 0.9 * i / steps;  // time to expiry, in years
            // The prices are a temporary that dies at the end of this statement, before
            // item() runs the step: the runtime can then keep them out of memory.
            hs::Array m = hs::mean(black_scholes(s, t));
            means.push_back(m.item());
        }
        double t_hassium = seconds_since(t0);

        t0 = std::chrono::steady_clock::now();
        std::vector<double> means_plain;
        for (int i = 0; i < steps; i++) {
            double t = 0.1 + 0.9 * i / steps;
            double total = 0.0;
            for (double x : s_plain) total += black_scholes_plain(x, t);
            means_plain.push_back(total / static_cast<double>(n));
        }
        double t_plain = seconds_since(t0);

        double max_diff = 0.0;
        for (int i = 0; i < steps; i++) {
            double d = std::fabs(means[i] - means_plain[i]);
            if (!(d <= max_diff)) max_diff = d;  // also catches NaN
        }
        bool ok = max_diff <= 1e-9;
        std::printf("black_scholes: %zu options x %d steps, mean price %.6f, hassium %.3f s, plain C++ %.3f s, "
                    "max abs diff %.3g: %s\n",
                    n, steps, means.empty() ? 0.0 : means.back(), t_hassium, t_plain, max_diff,
                    ok ? "OK" : "MISMATCH");
        if (std::getenv("HASSIUM_STATS") != nullptr) {
            std::fflush(stdout);
            hs_stats_print();
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "black_scholes: %s\n", e.what());
        return 2;
    }
}
