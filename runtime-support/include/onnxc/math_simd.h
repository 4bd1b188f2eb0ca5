// Vector exp and erf of float on xsimd targets (empty elsewhere): the Softmax kernels' exponential
// and the GELU epilogue's erf, faster than xsimd's (which evaluate every range's formula with
// more care for double). Both are checked against float64 over the whole float range in
// tests/unit/softmax_norm_test.cpp.
//
// exp_vec: Cody-Waite reduction x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor
// polynomial of degree 7 (truncation below 0.1 ulp), and 2^n applied as two powers of two, so
// results that are subnormal, or finite above 2^127, are rounded once. Within 2 ulp.
//
// erf_vec: odd, from a = |x|: below 1, a * P(a^2) (degree 5, least squares on Chebyshev nodes
// of erf(a) / a); from 1, 1 - exp(-a^2) * Q(a - 2.5) (degree 10, the same fit of
// erfc(a) exp(a^2) over [1, 4]); from 4 on, 1 (erfc(4) is below half an ulp of 1). Within 3 ulp.
#ifndef ONNXC_MATH_SIMD_H
#define ONNXC_MATH_SIMD_H

#include "onnxc/simd.h"

#if defined(ONNXC_SIMD)
namespace onnxc {
namespace rt {

inline vfloat exp_vec(vfloat x) {
  using vint = xsimd::batch<int32_t>;
  // exp(-103.98) is below half the smallest subnormal, exp(88.73) above the largest float.
  const vfloat xc = xsimd::min(xsimd::max(x, vfloat(-104.0f)), vfloat(88.75f));
  // n = round(x / ln2) by the 1.5 * 2^23 shifter (exact for |n| < 2^22).
  const vfloat shifter(12582912.0f);
  const vfloat n = xsimd::fma(xc, vfloat(1.44269504088896341f), shifter) - shifter;
  // r = x - n ln2 with ln2 in two parts (the high part's product with n is exact).
  vfloat r = xsimd::fnma(n, vfloat(0.693145751953125f), xc);
  r = xsimd::fnma(n, vfloat(1.428606765330187045e-06f), r);
  vfloat p(1.0f / 5040.0f);
  p = xsimd::fma(p, r, vfloat(1.0f / 720.0f));
  p = xsimd::fma(p, r, vfloat(1.0f / 120.0f));
  p = xsimd::fma(p, r, vfloat(1.0f / 24.0f));
  p = xsimd::fma(p, r, vfloat(1.0f / 6.0f));
  p = xsimd::fma(p, r, vfloat(0.5f));
  p = xsimd::fma(p, r, vfloat(1.0f));
  p = xsimd::fma(p, r, vfloat(1.0f));
  // 2^n = 2^n1 * 2^n2, each a normal float for n in [-150, 129].
  const vint ni = xsimd::to_int(n);
  const vint n1 = ni >> 1;
  const vint n2 = ni - n1;
  const vfloat s1 = xsimd::bitwise_cast<vfloat>((n1 + vint(127)) << 23);
  const vfloat s2 = xsimd::bitwise_cast<vfloat>((n2 + vint(127)) << 23);
  const vfloat y = p * s1 * s2;
  return xsimd::select(xsimd::isnan(x), x, y);  // NaN stays NaN (the clamp may have dropped it)
}

inline vfloat erf_vec(vfloat x) {
  const vfloat a = xsimd::min(xsimd::abs(x), vfloat(4.0f));
  const vfloat t = a * a;
  vfloat p(-0.0005654108827002347f);
  p = xsimd::fma(p, t, vfloat(0.004923280794173479f));
  p = xsimd::fma(p, t, vfloat(-0.026716390624642372f));
  p = xsimd::fma(p, t, vfloat(0.11280364543199539f));
  p = xsimd::fma(p, t, vfloat(-0.37612348794937134f));
  p = xsimd::fma(p, t, vfloat(1.1283791065216064f));
  const vfloat near_zero = a * p;
  const vfloat u = a - vfloat(2.5f);
  vfloat q(1.6718327060516458e-06f);
  q = xsimd::fma(q, u, vfloat(-6.3862098613753915e-06f));
  q = xsimd::fma(q, u, vfloat(1.4353506230690982e-05f));
  q = xsimd::fma(q, u, vfloat(-5.358525231713429e-05f));
  q = xsimd::fma(q, u, vfloat(0.00021297235798556358f));
  q = xsimd::fma(q, u, vfloat(-0.0007389984093606472f));
  q = xsimd::fma(q, u, vfloat(0.002465982222929597f));
  q = xsimd::fma(q, u, vfloat(-0.007999344728887081f));
  q = xsimd::fma(q, u, vfloat(0.024938203394412994f));
  q = xsimd::fma(q, u, vfloat(-0.0743476003408432f));
  q = xsimd::fma(q, u, vfloat(0.21080635488033295f));
  const vfloat far = vfloat(1.0f) - exp_vec(-t) * q;
  const vfloat y = xsimd::select(a < vfloat(1.0f), near_zero, far);
  // The sign of x (erf(-0) is -0), NaN through.
  const vfloat signed_y = xsimd::bitwise_or(y, xsimd::bitwise_and(x, vfloat(-0.0f)));
  return xsimd::select(xsimd::isnan(x), x, signed_y);
}

}  // namespace rt
}  // namespace onnxc
#endif

#endif  // ONNXC_MATH_SIMD_H
