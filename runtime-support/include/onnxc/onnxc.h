// onnxc runtime support: every kernel generated code may call.
#ifndef ONNXC_ONNXC_H
#define ONNXC_ONNXC_H

#include "onnxc/base.h"
#include "onnxc/conv.h"
#include "onnxc/eltwise.h"
#include "onnxc/gemm.h"
#include "onnxc/layout.h"
#include "onnxc/normalization.h"
#include "onnxc/pool.h"

#endif  // ONNXC_ONNXC_H
