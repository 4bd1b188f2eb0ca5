// Recurrent layers: ONNX RNN, GRU and LSTM, forward, reverse or bidirectional, with optional
// sequence lengths, initial states, peepholes, clipping and any of the ONNX activation functions.
//
// Each direction and each batch entry is an independent recurrence; the kernels run them one at a
// time, keeping the state in the compute type (float for the 16-bit floats) in caller-provided
// scratch memory of *_scratch_elements(hidden_size) compute_t<T> values.
//
// Layouts (layout attribute): sequence-major (0) or batch-major (1).
//   X          [seq, batch, input]          or [batch, seq, input]
//   Y          [seq, dirs, batch, hidden]   or [batch, seq, dirs, hidden]
//   states     [dirs, batch, hidden]        or [batch, dirs, hidden]     (initial_h/c, Y_h, Y_c)
// Weights, per direction d: W[d] [gates*hidden, input], R[d] [gates*hidden, hidden],
// B[d] [2*gates*hidden] (input biases, then recurrence biases), P[d] [3*hidden] (LSTM peepholes i, o, f).
#ifndef ONNXC_RNN_H
#define ONNXC_RNN_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

// The activation functions the recurrent operators accept by name.
enum class RnnActivation : int {
  Relu,
  Tanh,
  Sigmoid,
  Affine,           // alpha * x + beta
  LeakyRelu,        // x >= 0 ? x : alpha * x
  ThresholdedRelu,  // x > alpha ? x : 0
  ScaledTanh,       // alpha * tanh(beta * x)
  HardSigmoid,      // clamp(alpha * x + beta, 0, 1)
  Elu,              // x >= 0 ? x : alpha * (exp(x) - 1)
  Softsign,         // x / (1 + |x|)
  Softplus,         // log(1 + exp(x))
};

struct RnnFunction {
  RnnActivation kind;
  float alpha, beta;

