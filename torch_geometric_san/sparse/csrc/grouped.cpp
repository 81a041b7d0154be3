// Kernels on the CPU for G operators with one pattern (compressed rows `ptr`,
// `col`, entries sorted by row) and their own entries [nnz, G]: the grouped
// products with signals [rows or cols, F, G] (groups last), and the attention
// coefficients (LeakyReLU and softmax per row of scores). Each is one pass over
// the entries, the G groups of an entry contiguous and vectorised, where the
// composites of PyTorch gathers, elementwise steps and scatters write several
// [nnz, G] arrays. See torch_geometric_san/sparse/compiled.py.
#include <torch/extension.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

// The loops are compiled twice on x86-64 with GCC or Clang, for AVX2 and for the
// baseline, and the AVX2 clone runs where the CPU has it. Both give the same bits:
// the same operations in the same order, without contraction into FMA
// (-ffp-contract=off, compiled.py).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TGSAN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TGSAN_CLONES
#endif

namespace {

void check(const torch::Tensor& ptr, const torch::Tensor& col, const torch::Tensor& t,
           int64_t dim, const char* name) {
  TORCH_CHECK(ptr.device().is_cpu() && col.device().is_cpu() && t.device().is_cpu(),
              "grouped kernels run on the CPU");
  TORCH_CHECK(ptr.scalar_type() == col.scalar_type() && ptr.dim() == 1 && col.dim() == 1,
              "ptr and col must be 1-D with one index dtype");
  // (read through their data pointers: a strided view was read as another array)
  TORCH_CHECK(ptr.is_contiguous() && col.is_contiguous(), "ptr and col must be contiguous");
  TORCH_CHECK(t.dim() == dim && t.is_contiguous(), name, " must be a contiguous ",
              dim, "-D tensor");
}

// The sizes the kernels index with: entries of `value` against the pattern's, and
// the rows, features and groups of the operands against each other. (Only the rows
// of a product's source are not known here: the Python side checks them against
// the operator's columns.)
void check_size(bool ok, const char* what) {
  TORCH_CHECK_VALUE(ok, "grouped kernels: ", what);
}

// body(begin, end) over the rows: in parallel where rows write apart, else at once.
template <typename Body>
void over_rows(int64_t rows, bool parallel, const Body& body) {
  if (parallel) {
    at::parallel_for(0, rows, 64, body);
  } else {
    body(0, rows);
  }
}

// out[i, f, :] = sum over the entries e of row i of value[e, :] * x[col[e], f, :]
template <typename scalar_t, typename index_t>
TGSAN_CLONES void spmm_rows(int64_t begin, int64_t end, const index_t* ptr,
                            const index_t* col, const scalar_t* value, const scalar_t* x,
                            scalar_t* out, int64_t F, int64_t G) {
  for (int64_t i = begin; i < end; ++i) {
    scalar_t* __restrict__ o = out + i * F * G;
    for (int64_t k = 0; k < F * G; ++k) o[k] = 0;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      const scalar_t* __restrict__ v = value + e * G;
      const scalar_t* __restrict__ xj = x + static_cast<int64_t>(col[e]) * F * G;
      for (int64_t f = 0; f < F; ++f)
        for (int64_t g = 0; g < G; ++g) o[f * G + g] += v[g] * xj[f * G + g];
    }
  }
}

// out[col[e], f, :] += value[e, :] * y[i, f, :] for the entries e of the rows
// (the transposed product; rows share columns, so one range at a time).
template <typename scalar_t, typename index_t>
TGSAN_CLONES void spmm_t_rows(int64_t begin, int64_t end, const index_t* ptr,
                              const index_t* col, const scalar_t* value, const scalar_t* y,
                              scalar_t* out, int64_t F, int64_t G) {
  for (int64_t i = begin; i < end; ++i) {
    const scalar_t* __restrict__ yi = y + i * F * G;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      const scalar_t* __restrict__ v = value + e * G;
      scalar_t* __restrict__ oj = out + static_cast<int64_t>(col[e]) * F * G;
      for (int64_t f = 0; f < F; ++f)
        for (int64_t g = 0; g < G; ++g) oj[f * G + g] += v[g] * yi[f * G + g];
    }
  }
}

