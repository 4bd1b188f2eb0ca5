#pragma once

namespace onnxc {
inline constexpr const char* kOnnxcVersion = "0.1.0";
}
