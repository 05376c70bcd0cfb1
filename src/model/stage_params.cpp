// What each pipeline stage and virtual chunk of a PricedPlan holds
// (priced_plan.h): which of the model's layers, how many of them MoE, the
// heads, and their parameters before TP / ZeRO sharding.
#include "planner/model/priced_plan.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace planner {

namespace {

// Parameters of `layers` layers, `moe` of them MoE, plus the heads named,
// before TP / ZeRO sharding: each layer as what it is (a MoE model's dense
// and MoE layers differ by the routed experts; Megatron-LM
// theoretical_memory_usage.py counts num_dense_layers and num_moe_layers
// apart). With tied embeddings and PP > 1 the last stage keeps its own copy
// of the embedding matrix for the output layer (Megatron-LM, shared embedding).
double held_params(const PricedPlan& plan, std::int64_t layers, std::int64_t moe, bool embedding, bool output) {
  const ParamCounts& counts = plan.params;
  double n = plan.moe_layer_freq > 0
                 ? double(layers - moe) * double(counts.dense_layer) + double(moe) * double(counts.moe_layer)
                 : double(layers) * double(counts.per_layer);
  if (embedding) n += double(counts.embedding + counts.position);
  if (output) {
    const bool own_copy = plan.tied_embeddings && plan.layout.stages > 1;
    // The MTP modules sit with the output layer (Megatron-LM theoretical_memory_usage.py).
    n += double(counts.output + counts.final_norm + counts.mtp) + (own_copy ? double(counts.embedding) : 0.0);
  }
  return n;
}

// Of held_params: what every TP rank holds whole (ParamCounts replicated_*):
// each layer's by its kind; learned positions with the embedding (Megatron's
// position table is a plain nn.Embedding); the final norm and the MTP
// modules' with the output layer. The vocabulary-parallel embedding and
// output layer are split.
double held_replicated(const PricedPlan& plan, std::int64_t layers, std::int64_t moe, bool embedding, bool output) {
  const ParamCounts& counts = plan.params;
  double n =
      double(layers - moe) * double(counts.replicated_dense_layer) + double(moe) * double(counts.replicated_moe_layer);
  // Dense GQA models count none (ParamCounts: their predictions are held).
  if (counts.replicated_dense_layer + counts.replicated_moe_layer == 0) return 0.0;
  if (embedding) n += double(counts.position);
  if (output) n += double(counts.final_norm + counts.replicated_mtp);
  return n;
}

}  // namespace

std::int64_t PricedPlan::moe_layers_in(std::int64_t first, std::int64_t n) const {
  if (moe_layer_freq <= 0 || n <= 0) return 0;
  // MoE layers of [0, end): after the first_dense_layers, the last of every
  // layer_freq (model_math.h is_moe_layer; count_moe_layers for end = L).
  const auto below = [&](std::int64_t end) {
    return std::max<std::int64_t>(0, std::min(end, num_layers) - moe_first_dense_layers) / moe_layer_freq;
  };
  return below(first + n) - below(first);
}

namespace {

// The chunks of every stage from those of one stage of each kind (stage 0,
// the middle stages with middle_hi layers, those with middle_hi - 1, stage
// p-1: the same layers and heads give the same chunk_layers), and where each
// chunk starts in the model's order: model chunk c*p + s follows every chunk
// c' < c of all stages and chunk c of the stages before s.
class ChunkGrid {
 public:
  explicit ChunkGrid(const PricedPlan& plan)
      : p_(plan.layout.stages), v_(std::max<std::int64_t>(1, plan.virtual_stages)) {
    const StageLayout& l = plan.layout;
    const auto layers_of = [&](std::int64_t s) {
      return chunk_layers(l, s, v_, plan.extra_first, plan.extra_last, plan.heads_in_split);
    };
    hi_ = p_ > 2 ? std::min(l.middle_hi_count, p_ - 2) : 0;
    lo_ = p_ > 2 ? p_ - 2 - hi_ : 0;
    first_ = layers_of(0);
    if (p_ > 1) last_ = layers_of(p_ - 1);
    if (hi_ > 0) mid_hi_ = layers_of(1);
    if (lo_ > 0) mid_lo_ = layers_of(1 + hi_);
    col_before_.assign(std::size_t(v_), 0);
    std::int64_t at = 0;
    for (std::int64_t c = 0; c < v_; ++c) {
      col_before_[std::size_t(c)] = at;
      at += stages_before(p_, c) + (p_ > 1 ? last_[std::size_t(c)] : 0);
    }
  }
  const std::vector<std::int64_t>& layers(std::int64_t s) const {
    if (s == 0) return first_;
    if (s == p_ - 1) return last_;
    return s - 1 < hi_ ? mid_hi_ : mid_lo_;
  }
  // The model's index of the first layer of chunk c of stage s.
  std::int64_t first_layer(std::int64_t s, std::int64_t c) const {
    return col_before_[std::size_t(c)] + stages_before(s, c);
  }