// out[e, :] = sum_f a[i, f, :] * b[col[e], f, :] for the entries e of row i
template <typename scalar_t, typename index_t>
TGSAN_CLONES void sddmm_rows(int64_t begin, int64_t end, const index_t* ptr,
                             const index_t* col, const scalar_t* a, const scalar_t* b,
                             scalar_t* out, int64_t F, int64_t G) {
  if (F == 0) {  // empty sums (the loop below starts from the first feature)
    std::fill(out + static_cast<int64_t>(ptr[begin]) * G,
              out + static_cast<int64_t>(ptr[end]) * G, scalar_t(0));
    return;
  }
  for (int64_t i = begin; i < end; ++i) {
    const scalar_t* __restrict__ ai = a + i * F * G;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      scalar_t* __restrict__ o = out + e * G;
      const scalar_t* __restrict__ bj = b + static_cast<int64_t>(col[e]) * F * G;
      for (int64_t g = 0; g < G; ++g) o[g] = ai[g] * bj[g];
      for (int64_t f = 1; f < F; ++f)
        for (int64_t g = 0; g < G; ++g) o[g] += ai[f * G + g] * bj[f * G + g];
    }
  }
}

// exp(x) for x <= 0 (the shifted scores of a softmax) in arithmetic that the
// compiler vectorises over the groups (a call to std::exp is not): x = n ln 2 +
// r with |r| <= ln(2) / 2, exp(r) by its Taylor polynomial (relative error below
// the precision's rounding), 2^n from the exponent bits. Below the smallest
// normal power the result is 0 (the terms a softmax adds to at least 1).
template <typename scalar_t> struct Exp;

template <> struct Exp<float> {
  static inline float eval(float x) {
    const float lo = -87.33f;  // just above the log of the smallest normal float
    const bool under = x < lo;
    x = under ? lo : x;
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round
    const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return under ? 0.0f : p * scale;
  }
};

template <> struct Exp<double> {
  static inline double eval(double x) {
    const double lo = -708.39;  // and of the smallest normal double
    const bool under = x < lo;
    x = under ? lo : x;
    const double n = (x * 1.4426950408889634 + 6755399441055744.0) - 6755399441055744.0;
    const double r = (x - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
    double p = 1.0 / 6227020800.0;  // 1 / 13!, then 1 / k! down to k = 0
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const int64_t bits = (static_cast<int64_t>(n) + 1023) << 52;
    double scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return under ? 0.0 : p * scale;
  }
};

// nan_to_num: NaN -> 0, +-inf -> the largest finite values.
template <typename scalar_t>
inline scalar_t finite(scalar_t z) {
  const scalar_t hi = std::numeric_limits<scalar_t>::max();
  z = z < -hi ? -hi : (z > hi ? hi : z);
  return z != z ? scalar_t(0) : z;
}

template <typename scalar_t>
inline bool is_finite(scalar_t z) {
  return std::abs(z) <= std::numeric_limits<scalar_t>::max();  // false for NaN
}

// The score of entry e, group g: given ([nnz, G]) or target[i] + source[col[e]].
template <typename scalar_t, typename index_t, bool GIVEN>
struct Scores {
  const scalar_t* __restrict__ score;
  const scalar_t* __restrict__ target;
  const scalar_t* __restrict__ source;
  const index_t* col;
  int64_t G;
  // The G scores of entry e of row i, into out.
  inline void row(int64_t i, int64_t e, scalar_t* __restrict__ out) const {
    if (GIVEN) {
      const scalar_t* s = score + e * G;
      for (int64_t g = 0; g < G; ++g) out[g] = s[g];
    } else {
      const scalar_t* t = target + i * G;
      const scalar_t* s = source + static_cast<int64_t>(col[e]) * G;
      for (int64_t g = 0; g < G; ++g) out[g] = t[g] + s[g];
    }
  }
};

// alpha[e, :] = softmax over the entries e of row i of LeakyReLU(finite score).
template <typename scalar_t, typename index_t, bool GIVEN>
TGSAN_CLONES void attention_rows(int64_t begin, int64_t end, const index_t* ptr,
                                 Scores<scalar_t, index_t, GIVEN> scores, scalar_t slope,
                                 scalar_t* alpha) {
  const int64_t G = scores.G;
  std::vector<scalar_t> top_(G), sum_(G);
  scalar_t* __restrict__ top = top_.data();
  scalar_t* __restrict__ sum = sum_.data();
  for (int64_t i = begin; i < end; ++i) {
    if (ptr[i] == ptr[i + 1]) continue;
    for (int64_t g = 0; g < G; ++g) {
      top[g] = -std::numeric_limits<scalar_t>::infinity();
      sum[g] = 0;
    }
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      scalar_t* __restrict__ a = alpha + e * G;
      scores.row(i, e, a);
      for (int64_t g = 0; g < G; ++g) {
        scalar_t z = finite(a[g]);
        z = z > 0 ? z : z * slope;
        a[g] = z;
        top[g] = top[g] < z ? z : top[g];
      }
    }
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      scalar_t* __restrict__ a = alpha + e * G;
      for (int64_t g = 0; g < G; ++g) {
        a[g] = Exp<scalar_t>::eval(a[g] - top[g]);
        sum[g] += a[g];
      }
    }
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      scalar_t* __restrict__ a = alpha + e * G;
      for (int64_t g = 0; g < G; ++g) a[g] /= sum[g];
    }
  }
}

