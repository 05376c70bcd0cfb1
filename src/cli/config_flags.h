// Flags shared by the subcommands that take a model, hardware and training
// run (evaluate, search, simulate) and a parallel layout, and their
// conversion to specs. Bad values throw InputError naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "planner/search/search.h"
#include "planner/spec/specs.h"
#include "planner/views/html_report.h"
#include "planner/views/report.h"

namespace planner::cli {

struct CommonFlags {
  std::string model;
  std::string hardware = "dgx-h100";
  std::int64_t gpus = 0;
  std::optional<std::int64_t> seq_len, global_batch, global_batch_tokens;
  std::string dtype = "bf16";
  std::string attention = "flash";
  double grad_bytes = 2, optimizer_bytes = 12, weight_bytes = 2;
  bool no_overlap_grad_reduce = false, overlap_p2p = false, tp_overlap = false;
  // MoE only (an error on dense models): all-to-all backend, busiest expert
  // rank's load over the mean, capacity factor (0 = dropless), a2a overlap.
  std::optional<std::string> a2a;
  std::optional<double> moe_imbalance, capacity_factor;
  std::optional<bool> overlap_a2a;
  std::string format = "table";
  std::optional<std::string> html;  // --html FILE: a self-contained page (views/html_report.h)
};

struct ConfigFlags {
  std::optional<std::int64_t> tp, cp, pp, dp, mbs, vpp;
  std::optional<std::string> recompute;
  std::optional<int> zero;
  std::optional<bool> reshard_after_forward;
  std::optional<bool> sp;
  std::optional<std::int64_t> ep, etp;  // expert parallelism (MoE models)
  std::string schedule;  // evaluate --schedule; empty: 1F1B, interleaved when vpp > 1
};

void add_common(CLI::App* app, CommonFlags& f, bool gpus_required);
void add_config(CLI::App* app, ConfigFlags& c);
Format parse_format(const std::string& s);
// The formats of `list` and `show` (no CSV).
std::vector<std::string> table_or_json();
Recompute parse_recompute(const std::string& s);
void require_positive(const char* flag, std::optional<std::int64_t> v);
TrainingSpec training_from(const CommonFlags& f, const ModelSpec& model);
// A --dtype the chip has no peak for (fp8 on A100, TPU v5e) is an input
// error naming the chip, not a search where nothing fits.
// Also: --a2a deepep on hardware DeepEP does not run on (a TPU torus, AMD).
void check_dtype(const TrainingSpec& ts, const HardwareProfile& hw);
// The knobs the flags fix (search pins); each given degree must be positive.
SearchPins pins_from(const ConfigFlags& c);
// The layout the flags give: pinned_config() of their pins, with dp filling
// the GPU count unless given.
ParallelConfig config_from(const ConfigFlags& c, const TrainingSpec& ts);
// The --html file, checked before anything runs: a file name, not "-", and
// none of `others` (the flag's other output files, with their flag names).
void check_html_path(const CommonFlags& f, std::initializer_list<std::pair<const char*, std::string>> others = {});
// The run information an HTML page shows: the command line without absolute
// paths, and planner's version.
HtmlPageInfo html_page_info();
// Writes the page (atomically) and says so on stderr.
void write_html(const std::string& path, const std::string& page);
// --ep / --etp that cannot apply to the model: any above 1 on a dense model,
// an EP not dividing the experts, an ETP not dividing the expert FFN width.
void check_expert_flags(const ConfigFlags& c, const ModelSpec& model);
// --a2a / --overlap-a2a on a layout with EP 1 (no all-to-all): an InputError.
void check_a2a_applies(const CommonFlags& f, const ParallelConfig& pc);
// --tp-overlap where it cannot apply (TP pinned to 1, SP pinned off) is an InputError.
void check_tp_overlap(const TrainingSpec& ts, const SearchPins& pins);

}  // namespace planner::cli
