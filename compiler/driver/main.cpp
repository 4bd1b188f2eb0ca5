// onnxc: compile an ONNX model to self-contained C++.
//
// Conventions of the command line: results (the --check report, the source with `-o -`) go to
// stdout, messages (summary, errors, progress) to stderr. Colours and the progress line appear
// only when stderr is a terminal, so logs and pipes get plain text. Exit codes: 0 success,
// 1 the model could not be compiled (or a file not written), 2 a bad command line.
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "backend/target.h"
#include "backend/weights.h"
#include "frontend/load.h"
#include "ir/print.h"
#include "driver/commands.h"
#include "driver/firmware.h"
#include "driver/report.h"
#include "ops/op.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"
#include "support/version.h"

namespace fs = std::filesystem;
using namespace onnxc;

namespace {

// ---- the terminal ------------------------------------------------------------------------

// What stderr can show. NO_COLOR (https://no-color.org) and TERM=dumb turn colours off.
struct Terminal {
  bool interactive = false;  // a person is watching: progress may be drawn
  bool colour = false;

  static Terminal of_stderr() {
    Terminal t;
    t.interactive = isatty(STDERR_FILENO) == 1;
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    t.colour = t.interactive && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
    return t;
  }

  // text in the given SGR style (e.g. "1;31", bold red) when colours are on.
  std::string paint(const char* sgr, const std::string& text) const {
    return colour ? fmt::format("\033[{}m{}\033[0m", sgr, text) : text;
  }
};

constexpr const char* kErrorStyle = "1;31";  // bold red
constexpr const char* kFixStyle = "1;36";    // bold cyan
constexpr const char* kWarningStyle = "1;35";  // bold magenta

// Colours the labels of a message formatted by format_problem(): "error:", "unsupported:",
// and the "fix:" of its hint line.
std::string styled(const Terminal& term, std::string message) {
  if (!term.colour) return message;
  auto paint_label = [&](const std::string& label, const char* style) {
    for (std::size_t at = message.find(label); at != std::string::npos; at = message.find(label, at)) {
      bool starts_line = at == 0 || message[at - 1] == '\n' || message[at - 1] == ' ';
      std::string painted = starts_line ? term.paint(style, label) : label;
      message.replace(at, label.size(), painted);
      at += painted.size();
    }
  };
  paint_label("error:", kErrorStyle);
  paint_label("unsupported:", kErrorStyle);
  paint_label("warning:", kWarningStyle);
  paint_label("fix:", kFixStyle);
  return message;
}

void print_message(const Terminal& term, const std::string& message) {
  fmt::print(stderr, "{}\n", styled(term, message));
}

// Prints the loader's warnings about `file`, each once (validate loads a model more than once).
std::function<void(const Problem&)> warning_printer(const Terminal& term, const std::string& file) {
  auto printed = std::make_shared<std::set<std::string>>();
  return [term, file, printed](const Problem& p) {
    std::string message = fmt::format("warning: {}: {}: {}", file, p.where, p.what);
    if (!p.fix.empty()) message += "\n  fix: " + p.fix;
    if (printed->insert(message).second) print_message(term, message);
  };
}

// A repeatable option takes one value per occurrence, in every command. CLI11's vector options
// otherwise take every word up to the next option, the model's name too:
// `onnxc --dim N=1 model.onnx -o m.cpp` failed with "model is required".
void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_items_expected_max() > 1) option->allow_extra_args(false);
  for (CLI::App* command : app.get_subcommands(std::function<bool(CLI::App*)>{}))
    one_value_per_occurrence(*command);
}

// A one-line progress indicator for long compiles (large models take seconds): once a compile
// has run for a second it shows "onnxc: generating C++ for model.onnx (3.2 s)" on stderr,
// redrawn in place, and erases it when done. Nothing at all unless stderr is a terminal.
class ProgressLine {
 public:
  ProgressLine(const Terminal& term, std::string subject) : subject_(std::move(subject)) {
    if (term.interactive) thread_ = std::thread([this] { draw_until_done(); });
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { finish(); }

  // Stops and erases the line (before anything else is printed).
  void finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void phase(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = std::move(what);
  }

 private:
  void draw_until_done() {
    using namespace std::chrono;
    const auto start = steady_clock::now();
    bool drawn = false;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (wake_.wait_for(lock, drawn ? milliseconds(100) : seconds(1), [this] { return done_; })) break;
      double seconds = duration<double>(steady_clock::now() - start).count();
      fmt::print(stderr, "\r\033[Konnxc: {} {} ({:.1f} s)", phase_, subject_, seconds);
      std::fflush(stderr);
      drawn = true;
    }
    if (drawn) fmt::print(stderr, "\r\033[K");
  }