// The gradient of the scores from that of alpha: for each row, alpha * (grad -
// <alpha, grad>), times the LeakyReLU's slope, zero where the score was not
// finite; into grad_score[e] (given scores), or summed into grad_target[i] and
// grad_source[col[e]] (rows share columns: one range at a time).
template <typename scalar_t, typename index_t, bool GIVEN>
TGSAN_CLONES void attention_backward_rows(
    int64_t begin, int64_t end, const index_t* ptr, Scores<scalar_t, index_t, GIVEN> scores,
    scalar_t slope, const scalar_t* alpha, const scalar_t* grad, scalar_t* grad_score,
    scalar_t* grad_target, scalar_t* grad_source) {
  const int64_t G = scores.G;
  std::vector<scalar_t> dot_(G), z_(G), d_(G);
  scalar_t* __restrict__ dot = dot_.data();
  scalar_t* __restrict__ z = z_.data();
  scalar_t* __restrict__ dz = d_.data();  // the gradient of one entry's scores
  for (int64_t i = begin; i < end; ++i) {
    for (int64_t g = 0; g < G; ++g) dot[g] = 0;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      const scalar_t* __restrict__ a = alpha + e * G;
      const scalar_t* __restrict__ d = grad + e * G;
      for (int64_t g = 0; g < G; ++g) dot[g] += a[g] * d[g];
    }
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
      const scalar_t* __restrict__ a = alpha + e * G;
      const scalar_t* __restrict__ d = grad + e * G;
      scores.row(i, e, z);
      scalar_t* __restrict__ out = GIVEN ? grad_score + e * G : dz;
      for (int64_t g = 0; g < G; ++g) {
        const scalar_t factor = is_finite(z[g]) ? (z[g] > 0 ? scalar_t(1) : slope)
                                                : scalar_t(0);
        out[g] = a[g] * (d[g] - dot[g]) * factor;
      }
      if (!GIVEN) {
        scalar_t* __restrict__ gt = grad_target + i * G;
        scalar_t* __restrict__ gs = grad_source + static_cast<int64_t>(scores.col[e]) * G;
        for (int64_t g = 0; g < G; ++g) gt[g] += dz[g];
        for (int64_t g = 0; g < G; ++g) gs[g] += dz[g];
      }
    }
  }
}

}  // namespace

