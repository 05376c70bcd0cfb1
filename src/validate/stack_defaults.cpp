#include "validate/stack_defaults.h"

#include <algorithm>

#include <fmt/format.h>

#include "validate/row_fields.h"
#include "validate/row_text.h"
#include "validate/row_words.h"

namespace planner::stack_defaults {

using nlohmann::json;
using row_text::contains;
using row_text::field;
using row_text::lower;
using row_text::text;
using namespace row_words;
using namespace row_fields;

// torchtitan's rows (docs/performance.md): FSDP2's fp32 reduce-scatter, its
// selective-checkpointing policies, eager PyTorch of the rows' dates.
void apply_torchtitan(const json& row, int year, const std::string& precision, MeasuredRun& r) {
  TrainingSpec& ts = r.training;
  // torchtitan reduce-scatters FSDP2 gradients in fp32
  // (--training.mixed_precision_reduce, default and only choice "float32":
  // torchtitan config_manager.py @eef8bb2, config/configs.py @b5bcd76).
  if (contains(lower(text(row, "zero_or_fsdp")), "fsdp")) {
    ts.grad_reduce_bytes_per_param = 4;
    r.assumptions.push_back("torchtitan FSDP2: gradients reduce-scattered in fp32 (mixed_precision_reduce)");
  }
  // Selective recomputation as torchtitan runs it (SelectivePolicy): its rows'
  // "selective (per-op)" is selective_ac_option "op", "selective (per-layer)"
  // and a plain "selective" the default "2", every second block recomputed
  // in full (torchtitan v0.2.2 config/job_config.py ActivationCheckpoint;
  // distributed/activation_checkpoint.py). Other rows keep Megatron's.
  const std::string recompute_text = lower(text(row, "activation_recompute"));
  if (recompute_text.rfind("selective", 0) == 0) {
    if (contains(recompute_text, "op")) {
      ts.selective = SelectivePolicy::torchtitan_op;
      r.assumptions.push_back("torchtitan selective AC per op: selective_ac_option \"op\"");
    } else {
      ts.selective = SelectivePolicy::torchtitan_every_nth_layer;
      ts.selective_every_n_layers = 2;
      r.assumptions.push_back(
          "torchtitan selective AC per layer: selective_ac_option \"2\" (its default), every second block recomputed");
    }
  }
  // torchtitan's rows ran eager PyTorch: compile = false in the configs of
  // their date (train_configs/llama3_8b.toml @504e7641d; Compile.enable False
  // in v0.2.2 config/job_config.py); the 405B row lists no optimizations. The
  // optional row field torch_compile overrides.
  ts.eager_elementwise = true;
  r.assumptions.push_back("torchtitan: eager PyTorch, no torch.compile (its default), element-wise ops unfused");
  // torchtitan calls F.scaled_dot_product_attention (models/llama3 model.py);
  // before torch 2.11 PyTorch runs it with FlashAttention-2 kernels, cuDNN
  // attention being opt-in (pytorch/pytorch#138522, cherry-picked to 2.5.1;
  // on by default once the bundled cuDNN passes 9.15, huggingface/
  // transformers#48163). Every torchtitan row predates torch 2.11 (2024-25).
  // A source without a year counts as before (torchtitan's published tables
  // are of 2024-25). The optional row field attention_kernel overrides.
  if (year < 2026) {
    ts.eager_composite_rmsnorm = true;
    r.assumptions.push_back(
        "torchtitan before torch 2.9: RMSNorm as seven composite fp32 kernels (pytorch/pytorch#153666 fused it)");
    ts.attention = AttentionKernel::flash2;
    r.assumptions.push_back(
        "torchtitan before torch 2.11: PyTorch SDPA runs FlashAttention-2 kernels (cuDNN attention opt-in)");
  }
  // A row that names torch.compile in its precision or table ran it (element-
  // wise ops and the norm fused by Inductor); "no torch.compile" did not. (Not
  // the notes: they name other rows' techniques.)
  if (const std::string t = lower(precision + " | " + text(row, "source_table"));
      affirms(t, "torch.compile") && !affirms(t, "eager")) {
    ts.eager_elementwise = false;
    ts.eager_composite_rmsnorm = false;
    r.assumptions.push_back("torch.compile (named by the row): element-wise ops and RMSNorm fused");
  }
}

// MosaicML llm-foundry's benchmark tables (scripts/train/benchmarking/
// README.md): its launcher (submit_benchmarks.py at 5e85bd62d, 2024-01, the
// commit that wrote the H100 tables) sets attn_impl "flash" and installs
// the gpu-flash2 extra, flash-attn 2.4.2 (setup.py): FlashAttention-2
// kernels. MPT runs eager under Composer, but its eager kernels are the
// ones the fused baseline prices (llmfoundry/models/mpt: one
// low_precision_layernorm kernel per norm, one GELU, one residual add;
// flash-attn takes the Q/K/V slices of the fused projection and returns
// the output contiguous, so no copies): torchtitan's extra eager passes
// (TrainingSpec::eager_elementwise) are not applied. Every H100 row of the
// tables ran Composer's FSDP mixed precision "DEFAULT" (its MP Mode
// column), which since Composer 0.17.0 reduces gradients in fp32
// (composer/trainer/mosaic_fsdp_utils.py get_mixed_precision: reduce_dtype
// torch.float32, added by mosaicml/composer#2628, 2023-10; llm-foundry
// 5e85bd62d requires mosaicml>=0.17.2,<0.18): FSDP1 casts the bf16
// gradients up and reduce-scatters 4 bytes each. The optional row fields
// attention_kernel and grad_reduce_bytes override. MPT's loss is flash-attn's
// Triton cross-entropy (modeling_mpt.py at 5e85bd62d: loss_fn defaults to
// fused_crossentropy, flash_attn.losses.cross_entropy.CrossEntropyLoss):
// LossKernel::flash_attn; the row field loss_kernel overrides. Composer
// evaluates MPT's two train metrics over the logits after every
// micro-batch (TrainingSpec::train_metric_losses); the row field
// train_metric_losses overrides.
// MPT's flash path packs Q, K and V and re-pads the output every layer
// (TrainingSpec::attention_varlen_unpad; attention.py flash_attn_fn).
void apply_llm_foundry(MeasuredRun& r) {
  TrainingSpec& ts = r.training;
  ts.attention = AttentionKernel::flash2;
  ts.attention_varlen_unpad = true;
  ts.grad_reduce_bytes_per_param = 4;
  ts.loss_kernel = LossKernel::flash_attn;
  ts.train_metric_losses = 2;
  ts.zero3_staging = Zero3Staging::flat_parameter;
  ts.optimizer_kernel = OptimizerKernel::unfused_loop;
  r.assumptions.push_back(
      "llm-foundry: MPT's attention as FlashAttention-2 kernels (flash-attn 2.4.2) on Q/K/V unpadded and the "
      "output re-padded every layer (flash_attn_fn); Composer's FSDP mixed precision DEFAULT reduces gradients "
      "in fp32; the loss as flash-attn's fused cross-entropy (loss_fn fused_crossentropy); Composer's two train "
      "metrics (cross-entropy, perplexity) over the logits after every micro-batch; torch FSDP1's flat "
      "parameter (gradients concatenated, cast and pre-divided before each reduce-scatter); Composer's "
      "DecoupledAdamW as a per-parameter loop of single-operation kernels");
}

// Megatron-LM itself, from 2023: its argument defaults where the row does
// not say otherwise (megatron/training/arguments.py): bf16 gradients are
// accumulated and reduced in fp32 (accumulate_allreduce_grads_in_fp32, set
// for bf16 unless --grad-reduce-in-bf16), and reduced after the backward
// pass unless --overlap-grad-reduce is given (store_true, default off).
// The flags the row quotes are read: --overlap-grad-reduce,
// --grad-reduce-in-bf16. The optional fields grad_bytes and
// overlap_grad_reduce still override.
void apply_megatron_lm(const json& row, const std::string& notes, MeasuredRun& r) {
  TrainingSpec& ts = r.training;
  const std::string said = lower(notes + " " + text(row, "config_provenance") + " " + text(row, "model_name"));
  const auto quotes = [&](const char* flag) {
    std::string under = flag;
    std::replace(under.begin(), under.end(), '-', '_');
    return contains(said, flag) || contains(said, under.c_str());
  };
  ts.grad_bytes_per_param = quotes("grad-reduce-in-bf16") ? 2 : 4;
  ts.overlap_grad_reduce = quotes("overlap-grad-reduce");
  r.assumptions.push_back(fmt::format(
      "Megatron-LM's defaults unless the row quotes a flag: {} gradients, reduced {}",
      ts.grad_bytes_per_param == 4 ? "fp32" : "bf16",
      ts.overlap_grad_reduce ? "during the backward pass (--overlap-grad-reduce)" : "after the backward pass"));
}

}  // namespace planner::stack_defaults
