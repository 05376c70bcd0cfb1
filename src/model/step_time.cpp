#include "planner/model/step_time.h"

#include <algorithm>

#include "planner/model/collectives.h"
#include "planner/model/memory_model.h"
#include "planner/model/model_math.h"

namespace planner {

// The ranks sharing one weight shard: DP x CP. Contiguous in the rank order
// [TP, CP, PP, DP] when PP = 1; otherwise CP and DP members combine.
GroupPlacement weight_sharing_group(const HardwareProfile& hw, const ParallelConfig& pc) {
  if (pc.pp == 1) return placement(hw, pc.cp * pc.dp, pc.tp);
  const GroupPlacement dp = placement(hw, pc.dp, pc.tp * pc.cp * pc.pp);
  const GroupPlacement cp = placement(hw, pc.cp, pc.tp);
  GroupPlacement g;
  g.size = pc.cp * pc.dp;
  g.stride = pc.tp;
  g.members_per_domain = std::min(g.size, dp.members_per_domain * cp.members_per_domain);
  g.domains = (g.size + g.members_per_domain - 1) / g.members_per_domain;
  for (std::size_t d = 0; d < 3; ++d) {
    g.torus_extent[d] = std::max(dp.torus_extent[d], cp.torus_extent[d]);
    g.torus_wrap[d] = dp.torus_wrap[d] || cp.torus_wrap[d];
  }
  return g;
}

double optimizer_time_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                        double params_local) {
  // Memory bound, per local parameter (Megatron-LM MixedPrecisionOptimizer.step):
  // gradient-norm read (g), Adam (read g and fp32 master, m, v; write master,
  // m, v: g + 24), copy master to the bf16 weights (read 4, write w), zero the
  // gradient buffer (g): 3g + 28 + w bytes.
  const double opt_params = params_local / (pc.zero_stage >= 1 ? double(pc.dp * pc.cp) : 1.0);
  const double g_bytes = ts.grad_bytes_per_param;
  const double opt_bytes = opt_params * (3.0 * g_bytes + 28.0 + ts.weight_bytes_per_param);
  return opt_bytes / (hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency);
}

double pp_send_bytes(const ModelSpec& m, const ParallelConfig& pc, const TrainingSpec& ts) {
  return 2.0 * double(pc.micro_batch_size) * double(ts.seq_len) / double(pc.cp) * double(m.hidden_size) / double(pc.tp);
}

Zero3LayerComm zero3_layer_comm(const ModelSpec& m, const HardwareProfile& hw, const ParallelConfig& pc,
                                const TrainingSpec& ts, const LayerTime& lt) {
  Zero3LayerComm z;
  if (pc.zero_stage < 3) return z;
  const GroupPlacement wg = weight_sharing_group(hw, pc);
  if (wg.size <= 1) return z;
  // ZeRO-3 / FSDP: all-gather each layer's weights before its forward and
  // backward, reduce-scatter its gradients after the backward; prefetching
  // the next layer hides the gather when a layer's compute outlasts it:
  // alpha*lg p <= (B*S/C - 1/beta)*n (course slides, Kakade & Anand).
  const double layer_params = double(count_params(m).per_layer) / double(pc.tp);
  z.all_gather_s = collective_cost(hw, wg, Collective::all_gather, layer_params * ts.weight_bytes_per_param).total_s();
  z.reduce_scatter_s =
      collective_cost(hw, wg, Collective::reduce_scatter, layer_params * ts.grad_bytes_per_param).total_s();
  z.exposed_fwd_s = std::max(0.0, z.all_gather_s - lt.fwd_s());
  z.exposed_bwd_s = std::max(0.0, z.all_gather_s + z.reduce_scatter_s - lt.bwd_s());
  return z;
}

double layer_step_s(const LayerTime& lt, const Zero3LayerComm& z3) { return lt.total_s() + z3.exposed_s(); }

namespace {

// One stage's work after its last backward (step_time's DP tail).
struct StageTail {
  std::int64_t stage = 0;
  double dp_exposed_s = 0, optimizer_s = 0, lead_s = 0;
  double reduce_s = 0, gather_s = 0, window_s = 0, grad_bytes = 0;  // for the report
  [[nodiscard]] double total_s() const { return dp_exposed_s + optimizer_s; }
};

void note(Explain* ex, const char* name, const char* formula, const char* cite,
          std::vector<std::pair<std::string, double>> inputs, double out) {
  if (ex) ex->add({name, formula, cite, std::move(inputs), out, "s"});
}

}  // namespace

