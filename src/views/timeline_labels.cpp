// The title and stage names of the timeline pictures (timeline.h).
#include <fmt/format.h>

#include "planner/model/labels.h"
#include "planner/views/timeline.h"

namespace planner {

TimelineLabels timeline_labels(const RunContext& ctx, const Evaluation& ev, const PipelineProblem& pr,
                               std::string command) {
  const ParallelConfig& pc = ev.config;
  TimelineLabels labels;
  labels.title = fmt::format("{} on {}, {} GPUs: {:d}, mbs {}, m {}, vpp {}, {}", ctx.model.name, ctx.hardware.name,
                             ctx.training.num_gpus, pc, pc.micro_batch_size, pr.micro_batches, pc.virtual_stages,
                             to_string(pr.schedule));
  for (std::int64_t s = 0; s < pc.pp; ++s) {
    std::string name = fmt::format("stage {}: {} layers", s, ev.layout.layers_on(s));
    if (s == 0) name += " + emb";
    if (s == pc.pp - 1) name += " + out";
    labels.stage_names.push_back(std::move(name));
  }
  labels.command = std::move(command);
  return labels;
}

}  // namespace planner
