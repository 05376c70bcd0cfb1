// Plain-value specifications: the model, the hardware, the parallel layout and
// the training run. Parsed from JSON / CLI in json_io.cpp and cli; the cost
// model reads only these structs (never JSON). SI units, unit-suffixed names.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace planner {

enum class FfnKind { swiglu, geglu, gelu, relu, squared_relu };
enum class NormKind { rmsnorm, layernorm };
// Position information: rotary (applied to Q and K, no parameters), a learned
// table, or ALiBi (Press et al. 2022, arXiv:2108.12409: a per-head linear bias
// on the attention scores, added inside fused attention kernels such as
// FlashAttention-2's alibi_slopes; no parameters, no separate kernel).
enum class PositionKind { rope, learned, alibi };

[[nodiscard]] constexpr bool is_gated(FfnKind k) { return k == FfnKind::swiglu || k == FfnKind::geglu; }

// Mixture-of-Experts feed-forward (all zero = a dense model). Which layers are
// MoE: after `first_dense_layers` dense ones (DeepSeek's first_k_dense_replace),
// every `layer_freq`-th layer (1 = all; Llama 4 Maverick's
// interleave_moe_layer_step 2). Dense layers use ModelSpec::ffn_hidden_size.
// Facts and sources: ../shared/reference/moe.md §2.
enum class RouterScore { softmax, sigmoid };
struct MoeSpec {
  std::int64_t num_experts = 0;                    // routed experts per MoE layer; 0 = dense model
  std::int64_t top_k = 0;                          // routed experts per token
  std::int64_t expert_ffn_hidden_size = 0;         // one routed expert's FFN width
  std::int64_t num_shared_experts = 0;             // always-active experts (DeepSeek, Llama 4)
  std::int64_t shared_expert_ffn_hidden_size = 0;  // one shared expert's width; 0 = expert_ffn_hidden_size
  std::int64_t first_dense_layers = 0;
  std::int64_t layer_freq = 1;
  RouterScore router_score = RouterScore::softmax;
  bool router_bias = false;  // per-expert score correction bias (DeepSeek-V3 e_score_correction_bias)
  bool operator==(const MoeSpec&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3; all zero = standard attention
// with num_heads x head_dim). q_lora_rank 0 = queries projected directly.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;  // > 0 turns MLA on
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  bool operator==(const MlaSpec&) const = default;
};

struct ModelSpec {
  std::string name;                  // canonical name, e.g. "llama3.1-405b"
  std::vector<std::string> aliases;  // e.g. {"llama405b"}
  std::string display_name;
  std::string source;  // citation for the architecture
  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t ffn_hidden_size = 0;
  FfnKind ffn_kind = FfnKind::swiglu;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;  // 0 in JSON means hidden_size / num_heads
  std::int64_t vocab_size = 0;
  bool tied_embeddings = false;
  NormKind norm = NormKind::rmsnorm;
  bool bias = false;     // linear-layer biases (GPT: yes, Llama: no)
  bool dropout = false;  // dropout layers present (stores masks)
  PositionKind position = PositionKind::rope;
  std::int64_t max_position_embeddings = 0;  // learned positions only
  std::int64_t default_seq_len = 0;
  std::int64_t default_global_batch_tokens = 0;
  std::int64_t expected_params = 0;  // published exact count; 0 if none
  // Biases on the Q, K, V projections only (Qwen2/2.5 attention_bias pattern); `bias` covers every linear layer.
  bool qkv_bias = false;
  bool qk_norm = false;  // RMSNorm over each query and key head (Qwen3)
  MoeSpec moe;
  MlaSpec mla;
  // Multi-token-prediction modules (DeepSeek-V3 num_nextn_predict_layers): each
  // one more transformer layer plus its projection, sharing embedding and head.
  std::int64_t mtp_layers = 0;
  std::int64_t expected_active_params = 0;  // published activated count (MoE); 0 if none
  [[nodiscard]] bool is_moe() const { return moe.num_experts > 0; }
  [[nodiscard]] bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool operator==(const ModelSpec&) const = default;
};

enum class Topology { switched, torus };
enum class NcclGeneration { none, volta, ampere, hopper, blackwell };
enum class HostCpu { intel, amd };

// Alpha-beta of one collective on one tier, fitted from measurements by
// `planner calibrate fit` (src/calibrate/calibration.cpp, docs/calibration.md). Optional:
// while `fitted` is false the tier's latency_s and bandwidth_achieved_bytes_per_s
// and the profile's collective_base_latency_s price that collective, as before.
struct CollectiveFit {
  bool fitted = false;
  double base_latency_s = 0;         // once per collective on a group of this tier
  double latency_per_step_s = 0;     // per ring step / tree level / hop on this tier
  double bandwidth_bytes_per_s = 0;  // as bandwidth_achieved_bytes_per_s: per GPU (tier 0), per NIC (tier 1)
  // send/recv only: what one of NCCL's p2p channels moves on this tier, fitted
  // with the channel count of each measured communicator, so a communicator of
  // another size is priced with its own channels (collectives.h
  // send_recv_bandwidth); 0: no channel cap (the fitted bandwidth stands alone).
  double p2p_channel_bandwidth_bytes_per_s = 0;
  // All-reduce, all-gather, reduce-scatter fitted to NCCL runs on a profile
  // with NCCL's tables: NCCL's tuner prices them (algorithm, protocol, the
  // latencies of each), on this tier's bandwidths and latencies scaled by the
  // fit over `stock` (nccl_curve.cpp build_nccl_fitted); false: the alpha-beta
  // above prices it as is.
  bool nccl_tuner = false;
  // The same fit of the base profile's own prices at the measured groups and
  // sizes: what the fit would have found had the cluster been the base.
  struct Stock {
    double base_latency_s = 0, latency_per_step_s = 0, bandwidth_bytes_per_s = 0;
    bool operator==(const Stock&) const = default;
  } stock{};
  bool operator==(const CollectiveFit&) const = default;
};
// One CollectiveFit per planner::Collective (collectives.h), in that enum's order.
inline constexpr std::size_t kNumCollectives = 5;

// One level of the interconnect. Tier 0 is the scale-up domain (NVLink/NVSwitch
// node, or a TPU pod's ICI torus); tier 1 connects domains (InfiniBand, DCN).
struct InterconnectTier {
  std::string name;
  Topology topology = Topology::switched;
  std::int64_t size = 0;                 // chips in one domain of this tier; 0 = unbounded
  std::vector<std::int64_t> torus_dims;  // torus only, row-major, product == size
  double latency_s = 0;                  // alpha: per step / per hop
  // switched scale-up: per-GPU bandwidth per direction; torus: per link per
  // direction; scale-out: per NIC per direction.
  double bandwidth_nominal_bytes_per_s = 0;
  double bandwidth_achieved_bytes_per_s = 0;
  // SMs (one CTA per NCCL channel) a collective on a group of this tier
  // occupies while it runs (tier 0: groups inside the domain; tier 1: groups
  // crossing domains); what overlapped communication takes from compute
  // (contention.h). 0 = not modelled.
  std::int64_t collective_channels = 0;
  // Tier 0 only: bus bandwidth of NVLink SHARP (NVLS) all-reduce on this
  // NVSwitch, as nccl-tests reports it; 0 = the switch has no NVLS (A100).
  double nvls_bus_bandwidth_bytes_per_s = 0;
  bool collnet = false;  // tier 1 only: in-network reduction (SHARP) usable by NCCL CollNet
  std::int64_t nics_per_node = 0;                                // scale-out only
  std::int64_t gpus_per_node = 0;                                // scale-out only: GPUs sharing those NICs
  std::array<CollectiveFit, kNumCollectives> collective_fits{};  // switch tiers only; all unfitted by default
  bool operator==(const InterconnectTier&) const = default;
};

enum class DType { bf16, fp8 };
inline constexpr std::size_t kNumDTypes = 2;

struct ComputeEfficiency {
  // GEMM time = (F + gemm_half_flops) / (peak * gemm_max): a saturating
  // efficiency, eff(F) = gemm_max * F / (F + gemm_half_flops).
  std::array<double, kNumDTypes> gemm_max{0.0, 0.0};
  double gemm_half_flops = 0;
  std::array<double, kNumDTypes> attention_max{0.0, 0.0};  // fused (flash) attention kernels
  // Fused attention efficiency falls with the key/value length L one kernel
  // call walks per query tile: attention_max * L / (L + attention_half_tokens)
  // (a fixed cost per tile, amortised over the loop). 0 = no length effect.
  double attention_half_tokens = 0;
  // FlashAttention-2 kernels (AttentionKernel::flash2), bf16: where a chip's
  // attention_max is measured with a newer kernel (FlashAttention-3 / cuDNN
  // on Hopper). 0 = the same as attention_max (Ampere, where FA2 is the kernel).
  double flash2_attention_max = 0;
  double unfused_attention_max = 0;                        // batched GEMMs of the unfused attention core
  double hbm_efficiency = 0;                               // achieved / nominal HBM bandwidth, element-wise kernels
  // Wave quantisation: output tiles of gemm_tile_m x gemm_tile_n spread over
  // compute_units (SMs / MXUs); the last partial wave idles units. 0 = off.
  std::int64_t compute_units = 0;
  std::int64_t gemm_tile_m = 0, gemm_tile_n = 0;
  // Standard deviation of per-chip kernel speed across identical chips of a
  // cluster (manufacturing and power management), relative; a synchronous
  // step waits for the slowest of its GPUs (model/straggler.h). 0 = off.
  double chip_speed_sigma = 0;
  // Tensor-core clock a training run sustains under the board power limit,
  // as a fraction of the clock of the burst measurements behind gemm_max and
  // attention_max; scales GEMM and attention throughput, not HBM-bound work
  // (model/layer_parts.h sustained_peak). 1 = the burst figures hold.
  double sustained_clock_fraction = 1.0;
  bool operator==(const ComputeEfficiency&) const = default;
};

struct HardwareProfile {
  std::string name;
  std::vector<std::string> aliases;
  std::string display_name;
  // Named public clusters this profile describes (e.g. "Jean Zay"): validate
  // prices a measured row whose gpu_type names one with this profile before
  // matching by chip (validate.cpp match_hardware). Empty for generic systems.
  std::vector<std::string> clusters;
  std::string chip_name;
  std::array<double, kNumDTypes> peak_flops_per_s{0.0, 0.0};  // 0 = unsupported dtype
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  double memory_reserve_bytes = 0;       // CUDA context, NCCL buffers, fragmentation
  double collective_base_latency_s = 0;  // per collective launch (NCCL base latency)
  // Which of NCCL's tuning tables (src/graph/tuning.cc, by GPU generation and,
  // across nodes, host CPU vendor) price this profile's collectives; none =
  // the plain alpha-beta ring/tree model (collectives.h).
  NcclGeneration nccl_generation = NcclGeneration::none;
  HostCpu host_cpu = HostCpu::intel;
  ComputeEfficiency efficiency;
  std::vector<InterconnectTier> tiers;  // 1 or 2 tiers
  bool operator==(const HardwareProfile&) const = default;
};

enum class Recompute { none, selective, full };
// What Recompute::selective recomputes (TrainingSpec::selective).
// megatron_attention: the attention core only (Megatron-LM
// --recompute-granularity selective; Korthikanti et al. 2022 §5).
// torchtitan_op: torchtitan's selective_ac_option "op" (op-level SAC) saves
// the outputs of every second matmul of a layer (the 1st, 3rd, ...), of the
// attention kernel and of its reduce-scatters, and recomputes the rest.
// torchtitan_every_nth_layer: selective_ac_option "<N>" wraps every N-th
// transformer block in full activation checkpointing and leaves the others
// whole (pytorch/torchtitan v0.2.2, torchtitan/distributed/activation_checkpoint.py
// _apply_op_sac / _apply_layer_sac).
enum class SelectivePolicy { megatron_attention, torchtitan_op, torchtitan_every_nth_layer };
// Megatron-LM's --recompute-modules (core_v0.19.0 transformer_config.py
// recompute_modules), what SelectivePolicy::megatron_attention recomputes:
// core_attn (the attention core; Megatron's default), layernorm (both norms'
// outputs), mla_up_proj (MLA's Q/K/V up-projections and RoPE), moe_act (the
// routed experts' activation), mlp (a dense layer's MLP), moe (the whole MoE
// layer, its all-to-alls included), shared_experts. A set is a bit mask,
// bit (1 << value); model/recompute_modules.h prices them.
enum class RecomputeModule : std::uint8_t { core_attn, layernorm, mla_up_proj, moe_act, mlp, moe, shared_experts };
// Pipeline schedules. The closed form prices gpipe, 1f1b and interleaved
// (interleaved iff virtual_stages > 1) and prices zb_h1 as 1f1b; the simulator
// runs all four (simulate.h cites each).
enum class Schedule { one_f_one_b, gpipe, interleaved, zb_h1 };

struct ParallelConfig {
  std::int64_t tp = 1, cp = 1, pp = 1, dp = 1;
  std::int64_t micro_batch_size = 1;
  std::int64_t virtual_stages = 1;
  Recompute recompute = Recompute::none;
  int zero_stage = 0;
  // ZeRO-3 / FSDP only: free each layer's gathered weights after its forward
  // and gather them again for its backward (FSDP2 fully_shard default, and
  // torchtitan's without PP), or keep them until the backward (Llama 3 405B,
  // arXiv:2407.21783 §3.3.2). normalized() sets it true below ZeRO-3.
  bool reshard_after_forward = true;
  // Hybrid sharding (HSDP; FSDP's HYBRID_SHARD, torchtitan's
  // data_parallel_replicate_degree, Megatron-LM's
  // --num-distributed-optimizer-instances, DeepSpeed MiCS, MaxText's FSDP in
  // a slice and DP over DCN): ZeRO's shards span groups of this many of the
  // DP x CP ranks (whole CP groups, the innermost DP ranks) and are
  // replicated over the DP x CP / zero_shard groups, which all-reduce the
  // sharded gradients. 0: one group of all DP x CP ranks (plain ZeRO).
  // Dense models, ZeRO >= 1 (zero_shard_size, evaluate.cpp checks).
  std::int64_t zero_shard = 0;
  bool sequence_parallel = false;
  Schedule schedule = Schedule::one_f_one_b;
  // Expert parallelism with MoE parallel folding (Megatron-LM
  // --expert-model-parallel-size / --expert-tensor-parallel-size; Liu et al.
  // 2025, arXiv:2504.14960): the expert grid ETP x EP x EDP x PP shares the
  // pipeline stages with the attention grid TP x CP x DP x PP, so
  // EDP = TP*CP*DP / (ETP*EP). Both 1 for dense models.
  std::int64_t ep = 1, etp = 1;
  bool operator==(const ParallelConfig&) const = default;
};

// The ranks one ZeRO shard spans (ParallelConfig::zero_shard): DP x CP
// unless hybrid sharding names fewer; and how many replicas of each shard
// the DP x CP ranks hold.
[[nodiscard]] inline std::int64_t zero_shard_size(const ParallelConfig& pc) {
  return pc.zero_shard > 0 ? pc.zero_shard : pc.dp * pc.cp;
}
[[nodiscard]] inline std::int64_t zero_replicas(const ParallelConfig& pc) {
  const std::int64_t s = zero_shard_size(pc);
  return s > 0 ? pc.dp * pc.cp / s : 1;
}

// flash: the fastest fused kernel of the chip (FlashAttention-3 or cuDNN on
// Hopper, FA2 on Ampere; the profile's attention_max). flash2:
// FlashAttention-2 kernels, what PyTorch's scaled_dot_product_attention runs
// by default before torch 2.11 (cuDNN attention opt-in: pytorch/pytorch#138522).
// unfused: the attention core as batched GEMMs with the scores in HBM.
enum class AttentionKernel { flash, unfused, flash2 };
// Which kernel computes the loss over the logits (head_cost.cpp prices its
// passes, memory_model.cpp what it keeps). unfused: Megatron's fp32
// vocab-parallel cross-entropy (megatron/core/tensor_parallel/
// cross_entropy.py). te: Transformer Engine's fused cross-entropy (Megatron
// --cross-entropy-loss-fusion --cross-entropy-fusion-impl te; set by
// Megatron-Bridge's performance scripts): an online-softmax pass and a
// gradient pass over the bf16 logits, the gradient written in place, one
// scaling pass in the backward (TE v2.10 transformer_engine/pytorch/triton/
// cross_entropy.py). flash_attn: flash-attn's Triton cross-entropy, which
// llm-foundry's MPT runs (loss_fn fused_crossentropy, modeling_mpt.py at
// 5e85bd62d): one forward pass reading the logits, a backward pass writing
// the gradient into a new tensor of the logits' dtype (Dao-AILab/
// flash-attention flash_attn/losses/cross_entropy.py, ops/triton/
// cross_entropy.py: inplace_backward false by default).
enum class LossKernel { unfused, te, flash_attn };
[[nodiscard]] constexpr bool is_fused(AttentionKernel a) { return a != AttentionKernel::unfused; }
// How layers are laid out over pipeline stages: balanced counts the embedding
// and output layer in layer-equivalents of time (planner's own split; what
// Megatron-LM's --pipeline-model-parallel-layout and torchtitan's
// module_fqns_per_model_part can write), uniform splits the layers alone as
// evenly as possible, the first stages taking the remainder (DeepSpeed
// partition_method 'uniform', ds_utils.partition_uniform; MaxText's SPMD
// pipeline). Set by `--framework` (framework/framework.h).
enum class PipelineSplit { balanced, uniform };
enum class A2aBackend { nccl, deepep };

// What one ZeRO-3 all-gather holds, and what is prefetched beside it
// (memory_model.cpp: two such units of weights, one of gradients).
enum class Zero3Gather {
  // A transformer layer, the next one prefetched: FSDP2's fully_shard per
  // block (torchtitan parallelize.py apply_fsdp), Megatron-FSDP.
  layer,
  // One weight tensor, the next one prefetched: XLA's SPMD partitioner
  // all-gathers each FSDP-sharded kernel just before its einsum (JAX scaling
  // book, "How to Scale Your Model" part 5, the FSDP algorithm; MaxText).
  tensor,
  // One module's own parameters (a Linear), prefetching at most
  // stage3_prefetch_bucket_size (5e7) elements more: DeepSpeed ZeRO-3
  // (deepspeed/runtime/zero/partitioned_param_coordinator.py fetch_sub_module,
  // iter_params recurse=False; runtime/zero/config.py defaults).
  submodule,
};

// How a trainer runs the Adam step (step_time.cpp optimizer_time_s).
enum class OptimizerKernel {
  // Multi-tensor or fused kernels: apex FusedAdam in Megatron-LM, torch's
  // foreach/fused AdamW, DeepSpeed's FusedAdam.
  fused,
  // A Python loop over the parameters, one kernel per operation on each:
  // Composer's DecoupledAdamW (composer/optim/decoupled_weight_decay.py at
  // v0.17.2, adamw(): weight decay, two moment updates, sqrt, division, eps,
  // addcdiv, each a pass over fp32 tensors), after FSDP1's clip_grad_norm_
  // (a norm read and a scale of every gradient).
  unfused_loop,
};

// The copies around ZeRO-3 / FSDP traffic on the compute side (priced_plan.cpp).
enum class Zero3Staging {
  // Per-parameter tensors: FSDP2 copies each gather out into the parameters
  // and the gradients into the reduce-scatter input (foreach_all_gather_copy_out,
  // foreach_reduce_scatter_copy_in); DeepSpeed's list all-gather unflattens
  // likewise.
  per_parameter_copies,
  // FSDP1's FlatParameter (torch.distributed.fsdp, torch 2.1): the gather
  // lands in the flat parameter itself (no copy), but autograd concatenates
  // the views' gradients into the flat gradient, which the post-backward hook
  // casts to the reduce dtype and pre-divides before the reduce-scatter
  // (_runtime_utils.py _post_backward_hook, _reduce_grad, _div_if_needed).
  flat_parameter,
};

struct TrainingSpec {
  std::int64_t num_gpus = 0;
  std::int64_t seq_len = 0;
  std::int64_t global_batch_sequences = 0;
  DType dtype = DType::bf16;
  AttentionKernel attention = AttentionKernel::flash;
  double weight_bytes_per_param = 2;      // bf16 weights
  double grad_bytes_per_param = 2;        // bf16 grads (Megatron fp32 main grads: 4)
  // Bytes per gradient element on the wire of every gradient reduction (DP
  // all-reduce / reduce-scatter, ZeRO-2/3 per-layer reduce-scatter); 0: the
  // gradients' own width, grad_bytes_per_param. FSDP2 casts the bf16
  // gradients to MixedPrecisionPolicy.reduce_dtype before reduce-scattering
  // (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce);
  // torchtitan sets float32 (--training.mixed_precision_reduce, its only
  // choice): 4. DeepSpeed ZeRO-3 reduces in communication_data_type, the
  // model's fp16/bf16 by default: 2.
  double grad_reduce_bytes_per_param = 0;
  // ZeRO-3 with full recomputation: the recomputed forward gathers the
  // layer's weights again before the backward gathers them (DeepSpeed ZeRO-3:
  // its submodule hooks release each weight after the forward unless it is
  // reused within stage3_max_reuse_distance parameters). false: the
  // backward's gather serves the recomputation too (FSDP2 unshards in the
  // pre-backward hook, before the checkpointed forward reruns).
  bool zero3_recompute_regather = false;
  // ZeRO-3's gather unit and prefetch (Zero3Gather). Set by --framework
  // maxtext (tensor) and deepspeed (submodule) and by validate for DeepSpeed
  // ZeRO-3 rows; XLA is the only stack on a TPU torus, so priced_plan.cpp
  // takes `tensor` there for `layer`. Memory only: the gathers' traffic is
  // priced per layer either way.
  Zero3Gather zero3_gather = Zero3Gather::layer;
  // Element-wise work run as eager PyTorch issues it, one kernel per op, as
  // torchtitan does without torch.compile (its default: Compile.enable False,
  // v0.2.2 config/job_config.py; compile = false in the 2024 train_configs):
  // RoPE through fp32 complex tensors, the attention output copied to
  // contiguous, SiLU and the gate multiply as two kernels (layer_cost.cpp
  // eager_extra_bytes). false: fused kernels (Megatron-LM / Transformer Engine).
  bool eager_elementwise = false;
  // With eager_elementwise: RMSNorm as eager PyTorch ran it before torch 2.9,
  // seven composite kernels in fp32 (torchtitan's models/norms.py RMSNorm at
  // 9dec370, 2024-12; nn.RMSNorm likewise until the fused CUDA kernel,
  // pytorch/pytorch#153666, torch 2.9). Set by validate for torchtitan rows of
  // that era; false: one fused norm kernel.
  bool eager_composite_rmsnorm = false;
  // The attention core runs on packed (varlen) tensors, Q, K and V gathered
  // out of the padded batch and the output scattered back every layer, as
  // llm-foundry's MPT does whatever the padding (llmfoundry/models/layers/
  // attention.py flash_attn_fn at 5e85bd62d: bert_padding.unpad_input and
  // pad_input around flash_attn_varlen_func); layer_cost.cpp prices the
  // copies. Set by validate for llm-foundry rows; false: the kernel reads the
  // padded tensors in place.
  bool attention_varlen_unpad = false;
  // The loss kernel (LossKernel above): Megatron's unfused fp32 one unless a
  // framework says otherwise (--te-cross-entropy; validate's Megatron-Bridge
  // and llm-foundry rows).
  LossKernel loss_kernel = LossKernel::unfused;
  // Cross-entropies the trainer computes over the logits after every
  // micro-batch for its training metrics, without gradients (head_cost.cpp).
  // Composer runs its train metrics after each micro-batch's backward
  // (composer/trainer/trainer.py _train_microbatch -> _eval_train_metrics, at
  // 2deccf2c8, v0.17); llm-foundry's MPT registers two, LanguageCrossEntropy
  // and LanguagePerplexity (use_train_metrics true by default, modeling_mpt.py
  // at 5e85bd62d), each a torch.nn.CrossEntropyLoss over the logits
  // (composer/metrics/nlp.py). Set by validate for llm-foundry rows; 0: none.
  int train_metric_losses = 0;
  // The Adam step's kernels and the ZeRO-3/FSDP staging copies (enums above).
  // Set by validate for llm-foundry rows (Composer 0.17 on torch FSDP1).
  OptimizerKernel optimizer_kernel = OptimizerKernel::fused;
  Zero3Staging zero3_staging = Zero3Staging::per_parameter_copies;
  double optimizer_bytes_per_param = 12;  // fp32 master + Adam m, v (ZeRO paper)
  bool overlap_grad_reduce = true;        // DP reduction in buckets during backward
  bool overlap_p2p = false;               // PP send/recv hidden behind compute
  // Megatron-Core runs overlap_p2p only in the interleaved schedule:
  // Megatron-LM turns it off without virtual stages (core_v0.19.0
  // megatron/training/arguments.py validate_args: "non-interleaved schedule
  // does not support overlapping p2p communication"), Megatron-Bridge's
  // CommOverlapConfig likewise (training/comm_overlap.py: vp_size > 1). Set by
  // --framework megatron and nemo; read through overlaps_p2p() below.
  bool overlap_p2p_interleaved_only = false;
  // TP all-gathers / reduce-scatters overlapped with the GEMMs beside them
  // (Megatron --tp-comm-overlap, Transformer Engine userbuffers; needs
  // sequence parallelism): layer_cost.cpp add_tp_comm.
  bool tp_comm_overlap = false;
  // Without tp_comm_overlap: Megatron-LM's column-parallel backward overlaps
  // its TP collective with its own GEMMs (LinearWithGradAccumulationAndAsync-
  // Communication, default on since 2021-09, megatron/core/tensor_parallel/
  // layers.py): the input-gradient all-reduce beside the weight-gradient GEMM;
  // with SP the input re-gather beside the input-gradient GEMM and the
  // reduce-scatter beside the weight-gradient GEMM. false: every backward TP
  // collective exposed (Megatron-LM before 2021-09, Megatron-DeepSpeed's
  // copy_to_tensor_model_parallel_region, torchtitan's and DeepSpeed's TP).
  bool tp_bwd_overlap = true;
  // MoE (ignored for dense models): how tokens move to their experts
  // (NCCL all-to-all, or DeepEP's NVLink+RDMA kernels), the busiest expert's
  // load over the mean (1 = force-balanced, as NVIDIA's benchmark rows), the
  // capacity factor (0 = dropless) and whether dispatch/combine overlap compute.
  A2aBackend a2a = A2aBackend::nccl;
  double moe_imbalance = 1.0;
  double capacity_factor = 0.0;
  bool overlap_a2a = false;
  // DeepEP's dispatch in fp8 when the dtype is fp8 (DeepSeek-V3 §3.3.2, DeepEP
  // README); false: bf16 as Megatron-Core sends it through DeepEP and HybridEP
  // (core_v0.19.0 moe/fused_a2a.py: "HybridEP dispatcher does not support fp8
  // dispatch now"; FusedDispatch passes the bf16 hidden states).
  bool a2a_fp8_dispatch = true;
  PipelineSplit pipeline_split = PipelineSplit::balanced;
  // What --recompute selective means (SelectivePolicy above); N of
  // torchtitan_every_nth_layer (torchtitan's default selective_ac_option "2").
  SelectivePolicy selective = SelectivePolicy::megatron_attention;
  std::int64_t selective_every_n_layers = 2;
  // Megatron --recompute-modules as a RecomputeModule bit mask, read under
  // Recompute::selective with SelectivePolicy::megatron_attention; default
  // Megatron's, {core_attn} (bit 0); 0 = the empty set.
  std::uint8_t recompute_modules = 1;
  bool operator==(const TrainingSpec&) const = default;
};

// Whether this layout's pipeline sends and receives overlap compute: the
// requested overlap, where the framework can run it (overlap_p2p_interleaved_only).
[[nodiscard]] inline bool overlaps_p2p(const TrainingSpec& ts, const ParallelConfig& pc) {
  return ts.overlap_p2p && (!ts.overlap_p2p_interleaved_only || pc.virtual_stages > 1);
}

}  // namespace planner
