#include "planner/model/layer_cost.h"

#include <algorithm>

#include "planner/model/moe_cost.h"
#include "planner/model/selective_policy.h"
#include "model/layer_parts.h"

// A dense layer's stored activations per micro-batch (memory_model.cpp's
// input): Korthikanti et al. 2022 §4.1 tensor by tensor, with what each
// recomputation policy frees. MoE models: moe_cost.cpp; torchtitan's
// every-N-th-layer checkpointing: selective_policy.cpp.
namespace planner {

using namespace layer_detail;

LayerActivations layer_activations(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts,
                                   Explain* ex) {
  if (pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::torchtitan_every_nth_layer)
    return every_nth_layer_activations(model, pc, ts, ex);
  if (model.is_moe()) return mean_moe_model_layer_activations(model, pc, ts, ex);
  const Dims d = dims(model, pc, ts);
  LayerActivations a;
  const double nh_sp = d.n * d.h / d.sp_div;  // regions split only by SP
  const double mask = d.dropout ? 1.0 : 0.0;  // 1-byte dropout masks
  // Korthikanti et al. 2022 §4.1, term by term (GPT: 34*s*b*h + 5*a*s^2*b):
  // GEMM inputs kept for the weight gradients: 1 byte under FP8 (gemm_input_bytes).
  const double in = gemm_input_bytes(ts.dtype);
  // The attention output: kept by a fused attention kernel for its backward
  // (bf16) and, under FP8, by the O-projection as its quantised copy too.
  const double attn_out = is_fused(ts.attention) ? kAct + (in < kAct ? in : 0.0) : in;
  double bytes = 0;
  bytes += kAct * nh_sp;                                      // norm-1 input
  bytes += in * nh_sp;                                        // QKV GEMM input (norm-1 output)
  bytes += kAct * d.n * qkv_width(d) / d.t;                   // Q, K, V (GQA: KV heads; MLA: after the up-projections)
  bytes += attn_out * d.n * d.H * (d.mla ? d.v_hd : d.hd) / d.t;  // attention output = O-projection input
  bytes += mask * nh_sp;                                      // attention-block dropout mask
  bytes += kAct * nh_sp;                                      // norm-2 input
  bytes += in * nh_sp;                                        // FFN-in GEMM input (norm-2 output)
  bytes += kAct * d.n * d.F / d.t * (d.gated ? 2.0 : 1.0);    // FFN-in output (gate and up for GLU)
  bytes += in * d.n * d.F / d.t;                              // activation output = FFN-out input
  bytes += mask * nh_sp;                                      // FFN dropout mask
  // Attention core: unfused keeps softmax output (+ dropout mask and output)
  // over b*(H/t)*s_local*s scores; flash keeps only fp32 log-sum-exp rows.
  const double scores = d.b * (d.H / d.t) * d.s_local * d.s;
  a.attention_core_bytes = ts.attention == AttentionKernel::unfused ? scores * (kAct + (d.dropout ? 1.0 + kAct : 0.0))
                                                                    : 4.0 * d.b * (d.H / d.t) * d.s_local;
  a.full_layer_bytes = bytes + a.attention_core_bytes;
  switch (pc.recompute) {
    case Recompute::none:
      a.stored_bytes = a.full_layer_bytes;
      break;
    case Recompute::selective:
      if (ts.selective == SelectivePolicy::torchtitan_op) {
        a.stored_bytes = std::min(a.full_layer_bytes, op_sac_stored_bytes(model, pc, d.n, a.attention_core_bytes));
        if (ex)
          note_step(ex, "activations kept by torchtitan op-level SAC (per layer per micro-batch)",
                    "layer input + outputs of the saved matmuls (every other mm: wq, wv, w1, w2 for Llama) + "
                    "attention output + attention kernel state",
                    "pytorch/torchtitan v0.2.2 torchtitan/distributed/activation_checkpoint.py _apply_op_sac; "
                    "models/llama3/infra/parallelize.py _op_sac_save_list",
                    {{"full_layer_bytes", a.full_layer_bytes}}, a.stored_bytes, "bytes");
      } else {  // Megatron --recompute-modules (default core_attn: nothing to drop under flash attention)
        a.stored_bytes = a.full_layer_bytes - module_dropped_bytes(d, pc, ts, a.attention_core_bytes, ex);
      }
      break;
    case Recompute::full:
      a.stored_bytes = kAct * nh_sp;
      break;  // the layer input checkpoint only
  }
  a.recompute_working_bytes = a.full_layer_bytes - a.stored_bytes;
  if (ex)
    ex->add({"activations per layer per micro-batch",
             "sum of stored tensors (norm inputs, QKV, attention out, FFN in/out, masks) + attention core",
             "Korthikanti et al. 2022 §4.1 Eq.1-2, adapted per tensor to GQA/SwiGLU/flash",
             {{"tokens_per_gpu", d.n}, {"tp", d.t}, {"sp_divisor", d.sp_div}, {"full_layer_bytes", a.full_layer_bytes}},
             a.stored_bytes,
             "bytes"});
  return a;
}

}  // namespace planner
