// Flags shared by the subcommands that take a model, hardware and training
// run (evaluate, search, simulate) and a parallel layout, and their
// conversion to specs. Bad values throw InputError naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "planner/framework/framework.h"
#include "planner/model/time_to_train.h"
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
  // unset: planner's or the framework's default (grad_reduce_bytes: the gradient bytes)
  std::optional<double> grad_bytes, grad_reduce_bytes, optimizer_bytes, weight_bytes;
  bool no_overlap_grad_reduce = false, overlap_p2p = false, tp_overlap = false, zero3_recompute_regather = false;
  bool te_cross_entropy = false;  // --te-cross-entropy: Transformer Engine's fused cross-entropy
  std::optional<std::string> loss_kernel;  // --loss-kernel unfused|te|flash-attn (LossKernel)
  bool torch_compile = false;  // --torch-compile: torchtitan's compile.enable (fused element-wise kernels)
  // MoE only (an error on dense models): all-to-all backend, busiest expert
  // rank's load over the mean, capacity factor (0 = dropless), a2a overlap.
  std::optional<std::string> a2a;
  std::optional<double> moe_imbalance, capacity_factor;
  std::optional<bool> overlap_a2a;
  // What --recompute selective means: megatron, op or layer:N (SelectivePolicy).
  std::optional<std::string> selective_ac;
  std::string format = "table";
  std::optional<std::string> html;  // --html FILE: a self-contained page (views/html_report.h)
};

// --framework, --tokens and --gpu-hour-cost (evaluate, search; export takes
// --framework alone).
struct LaunchOptions {
  std::optional<std::string> framework;
  std::optional<double> tokens, gpu_hour_cost;
};

// The layout knobs as typed: one value (`--tp 8`), or for search a list or a
// range (`--tp 4,8`, `--pp 1-16`, `--recompute none,full`); pins_from parses them.
struct ConfigFlags {
  std::optional<std::string> tp, cp, pp, dp, mbs, vpp;
  std::optional<std::string> recompute;
  std::optional<std::string> zero;
  std::optional<std::string> reshard_after_forward;
  std::optional<std::string> zero_shard;  // hybrid sharding's group (ParallelConfig::zero_shard)
  std::optional<std::string> sp;
  std::optional<std::string> ep, etp;  // expert parallelism (MoE models)
  std::optional<std::string> recompute_modules;  // Megatron --recompute-modules (a TrainingSpec field)
  std::string schedule;  // evaluate --schedule; empty: 1F1B, interleaved when vpp > 1
};

void add_common(CLI::App* app, CommonFlags& f, bool gpus_required);
// What --global-batch-tokens takes, in integer_range's words (parse_errors.h):
// whole sequences, at most kMaxGlobalBatchSequences of them.
[[nodiscard]] std::string batch_tokens_range();
// lists: the flags take lists and ranges (search), else one value each.
void add_config(CLI::App* app, ConfigFlags& c, bool lists);
void add_framework_flag(CLI::App* app, LaunchOptions& o, bool required);
void add_budget_flags(CLI::App* app, LaunchOptions& o);
// The framework --framework names, or none.
std::optional<Framework> framework_from(const LaunchOptions& o);
// Its pipeline split and precision defaults on `ts`, where the user gave no
// --grad-bytes, --weight-bytes or --optimizer-bytes; flags the framework
// (or, with none, planner) cannot run on `hw` are an InputError naming the flag.
void apply_framework(const CommonFlags& f, std::optional<Framework> fw, TrainingSpec& ts, const HardwareProfile& hw);
// --tokens [--gpu-hour-cost]; --gpu-hour-cost alone is an InputError.
std::optional<TrainingBudget> budget_from(const LaunchOptions& o);
// The layout `pc` (from the flags) as the framework runs it: its default
// ZeRO-3 resharding where --reshard-after-forward was not given, then an
// InputError naming the rule it cannot express.
ParallelConfig framework_config(Framework fw, const ModelSpec& model, const TrainingSpec& ts, ParallelConfig pc,
                                const ConfigFlags& c);
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
// With lists false (evaluate, simulate: one configuration) a flag with a list
// or a range is an InputError naming the flag and `command`.
SearchPins pins_from(const ConfigFlags& c, bool lists = true, const char* command = "search");
// The layout the flags give: pinned_config() of their pins, with dp filling
// the GPU count unless given. `command` names the subcommand that takes one
// value per flag.
ParallelConfig config_from(const ConfigFlags& c, const TrainingSpec& ts, const char* command = "evaluate");
// The --html file, checked before anything runs: a file name, not "-", and
// none of `others` (the command's other output files, with their flag names;
// "" when not given), which must not be "-" either.
void check_html_path(const CommonFlags& f, std::initializer_list<std::pair<const char*, std::string>> others = {});
// The run information an HTML page shows: the command line without absolute
// paths, and planner's version.
HtmlPageInfo html_page_info();
// Writes the page (atomically) and says so on stderr.
void write_html(const std::string& path, const std::string& page);
// --ep / --etp that cannot apply to the model: any above 1 on a dense model,
// an EP not dividing the experts, an ETP not dividing the expert FFN width.
void check_expert_flags(SearchPins& pins, const ModelSpec& model);
// --a2a / --overlap-a2a on a layout with EP 1 (no all-to-all): an InputError.
// --zero-shard values that divide the GPU count; none is an InputError.
void check_zero_shard(SearchPins& pins, std::int64_t gpus);
void check_a2a_applies(const CommonFlags& f, const ParallelConfig& pc);
// --tp-overlap where it cannot apply (TP pinned to 1, SP pinned off) is an InputError.
void check_tp_overlap(const TrainingSpec& ts, const SearchPins& pins);
// --selective-ac needs a layout that recomputes selectively: --recompute
// selective, or (search = true) a --recompute left open whose search visits it.
void check_selective_ac(const CommonFlags& f, const TrainingSpec& ts, const SearchPins& pins, bool search);
// --recompute-modules LIST into ts.recompute_modules (unknown names and
// modules the model lacks: InputError); it needs Megatron's selective policy.
// pins_from makes it imply --recompute selective, as Megatron's flag does.
void apply_recompute_modules(const ConfigFlags& c, const ModelSpec& model, TrainingSpec& ts);
// --overlap-a2a with a recomputation Megatron refuses it with: InputError.
void check_recompute_overlap(const ParallelConfig& pc, const TrainingSpec& ts);
// --zero, --grad-reduce-bytes and --no-overlap-grad-reduce on a layout that
// reduces no gradient over more than one rank (DP 1 and CP 1, and for a MoE
// model expert DP 1: nothing to shard or reduce) are InputErrors.
void check_data_parallel_flags(const CommonFlags& f, const ConfigFlags& c, const ModelSpec& model,
                               const ParallelConfig& pc);
// --zero3-recompute-regather with a pinned ZeRO stage other than 3 or a
// pinned recompute policy other than full: InputError.
void check_zero3_regather(const TrainingSpec& ts, const SearchPins& pins);

}  // namespace planner::cli
