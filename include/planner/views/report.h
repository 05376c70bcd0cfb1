// Views over result structs: text tables, JSON (with schema_version) and CSV.
// Pure string rendering; the CLI prints what these return.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "planner/model/evaluate.h"
#include "planner/framework/framework.h"
#include "planner/framework/launch_flags.h"
#include "planner/model/explain.h"
#include "planner/model/time_to_train.h"
#include "planner/search/search.h"
#include "planner/spec/names.h"
#include "planner/spec/specs.h"

namespace planner {

enum class Format { table, json, csv };
inline constexpr EnumName<Format> kFormatNames[] = {
    {Format::table, "table"}, {Format::json, "json"}, {Format::csv, "csv"}};
constexpr std::span<const EnumName<Format>> name_table(Format) { return kFormatNames; }
inline constexpr int kReportSchemaVersion = 1;

struct RunContext {  // what the user asked, echoed in every report
  const ModelSpec& model;
  const HardwareProfile& hardware;
  const TrainingSpec& training;
  // --tokens [--gpu-hour-cost]: reports add the time to train, GPU-hours and cost.
  const TrainingBudget* budget = nullptr;
  // --framework: reports name it (and the search its rejection rules).
  const FrameworkInfo* framework = nullptr;
  // search --export: the top pick's launch flags, printed after the ranking
  // (text) or as "launch" (JSON).
  const LaunchFlags* launch = nullptr;
};

// With `explain`, the formulas too: after the table, or as "explain" in the JSON.
[[nodiscard]] std::string render_evaluation(const Evaluation& ev, const RunContext& ctx, Format f,
                                            const Explain* explain = nullptr);
[[nodiscard]] std::string render_search(const SearchResult& r, const RunContext& ctx, Format f);
[[nodiscard]] std::string render_explain(const Explain& ex);
[[nodiscard]] std::string render_model_list(const std::vector<ModelSpec>& models, Format f);
[[nodiscard]] std::string render_hardware_list(const std::vector<HardwareProfile>& hw, Format f);
[[nodiscard]] std::string render_model(const ModelSpec& model, Format f);
[[nodiscard]] std::string render_hardware(const HardwareProfile& h, Format f);

[[nodiscard]] nlohmann::json to_json(const Evaluation& ev);
[[nodiscard]] nlohmann::json to_json(const ParallelConfig& pc);
// The search report's JSON object (render_search with Format::json).
[[nodiscard]] nlohmann::json to_json(const SearchResult& r, const RunContext& ctx);
// The fields every JSON report starts with: schema_version, model, hardware,
// gpus. `into` keeps its other fields.
void add_report_header(nlohmann::json& into, const RunContext& ctx);
// "framework" (with ctx.framework) and, for a priced `ev` with ctx.budget,
// "time_to_train": {tokens, days, gpu_hours[, gpu_hour_cost_usd, cost_usd]}.
void add_run_fields(nlohmann::json& into, const RunContext& ctx, const Evaluation* ev);

}  // namespace planner
