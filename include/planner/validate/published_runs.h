// The dataset of measured training runs (docs/published_runs.md): a JSON list
// of rows, each describing its own architecture, hardware, layout and what was
// measured. This header maps one row onto the planner's specs; a row that
// cannot be mapped keeps the reason (it is listed, never dropped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/search/search.h"
#include "planner/spec/specs.h"
#include "planner/validate/flop_convention.h"

namespace planner {

enum class MeasurementScope { step, layer };  // layer: one transformer layer, forward + backward, one micro-batch

// One row mapped onto the planner's specs.
struct MeasuredRun {
  std::string id, source, model_name, gpu_type;
  // Where else the row says it ran: its source, notes and provenance texts,
  // searched for a cluster with a stock profile of its own (match_hardware).
  std::string site_text;
  ModelSpec model;  // built from the row's architecture fields, not looked up by name
  TrainingSpec training;
  SearchPins pins;                       // knobs the row states; the rest are the planner's best choice
  std::vector<std::string> chosen;       // knobs the row leaves unknown, e.g. "micro-batch size"
  std::vector<std::string> assumptions;  // inferred settings (software stack, architecture details)
  MeasurementScope scope = MeasurementScope::step;
  FlopConvention convention = FlopConvention::none;
  std::string convention_text;
  double stated_flops_per_sequence = 0;                    // FlopConvention::stated only
  std::optional<double> step_time_s, tflops_per_gpu, mfu;  // measured, as reported
  std::optional<double> tokens_per_sec_per_gpu;            // measured throughput (needs no FLOP convention)
  std::optional<std::string> hardware;  // explicit profile name from the row's optional `hardware` field
  // Hybrid sharding, one shard group per scale-up domain (row_words
  // shards_per_domain): validate sets pins.zero_shard from the profile.
  bool shard_per_domain = false;
  // Pipeline flushes per step: a step of `pipeline_passes` pipeline schedule
  // runs over global_batch_sequences / pipeline_passes each, with one optimizer
  // step (NeMo AutoModel's gradient accumulation over local batches with PP).
  std::int64_t pipeline_passes = 1;
};

// A row either maps onto the specs (`run`) or names why it cannot (`skip_reason`).
struct RunRow {
  std::string id, source, model_name;
  std::optional<MeasuredRun> run;
  std::string skip_reason;
};

// Reads the dataset. A file that is not a JSON list of objects (or an object
// with a "runs" list) is an InputError; problems inside one row only skip that row.
[[nodiscard]] std::vector<RunRow> read_published_runs(const nlohmann::json& j, const std::string& origin);
[[nodiscard]] RunRow map_published_run(const nlohmann::json& row, std::size_t index);

// Short label of a source for summaries: the text before the first ',', '(' or quote.
[[nodiscard]] std::string source_label(const std::string& source);

}  // namespace planner
