// DepthToSpace and SpaceToDepth: a reshape to 6 dims, a transpose, a reshape back; as one
// strided copy.
#include "ops/emitter.h"
#include "ops/strided_copy.h"

namespace onnxc {
namespace {

int64_t block_size(const Node& n) {
  if (!n.has_attr("blocksize")) fail_invalid(n, "required attribute 'blocksize' is missing");
  int64_t b = n.attr_int("blocksize", 0);
  if (b <= 0) fail_invalid(n, fmt::format("blocksize {} is not positive", b));
  return b;
}

const Shape& nchw_input(const Node& n) {
  const Shape& s = input(n, 0).shape;
  if (s.size() != 4) fail_invalid(n, fmt::format("input {} is not 4-D (N, C, H, W)", shape_str(s)));
  return s;
}

// DCR (the default) reads the channel as (b1, b2, c); CRD as (c, b1, b2). Either way the
// output is [N, C/b², H, b1, W, b2].
StridedCopy depth_to_space_copy(const Node& n) {
  const Shape& s = nchw_input(n);
  const int64_t b = block_size(n), c = s[1] / (b * b);
  if (n.attr_string("mode", "DCR") == "CRD") return permuted_copy({s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3});
  return permuted_copy({s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2});
}

void infer_depth_to_space(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Shape& s = nchw_input(n);
  const int64_t b = block_size(n);
  std::string mode = n.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") fail_invalid(n, fmt::format("mode '{}' is not DCR or CRD", mode));
  if (n.version < 11 && n.has_attr("mode")) fail_invalid(n, "'mode' exists from version 11 on");
  if (s[1] % (b * b) != 0) fail_invalid(n, fmt::format("channels {} are not divisible by blocksize² {}", s[1], b * b));
  set_output(n, 0, input(n, 0).dtype, {s[0], s[1] / (b * b), s[2] * b, s[3] * b});
}

// The input viewed as [N, C, H/b, b1, W/b, b2], written as [N, b1, b2, C, H/b, W/b].
StridedCopy space_to_depth_copy(const Node& n) {
  const Shape& s = nchw_input(n);
  const int64_t b = block_size(n);
  return permuted_copy({s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

void infer_space_to_depth(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Shape& s = nchw_input(n);
  const int64_t b = block_size(n);
  if (s[2] % b != 0 || s[3] % b != 0)
    fail_invalid(n, fmt::format("spatial dims {}x{} are not divisible by blocksize {}", s[2], s[3], b));
  set_output(n, 0, input(n, 0).dtype, {s[0], s[1] * b * b, s[2] / b, s[3] / b});
}

const OpRegistrar depth_to_space(strided_copy_op("DepthToSpace", {1, 11, 13}, infer_depth_to_space, depth_to_space_copy));
const OpRegistrar space_to_depth(strided_copy_op("SpaceToDepth", {1, 13}, infer_space_to_depth, space_to_depth_copy));

}  // namespace
}  // namespace onnxc