namespace {

// Runs rows(begin, end, ptr, col, a, b, out, F, G), a grouped product's loops, over
// the rows of the pattern into `out` (in parallel where rows write apart).
template <typename Rows>
torch::Tensor product(const torch::Tensor& ptr, const torch::Tensor& col,
                      const torch::Tensor& a, const torch::Tensor& b, torch::Tensor out,
                      bool parallel, const Rows& rows) {
  const int64_t F = b.size(1), G = b.size(2);
  AT_DISPATCH_FLOATING_TYPES(out.scalar_type(), "grouped product", [&] {
    AT_DISPATCH_INDEX_TYPES(ptr.scalar_type(), "grouped product", [&] {
      over_rows(ptr.size(0) - 1, parallel, [&](int64_t begin, int64_t end) {
        rows(begin, end, ptr.data_ptr<index_t>(), col.data_ptr<index_t>(),
             a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), F,
             G);
      });
    });
  });
  return out;
}

}  // namespace

torch::Tensor grouped_spmm(torch::Tensor ptr, torch::Tensor col, torch::Tensor value,
                           torch::Tensor x) {
  check(ptr, col, value, 2, "value");
  check(ptr, col, x, 3, "x");
  check_size(value.size(0) == col.size(0) && value.size(1) == x.size(2),
             "value must be [nnz, G] for x [cols, F, G]");
  auto out = torch::empty({ptr.size(0) - 1, x.size(1), x.size(2)}, x.options());
  return product(ptr, col, value, x, out, true, [](auto... args) { spmm_rows(args...); });
}

torch::Tensor grouped_spmm_t(torch::Tensor ptr, torch::Tensor col, torch::Tensor value,
                             torch::Tensor y, int64_t cols) {
  check(ptr, col, value, 2, "value");
  check(ptr, col, y, 3, "y");
  check_size(value.size(0) == col.size(0) && value.size(1) == y.size(2) &&
                 y.size(0) == ptr.size(0) - 1,
             "value must be [nnz, G] and y [rows, F, G]");
  auto out = torch::zeros({cols, y.size(1), y.size(2)}, y.options());
  return product(ptr, col, value, y, out, false, [](auto... args) { spmm_t_rows(args...); });
}

torch::Tensor grouped_sddmm(torch::Tensor ptr, torch::Tensor col, torch::Tensor a,
                            torch::Tensor b) {
  check(ptr, col, a, 3, "a");
  check(ptr, col, b, 3, "b");
  check_size(a.size(0) == ptr.size(0) - 1 && a.size(1) == b.size(1) &&
                 a.size(2) == b.size(2),
             "a must be [rows, F, G] and b [cols, F, G]");
  auto out = torch::empty({col.size(0), a.size(2)}, a.options());
  return product(ptr, col, a, b, out, true, [](auto... args) { sddmm_rows(args...); });
}

// Scores from `score` [nnz, G] if it is defined, else from `target`, `source` [N, G].
torch::Tensor attention(torch::Tensor ptr, torch::Tensor col, c10::optional<torch::Tensor> score,
                        c10::optional<torch::Tensor> target, c10::optional<torch::Tensor> source,
                        double slope) {
  const bool given = score.has_value();
  check_size(given || (target.has_value() && source.has_value()),
             "pass score, or target and source");
  const torch::Tensor& ref = given ? *score : *target;
  check(ptr, col, ref, 2, given ? "score" : "target");
  if (!given) check(ptr, col, *source, 2, "source");
  const int64_t rows = ptr.size(0) - 1, G = ref.size(1);
  check_size(given ? ref.size(0) == col.size(0)
                   : ref.size(0) == rows && source->size(1) == G,
             "score must be [nnz, G], or target [rows, G] and source [cols, G]");
  auto alpha = torch::empty({col.size(0), G}, ref.options());
  AT_DISPATCH_FLOATING_TYPES(ref.scalar_type(), "attention", [&] {
    AT_DISPATCH_INDEX_TYPES(ptr.scalar_type(), "attention", [&] {
      auto run = [&](auto scores) {
        over_rows(rows, true, [&](int64_t begin, int64_t end) {
          attention_rows(begin, end, ptr.data_ptr<index_t>(), scores,
                         static_cast<scalar_t>(slope), alpha.data_ptr<scalar_t>());
        });
      };
      if (given) {
        run(Scores<scalar_t, index_t, true>{score->data_ptr<scalar_t>(), nullptr, nullptr,
                                            col.data_ptr<index_t>(), G});
      } else {
        run(Scores<scalar_t, index_t, false>{nullptr, target->data_ptr<scalar_t>(),
                                             source->data_ptr<scalar_t>(),
                                             col.data_ptr<index_t>(), G});
      }
    });
  });
  return alpha;
}