  std::string subject_;
  std::string phase_ = "compiling";
  bool done_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

// ---- options shared by compile, validate and bench -------------------------------------------

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "1x3x224x224" -> {1, 3, 224, 224}; "" or "scalar" -> {}.
bool parse_dims(const std::string& s, Shape* out) {
  out->clear();
  if (s.empty() || s == "scalar") return true;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t x = s.find_first_of("x,", pos);
    std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12) return false;
    out->push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return true;
}

struct Common {
  std::vector<std::string> shapes, dims, disabled, constants;
  std::vector<std::string> sequences, empty_optionals;
  std::size_t alignment = 16;
  std::size_t string_bytes = CompileOptions{}.string_bytes;
  std::string name = "model";
  std::string target = "generic";  // --target (backend/target.h)
  std::string scratch;              // --scratch; empty: the target's default
  std::size_t memory_budget = 0;    // --memory-budget
  bool strict = false;              // --strict
  bool time_passes = false;         // --time-passes
  std::vector<std::string> dump_after;  // --dump-after PASS
};

void add_common(CLI::App* app, Common& c) {
  app->add_option("--shape", c.shapes,
                  "Bind an input's shape: NAME=1x3x224x224 (for inputs with symbolic or unknown dims). Repeatable.")
      ->type_name("NAME=DIMS");
  app->add_option("--dim", c.dims, "Bind a symbolic dim (dim_param) everywhere it appears: N=1. Repeatable.")
      ->type_name("PARAM=VALUE");
  app->add_option("--sequence", c.sequences,
                  "Bind a sequence input (or an optional input holding one) to a fixed length and element shapes, "
                  "comma-separated: seq=2x3,4x3 (two elements), seq= (empty). It becomes the tensor inputs "
                  "seq_0, seq_1, ... of run(). Repeatable.")
      ->type_name("NAME=DIMS[,DIMS...]");
  app->add_option("--empty-optional", c.empty_optionals,
                  "Compile an optional input as absent (no parameter in run()); optional inputs are present "
                  "otherwise. Repeatable.")
      ->type_name("NAME");
  app->add_option("--constant", c.constants,
                  "Promise an input always has this value (comma-separated elements, or a TensorProto file NAME.pb): "
                  "it is folded into the code, e.g. --constant sr=16000 so only the matching If branch is compiled, "
                  "or --constant shape=shape.pb for a Reshape whose target shape is an input. The input stays in "
                  "run()'s signature and is not read. Repeatable.")
      ->type_name("NAME=V[,V...]|NAME=FILE.pb");
  app->add_option("--alignment", c.alignment,
                  "Byte alignment of every arena tensor and weight array (a power of two, at least 16; e.g. 64 for "
                  "AVX-512). Default 16.")
      ->type_name("BYTES");
  app->add_option("--string-bytes", c.string_bytes,
                  fmt::format("Text storage for each string a model writes whose length is unknown at compile time "
                              "(StringNormalizer's case changes), NUL included; a string that does not fit is a "
                              "null pointer in the output. Default {}.",
                              CompileOptions{}.string_bytes))
      ->type_name("BYTES");
  app->add_option("--memory-budget", c.memory_budget,
                  "The most arena bytes the plan may take. Over it, onnxc turns on the passes that lower the arena "
                  "that --disable-pass or --scratch speed turned off, and fails with the smallest arena it reaches "
                  "when that is still over. Default: no budget.")
      ->type_name("BYTES");
  app->add_option("--disable-pass", c.disabled,
                  fmt::format("Turn off an optional pass: {}. Repeatable.", fmt::join(optional_passes(), ", ")))
      ->type_name("NAME");
  app->add_option("--scratch", c.scratch,
                  "How much arena the kernels' scratch may take. 'fit' (the default): only the memory the tensors "
                  "leave free at the kernel's step, so the arena is the tensors' alone (im2col blocks narrow down "
                  "to a direct kernel that needs none: on SIMD targets rt::conv_direct_packed, output channels in "
                  "the vector lanes, which also takes Convs of at most 64 output positions; depthwise Convs split "
                  "into fewer parallel tasks, down to a kernel that reads the input in place; on SIMD targets "
                  "within ~8 % of 'speed' on the shared models, docs/memory.md). 'speed': no slower kernel to save "
                  "memory (at least one row of register tiles per im2col block, 4 depthwise slots), even where the "
                  "arena grows. --report shows each step's choice.")
      ->type_name("fit|speed");
  app->add_flag("--strict", c.strict,
                "Refuse a model that breaks a MUST of the ONNX spec which onnxc otherwise compiles around with a "
                "warning: node names repeated in a graph (names are diagnostic only; onnxc renames the repeats "
                "NAME_INDEX). Every other violation onnxc detects is refused either way.");
  app->add_flag("--time-passes", c.time_passes,
                "Print each compiler pass's time and the node count it left, in the order they ran, to stderr.");
  app->add_option("--dump-after", c.dump_after,
                  fmt::format("Print the graph as text (nodes in order, values with types and shapes, attributes) to "
                              "stderr after a pass, or after every pass with 'all'. Passes: {}. Repeatable.",
                              fmt::join(pass_names(), ", ")))
      ->type_name("PASS");
}

