// Copies of subgraphs, for the operators that are compiled by unrolling or inlining a body
// rather than as C++ control flow: SequenceMap (one copy per element), a Loop carrying a
// sequence or optional (one copy per iteration) and an If that returns one.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/sequence.h"

namespace onnxc {

// Copies `body`'s nodes into the graph `l` lowers into, reading `inputs` for the body's inputs;
// returns the values that stand for the body's outputs. The copies' new values are named after
// the body's with `suffix`. Subgraphs of the body's nodes are copied too, so that each copy reads
// its own values (a body is never shared between copies, which inference would specialise).
std::vector<Value*> inline_graph(Lowering& l, const Graph& body, const std::vector<Value*>& inputs,
                                 const std::string& suffix);

// A copy of the subgraph `src`, in the same scope (reading the same outer values): something to
// try inference on without specialising `src` itself.
std::shared_ptr<Graph> copy_graph(const Graph& src);

}  // namespace onnxc