// (grad_score) for given scores, else (grad_target, grad_source).
std::vector<torch::Tensor> attention_backward(
    torch::Tensor ptr, torch::Tensor col, c10::optional<torch::Tensor> score,
    c10::optional<torch::Tensor> target, c10::optional<torch::Tensor> source, double slope,
    torch::Tensor alpha, torch::Tensor grad) {
  const bool given = score.has_value();
  check_size(given || (target.has_value() && source.has_value()),
             "pass score, or target and source");
  check(ptr, col, alpha, 2, "alpha");
  check(ptr, col, grad, 2, "grad");
  const int64_t rows = ptr.size(0) - 1, G = alpha.size(1);
  check_size(alpha.size(0) == col.size(0) && grad.sizes() == alpha.sizes(),
             "alpha and grad must be [nnz, G]");
  if (given) {
    check(ptr, col, *score, 2, "score");
    check_size(score->sizes() == alpha.sizes(), "score must be [nnz, G]");
  } else {
    check(ptr, col, *target, 2, "target");
    check(ptr, col, *source, 2, "source");
    check_size(target->size(0) == rows && target->size(1) == G && source->size(1) == G,
               "target must be [rows, G] and source [cols, G]");
  }
  std::vector<torch::Tensor> out;
  if (given) {
    out.push_back(torch::empty_like(alpha));
  } else {
    out.push_back(torch::zeros_like(*target));
    out.push_back(torch::zeros_like(*source));
  }
  AT_DISPATCH_FLOATING_TYPES(alpha.scalar_type(), "attention_backward", [&] {
    AT_DISPATCH_INDEX_TYPES(ptr.scalar_type(), "attention_backward", [&] {
      auto run = [&](auto scores) {
        // Given scores write per entry (rows apart); the others sum into columns.
        over_rows(rows, given, [&](int64_t begin, int64_t end) {
          attention_backward_rows(begin, end, ptr.data_ptr<index_t>(), scores,
                                  static_cast<scalar_t>(slope), alpha.data_ptr<scalar_t>(),
                                  grad.data_ptr<scalar_t>(),
                                  given ? out[0].data_ptr<scalar_t>() : nullptr,
                                  given ? nullptr : out[0].data_ptr<scalar_t>(),
                                  given ? nullptr : out[1].data_ptr<scalar_t>());
        });
      };
      if (given) {
        run(Scores<scalar_t, index_t, true>{score->data_ptr<scalar_t>(), nullptr, nullptr,
                                            col.data_ptr<index_t>(), G});
      } else {
        run(Scores<scalar_t, index_t, false>{nullptr, target->data_ptr<scalar_t>(),
                                             source->data_ptr<scalar_t>(),
                                             col.data_ptr<index_t>(), G});
      }
    });
  });
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("grouped_spmm", &grouped_spmm, "A_g x_g for every group g");
  m.def("grouped_spmm_t", &grouped_spmm_t, "A_g^T y_g for every group g");
  m.def("grouped_sddmm", &grouped_sddmm, "<a_i, b_j>_g for every entry and group");
  m.def("attention", &attention, "softmax per row of LeakyReLU(scores)");
  m.def("attention_backward", &attention_backward, "gradient of the scores");
}