// The options of a command on `subject` (the model or its directory, for warnings).
CompileOptions to_options(const Common& c, const Terminal& term, const std::string& subject) {
  CompileOptions o;
  o.name = c.name;
  o.strict = c.strict;
  o.warn = warning_printer(term, subject);
  if (!find_target(c.target))
    throw CompileError(ErrorKind::Usage, "--target " + c.target, "unknown target",
                       fmt::format("the targets are: {}", fmt::join(target_names(), ", ")));
  o.target = c.target;
  if (c.alignment < 16 || (c.alignment & (c.alignment - 1)) != 0)
    throw CompileError(ErrorKind::Usage, fmt::format("--alignment {}", c.alignment),
                       "must be a power of two and at least 16");
  o.alignment = c.alignment;
  const std::set<std::string> dump(c.dump_after.begin(), c.dump_after.end());
  for (const std::string& p : dump)
    if (p != "all" && std::find(pass_names().begin(), pass_names().end(), p) == pass_names().end())
      throw CompileError(ErrorKind::Usage, "--dump-after " + p, "no such pass",
                         fmt::format("the passes are: {} (or 'all')", fmt::join(pass_names(), ", ")));
  if (c.time_passes || !dump.empty())
    o.pass_log = [time = c.time_passes, dump](const char* pass, double ms, const Graph& g) {
      if (time) fmt::print(stderr, "pass {:<26} {:>10.3f} ms {:>6} nodes\n", pass, ms, g.nodes.size());
      if (dump.count("all") || dump.count(pass))
        fmt::print(stderr, "--- graph after {} ---\n{}", pass, graph_text(g));
    };
  if (c.string_bytes == 0)
    throw CompileError(ErrorKind::Usage, "--string-bytes 0", "a string needs at least its NUL byte");
  o.string_bytes = c.string_bytes;
  if (!c.scratch.empty() && c.scratch != "fit" && c.scratch != "speed")
    throw CompileError(ErrorKind::Usage, "--scratch " + c.scratch, "unknown policy",
                       "use 'fit' (scratch only where the tensors leave room) or 'speed' (the fastest kernels)");
  if (c.scratch == "fit") o.scratch_policy = ScratchPolicy::Fit;
  if (c.scratch == "speed") o.scratch_policy = ScratchPolicy::Speed;
  o.memory_budget = c.memory_budget;
  for (const std::string& s : c.shapes) {
    auto eq = s.rfind('=');
    Shape shape;
    if (eq == std::string::npos || eq == 0 || !parse_dims(s.substr(eq + 1), &shape))
      throw CompileError(ErrorKind::Usage, "--shape " + s, "expected NAME=DIMS, e.g. input=1x3x224x224");
    o.input_shapes[s.substr(0, eq)] = shape;
  }
  for (const std::string& s : c.dims) {
    auto eq = s.find('=');
    Shape v;
    if (eq == std::string::npos || eq == 0 || !parse_dims(s.substr(eq + 1), &v) || v.size() != 1)
      throw CompileError(ErrorKind::Usage, "--dim " + s, "expected PARAM=VALUE, e.g. N=1");
    o.dims[s.substr(0, eq)] = v[0];
  }
  for (const std::string& s : c.sequences) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CompileError(ErrorKind::Usage, "--sequence " + s, "expected NAME=DIMS[,DIMS...], e.g. seq=2x3,4x3");
    std::vector<Shape>& shapes = o.sequence_shapes[s.substr(0, eq)];
    for (std::size_t pos = eq + 1; pos < s.size();) {
      std::size_t comma = std::min(s.find(',', pos), s.size());
      Shape shape;
      if (!parse_dims(s.substr(pos, comma - pos), &shape))
        throw CompileError(ErrorKind::Usage, "--sequence " + s, "expected NAME=DIMS[,DIMS...], e.g. seq=2x3,4x3");
      shapes.push_back(shape);
      pos = comma + 1;
    }
  }
  o.empty_optionals.insert(c.empty_optionals.begin(), c.empty_optionals.end());
  for (const std::string& s : c.constants) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CompileError(ErrorKind::Usage, "--constant " + s,
                         "expected NAME=VALUE[,VALUE...] or NAME=FILE.pb, e.g. sr=16000");
    if (ends_with(s, ".pb")) {
      o.constant_tensors[s.substr(0, eq)] = load_tensor_file(s.substr(eq + 1));
      continue;
    }
    std::vector<double> values;
    std::size_t pos = eq + 1;
    while (pos <= s.size()) {
      std::size_t comma = s.find(',', pos);
      std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        std::size_t used = 0;
        values.push_back(std::stod(part, &used));
        if (used != part.size()) throw std::invalid_argument(part);
      } catch (const std::exception&) {
        throw CompileError(ErrorKind::Usage, "--constant " + s, fmt::format("'{}' is not a number", part));
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    o.constants[s.substr(0, eq)] = values;
  }
  for (const std::string& p : c.disabled) {
    if (!optional_passes().count(p))
      throw CompileError(ErrorKind::Usage, "--disable-pass " + p, "no such optional pass",
                         fmt::format("the optional passes are: {}", fmt::join(optional_passes(), ", ")));
    o.disabled_passes.insert(p);
  }
  return o;
}