StepTimeBreakdown step_time(const ModelSpec& m, const HardwareProfile& hw, const ParallelConfig& pc,
                            const TrainingSpec& ts, const StageLayout& layout, const LayerTime& lt,
                            const HeadTime& head, Explain* ex) {
  StepTimeBreakdown st;
  const std::int64_t p = pc.pp, v = pc.virtual_stages;
  const std::int64_t mb = ts.global_batch_sequences / (pc.dp * pc.micro_batch_size);
  st.micro_batches = mb;
  const double md = double(mb), t = double(pc.tp);

  // Per-micro-batch time of each stage; the heaviest sets the steady state.
  // A layer costs its compute and TP/CP traffic plus its exposed ZeRO-3
  // traffic: with ZeRO-3 a stage with more layers can be the slowest even
  // where one with fewer layers and the output layer computes longer.
  const Zero3LayerComm z3 = zero3_layer_comm(m, hw, pc, ts, lt);
  const double layer_s = layer_step_s(lt, z3);
  const double head_first = head.embedding_fwd_s + head.embedding_bwd_s;
  const double head_last = head.output_fwd_s + head.output_bwd_s + head.output_tp_comm_s;
  auto stage_time = [&](std::int64_t r) {
    double x = double(layout.layers_on(r)) * layer_s;
    if (r == 0) x += head_first;
    if (r == p - 1) x += head_last;
    return x;
  };
  std::int64_t heavy = 0;
  double t_max = stage_time(0);
  for (std::int64_t r : {std::int64_t(1), p - 1})
    if (r < p && stage_time(r) > t_max) t_max = stage_time(r), heavy = r;
  const double layers = double(layout.layers_on(heavy));
  st.stage_time_per_micro_batch_s = t_max;
  st.layer_fwd_s = lt.fwd_s();
  st.layer_bwd_s = lt.bwd_s();

  // Steady state: m micro-batches through the heaviest stage.
  double compute = layers * (lt.compute_fwd_s() + lt.compute_bwd_s());
  double tp = layers * (lt.tp_comm_fwd_s + lt.tp_comm_bwd_s + lt.tp_comm_recompute_s);
  if (heavy == 0) compute += head_first;
  if (heavy == p - 1) compute += head.output_fwd_s + head.output_bwd_s, tp += head.output_tp_comm_s;
  st.compute_s = md * compute;
  st.recompute_s = md * layers * lt.recompute_s;
  st.tp_comm_s = md * tp;
  st.cp_comm_s = md * layers * (lt.cp_comm_fwd_s + lt.cp_comm_bwd_s);

  // Bubble: while the heaviest stage works m micro-batches, the fill and drain
  // pass once through every other stage, 1/v of it per chunk with interleaving:
  // (sum_r t_r - t_max)/v; (p-1)/v * t for uniform stages (Narayanan et al.
  // 2021 §2.2). GPipe has the same bubble as 1F1B.
  if (p > 1) {
    const double all_stages = double(m.num_layers) * layer_s + head_first + head_last;
    st.pp_bubble_s = std::max(0.0, all_stages - t_max) / double(v);
    if (v > 1) {
      // Interleaved rounds are paced by the slowest chunk of each round
      // (pipeline.h, interleaved_pace_layers): uneven chunks, such as the one
      // carrying the output layer, stall the other stages every round.
      const double per_layer = std::max(layer_s, 1e-30);
      const double pace = interleaved_pace_layers(layout, v, head_first / per_layer, head_last / per_layer) * per_layer;
      st.pp_bubble_s += md * std::max(0.0, pace - t_max);
    }
    // Send/recv of one micro-batch's boundary activation (b*s/cp*h*2 bytes,
    // split over TP by the scatter-gather optimisation, Narayanan et al. 2021
    // §4.1), forward and backward. Megatron's 1F1B blocks on these in the
    // steady state unless p2p overlap is on; the fill/drain ones are exposed anyway.
    GroupPlacement pair = placement(hw, 2, pc.tp * pc.cp);
    const double bytes = pp_send_bytes(m, pc, ts);
    const double one = collective_cost(hw, pair, Collective::send_recv, bytes).total_s();
    const double transfers = ts.overlap_p2p ? 2.0 * double(p - 1) : 2.0 * (md * double(v) + double(p - 1));
    st.pp_p2p_s = transfers * one;
    if (ex)
      note(ex, "pipeline bubble",
           "(sum of stage times - heaviest) / v [+ m * (sum over chunks of the slowest stage's chunk - heaviest "
           "stage), v > 1]",
           "Narayanan et al. 2021 §2.2.2; round pacing of the interleaved order (approximation, checked by planner "
           "simulate)",
           {{"p", double(p)}, {"v", double(v)}, {"m", md}, {"heaviest_stage_s", t_max}}, st.pp_bubble_s);
    if (ex)
      note(ex, "pipeline send/recv", "transfers * (alpha + b*s/cp*h*2/t / B)", "Narayanan et al. 2021 §4.1",
           {{"bytes", bytes}, {"transfers", transfers}, {"one_s", one}}, st.pp_p2p_s);
  }

  // Data parallelism over DP x CP (ranks holding the same weights). Each
  // stage reduces its own gradients and steps its own optimizer after its
  // last backward, so the step ends with the latest of
  //   end_r + tail_r,  tail_r = exposed DP reduction (+ ZeRO-1/2 gather) + Adam,
  // where end_r, the end of stage r's last backward, is the end of stage 0's
  // less the drain that follows it: the last micro-batch's gradient still
  // passes back through stages r-1 .. 0, (sum_{j<r} bwd_j)/v (one chunk each
  // with interleaving). That drain is a lower bound of stage r's lead (a
  // busier stage below r only starts later), so the tail is never
  // under-charged; the event simulation (`planner simulate`) times each
  // stage's tail exactly. Stage 0 has no lead, so the tail is at least its own.
  const GroupPlacement wg = weight_sharing_group(hw, pc);
  auto stage_tail = [&](std::int64_t r) {
    StageTail tl;
    tl.stage = r;
    const double layers_r = double(layout.layers_on(r));
    const double params_local = stage_params(m, layout, r) / t;
    const double bwd_window = ts.overlap_grad_reduce ? layers_r * lt.bwd_s() : 0.0;
    if (wg.size > 1 && pc.zero_stage < 3) {
      const double grad_bytes = params_local * ts.grad_bytes_per_param;
      // ZeRO-0: all-reduce; ZeRO-1/2 (Megatron distributed optimizer): reduce-
      // scatter the gradients, all-gather the updated bf16 weights.
      const Collective red = pc.zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter;
      tl.reduce_s = collective_cost(hw, wg, red, grad_bytes).total_s();
      // Buckets of 40M parameters (Megatron-LM DDP default): the last bucket's
      // reduction starts only when the backward ends, so it is always exposed.
      const double bucket = std::min(grad_bytes, kGradBucketParams * ts.grad_bytes_per_param);
      const double t_bucket = collective_cost(hw, wg, red, bucket).total_s();
      tl.dp_exposed_s = ts.overlap_grad_reduce ? std::max(tl.reduce_s - bwd_window, t_bucket) : tl.reduce_s;
      tl.window_s = bwd_window;
      tl.grad_bytes = grad_bytes;
      if (pc.zero_stage >= 1) {
        tl.gather_s =
            collective_cost(hw, wg, Collective::all_gather, params_local * ts.weight_bytes_per_param).total_s();
        const double fwd_window = ts.overlap_grad_reduce ? layers_r * lt.fwd_s() : 0.0;
        tl.dp_exposed_s += std::max(tl.gather_s - fwd_window, 0.0);
      }
    }
    tl.optimizer_s = optimizer_time_s(hw, pc, ts, params_local);
    return tl;
  };
  // Layers on the stages before r: the middle stages hold middle_hi layers
  // first, then middle_hi - 1 (StageLayout).
  auto layers_before = [&](std::int64_t r) -> std::int64_t {
    if (r == 0) return 0;
    const std::int64_t mids = r - 1, hi = std::min(mids, layout.middle_hi_count);
    return layout.first + hi * layout.middle_hi + (mids - hi) * (layout.middle_hi - 1);
  };
  auto lead_s = [&](std::int64_t r) {
    return r == 0 ? 0.0 : (double(layers_before(r)) * lt.bwd_s() + head.embedding_bwd_s) / double(v);
  };
  // Among stages with the same layers and parameters the one nearest stage 0
  // has the shortest lead, so only stage 0, stage 1 (middle_hi layers), the
  // first middle stage with middle_hi - 1 layers and stage p-1 can be last.
  const std::int64_t lo_mid = 1 + layout.middle_hi_count;
  const std::int64_t candidates[4] = {0, std::min<std::int64_t>(1, p - 1), lo_mid < p - 1 ? lo_mid : p - 1, p - 1};
  StageTail tail = stage_tail(0);
  double tail_end = tail.total_s();
  for (std::int64_t i = 1; i < 4; ++i) {
    const std::int64_t r = candidates[i];
    if (r == candidates[i - 1]) continue;
    const StageTail tl = stage_tail(r);
    const double lead = lead_s(r);
    if (tl.total_s() - lead > tail_end) tail = tl, tail.lead_s = lead, tail_end = tl.total_s() - lead;
  }
  // The step's tail, split for the report: the critical stage's exposed DP
  // traffic first, then its optimizer, less its lead over stage 0 (taken from
  // the optimizer first: the other stages' drain covers it).
  st.dp_tail_stage = tail.stage;
  st.optimizer_s = std::max(0.0, tail.optimizer_s - tail.lead_s);
  st.dp_comm_s = tail_end - st.optimizer_s;
  st.dp_comm_total_s = tail.reduce_s + tail.gather_s;
  if (ex && wg.size > 1 && pc.zero_stage < 3)
    note(ex, "DP gradient reduction (exposed)",
         "max over stages r of [max(reduce(grads_r) - backward of last micro-batch, last 40M-param bucket) "
         "(+ ZeRO-1/2 weight all-gather) + Adam_r - lead_r], lead_r = (sum_{j<r} bwd_j)/v; less the optimizer line",
         "Li et al. 2020 (PyTorch DDP buckets); Megatron-LM distributed optimizer; drain lead: approximation, checked "
         "by "
         "planner simulate",
         {{"stage", double(tail.stage)},
          {"grad_bytes", tail.grad_bytes},
          {"group", double(wg.size)},
          {"reduce_s", tail.reduce_s},
          {"window_s", tail.window_s},
          {"lead_s", tail.lead_s}},
         st.dp_comm_s);
  if (ex)
    note(ex, "optimizer step (Adam, memory bound)",
         "(3g + 28 + w) bytes per local parameter (/ DP*CP with ZeRO >= 1) / (HBM bandwidth * efficiency), "
         "of the stage that ends the step, less the part of its lead over stage 0 its DP traffic leaves",
         "Megatron-LM MixedPrecisionOptimizer.step (grad norm, Adam, bf16 copy, zeroing)",
         {{"stage", double(tail.stage)}, {"adam_s", tail.optimizer_s}, {"lead_s", tail.lead_s}}, st.optimizer_s);
  if (wg.size > 1 && pc.zero_stage >= 3) {
    // The first layer's gather of each pass is never hidden (zero3_layer_comm).
    const double t_ag = z3.all_gather_s, t_rs = z3.reduce_scatter_s;
    const double fwd_exposed = t_ag + layers * z3.exposed_fwd_s;
    const double bwd_exposed = layers * z3.exposed_bwd_s;
    st.zero3_comm_s = md * (fwd_exposed + bwd_exposed);
    st.zero3_comm_total_s = md * layers * (2.0 * t_ag + t_rs);
    if (ex)
      note(ex, "ZeRO-3 parameter gathers (exposed)",
           "m * [ag + L*max(0, ag - fwd_layer) + L*max(0, ag + rs - bwd_layer)]",
           "Rajbhandari et al. 2020; prefetch condition from the course slides",
           {{"ag_per_layer_s", t_ag},
            {"rs_per_layer_s", t_rs},
            {"fwd_layer_s", lt.fwd_s()},
            {"bwd_layer_s", lt.bwd_s()}},
           st.zero3_comm_s);
  }

  st.step_s = st.compute_s + st.recompute_s + st.tp_comm_s + st.cp_comm_s + st.pp_p2p_s + st.pp_bubble_s +
              st.dp_comm_s + st.zero3_comm_s + st.optimizer_s;
  st.bubble_fraction = st.step_s > 0 ? st.pp_bubble_s / st.step_s : 0.0;
  const double tokens = double(ts.global_batch_sequences) * double(ts.seq_len);
  st.tokens_per_s = tokens / st.step_s;
  const FlopsPerToken f = flops_per_token(m, ts.seq_len, pc.recompute);
  st.model_flops_per_step = f.model * tokens;
  st.hardware_flops_per_step = f.hardware * tokens;
  const double peak_total = double(ts.num_gpus) * hw.peak_flops_per_s[std::size_t(ts.dtype)];
  st.mfu = st.model_flops_per_step / (st.step_s * peak_total);
  st.hfu = st.hardware_flops_per_step / (st.step_s * peak_total);
  if (ex)
    ex->add({"MFU",
             "(6N + 12*L*H*Q*T) * tokens / (step * GPUs * peak)",
             "Chowdhery et al. 2022 (PaLM) App. B",
             {{"model_flops_per_step", st.model_flops_per_step}, {"step_s", st.step_s}, {"gpus", double(ts.num_gpus)}},
             st.mfu,
             "fraction"});
  return st;
}

}  // namespace planner
