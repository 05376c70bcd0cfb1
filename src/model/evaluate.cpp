#include "planner/model/evaluate.h"

#include "planner/model/layer_cost.h"
#include "planner/model/moe_cost.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/limits.h"

namespace planner {

const char* describe(Reason r) {
  switch (r) {
    case Reason::gpu_count_mismatch:
      return "tp*cp*pp*dp does not equal the GPU count";
    case Reason::tp_exceeds_scale_up:
      return "TP group larger than the scale-up domain (NVLink node / pod)";
    case Reason::tp_not_dividing_heads:
      return "TP does not divide the attention heads and KV heads";
    case Reason::tp_not_dividing_ffn:
      return "TP does not divide the FFN size";
    case Reason::cp_not_dividing_seq:
      return "sequence length not divisible by 2*CP (causal load balancing)";
    case Reason::batch_not_divisible:
      return "global batch not divisible by dp * micro-batch size";
    case Reason::too_few_layers:
      return "fewer layers than pipeline stages * virtual stages";
    case Reason::vpp_needs_pp:
      return "virtual pipeline stages need pp > 1";
    case Reason::interleave_needs_micro_batches:
      return "interleaved schedule needs a multiple of pp micro-batches (Megatron-LM)";
    case Reason::zero_stage_invalid:
      return "ZeRO stage must be 0, 1, 2 or 3";
    case Reason::dtype_unsupported:
      return "data type not supported by this chip (no peak FLOP/s)";
    case Reason::crosses_single_domain:
      return "group leaves the only interconnect tier the profile describes";
    case Reason::ep_on_dense_model:
      return "expert parallelism (EP/ETP > 1) on a dense model";
    case Reason::ep_not_dividing_experts:
      return "EP does not divide the number of experts";
    case Reason::expert_grid_not_folding:
      return "EP*ETP does not divide TP*CP*DP (MoE parallel folding)";
    case Reason::etp_not_dividing_expert_ffn:
      return "ETP does not divide the expert FFN size";
    case Reason::moe_tp_needs_sp:
      return "MoE with TP > 1 needs sequence parallelism (Megatron-Core)";
    case Reason::zero_shard_invalid:
      return "ZeRO shard group (--zero-shard) must be whole CP groups dividing DP x CP, of at least 2 ranks, with "
             "ZeRO >= 1, on a dense model";
    case Reason::out_of_memory:
      return "does not fit in GPU memory";
    case Reason::count_:
      break;
  }
  return "?";
}

std::vector<Reason> Evaluation::reason_list() const {
  std::vector<Reason> out;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if (has(Reason(i))) out.push_back(Reason(i));
  return out;
}

// Expert parallelism with MoE parallel folding (Liu et al. 2025,
// arXiv:2504.14960; Megatron-Core parallel_state.py): the expert grid
// ETP x EP x EDP re-factors each stage's TP x CP x DP ranks, so EP*ETP must
// divide TP*CP*DP. Megatron-LM megatron/training/arguments.py (validate_args)
// asserts num_experts % expert_model_parallel_size == 0 and that EP needs
// experts; Megatron-Core transformer_config.py (__post_init__) raises "When
// using expert parallelism and tensor parallelism, sequence parallelism must
// be used" (moe_tp_needs_sp: asked of every MoE layer with TP > 1, as the MoE
// layer's input is the sequence-parallel shard); the expert linear layers
// split their FFN width over ETP (megatron/core/transformer/moe/experts.py).
std::uint32_t expert_reasons(const ModelSpec& model, const ParallelConfig& pc) {
  std::uint32_t r = 0;
  auto set = [&](Reason x) { r |= 1u << unsigned(x); };
  if (pc.ep < 1 || pc.etp < 1 || pc.tp < 1 || pc.cp < 1 || pc.dp < 1) {
    set(Reason::gpu_count_mismatch);
    return r;
  }
  if (!model.is_moe()) {
    if (pc.ep != 1 || pc.etp != 1) set(Reason::ep_on_dense_model);
    return r;
  }
  if (model.moe.num_experts % pc.ep != 0) set(Reason::ep_not_dividing_experts);
  // tp*cp*dp % (ep*etp), by division (no overflow): ep*etp <= tp*cp*dp.
  const std::int64_t fold = pc.tp * pc.cp * pc.dp;
  if (pc.ep > fold || pc.etp > fold / pc.ep || fold % (pc.ep * pc.etp) != 0) set(Reason::expert_grid_not_folding);
  if (model.moe.expert_ffn_hidden_size % pc.etp != 0) set(Reason::etp_not_dividing_expert_ffn);
  if (pc.tp > 1 && !pc.sequence_parallel) set(Reason::moe_tp_needs_sp);
  return r;
}

std::uint32_t structural_reasons(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                 const TrainingSpec& ts) {
  std::uint32_t r = 0;
  auto set = [&](Reason x) { r |= 1u << unsigned(x); };
  if (pc.tp < 1 || pc.cp < 1 || pc.pp < 1 || pc.dp < 1 || pc.micro_batch_size < 1 || pc.virtual_stages < 1 ||
      pc.ep < 1 || pc.etp < 1) {
    set(Reason::gpu_count_mismatch);
    return r;
  }
  // Products of the degrees are tested by exact division, so no 64-bit
  // product can overflow whatever the inputs: tp*cp*pp*dp == N exactly when
  // each division leaves no remainder and dp is what remains.
  const std::int64_t N = ts.num_gpus;
  if (N < 1 || N % pc.tp != 0 || (N / pc.tp) % pc.cp != 0 || (N / pc.tp / pc.cp) % pc.pp != 0 ||
      N / pc.tp / pc.cp / pc.pp != pc.dp)
    set(Reason::gpu_count_mismatch);
  const std::int64_t domain = hw.tiers.empty() ? 1 : hw.tiers[0].size;
  if (pc.tp > domain) set(Reason::tp_exceeds_scale_up);
  if (model.num_heads % pc.tp != 0 || model.num_kv_heads % pc.tp != 0) set(Reason::tp_not_dividing_heads);
  if (model.ffn_hidden_size % pc.tp != 0) set(Reason::tp_not_dividing_ffn);
  // The sequence splits into 2*cp chunks: seq % (2*cp) == 0.
  if (pc.cp > ts.seq_len || (pc.cp > 1 && (ts.seq_len % 2 != 0 || (ts.seq_len / 2) % pc.cp != 0)))
    set(Reason::cp_not_dividing_seq);
  // global batch % (dp * mbs) == 0.
  const std::int64_t gbs = ts.global_batch_sequences;
  if (gbs < 1 || gbs % pc.dp != 0 || (gbs / pc.dp) % pc.micro_batch_size != 0) set(Reason::batch_not_divisible);
  // pp * v <= layers, or pp * v - 2 <= layers where the heads may fill a chunk
  // of the end stages alone (balance_layers; the layout decides exactly).
  if (!layers_fill_chunks(model.num_layers, pc.pp, pc.virtual_stages, ts.pipeline_split)) set(Reason::too_few_layers);
  if (pc.virtual_stages > 1 && pc.pp == 1) set(Reason::vpp_needs_pp);
  // Megatron-LM's interleaved schedule needs a multiple of pp micro-batches
  // (schedules.py, forward_backward_pipelining_with_interleaving raises
  // "number of microbatches is not divisible by pipeline-model-parallel-size";
  // with other counts its fixed per-rank order can deadlock, which `planner
  // simulate` shows).
  if (pc.virtual_stages > 1 && !(r >> unsigned(Reason::batch_not_divisible) & 1u) &&
      (gbs / pc.dp / pc.micro_batch_size) % pc.pp != 0)
    set(Reason::interleave_needs_micro_batches);
  if (pc.zero_stage < 0 || pc.zero_stage > 3) set(Reason::zero_stage_invalid);
  if (hw.peak_flops_per_s[std::size_t(ts.dtype)] <= 0 || hw.efficiency.gemm_max[std::size_t(ts.dtype)] <= 0)
    set(Reason::dtype_unsupported);
  if (hw.tiers.size() < 2 && ts.num_gpus > domain) set(Reason::crosses_single_domain);
  r |= expert_reasons(model, pc);
  if (!zero_shard_valid(model, pc)) set(Reason::zero_shard_invalid);
  return r;
}

// Hybrid sharding (ParallelConfig::zero_shard): a shard group is whole CP
// groups and the innermost DP ranks (torchtitan's dp_shard x cp FSDP mesh
// inside dp_replicate, parallel_dims.py; Megatron-Core's distributed
// optimizer instances), so it is a multiple of CP dividing DP x CP. ZeRO-0
// shards nothing. MoE models are refused: their experts shard over the
// expert data-parallel group (moe_cost.h), which hybrid sharding would split
// in ways not modelled. A group of one rank shards nothing.
bool zero_shard_valid(const ModelSpec& model, const ParallelConfig& pc) {
  if (pc.zero_shard == 0) return true;
  // A group of one rank shards nothing (its replicas are ZeRO-0's): refused, not priced without a reduction.
  if (pc.zero_shard < 2 || pc.zero_stage < 1 || model.is_moe() || pc.cp < 1 || pc.dp < 1) return false;
  if (pc.zero_shard % pc.cp != 0) return false;
  const std::int64_t dp_part = pc.zero_shard / pc.cp;
  return dp_part >= 1 && dp_part <= pc.dp && pc.dp % dp_part == 0;
}

ParallelConfig normalized(ParallelConfig pc) {
  if (pc.tp == 1) pc.sequence_parallel = false;  // SP is a TP refinement
  if (pc.zero_stage != 3) pc.reshard_after_forward = true;  // only ZeRO-3 gathers weights
  if (pc.zero_shard > 0 && pc.zero_shard == pc.dp * pc.cp) pc.zero_shard = 0;  // one group: plain ZeRO
  if (pc.virtual_stages > 1)
    pc.schedule = Schedule::interleaved;
  else if (pc.schedule == Schedule::interleaved)
    pc.schedule = Schedule::one_f_one_b;
  return pc;
}

TrainingSpec training_for(TrainingSpec ts, const Evaluation& ev) {
  ts.recompute_modules = ev.recompute_modules;
  ts.overlap_a2a = ev.overlap_a2a;
  return ts;
}

Evaluation evaluate(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc_in,
                    const TrainingSpec& ts, Explain* ex) {
  // The error's origin is spelled out only when a field is out of range:
  // building "model <name>" for every configuration was a heap allocation each.
  if (!size_problems(model).empty()) check_sizes(model, "model " + model.name);
  if (!size_problems(ts).empty()) check_sizes(ts, "training run");
  const ParallelConfig pc = normalized(pc_in);
  if (std::uint32_t r = structural_reasons(model, hw, pc, ts)) {
    Evaluation ev;
    ev.config = pc;
    ev.reasons = r;
    ev.recompute_modules = ts.recompute_modules;
    ev.overlap_a2a = ts.overlap_a2a;
    return ev;
  }
  // The MTP module's MoE layer is the one priced for the mean: price it once
  // (--explain keeps the path below, and with it the order of its notes).
  if (model.is_moe() && model.mtp_layers > 0 && ex == nullptr) {
    LayerTime moe;
    const LayerTime lt = mean_moe_model_layer_time(model, hw, pc, ts, ex, &moe);
    return evaluate(model, hw, pc, ts, lt, head_time(model, hw, pc, ts, ex, &moe), ex);
  }
  return evaluate(model, hw, pc, ts, layer_time(model, hw, pc, ts, ex), head_time(model, hw, pc, ts, ex), ex);
}

Evaluation evaluate(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc_in,
                    const TrainingSpec& ts, const LayerTime& lt, const HeadTime& head, Explain* ex) {
  const ParallelConfig pc = normalized(pc_in);
  const std::uint32_t reasons = structural_reasons(model, hw, pc, ts);
  // The plan is priced in place, not copied in (the search evaluates about a
  // million configurations a second).
  Evaluation ev{.config = pc,
                .reasons = reasons,
                .layout = {},
                .plan = reasons ? PricedPlan{} : price_plan(model, hw, pc, ts, lt, head),
                .memory = {},
                .time = {},
                .recompute_modules = ts.recompute_modules,
                .overlap_a2a = ts.overlap_a2a};
  if (ev.reasons) return ev;
  ev.layout = ev.plan.layout;
  if (!ev.layout.feasible) {
    ev.reasons |= 1u << unsigned(Reason::too_few_layers);
    return ev;
  }
  if (ex)
    ex->add({"pipeline stage layout",
             ts.pipeline_split == PipelineSplit::uniform
                 ? "layers split evenly, the first (layers mod pp) stages one more; a layer in every chunk"
                 : "minimise max(layers_r + extra_r) over stages; extras in layer-equivalents; a layer in every "
                   "chunk but the end stages' head chunks (v > 1: first, last >= v - 1)",
             ts.pipeline_split == PipelineSplit::uniform
                 ? "DeepSpeed ds_utils.partition_uniform (deepspeed/runtime/utils.py); MaxText "
                   "num_layers_per_pipeline_stage"
                 : "Llama 3 paper §3.3.2 (uneven first/last stages); Megatron-LM transformer_block.py "
                   "get_num_layers_to_build (--account-for-embedding/loss-in-pipeline-split)",
             {{"layers", double(model.num_layers)},
              {"pp", double(pc.pp)},
              {"extra_first", ev.plan.extra_first},
              {"extra_last", ev.plan.extra_last},
              {"first", double(ev.layout.first)},
              {"last", double(ev.layout.last)}},
             double(ev.layout.middle_hi),
             "layers (middle)"});
  ev.memory = memory_per_gpu(model, hw, pc, ts, ev.plan, ex);
  ev.time = step_time(model, hw, pc, ts, ev.plan, ex);
  if (!ev.memory.fits()) ev.reasons |= 1u << unsigned(Reason::out_of_memory);
  return ev;
}

namespace {

// The term's name in "dominant overhead" (CLI tables, JSON, CSV); compute is
// not an overhead.
const char* overhead_name(StepTerm term) {
  switch (term) {
    case StepTerm::compute:
      return nullptr;
    case StepTerm::recompute:
      return "recompute";
    case StepTerm::contention:
      return "contention";
    case StepTerm::tp_comm:
      return "TP comm";
    case StepTerm::cp_comm:
      return "CP comm";
    case StepTerm::pp_p2p:
      return "PP p2p";
    case StepTerm::pp_bubble:
      return "PP bubble";
    case StepTerm::dp_comm:
      return "DP comm";
    case StepTerm::zero3_comm:
      return "ZeRO comm";
    case StepTerm::ep_comm:
      return "EP all-to-all";
    case StepTerm::optimizer:
      return "optimizer";
  }
  return nullptr;
}

}  // namespace

const char* dominant_overhead(const StepTimeBreakdown& t) {
  const char* best = "none";
  double best_s = 0;
  for (const StepTermValue& x : step_terms(t)) {
    const char* name = overhead_name(x.term);
    if (name && x.s > best_s) {
      best = name;
      best_s = x.s;
    }
  }
  // An overhead under 1% of the step dominates nothing worth naming.
  return best_s > 0.01 * t.step_s ? best : "none";
}

}  // namespace planner