 private:
  // Layers of chunk c on the stages before s (s <= p - 1; the last stage's own not included).
  std::int64_t stages_before(std::int64_t s, std::int64_t c) const {
    if (s <= 0) return 0;
    const std::int64_t mids = std::min(s - 1, p_ - 2), hi = std::min(mids, hi_);
    const auto at = [c](const std::vector<std::int64_t>& n) { return n.empty() ? 0 : n[std::size_t(c)]; };
    return first_[std::size_t(c)] + hi * at(mid_hi_) + (mids - hi) * at(mid_lo_);
  }
  std::int64_t p_, v_, hi_ = 0, lo_ = 0;
  std::vector<std::int64_t> first_, last_, mid_hi_, mid_lo_, col_before_;
};

std::int64_t stage_moe_from(const PricedPlan& plan, const ChunkGrid& g, std::int64_t stage) {
  const std::vector<std::int64_t>& n = g.layers(stage);
  std::int64_t moe = 0;
  for (std::size_t c = 0; c < n.size(); ++c) moe += plan.moe_layers_in(g.first_layer(stage, std::int64_t(c)), n[c]);
  return moe;
}

bool same_layout(const StageLayout& a, const StageLayout& b) {
  return a.stages == b.stages && a.first == b.first && a.last == b.last && a.middle_hi == b.middle_hi &&
         a.middle_hi_count == b.middle_hi_count;
}

}  // namespace

void PricedPlan::count_stage_moe_layers() {
  stage_moe_cache.clear();
  if (moe_layer_freq <= 0 || virtual_stages <= 1) return;
  const ChunkGrid g(*this);
  stage_moe_cache.resize(std::size_t(layout.stages));
  for (std::int64_t s = 0; s < layout.stages; ++s) stage_moe_cache[std::size_t(s)] = stage_moe_from(*this, g, s);
  stage_moe_cache_layout = layout;
  stage_moe_cache_v = virtual_stages;
}

std::vector<std::int64_t> PricedPlan::chunk_first_layers(std::int64_t stage) const {
  if (virtual_stages <= 1) return {layout.layers_before(stage)};
  const ChunkGrid g(*this);
  std::vector<std::int64_t> first(static_cast<std::size_t>(virtual_stages));
  for (std::int64_t c = 0; c < virtual_stages; ++c) first[std::size_t(c)] = g.first_layer(stage, c);
  return first;
}

std::int64_t PricedPlan::stage_moe_layers(std::int64_t stage) const {
  if (moe_layer_freq <= 0) return 0;
  if (virtual_stages <= 1) return moe_layers_in(layout.layers_before(stage), layout.layers_on(stage));
  if (stage_moe_cache_v == virtual_stages && same_layout(stage_moe_cache_layout, layout) &&
      std::size_t(stage) < stage_moe_cache.size())
    return stage_moe_cache[std::size_t(stage)];
  return stage_moe_from(*this, ChunkGrid(*this), stage);
}

std::vector<std::int64_t> PricedPlan::state_distinct_stages() const {
  const DistinctStages d = layout.distinct_stages();
  if (moe_layer_freq <= 0) return {d.begin(), d.end()};
  struct Kind {
    std::int64_t layers, moe;
    bool embedding, output;
  };
  std::vector<Kind> seen;
  std::vector<std::int64_t> out;
  const std::int64_t p = layout.stages;
  for (std::int64_t s = 0; s < p; ++s) {
    const Kind k{layout.layers_on(s), stage_moe_layers(s), s == 0, s == p - 1};
    const bool known = std::any_of(seen.begin(), seen.end(), [&](const Kind& o) {
      return o.layers == k.layers && o.moe == k.moe && o.embedding == k.embedding && o.output == k.output;
    });
    if (!known) {
      seen.push_back(k);
      out.push_back(s);
    }
  }
  return out;
}

// A stage's layers plus the embedding (stage 0) and output layer (stage p-1)
// it holds.
double PricedPlan::stage_params(std::int64_t stage) const {
  return held_params(*this, layout.layers_on(stage), stage_moe_layers(stage), stage == 0, stage == layout.stages - 1);
}

double PricedPlan::stage_replicated_params(std::int64_t stage) const {
  return held_replicated(*this, layout.layers_on(stage), stage_moe_layers(stage), stage == 0,
                         stage == layout.stages - 1);
}

// Megatron-LM's interleaved schedule gives each stage v model chunks; the
// embedding sits in the first chunk of stage 0 and the output layer in the
// last chunk of stage p-1 (chunk_layers water-fills the layers around them).
std::vector<ChunkPlan> PricedPlan::chunks(std::int64_t stage) const {
  const std::int64_t v = virtual_stages;
  const std::vector<std::int64_t> layers = chunk_layers(layout, stage, v, extra_first, extra_last, heads_in_split);
  const std::vector<std::int64_t> first =
      moe_layer_freq > 0 ? chunk_first_layers(stage) : std::vector<std::int64_t>(layers.size(), 0);
  std::vector<ChunkPlan> out(layers.size());
  for (std::size_t c = 0; c < layers.size(); ++c) {
    ChunkPlan& ch = out[c];
    ch.layers = layers[c];
    ch.moe_layers = moe_layers_in(first[c], ch.layers);
    ch.embedding = stage == 0 && c == 0;
    ch.output = stage == layout.stages - 1 && std::int64_t(c) == v - 1;
    ch.params = held_params(*this, ch.layers, ch.moe_layers, ch.embedding, ch.output);
    ch.replicated_params = held_replicated(*this, ch.layers, ch.moe_layers, ch.embedding, ch.output);
    ch.expert_params =
        double(ch.moe_layers) * double(params.routed_experts_per_moe_layer) + (ch.output ? mtp_expert_params : 0.0);
  }
  return out;
}

}  // namespace planner