  template <class C> C operator()(C x) const {
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    switch (kind) {
      case RnnActivation::Relu: return x > C(0) ? x : C(0);
      case RnnActivation::Tanh: return std::tanh(x);
      case RnnActivation::Sigmoid: return sigmoid(x);
      case RnnActivation::Affine: return a * x + b;
      case RnnActivation::LeakyRelu: return x >= C(0) ? x : a * x;
      case RnnActivation::ThresholdedRelu: return x > a ? x : C(0);
      case RnnActivation::ScaledTanh: return a * std::tanh(b * x);
      case RnnActivation::HardSigmoid: {
        const C v = a * x + b;
        return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
      }
      case RnnActivation::Elu: return x >= C(0) ? x : a * (std::exp(x) - C(1));
      case RnnActivation::Softsign: return x / (C(1) + std::fabs(x));
      case RnnActivation::Softplus:
        // log(1 + e^x) without overflow for large x.
        return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }

#if defined(ONNXC_SIMD)
  // Whether apply_row may use vector() below: the functions without a logarithm or a branch on
  // a transcendental (Elu, Softplus stay scalar; recurrent layers rarely use them).
  bool has_vector_form() const { return kind != RnnActivation::Elu && kind != RnnActivation::Softplus; }
  vfloat vector(vfloat x) const {
    const vfloat a(alpha), b(beta), zero(0.0f), one(1.0f);
    switch (kind) {
      case RnnActivation::Relu: return xsimd::max(x, zero);
      case RnnActivation::Tanh: return xsimd::tanh(x);
      // exp(-x) overflows to infinity for very negative x, and 1 / infinity is the right 0.
      case RnnActivation::Sigmoid: return one / (one + xsimd::exp(-x));
      case RnnActivation::Affine: return a * x + b;
      case RnnActivation::LeakyRelu: return xsimd::select(x >= zero, x, a * x);
      case RnnActivation::ThresholdedRelu: return xsimd::select(x > a, x, zero);
      case RnnActivation::ScaledTanh: return a * xsimd::tanh(b * x);
      case RnnActivation::HardSigmoid: return xsimd::min(xsimd::max(a * x + b, zero), one);
      case RnnActivation::Softsign: return x / (one + xsimd::abs(x));
      default: return x;
    }
  }
#endif

 private:
  // Never exponentiates a large positive number.
  template <class C> static C sigmoid(C x) {
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};

struct RnnParams {
  index_t seq_length, batch, input_size, hidden_size;
  index_t directions;  // 1, or 2 for bidirectional (direction 1 runs backwards)
  bool reverse;        // direction = "reverse": the single direction runs backwards
  bool batch_major;    // layout = 1
  // Inputs of the activation functions are clamped to [-clip, clip] (infinity: no clipping).
  float clip;
  bool input_forget;         // LSTM: the forget gate is 1 - input gate
  bool linear_before_reset;  // GRU: apply the reset gate after the recurrence product
  // Activation functions per direction: LSTM f, g, h; GRU f, g; RNN f.
  RnnFunction f[2], g[2], h[2];
  // LSTM: W and R in the unit-chunk layout of pack_recurrent_weights (float only).
  bool packed;
  // LSTM with packed weights: the input projections X W^T + Wb + Rb of all steps first, a
  // direction at a time, into lstm_projection_elements of scratch; the steps then read only R.
  bool projected;
};

// Scratch of the input projections of one direction: a gate row per step and batch entry.
constexpr index_t lstm_projection_elements(index_t seq_length, index_t batch, index_t hidden_size) {
  return seq_length * batch * 4 * hidden_size;
}

// ---- The unit-chunk layout of W and R (LSTM on SIMD targets) ----
//
// A row-major W [gates * hidden, cols] turns a step's product into `gates * hidden` dot products
// of `cols` floats, each ending in a horizontal sum across the lanes. Stored instead as chunks of
// kRnnChunkUnits hidden units, each chunk column after column, each column its gates' values of
// the chunk's units ([k][gate][unit]), the product is a sum over k of one broadcast input value
// times a contiguous run of gates * units weights: vertical multiply-adds into a few vector
// accumulators, no horizontal sum, each weight read once per step. Per direction d, the chunk of
// units [j, j + units) starts at d * gates * hidden * cols + j * gates * cols.
constexpr index_t kRnnChunkUnits = 16;

// dst = src in the unit-chunk layout, for `directions` matrices [gates * hidden, cols].
template <class T>
inline void pack_recurrent_weights(index_t directions, index_t gates, index_t hidden, index_t cols, const T* src,
                                   T* dst) {
  for (index_t d = 0; d < directions; ++d) {
    const T* s = src + d * gates * hidden * cols;
    T* out = dst + d * gates * hidden * cols;
    for (index_t j = 0; j < hidden; j += kRnnChunkUnits) {
      const index_t units = hidden - j < kRnnChunkUnits ? hidden - j : kRnnChunkUnits;
      T* chunk = out + j * gates * cols;
      for (index_t k = 0; k < cols; ++k)
        for (index_t q = 0; q < gates; ++q)
          for (index_t u = 0; u < units; ++u) chunk[(k * gates + q) * units + u] = s[(q * hidden + j + u) * cols + k];
    }
  }
}

namespace rnn_detail {

// Batch entry b's steps: its sequence_lens entry clamped to [0, seq_length] (all of them without one).
inline index_t sequence_length(const RnnParams& p, const std::int32_t* seq_lens, index_t b) {
  const index_t len = seq_lens ? static_cast<index_t>(seq_lens[b]) : p.seq_length;
  return len < 0 ? 0 : (len > p.seq_length ? p.seq_length : len);
}

// Offsets of the rows of the recurrent tensors (X rows have input_size elements, the others
// hidden_size), in either layout.
struct Rows {
  const RnnParams& p;
  index_t x(index_t t, index_t b) const {
    return (p.batch_major ? b * p.seq_length + t : t * p.batch + b) * p.input_size;
  }
  index_t y(index_t t, index_t d, index_t b) const {
    return (p.batch_major ? (b * p.seq_length + t) * p.directions + d : (t * p.directions + d) * p.batch + b) *
           p.hidden_size;
  }
  index_t state(index_t d, index_t b) const {
    return (p.batch_major ? b * p.directions + d : d * p.batch + b) * p.hidden_size;
  }
};

// out[r] += sum_k m[r * cols + k] * v[k] for r < rows (a row-major matrix times a vector).
template <class T, class V, class C>
inline void add_matvec(index_t rows, index_t cols, const T* m, const V* v, C* out) {
  for (index_t r = 0; r < rows; ++r) {
    C acc = C(0);
    const T* row = m + r * cols;
    for (index_t k = 0; k < cols; ++k) acc += load(row[k]) * load(v[k]);
    out[r] += acc;
  }
}

#if defined(ONNXC_SIMD)
// The float product, Rows rows at a time: vector partial sums along the row (a float
// reduction the compiler may not reorder by itself), one horizontal sum per row at the end.
template <int Rows>
inline void add_matvec_rows(index_t cols, const float* m, const float* v, float* out) {
  vfloat acc[Rows];
  for (int i = 0; i < Rows; ++i) acc[i] = vfloat(0.0f);
  index_t k = 0;
  for (; k + kFloatLanes <= cols; k += kFloatLanes) {
    const vfloat x = vfloat::load_unaligned(v + k);
    for (int i = 0; i < Rows; ++i) acc[i] = xsimd::fma(vfloat::load_unaligned(m + i * cols + k), x, acc[i]);
  }
  if (k < cols) {
    const vfloat x = load_partial(v + k, cols - k);
    for (int i = 0; i < Rows; ++i) acc[i] = xsimd::fma(load_partial(m + i * cols + k, cols - k), x, acc[i]);
  }
  for (int i = 0; i < Rows; ++i) out[i] += xsimd::hadd(acc[i]);
}

// The single rows start at `whole`, computed from `rows`, not at the index the first loop ends with:
// with that one GCC -O3 could not bound the second loop's count once GruCell::step's row counts were
// inlined, and warned that a far iteration overflows (-Werror=aggressive-loop-optimizations, issue #28).
inline void add_matvec(index_t rows, index_t cols, const float* m, const float* v, float* out) {
  constexpr int kRows = 4;
  const index_t whole = rows - rows % kRows;
  for (index_t r = 0; r < whole; r += kRows) add_matvec_rows<kRows>(cols, m + r * cols, v, out + r);
  for (index_t r = whole; r < rows; ++r) add_matvec_rows<1>(cols, m + r * cols, v, out + r);
}
#endif

// out[r] = wb[r] + rb[r] for r < n; either bias may be absent (nullptr).
template <class T, class C>
inline void set_bias(index_t n, const T* wb, const T* rb, C* out) {
  for (index_t r = 0; r < n; ++r) out[r] = (wb ? load(wb[r]) : C(0)) + (rb ? load(rb[r]) : C(0));
}

template <class C> inline C clamp(C x, float bound) {
  const C b = static_cast<C>(bound);
  return x < -b ? -b : (x > b ? b : x);
}

template <class C> inline void clamp_row(index_t n, float bound, C* x) {
  for (index_t i = 0; i < n; ++i) x[i] = clamp(x[i], bound);
}

// x[i] = f(x[i]) for i < n.
template <class C> inline void apply_row(const RnnFunction& f, index_t n, C* x) {
  for (index_t i = 0; i < n; ++i) x[i] = f(x[i]);
}

#if defined(ONNXC_SIMD)
inline void apply_row(const RnnFunction& f, index_t n, float* x) {
  index_t i = 0;
  if (f.has_vector_form())
    for (; i + kFloatLanes <= n; i += kFloatLanes) f.vector(vfloat::load_unaligned(x + i)).store_unaligned(x + i);
  for (; i < n; ++i) x[i] = f(x[i]);
}
#endif

// x[i] += p[i] * c[i] for i < n: a peephole term (none when p is null).
template <class T, class C> inline void add_peephole(index_t n, const T* p, const C* c, C* x) {
  if (!p) return;
  for (index_t i = 0; i < n; ++i) x[i] += load(p[i]) * c[i];
}

// Loads `n` values of an optional tensor at `offset` into the compute type (zeros when absent).
template <class T, class C>
inline void load_state(index_t n, const T* src, index_t offset, C* dst) {
  for (index_t i = 0; i < n; ++i) dst[i] = src ? load(src[offset + i]) : C(0);
}

template <class T, class C>
inline void store_row(index_t n, const C* src, T* dst) {
  for (index_t i = 0; i < n; ++i) dst[i] = store<T>(src[i]);
}

template <class T>
inline void zero_row(index_t n, T* dst) {
  for (index_t i = 0; i < n; ++i) dst[i] = store<T>(compute_t<T>(0));
}

// Runs every direction and batch entry of a recurrence. `cell` holds the hidden state `h`
// (hidden_size compute-type values, loaded here from initial_h or zeros) and implements:
//   start(d, b)      load the other initial states of direction d, batch entry b
//   step(d, x_t)     advance h (and any other state) by one time step on input row x_t
//   finish(d, b, n)  store final states other than h, after n steps
// Y gets h after every step (zeros past a sequence's length); Y_h gets the final h (zeros for
// an empty sequence).
template <class T, class Cell>
inline void run(const RnnParams& p, const T* x, const std::int32_t* seq_lens, const T* initial_h, T* y, T* y_h,
                Cell& cell) {
  const Rows rows{p};
  const index_t hidden = p.hidden_size;
  for (index_t d = 0; d < p.directions; ++d) {
    const bool backwards = p.reverse || d == 1;
    for (index_t b = 0; b < p.batch; ++b) {
      const index_t len = sequence_length(p, seq_lens, b);
      load_state(hidden, initial_h, rows.state(d, b), cell.h);
      cell.start(d, b);
      for (index_t s = 0; s < len; ++s) {
        const index_t t = backwards ? len - 1 - s : s;
        cell.step(d, x + rows.x(t, b));
        if (y) store_row(hidden, cell.h, y + rows.y(t, d, b));
      }
      if (y)
        for (index_t t = len; t < p.seq_length; ++t) zero_row(hidden, y + rows.y(t, d, b));
      if (y_h) {
        if (len == 0) zero_row(hidden, y_h + rows.state(d, b));
        else store_row(hidden, cell.h, y_h + rows.state(d, b));
      }
      cell.finish(d, b, len);
    }
  }
}

// Biases of direction d with `gates` gates: the input biases Wb, then the recurrence biases Rb.
template <class T> struct Biases {
  const T *wb, *rb;
};
template <class T> inline Biases<T> biases(const T* bias, index_t d, index_t gates, index_t hidden) {
  if (!bias) return {nullptr, nullptr};
  const T* wb = bias + d * 2 * gates * hidden;
  return {wb, wb + gates * hidden};
}

template <class T> struct RnnCell {
  using C = compute_t<T>;
  const RnnParams& p;
  const T *w, *r, *bias;
  C *h, *gate;

  void start(index_t, index_t) {}
  void step(index_t d, const T* x_t) {
    const index_t n = p.hidden_size;
    const Biases<T> b = biases(bias, d, 1, n);
    set_bias(n, b.wb, b.rb, gate);
    add_matvec(n, p.input_size, w + d * n * p.input_size, x_t, gate);
    add_matvec(n, n, r + d * n * n, h, gate);
    clamp_row(n, p.clip, gate);
    apply_row(p.f[d], n, gate);
    for (index_t i = 0; i < n; ++i) h[i] = gate[i];
  }
  void finish(index_t, index_t, index_t) {}
};

template <class T> struct GruCell {
  using C = compute_t<T>;
  const RnnParams& p;
  const T *w, *r, *bias;
  C* h;
  C* from_x;   // 3 * hidden: X W^T + Wb for z, r, h
  C* from_h;   // 3 * hidden: the recurrence terms for z, r, h
  C* reset_h;  // hidden: r . H

  void start(index_t, index_t) {}
  void step(index_t d, const T* x_t) {
    const index_t n = p.hidden_size;
    const Biases<T> b = biases(bias, d, 3, n);
    const T* rd = r + d * 3 * n * n;
    const T* none = nullptr;
    set_bias(3 * n, b.wb, none, from_x);
    add_matvec(3 * n, p.input_size, w + d * 3 * n * p.input_size, x_t, from_x);
    // Without linear_before_reset, the hidden gate's recurrence term needs the reset gate first.
    const index_t recurrent_rows = p.linear_before_reset ? 3 * n : 2 * n;
    set_bias(recurrent_rows, none, b.rb, from_h);
    add_matvec(recurrent_rows, n, rd, h, from_h);
    C* update = from_x;
    C* reset = from_x + n;
    for (index_t i = 0; i < 2 * n; ++i) from_x[i] = clamp(from_x[i] + from_h[i], p.clip);
    apply_row(p.f[d], 2 * n, from_x);
    C* hidden_term = from_h + 2 * n;
    if (p.linear_before_reset) {
      for (index_t i = 0; i < n; ++i) hidden_term[i] *= reset[i];
    } else {
      for (index_t i = 0; i < n; ++i) reset_h[i] = reset[i] * h[i];
      set_bias(n, none, b.rb ? b.rb + 2 * n : none, hidden_term);
      add_matvec(n, n, rd + 2 * n * n, reset_h, hidden_term);
    }
    const C* hidden_from_x = from_x + 2 * n;
    C* candidate = hidden_term;
    for (index_t i = 0; i < n; ++i) candidate[i] = clamp(hidden_from_x[i] + hidden_term[i], p.clip);
    apply_row(p.g[d], n, candidate);
    for (index_t i = 0; i < n; ++i) h[i] = (C(1) - update[i]) * candidate[i] + update[i] * h[i];
  }
  void finish(index_t, index_t, index_t) {}
};

// The end of an LSTM step for hidden units [0, units) of an n-unit layer: from the gates'
// pre-activations (rows input, output, forget, candidate, `stride` apart, overwritten), the new
// cell state c (updated in place) and hidden state h. pd: the direction's peepholes (or null).
template <class T, class C>
inline void lstm_update(const RnnParams& p, index_t d, index_t units, index_t stride, const T* pd, C* gates, C* c,
                        C* h) {
  const index_t n = p.hidden_size;
  const T* pi = pd;
  const T* po = pd ? pd + n : nullptr;
  const T* pf = pd ? pd + 2 * n : nullptr;
  C *input = gates, *output = gates + stride, *forget = gates + 2 * stride, *candidate = gates + 3 * stride;
  add_peephole(units, pi, c, input);
  clamp_row(units, p.clip, input);
  apply_row(p.f[d], units, input);
  if (p.input_forget) {
    for (index_t i = 0; i < units; ++i) forget[i] = C(1) - input[i];
  } else {
    add_peephole(units, pf, c, forget);
    clamp_row(units, p.clip, forget);
    apply_row(p.f[d], units, forget);
  }
  clamp_row(units, p.clip, candidate);
  apply_row(p.g[d], units, candidate);
  for (index_t i = 0; i < units; ++i) c[i] = forget[i] * c[i] + input[i] * candidate[i];
  add_peephole(units, po, c, output);  // the output gate's peephole reads the updated C
  clamp_row(units, p.clip, output);
  apply_row(p.f[d], units, output);
  C* cell_out = candidate;  // h(C), in the candidate row it no longer needs
  for (index_t i = 0; i < units; ++i) cell_out[i] = clamp(c[i], p.clip);
  apply_row(p.h[d], units, cell_out);
  for (index_t i = 0; i < units; ++i) h[i] = output[i] * cell_out[i];
}

// acc[q * units + u] += sum_k chunk[(k * gates + q) * units + u] * v[k]: one chunk of a
// unit-chunk matrix (pack_recurrent_weights) times a vector; len = gates * units.
inline void add_chunk_product(index_t len, index_t cols, const float* chunk, const float* v, float* acc) {
#if defined(ONNXC_SIMD)
  // The four-gate chunk of 16 units, the common case, in registers: 64 floats, 4 (AVX-512) or
  // 8 (AVX2) accumulators, two sets over even and odd k on AVX-512 to hide the FMA latency.
  constexpr index_t kFull = 4 * kRnnChunkUnits, kVectors = kFull / kFloatLanes;
  if (len == kFull && kVectors <= kVectorRegisters / 2) {
    constexpr index_t kSets = kVectors <= 4 ? 2 : 1;
    vfloat sum[kSets][kVectors];
    for (index_t s = 0; s < kSets; ++s)
      for (index_t i = 0; i < kVectors; ++i) sum[s][i] = vfloat(0.0f);
    index_t k = 0;
    for (; k + kSets <= cols; k += kSets)
      for (index_t s = 0; s < kSets; ++s) {
        const vfloat x(v[k + s]);
        const float* w = chunk + (k + s) * kFull;
        for (index_t i = 0; i < kVectors; ++i)
          sum[s][i] = xsimd::fma(vfloat::load_unaligned(w + i * kFloatLanes), x, sum[s][i]);
      }
    for (; k < cols; ++k) {
      const vfloat x(v[k]);
      for (index_t i = 0; i < kVectors; ++i)
        sum[0][i] = xsimd::fma(vfloat::load_unaligned(chunk + k * kFull + i * kFloatLanes), x, sum[0][i]);
    }
    for (index_t i = 0; i < kVectors; ++i) {
      vfloat t = vfloat::load_unaligned(acc + i * kFloatLanes) + sum[0][i];
      if (kSets > 1) t += sum[kSets - 1][i];
      t.store_unaligned(acc + i * kFloatLanes);
    }
    return;
  }
#endif
  for (index_t k = 0; k < cols; ++k) {
    const float x = v[k];
    const float* w = chunk + k * len;
    for (index_t i = 0; i < len; ++i) acc[i] += w[i] * x;
  }
}

// acc (4 * units) = the biases of hidden units [j, j + units) of direction d plus their input
// term x_t W^T, from packed W.
inline void lstm_chunk_input_term(const RnnParams& p, index_t d, index_t j, index_t units, const float* x_t,
                                  const float* w, const float* bias, float* acc) {
  const index_t n = p.hidden_size, in = p.input_size;
  const Biases<float> b = biases(bias, d, 4, n);
  for (index_t q = 0; q < 4; ++q)
    for (index_t u = 0; u < units; ++u) {
      const index_t row = q * n + j + u;
      acc[q * units + u] = (b.wb ? b.wb[row] : 0.0f) + (b.rb ? b.rb[row] : 0.0f);
    }
  add_chunk_product(4 * units, in, w + d * 4 * n * in + j * 4 * in, x_t, acc);
}

// The input terms of direction d for every step and batch entry (X row i's 4 * hidden gate
// values at proj + i * 4 * hidden, rows input, output, forget, candidate): chunk by chunk, so a
// chunk of W is read from memory once and from the cache for every row.
inline void lstm_project_inputs(const RnnParams& p, index_t d, const float* x, const float* w, const float* bias,
                                float* proj) {
  const index_t n = p.hidden_size, rows = p.seq_length * p.batch;
  for (index_t j = 0; j < n; j += kRnnChunkUnits) {
    const index_t units = n - j < kRnnChunkUnits ? n - j : kRnnChunkUnits;
    for (index_t i = 0; i < rows; ++i) {
      float acc[4 * kRnnChunkUnits];
      lstm_chunk_input_term(p, d, j, units, x + i * p.input_size, w, bias, acc);
      for (index_t q = 0; q < 4; ++q)
        for (index_t u = 0; u < units; ++u) proj[i * 4 * n + q * n + j + u] = acc[q * units + u];
    }
  }
}

// The four gates' pre-activations of hidden units [j, j + units) of direction d with packed W
// and R (rows input, output, forget, candidate, `stride` apart in out); h_prev null: zeros.
// projected: the step's row of lstm_project_inputs (then x_t, w and bias are not read), or null.
inline void lstm_packed_chunk(const RnnParams& p, index_t d, index_t j, index_t units, const float* x_t,
                              const float* w, const float* r, const float* bias, const float* projected,
                              const float* h_prev, float* out, index_t stride) {
  const index_t n = p.hidden_size;
  float acc[4 * kRnnChunkUnits];
  if (projected) {
    for (index_t q = 0; q < 4; ++q)
      for (index_t u = 0; u < units; ++u) acc[q * units + u] = projected[q * n + j + u];
  } else {
    lstm_chunk_input_term(p, d, j, units, x_t, w, bias, acc);
  }
  if (h_prev) add_chunk_product(4 * units, n, r + d * 4 * n * n + j * 4 * n, h_prev, acc);
  for (index_t q = 0; q < 4; ++q)
    for (index_t u = 0; u < units; ++u) out[q * stride + u] = acc[q * units + u];
}

// The gates of a whole step with packed weights.
inline void lstm_packed_gates(const RnnParams& p, index_t d, const float* x_t, const float* w, const float* r,
                              const float* bias, const float* projected, const float* h, float* gates) {
  const index_t n = p.hidden_size;
  for (index_t j = 0; j < n; j += kRnnChunkUnits)
    lstm_packed_chunk(p, d, j, n - j < kRnnChunkUnits ? n - j : kRnnChunkUnits, x_t, w, r, bias, projected, h,
                      gates + j, n);
}

template <class T> struct LstmCell {
  using C = compute_t<T>;
  const RnnParams& p;
  const T *x, *w, *r, *bias, *initial_c, *peepholes;
  T* y_c;
  C *h, *c;
  C* gates;  // 4 * hidden: i, o, f, c
  C* proj;   // p.projected: lstm_project_inputs' rows of the current direction

  void start(index_t d, index_t b) {
    load_state(p.hidden_size, initial_c, Rows{p}.state(d, b), c);
    if constexpr (std::is_same<T, float>::value)
      if (p.projected && b == 0) lstm_project_inputs(p, d, x, w, bias, proj);
  }
  // The gates row by row, so each activation runs over a whole row (vectorised for float).
  void step(index_t d, const T* x_t) {
    const index_t n = p.hidden_size;
    if (p.packed) {
      if constexpr (std::is_same<T, float>::value)
        lstm_packed_gates(p, d, x_t, w, r, bias, p.projected ? proj + (x_t - x) / p.input_size * 4 * n : nullptr, h,
                          gates);
    } else {
      const Biases<T> b = biases(bias, d, 4, n);
      set_bias(4 * n, b.wb, b.rb, gates);
      add_matvec(4 * n, p.input_size, w + d * 4 * n * p.input_size, x_t, gates);
      add_matvec(4 * n, n, r + d * 4 * n * n, h, gates);
    }
    const T* pd = peepholes ? peepholes + d * 3 * n : nullptr;
    lstm_update(p, d, n, n, pd, gates, c, h);
  }
  void finish(index_t d, index_t b, index_t steps) {
    if (!y_c) return;
    T* dst = y_c + Rows{p}.state(d, b);
    if (steps == 0) zero_row(p.hidden_size, dst);
    else store_row(p.hidden_size, c, dst);
  }
};

}  // namespace rnn_detail

// ---- RNN: H = f(X W^T + H R^T + Wb + Rb) ----

constexpr index_t rnn_scratch_elements(index_t hidden_size) { return 2 * hidden_size; }

template <class T>
inline void rnn(const RnnParams& p, const T* x, const T* w, const T* r, const T* bias, const std::int32_t* seq_lens,
                const T* initial_h, T* y, T* y_h, void* scratch) {
  using C = compute_t<T>;
  C* s = static_cast<C*>(scratch);
  rnn_detail::RnnCell<T> cell{p, w, r, bias, s, s + p.hidden_size};
  rnn_detail::run(p, x, seq_lens, initial_h, y, y_h, cell);
}

// ---- GRU, gates z (update), r (reset), h (hidden):
//   z = f(X Wz^T + H Rz^T + Wbz + Rbz),  r = f(X Wr^T + H Rr^T + Wbr + Rbr)
//   n = g(X Wh^T + (r . H) Rh^T + Rbh + Wbh)      (linear_before_reset = 0)
//   n = g(X Wh^T + r . (H Rh^T + Rbh) + Wbh)      (linear_before_reset = 1)
//   H = (1 - z) . n + z . H

constexpr index_t gru_scratch_elements(index_t hidden_size) { return 8 * hidden_size; }

template <class T>
inline void gru(const RnnParams& p, const T* x, const T* w, const T* r, const T* bias, const std::int32_t* seq_lens,
                const T* initial_h, T* y, T* y_h, void* scratch) {
  using C = compute_t<T>;
  C* s = static_cast<C*>(scratch);
  const index_t n = p.hidden_size;
  rnn_detail::GruCell<T> cell{p, w, r, bias, s, s + n, s + 4 * n, s + 7 * n};
  rnn_detail::run(p, x, seq_lens, initial_h, y, y_h, cell);
}

// ---- LSTM, gates i (input), o (output), f (forget), c (cell), peepholes P = (Pi, Po, Pf):
//   i = f(X Wi^T + H Ri^T + Pi . C + Wbi + Rbi)     f = f(... Pf . C ...)   (or 1 - i with input_forget)
//   c = g(X Wc^T + H Rc^T + Wbc + Rbc)              C = f . C + i . c
//   o = f(X Wo^T + H Ro^T + Po . C + Wbo + Rbo)     H = o . h(C)
// The output gate's peephole reads the updated C; clip also bounds C before h.

// (With p.projected, lstm_projection_elements more after these.)
constexpr index_t lstm_scratch_elements(index_t hidden_size) { return 6 * hidden_size; }

template <class T>
inline void lstm(const RnnParams& p, const T* x, const T* w, const T* r, const T* bias, const std::int32_t* seq_lens,
                 const T* initial_h, const T* initial_c, const T* peepholes, T* y, T* y_h, T* y_c, void* scratch) {
  using C = compute_t<T>;
  C* s = static_cast<C*>(scratch);
  const index_t n = p.hidden_size;
  rnn_detail::LstmCell<T> cell{p, x, w, r, bias, initial_c, peepholes, y_c, s, s + n, s + 2 * n, s + 6 * n};
  rnn_detail::run(p, x, seq_lens, initial_h, y, y_h, cell);
}

// ---- LSTM without scratch: the state in the outputs ----
//
// When the element type is its own compute type (float, double) and Y and Y_c are both
// produced, the LSTM needs no scratch: C lives in its Y_c row, each step reads the previous H
// from the Y row the step before wrote (or initial_h) and writes the new H into its own Y row,
// and the gates are computed a chunk of hidden units at a time in a small stack buffer.

namespace rnn_detail {

// Hidden units per chunk of lstm_step_in_outputs: its gates (4 x 16 values) on the stack; the
// chunks of the packed layout, so a packed chunk is one of its chunks.
constexpr index_t kLstmChunkUnits = kRnnChunkUnits;

// lstm_packed_chunk for float; double is never packed.
template <class T>
inline void lstm_packed_chunk_of(const RnnParams& p, index_t d, index_t j, index_t units, const T* x_t, const T* w,
                                 const T* r, const T* bias, const T* projected, const T* h_prev, T* out,
                                 index_t stride) {
  if constexpr (std::is_same<T, float>::value)
    lstm_packed_chunk(p, d, j, units, x_t, w, r, bias, projected, h_prev, out, stride);
}

// One time step of direction d: h = the new H from x_t and h_prev (null: zeros), c updated in
// place, chunk by chunk of hidden units. Each gate row is the same sum as rt::lstm's, and a
// chunk starts on a vector boundary, so the results are the same bits.
template <class T>
inline void lstm_step_in_outputs(const RnnParams& p, index_t d, const T* x_t, const T* w, const T* r, const T* bias,
                                 const T* peepholes, const T* projected, const T* h_prev, T* c, T* h) {
  const index_t n = p.hidden_size, in = p.input_size;
  const Biases<T> b = biases(bias, d, 4, n);
  const T* wd = w + d * 4 * n * in;
  const T* rd = r + d * 4 * n * n;
  const T* pd = peepholes ? peepholes + d * 3 * n : nullptr;
  const T* none = nullptr;
  for (index_t j = 0; j < n; j += kLstmChunkUnits) {
    const index_t units = n - j < kLstmChunkUnits ? n - j : kLstmChunkUnits;
    T gates[4 * kLstmChunkUnits];  // input, output, forget, candidate of units [j, j + units)
    if (p.packed) lstm_packed_chunk_of<T>(p, d, j, units, x_t, w, r, bias, projected, h_prev, gates, kLstmChunkUnits);
    for (index_t q = 0; q < 4 && !p.packed; ++q) {
      const index_t row = q * n + j;
      T* gate = gates + q * kLstmChunkUnits;
      set_bias(units, b.wb ? b.wb + row : none, b.rb ? b.rb + row : none, gate);
      add_matvec(units, in, wd + row * in, x_t, gate);
      if (h_prev) add_matvec(units, n, rd + row * n, h_prev, gate);
    }
    lstm_update(p, d, units, kLstmChunkUnits, pd ? pd + j : none, gates, c + j, h + j);
  }
}

}  // namespace rnn_detail

// With p.projected, scratch holds lstm_projection_elements values (else it is not read).
template <class T>
inline void lstm_in_outputs(const RnnParams& p, const T* x, const T* w, const T* r, const T* bias,
                            const std::int32_t* seq_lens, const T* initial_h, const T* initial_c, const T* peepholes,
                            T* y, T* y_h, T* y_c, void* scratch = nullptr) {
  static_assert(std::is_same<compute_t<T>, T>::value, "the state is kept in the outputs: T must be its compute type");
  const rnn_detail::Rows rows{p};
  const index_t n = p.hidden_size;
  T* proj = static_cast<T*>(scratch);
  for (index_t d = 0; d < p.directions; ++d) {
    const bool backwards = p.reverse || d == 1;
    if constexpr (std::is_same<T, float>::value)
      if (p.projected) rnn_detail::lstm_project_inputs(p, d, x, w, bias, proj);
    for (index_t b = 0; b < p.batch; ++b) {
      const index_t len = rnn_detail::sequence_length(p, seq_lens, b);
      T* c = y_c + rows.state(d, b);
      rnn_detail::load_state(n, initial_c, rows.state(d, b), c);
      const T* h_prev = initial_h ? initial_h + rows.state(d, b) : nullptr;
      for (index_t s = 0; s < len; ++s) {
        const index_t t = backwards ? len - 1 - s : s;
        T* h = y + rows.y(t, d, b);
        const T* projected = p.projected ? proj + rows.x(t, b) / p.input_size * 4 * n : nullptr;
        rnn_detail::lstm_step_in_outputs(p, d, x + rows.x(t, b), w, r, bias, peepholes, projected, h_prev, c, h);
        h_prev = h;
      }
      for (index_t t = len; t < p.seq_length; ++t) rnn_detail::zero_row(n, y + rows.y(t, d, b));
      if (len == 0) rnn_detail::zero_row(n, c);
      if (y_h) {
        if (len == 0) rnn_detail::zero_row(n, y_h + rows.state(d, b));
        else rnn_detail::store_row(n, h_prev, y_h + rows.state(d, b));
      }
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_RNN_H