// validate's `--constant NAME` (no value): NAME takes its value from each test data set.
void take_pins_from_data(Common& c, ValidateOptions& v) {
  auto no_value = [](const std::string& s) { return s.find('=') == std::string::npos && !s.empty(); };
  for (const std::string& s : c.constants)
    if (no_value(s)) v.pinned_inputs.push_back(s);
  c.constants.erase(std::remove_if(c.constants.begin(), c.constants.end(), no_value), c.constants.end());
}

// ---- the compile command (no subcommand) ------------------------------------------------------

// The --target help: every target, and what a SIMD target needs.
std::string target_help(const std::string& more) {
  return fmt::format("The instruction set the generated code is for: {}. SIMD targets use the xsimd kernels and need "
                     "the matching compiler flags (validate and bench add them); 'generic' is plain C++.{}",
                     fmt::join(target_names(), ", "), more);
}

// The --help footer: one line per target with what it is for.
std::string targets_footer() {
  std::string s = "Targets (--target):\n";
  for (const Target& t : targets()) s += fmt::format("  {:<13}{}\n", t.name, t.description);
  return s;
}

struct CompileCommand {
  Common common;
  std::string model;
  std::string output;  // OUT.cpp, or "-" for stdout
  std::string header;  // --header: where the header goes (default: beside OUT, or the model with -o -)
  std::string weights_format = "auto";
  std::string weights_section;
  bool check = false;
  bool report = false;
  std::string report_json_path;
  bool trace = false, profile = false;  // --trace, --profile
  bool list_operators = false;
};

// --list-operators: every operator of the ONNX domains onnxc compiles, one a line, with the
// versions (since_version) it implements: "DOMAIN OP V1,V2,..." (ai.onnx as "ai.onnx").
int list_operators() {
  std::vector<std::string> lines;
  for (const OpDef* d : all_ops()) {
    if (d->domain != "" && d->domain != "ai.onnx.ml" && d->domain != "ai.onnx.preview.training") continue;
    std::string versions;
    for (int v : d->versions) versions += (versions.empty() ? "" : ",") + std::to_string(v);
    lines.push_back(fmt::format("{} {} {}", d->domain.empty() ? "ai.onnx" : d->domain, d->op_type, versions));
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& l : lines) fmt::print("{}\n", l);
  return 0;
}

// Where each generated file goes, and how the source refers to its neighbours.
struct OutputFiles {
  std::string source, header, weights;  // paths; source may be "-"; weights empty for the array format
  std::string source_name;              // what the source calls itself (with -o -: named after the header)
};

// Weights from this size on are better compiled with --weights-format incbin.
constexpr std::size_t kLargeWeightBytes = std::size_t(4) << 20;

OutputFiles output_files(const CompileCommand& cmd, WeightsFormat format) {
  OutputFiles f;
  fs::path model = cmd.model;
  f.source = cmd.output.empty() ? model.stem().string() + ".cpp" : cmd.output;
  if (!cmd.header.empty()) f.header = cmd.header;
  else if (f.source == "-") f.header = fs::path(model).replace_extension(".h").string();
  else f.header = fs::path(f.source).replace_extension(".h").string();
  // With the source on stdout, its banner and the weights file are named after the header.
  f.source_name = f.source == "-" ? fs::path(f.header).replace_extension(".cpp").string() : f.source;
  if (format == WeightsFormat::Incbin)
    f.weights = fs::path(f.source_name).replace_extension(kWeightsFileSuffix).string();
  return f;
}

// Writes content to path ("-": stdout); on failure returns why.
std::optional<std::string> write_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return std::cout ? std::nullopt : std::optional<std::string>("cannot write to stdout");
  }
  errno = 0;
  std::ofstream f(path, std::ios::binary);
  f << content;
  if (f.flush()) return std::nullopt;
  return fmt::format("cannot write {}{}", path, errno ? std::string(": ") + std::strerror(errno) : "");
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// "13951544 bytes (13.3 MiB)": exact for scripts, rounded for people.
std::string byte_count(std::size_t n) {
  if (n < 1024) return fmt::format("{} bytes", n);
  if (n < 1024 * 1024) return fmt::format("{} bytes ({:.1f} KiB)", n, n / 1024.0);
  return fmt::format("{} bytes ({:.1f} MiB)", n, n / (1024.0 * 1024.0));
}

