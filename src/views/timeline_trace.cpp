// Chrome Trace Event Format writer (see timeline.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "planner/views/timeline.h"

namespace planner {

namespace {

std::string event_name(const SimEvent& e) {
  std::string name = to_string(e.kind);
  if (e.micro_batch >= 0) name += " mb" + std::to_string(e.micro_batch);
  if (e.chunk >= 0) name += " c" + std::to_string(e.chunk);
  if (e.kind == EventKind::grad_reduce && e.index >= 0) name += " bucket " + std::to_string(e.index);
  return name;
}

const char* category(EventKind k) {
  switch (k) {
    case EventKind::forward:
      return "forward";
    case EventKind::recompute:
      return "recompute";
    case EventKind::backward:
      return "backward";
    case EventKind::weight_grad:
      return "weight_grad";
    case EventKind::tp_cp_comm:
      return "tp_cp_comm";
    case EventKind::send_activation:
    case EventKind::send_gradient:
      return "pp_send";
    case EventKind::grad_reduce:
      return "dp_grad_reduce";
    case EventKind::param_gather:
      return "dp_param_gather";
    case EventKind::zero3_gather:
      return "zero3_gather";
    case EventKind::optimizer:
      return "optimizer";
    case EventKind::ep_comm:
      return "ep_a2a";
  }
  return "other";
}

}  // namespace

std::string render_chrome_trace(const SimResult& r, const TimelineLabels& labels) {
  using nlohmann::json;
  json events = json::array();
  const std::size_t stages = r.stages.size();
  const bool ep =
      std::any_of(r.events.begin(), r.events.end(), [](const SimEvent& e) { return e.stream == Stream::ep; });
  for (std::size_t s = 0; s < stages; ++s) {
    const std::string pname = s < labels.stage_names.size() ? labels.stage_names[s] : "stage " + std::to_string(s);
    const int pid = int(s);
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"ts", 0},
                      {"dur", 0},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", pname}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"ts", 0},
                      {"dur", 0},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    for (int k = 0; k < kNumStreams; ++k) {
      if (Stream(k) == Stream::ep && !ep) continue;  // the expert all-to-all lane, MoE only
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"ts", 0},
                        {"dur", 0},
                        {"pid", pid},
                        {"tid", k},
                        {"args", {{"name", to_string(Stream(k))}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"ts", 0},
                        {"dur", 0},
                        {"pid", pid},
                        {"tid", k},
                        {"args", {{"sort_index", k}}}});
    }
  }
  for (const SimEvent& e : r.events) {
    json args = json::object();
    if (e.micro_batch >= 0) args["micro_batch"] = e.micro_batch;
    if (e.chunk >= 0) args["chunk"] = e.chunk;
    if (e.index >= 0) args["bucket"] = e.index;
    if (e.kind == EventKind::send_activation || e.kind == EventKind::send_gradient) args["blocking"] = e.blocking;
    args["duration_ms"] = (e.end_s - e.start_s) * 1e3;
    events.push_back({{"name", event_name(e)},
                      {"cat", category(e.kind)},
                      {"ph", "X"},
                      {"ts", e.start_s * 1e6},
                      {"dur", (e.end_s - e.start_s) * 1e6},
                      {"pid", int(e.stage)},
                      {"tid", int(e.stream)},
                      {"args", std::move(args)}});
  }
  json out = {{"displayTimeUnit", "ms"},
              {"traceEvents", std::move(events)},
              {"otherData",
               {{"generator", "planner simulate"},
                {"title", labels.title},
                {"command", labels.command},
                {"step_ms", r.step_s * 1e3},
                {"critical_stage", r.critical_stage}}}};
  return out.dump() + "\n";
}

}  // namespace planner