// The one line a successful compile prints: what was made and where it went.
void print_summary(const Compilation& c, const OutputFiles& files, const std::string& weights_format) {
  std::vector<std::string> written = {files.source == "-" ? "<stdout>" : files.source, files.header};
  if (!files.weights.empty()) written.push_back(files.weights);
  fmt::print(stderr, "{}: {} nodes -> {} steps ({} folded, {} fused), arena {}, weights {} as {} -> {}\n",
             file_name(c.model.path), c.file_nodes, c.program.main.steps.size(), c.folded_nodes, c.fused_nodes,
             byte_count(c.program.arena_bytes), byte_count(c.program.weights_bytes), weights_format,
             fmt::join(written, ", "));
}

// The shape as the file declares it, symbolic dims by name and unknown ones as '?': "[N, 3, ?]".
std::string declared_shape_str(const Value& v) {
  std::vector<std::string> dims;
  for (const Dim& d : v.declared_dims)
    dims.push_back(d.value >= 0 ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// "  input 'x': float [1, 3, 224, 224] (declared [N, 3, 224, 224])"; a bounded output's shape is
// "at most [2, 6]".
void print_graph_value(const char* role, const Value& v) {
  std::string shape = shape_str(v.shape), declared = declared_shape_str(v);
  std::string note = !v.declared_rank ? " (no declared shape)" : declared != shape ? " (declared " + declared + ")" : "";
  fmt::print("  {} '{}': {} {}{}{}\n", role, v.name, dtype_name(v.dtype), v.is_bounded() ? "at most " : "", shape, note);
}

int run_check(const CompileCommand& cmd, const CompileOptions& co) {
  Model m = check_model(cmd.model, co);
  fmt::print("{}: ok ({} nodes, IR version {}, opset {}{})\n", cmd.model, m.graph.nodes.size(), m.ir_version,
             m.opsets.count("") ? m.opsets.at("") : 0,
             m.function_calls ? fmt::format(", {} function calls expanded", m.function_calls) : "");
  for (const Value* v : m.graph.inputs) print_graph_value("input", *v);
  for (const Value* v : m.graph.outputs) print_graph_value("output", *v);
  if (!cmd.report_json_path.empty())
    if (auto failure = write_file(cmd.report_json_path, inferred_values_json(m))) {
      fmt::print(stderr, "error: {}\n", *failure);
      return 1;
    }
  return 0;
}

// A name the assembler and linker take for a section without quoting.
bool is_section_name(const std::string& s) {
  return s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._$") == std::string::npos;
}

int run_compile(const CompileCommand& cmd, const Terminal& term) {
  CompileOptions co = to_options(cmd.common, term, cmd.model);
  if (!parse_weights_format(cmd.weights_format, &co.weights_format))
    throw CompileError(ErrorKind::Usage, "--weights-format " + cmd.weights_format, "unknown format",
                       "use 'auto', 'array' (weights as C++ arrays) or 'incbin' (a binary file the assembler includes)");
  if (!cmd.weights_section.empty() && !is_section_name(cmd.weights_section))
    throw CompileError(ErrorKind::Usage, "--weights-section " + cmd.weights_section, "not a section name",
                       "use letters, digits, '.', '_' and '$', e.g. .onnxc_weights");
  co.weights_section = cmd.weights_section;
  co.trace = cmd.trace;
  co.profile = cmd.profile;
  if (cmd.check) return run_check(cmd, co);

  ProgressLine progress(term, file_name(cmd.model));
  Compilation c = compile_model(cmd.model, co);
  const WeightsFormat requested_format = co.weights_format;
  co.weights_format = choose_weights_format(requested_format, c.program, co.target);
  OutputFiles files = output_files(cmd, co.weights_format);
  if (cmd.report) fmt::print("{}", report_text(c));
  if (!cmd.report_json_path.empty()) {
    if (auto failure = write_file(cmd.report_json_path, report_json(c))) {
      progress.finish();
      print_message(term, "error: " + *failure);
      return 1;
    }
  }
  progress.phase("generating C++ for");
  GeneratedCode code =
      emit_code(c, co, file_name(files.header), file_name(files.source_name), file_name(files.weights));
  progress.phase("writing the code of");
  for (const auto& [path, content] : {std::pair{files.header, &code.header}, std::pair{files.source, &code.source},
                                      std::pair{files.weights, &code.weights_file}}) {
    if (path.empty()) continue;
    if (auto failure = write_file(path, *content)) {
      progress.finish();
      print_message(term, "error: " + *failure);
      return 1;
    }
  }
  progress.finish();
  print_summary(c, files, weights_format_description(requested_format, co.weights_format));
  if (co.weights_format == WeightsFormat::Array && c.program.weights_bytes >= kLargeWeightBytes)
    fmt::print(stderr,
               "note: {} of weights as C++ arrays take long to compile; --weights-format incbin (in CMake: "
               "onnxc_add_model(... WEIGHTS incbin)) keeps them in a binary file\n",
               byte_count(c.program.weights_bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Terminal term = Terminal::of_stderr();
  CLI::App app{
      "onnxc: compile an ONNX model into self-contained C++ (no heap, no interpreter, one static arena).\n\n"
      "Examples:\n"
      "  onnxc model.onnx -o model.cpp              writes model.cpp and model.h\n"
      "  onnxc model.onnx -o net.cpp --name net     C++ namespace net, C functions net_run(...)\n"
      "  onnxc model.onnx -o m.cpp --weights-format incbin\n"
      "                                             weights in m.weights.bin, for large models\n"
      "  onnxc model.onnx -o - --header m.h > m.cpp the source on stdout\n"
      "  onnxc model.onnx --check --dim N=1         validate and infer shapes only\n"
      "  onnxc validate tests/models/mnist-cnn      compile, build, run on test data, compare\n"
      "  onnxc bench model.onnx --runs 200          build with -O3 -march=native and time it\n\n"
      "Results go to stdout, messages to stderr. Exit status: 0 ok, 1 the model cannot be compiled, 2 bad usage.\n"};
  app.set_version_flag("--version", std::string("onnxc ") + kOnnxcVersion);
  app.footer(targets_footer());
  app.require_subcommand(0, 1);

  CompileCommand cmd;
  app.add_option("model", cmd.model, "The ONNX model file to compile.")->type_name("MODEL.onnx");
  app.add_option("-o,--output", cmd.output,
                 "The C++ source to write; the header goes beside it (.h instead of .cpp). '-' writes the source to "
                 "stdout and the header beside MODEL (or to --header). Default: MODEL's name with .cpp, in the "
                 "current directory.")
      ->type_name("OUT.cpp");
  app.add_option("--header", cmd.header,
                 "Where to write the header (default: beside OUT.cpp). The source includes it by file name.")
      ->type_name("OUT.h");
  app.add_option("--name", cmd.common.name,
                 "C++ namespace and C function prefix of the generated code (default: model).")
      ->type_name("NS");
  app.add_option("--weights-format", cmd.weights_format,
                 "'array': weights as const C++ arrays in OUT.cpp. 'incbin': weights in OUT.weights.bin, "
                 "which OUT.cpp includes with the assembler's .incbin (GNU as or clang, ELF targets): a large model "
                 "compiles in seconds instead of minutes. Compile OUT.cpp from the directory of OUT.weights.bin or "
                 "with -DONNXC_WEIGHTS_FILE='\"path/OUT.weights.bin\"'. 'auto' (default): incbin for 1 MiB of weights "
                 "or more on ELF targets (Linux hosts, Cortex-M), array otherwise; the summary line says which.")
      ->type_name("auto|array|incbin");
  app.add_option("--weights-section", cmd.weights_section,
                 "Put the weights in this linker section (e.g. .onnxc_weights) instead of read-only data, so a "
                 "firmware linker script can place them in a memory region of their own (external flash, say). "
                 "Both weight formats.")
      ->type_name("NAME");
  app.add_option("--target", cmd.common.target, target_help(" Default: generic."))->type_name("ISA");
  app.add_flag("--check", cmd.check, "Only validate the model and infer every shape; generate nothing.");
  app.add_flag("--list-operators", cmd.list_operators,
               "Print every operator of the ONNX domains onnxc compiles with the versions it implements "
               "(DOMAIN OP V1,V2,...), and exit. A listed version may still refuse some element types or attributes; "
               "docs/conformance.md says which.");
  app.add_flag("--trace", cmd.trace,
               "After every step, run() calls onnxc_trace(const onnxc_trace_info*) once per value the step produced "
               "(step, node name, op, value name, element type, shape, pointer, bytes), which the program defines "
               "(onnxc/trace.h; docs/debugging.md). Without it the code is the same bytes as before.");
  app.add_flag("--profile", cmd.profile,
               "Read a counter around every step of run() and pass the step's ticks to onnxc_profile(const "
               "onnxc_step_info*, uint64_t), which the program defines: DWT CYCCNT on Cortex-M, rdcycle on RISC-V, "
               "steady_clock nanoseconds on hosts; a program may define ONNXC_PROFILE_COUNTER() instead "
               "(onnxc/profile.h).");
  app.add_flag("--report", cmd.report,
               "Print the memory plan and per-step cost: arena and weight bytes, every step's op, shapes, MACs and "
               "bytes moved, every tensor's storage, offset, size and lifetime.");
  app.add_option("--report-json", cmd.report_json_path,
                 "Write the same report as JSON to FILE. With --check: the inferred dtype and shape of every value "
                 "of the main graph.")
      ->type_name("FILE");
  add_common(&app, cmd.common);

  ValidateOptions vopt;
  Common vcommon;
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Compile a model, build the generated code with the host compiler, run it on test data and compare with the "
      "expected outputs. Exit 0 only if every output matches.\n\n"
      "Examples:\n"
      "  onnxc validate /usr/share/libonnx-testdata/data/node/test_relu\n"
      "  onnxc validate model.onnx --data test_data_set_0 --rtol 1e-4\n"
      "  onnxc validate DIR --cxx clang++ --keep /tmp/out     keep the generated code and harness\n"
      "  onnxc validate DIR --target cortex-m4 --report       firmware for an emulated board, run in QEMU\n"
      "  onnxc validate DIR --pin-shape-inputs      inputs needed at compile time come from each data set\n"
      "  onnxc validate DIR --constant shape        pin input 'shape' to each data set's value");
  validate->add_option("target", vopt.target,
                       "A model directory (model.onnx + test_data_set_*/input_N.pb, output_N.pb) or a model file.")
      ->required()
      ->type_name("DIR|MODEL.onnx");
  validate->add_option("--data", vopt.data_dirs,
                       "A test data directory, one per occurrence (default: test_data_set_* beside the model).");
  validate->add_option("--rtol", vopt.rtol, "Relative tolerance for floats (default 1e-3).");
  validate->add_option("--atol", vopt.atol, "Absolute tolerance for floats (default 1e-5).");
  validate->add_option("--cxx", vopt.cxx, "Host C++ compiler (default: $CXX or c++).");
  validate->add_option("--cxxflags", vopt.cxxflags,
                       "A flag for the host compiler, one per occurrence: --cxxflags=-O2 --cxxflags=-g (default: -O1).");
  validate->add_option("--keep", vopt.keep_dir, "Keep the generated code, harness and outputs in this directory.");
  validate->add_option("--timeout", vopt.timeout_s, "Seconds the compiled model may run (default 600).");
  validate->add_option("--pch-cache", vopt.pch_cache_dir,
                       "Precompile the runtime headers the generated code includes into this directory, once per "
                       "compiler, flags and set of headers, and reuse them: for many validations in a row (the "
                       "conformance runner uses it), where parsing the kernel headers is most of a small model's "
                       "build time. Host targets without SIMD only (generic): a SIMD target's code defines ONNXC_SIMD before "
                       "the headers, so they are parsed as usual.")
      ->type_name("DIR");
  validate->add_option("--threads", vopt.threads,
                       "Run the model through run_parallel with a pool of N threads (the harness's example pool), and "
                       "check its outputs are the same bits as the serial run()'s too. Host targets only.")
      ->type_name("N")
      ->check(CLI::Range(1, 256));
  validate->add_option("--target", vcommon.target,
                       target_help(fmt::format(" {}: firmware for an emulated board instead of a host program, run "
                                               "under QEMU's system emulator (needs the target's bare-metal compiler, "
                                               "arm-none-eabi-g++ or riscv64-unknown-elf-gcc, and qemu-system-arm or "
                                               "qemu-system-riscv32); --cxxflags then sets the optimisation (default -O2).",
                                               fmt::join(board_targets(), ", "))))
      ->type_name("ISA");
  validate->add_flag("--report", vopt.report,
                     "With --target: print the firmware image's flash (code, weights) and RAM (arena, I/O buffers, "
                     "other static data, and the stack run() used, measured in the emulator).");
  validate->add_flag("--layers", vopt.layers,
                     "Build with --trace and compare every value each step produces with the reference in "
                     "DIR/test_data_set_N/layers/*.pb (TensorProtos named by their ONNX value; tools/layer-reference "
                     "writes them with ONNX Runtime): one line per step, the first step that diverges, and the "
                     "values a pass fused away. Host and firmware targets (values back through semihosting).");
  validate->add_flag("--pin-shape-inputs", vopt.pin_shape_inputs,
                     "When the model needs the value of some inputs at compile time (a Reshape's target shape, "
                     "Slice's starts, ... fed by graph inputs), take exactly those inputs' values from each test "
                     "data set, as --constant would, and compile once per distinct value; the other inputs stay "
                     "run-time inputs. Prints which inputs were pinned. In validate, --constant NAME without a "
                     "value pins NAME this way too.");
  add_common(validate, vcommon);

  BenchOptions bopt;
  Common bcommon;
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Build the generated code optimised for this machine (-O3 -march=native), run it on deterministic inputs and "
      "print the median latency as 'median_us: N'.\n\n"
      "Examples:\n"
      "  onnxc bench model.onnx --runs 200\n"
      "  onnxc bench model.onnx --dim N=1 --cxx clang++\n"
      "  onnxc bench model.onnx --inputs test_data_set_0\n"
      "  onnxc bench model.onnx --layers --layers-json steps.json   per-step roofline profile");
  bench->add_option("model", bopt.model, "The ONNX model file.")->required()->type_name("MODEL.onnx");
  bench->add_option("--runs", bopt.runs, "Timed runs after 3 warm-up runs (default 100).");
  bench->add_option("--cxx", bopt.cxx, "Host C++ compiler (default: $CXX or c++).");
  bench->add_option("--cxxflags", bopt.cxxflags,
                    "A flag for the host compiler, one per occurrence: --cxxflags=-O2 --cxxflags=-g (default: -O3 "
                    "-march=native).");
  bench->add_option("--keep", bopt.keep_dir, "Keep the generated code and harness in this directory.");
  bench->add_option("--threads", bopt.threads,
                    "Time run_parallel with a pool of N threads (the harness's example pool) instead of run().")
      ->type_name("N")
      ->check(CLI::Range(1, 256));
  bench->add_option("--inputs", bopt.inputs_dir,
                    "Time the model on the inputs of this data set (input_N.pb files, as validate reads them) "
                    "instead of generated values: to compare with another runtime on the same values.")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
  bench->add_flag("--layers", bopt.layers,
                  "Also time every step (clock reads between steps, in bench's build only) and print one line per "
                  "step, slowest first: index, node, op, output shape, median us, MACs, bytes moved, GFLOP/s, GB/s, "
                  "the bound that applies (compute or memory, from the step's FLOPs per byte against this machine's "
                  "FMA peak and memory bandwidth) and the step's % of it; then the total. The peak and bandwidth are "
                  "measured once per target, CPU model and thread count and cached in $XDG_CACHE_HOME/onnxc (else "
                  "~/.cache/onnxc) as roofline-TARGET-Nt-*.txt. On a target that runs under QEMU's user mode here (neon, "
                  "neon-dotprod, riscv64, ...): each step's instructions instead, counted by QEMU with a plugin built "
                  "from templates/qemu_insn_count.c.tmpl, with its MACs per instruction (no roofline, no JSON).");
  bench->add_option("--layers-json", bopt.layers_json,
                    "Write the --layers profile as JSON to FILE (implies --layers): peak_gflops, bandwidth_gbps, "
                    "steps: [{index, name, op, output_shape, us, macs, bytes, gflops, gbps, bound, "
                    "percent_of_bound}], slowest first.")
      ->type_name("FILE");
  bench->add_option("--predict-threads", bopt.predict_threads,
                    "--layers on one thread through run_parallel, timing each task of each parallel loop, and per step "
                    "the loops, tasks, predicted time on N threads and each thread's busy time, if the harness's pool "
                    "took those tasks (each thread its own block of them in order, then the others' rest); then the predicted scaling and the "
                    "serial steps' share. Implies --layers; not with --threads. Memory and cache contention between "
                    "the threads are not counted.")
      ->type_name("N")
      ->check(CLI::Range(2, 256));
  bench->add_flag("--remeasure", bopt.remeasure,
                  "With --layers: measure the FMA peak and memory bandwidth again and replace the cached values.");
  bench->add_option("--target", bcommon.target, target_help(" Default: native."))->type_name("ISA");
  bcommon.target = "native";  // bench measures this machine at its best
  add_common(bench, bcommon);
  one_value_per_occurrence(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: to stdout
    print_message(term, fmt::format("error: {}\n  fix: see 'onnxc {}--help'", e.what(),
                                    *validate ? "validate " : *bench ? "bench " : ""));
    return 2;
  }

  const std::string& subject = *validate ? vopt.target : *bench ? bopt.model : cmd.model;
  try {
    if (*validate) {
      take_pins_from_data(vcommon, vopt);
      if (find_board(vcommon.target)) vopt.firmware_target = vcommon.target;
      return run_validate(vopt, to_options(vcommon, term, subject));
    }
    if (*bench) return run_bench(bopt, to_options(bcommon, term, subject));
    if (cmd.list_operators) return list_operators();
    if (cmd.model.empty()) {
      fmt::print(stderr, "{}", app.help());
      return 2;
    }
    return run_compile(cmd, term);
  } catch (const CompileError& e) {
    for (const Problem& p : e.problems()) print_message(term, format_problem(subject, p));
    if (e.problems().size() > 1) fmt::print(stderr, "{} errors\n", e.problems().size());
    bool usage = std::all_of(e.problems().begin(), e.problems().end(),
                             [](const Problem& p) { return p.kind == ErrorKind::Usage; });
    return usage ? 2 : 1;
  } catch (const std::exception& e) {
    print_message(term, fmt::format("error: {}", e.what()));
    return 1;
  }
}
