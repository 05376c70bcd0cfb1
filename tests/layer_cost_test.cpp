// layer_cost: activations kept per layer (Korthikanti et al. 2022,
// arXiv:2205.05198, §4), GEMM/attention FLOPs per layer, and the structure of the layer
// time (backward multiples, TP collectives, recomputation). Times are checked
// against the formulas with the loaded profile's efficiencies, never against
// printed numbers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/collectives.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/straggler.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;
constexpr double kRel = 1e-12;

// A stock profile without the slowest-of-N-chips stretch, so a layer's times
// are its kernels' alone.
HardwareProfile steady_hardware(const std::string& name) {
  HardwareProfile hw = find_hardware(name, kDir);
  hw.efficiency.chip_speed_sigma = 0;
  return hw;
}

// The HBM rate memory-bound kernels run at: bandwidth x hbm_efficiency.
double hbm_rate(const HardwareProfile& hw) { return hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency; }

TrainingSpec training(std::int64_t seq, AttentionKernel a) {
  TrainingSpec ts;
  ts.num_gpus = 8;
  ts.seq_len = seq;
  ts.global_batch_sequences = 64;
  ts.attention = a;
  return ts;
}

ParallelConfig config(std::int64_t tp, bool sp, Recompute r, std::int64_t b, std::int64_t cp = 1) {
  ParallelConfig pc;
  pc.tp = tp;
  pc.cp = cp;
  pc.sequence_parallel = sp;
  pc.recompute = r;
  pc.micro_batch_size = b;
  return pc;
}
// What `with` adds to one layer's element-wise kernels over `base` at TP tp (forward, backward); the
// GEMMs and the attention kernel must not move.
std::pair<double, double> elementwise_added(const ModelSpec& m, const HardwareProfile& hw, std::int64_t tp,
                                            const TrainingSpec& base, const TrainingSpec& with) {
  const ParallelConfig pc = config(tp, false, Recompute::none, 1);
  const LayerTime a = layer_time(m, hw, pc, base), b = layer_time(m, hw, pc, with);
  CHECK(b.gemm_fwd_s == a.gemm_fwd_s);
  CHECK(b.attention_fwd_s == a.attention_fwd_s);
  return {b.elementwise_fwd_s - a.elementwise_fwd_s, b.elementwise_bwd_s - a.elementwise_bwd_s};
}

}  // namespace

TEST_CASE("GPT layer activations match Korthikanti et al. 2022 exactly", "[layer_cost]") {
  // GPT-3 175B layer: h = 12288, a = 96 heads, s = 2048; LayerNorm, 4h GELU MLP, dropout.
  const ModelSpec m = find_model("gpt3-175b", kDir);
  REQUIRE(m.dropout);
  const double s = 2048, h = 12288, a = 96;
  auto eq1 = [&](double b) { return s * b * h * (34.0 + 5.0 * a * s / h); };  // Eq. 1, no parallelism
  struct Row {
    const char* what;
    std::int64_t t;
    bool sp;
    Recompute r;
    std::int64_t b;
    double expected;
  };
  const Row rows[] = {
      {"no parallelism (Eq. 1)", 1, false, Recompute::none, 1, eq1(1)},
      {"no parallelism, b = 2", 1, false, Recompute::none, 2, eq1(2)},
      {"TP without SP (§4.2.1): sbh(10 + 24/t + 5as/(ht))", 8, false, Recompute::none, 1,
       s * h * (10.0 + 24.0 / 8.0 + 5.0 * a * s / (h * 8.0))},
      {"TP + SP (§4.2.2): Eq.1 / t", 8, true, Recompute::none, 1, eq1(1) / 8.0},
      {"TP + SP, t = 4, b = 2", 4, true, Recompute::none, 2, eq1(2) / 4.0},
      {"selective recompute + SP (§5): 34sbh/t", 8, true, Recompute::selective, 1, 34.0 * s * h / 8.0},
      {"full recompute + SP: 2sbh/t", 8, true, Recompute::full, 1, 2.0 * s * h / 8.0},
      {"full recompute, no TP: 2sbh", 1, false, Recompute::full, 1, 2.0 * s * h},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      const LayerActivations act =
          layer_activations(m, config(r.t, r.sp, r.r, r.b), training(2048, AttentionKernel::unfused));
      CHECK(act.stored_bytes == Approx(r.expected).epsilon(kRel));
    }
  }
}

TEST_CASE("flash attention drops the 5as/h term up to the fp32 log-sum-exp rows", "[layer_cost]") {
  const ModelSpec m = find_model("gpt3-175b", kDir);
  const double s = 2048, h = 12288;
  for (std::int64_t t : {1, 8}) {
    INFO("t " << t);
    const double base = 34.0 * s * h / double(t);
    const LayerActivations act =
        layer_activations(m, config(t, t > 1, Recompute::none, 1), training(2048, AttentionKernel::flash));
    CHECK(act.stored_bytes == Approx(base).epsilon(0.01));
    CHECK(act.stored_bytes >= base);
    // Selective recompute has nothing to drop: flash already recomputes the core.
    CHECK(layer_activations(m, config(t, t > 1, Recompute::selective, 1), training(2048, AttentionKernel::flash))
              .stored_bytes == act.stored_bytes);
  }
}

TEST_CASE("SwiGLU + GQA activations, tensor by tensor (Llama 3.1 8B)", "[layer_cost]") {
  // n = b*s tokens, h = 4096, F = 14336, H = 32, KV = 8, hd = 128, no dropout:
  // norm inputs 2*2nh, QKV/FFN GEMM inputs 2*2nh, Q+K+V 2n(H+2KV)hd = 3nh,
  // attention output 2nh, gate+up outputs 4nF, SwiGLU output 2nF
  // => 13nh + 6nF, plus flash's fp32 log-sum-exp 4*b*H*s.
  const ModelSpec m = find_model("llama8b", kDir);
  const double s = 8192, h = 4096, F = 14336, H = 32;
  for (std::int64_t b : {1, 2}) {
    const double n = double(b) * s;
    const LayerActivations act =
        layer_activations(m, config(1, false, Recompute::none, b), training(8192, AttentionKernel::flash));
    CHECK(act.stored_bytes == Approx(13.0 * n * h + 6.0 * n * F + 4.0 * double(b) * H * s).epsilon(kRel));
  }
}

TEST_CASE("context parallelism divides activations by cp", "[layer_cost]") {
  for (const char* name : {"gpt3-175b", "llama70b"}) {
    const ModelSpec m = find_model(name, kDir);
    for (AttentionKernel k : {AttentionKernel::unfused, AttentionKernel::flash}) {
      INFO(name << (k == AttentionKernel::flash ? " flash" : " unfused"));
      const TrainingSpec ts = training(8192, k);
      const double one = layer_activations(m, config(8, true, Recompute::none, 1, 1), ts).stored_bytes;
      const double four = layer_activations(m, config(8, true, Recompute::none, 1, 4), ts).stored_bytes;
      CHECK(four == Approx(one / 4.0).epsilon(kRel));
    }
  }
}

TEST_CASE("GEMM time: saturating efficiency with wave quantisation, bounded below by HBM", "[layer_cost]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const double eff_peak = hw.peak_flops_per_s[0] * hw.efficiency.sustained_clock_fraction * hw.efficiency.gemm_max[0];
  const double hbm = hbm_rate(hw);
  const double Fh = hw.efficiency.gemm_half_flops;
  struct Row {
    double M, N, K;
  };
  const Row rows[] = {{8192, 8192, 8192}, {8192, 1280, 4096}, {16, 4096, 4096}, {4096, 16, 8}, {1, 1, 1}};
  for (const Row& r : rows) {
    INFO("M " << r.M << " N " << r.N << " K " << r.K);
    const double flops = 2.0 * r.M * r.N * r.K;
    const double bytes = 2.0 * (r.M * r.K + r.K * r.N) + 2.0 * r.M * r.N;  // bf16 operands and output
    const double q = wave_efficiency(hw, r.M, r.N);
    CHECK(q > 0.0);
    CHECK(q <= 1.0);
    CHECK(gemm_time_s(hw, DType::bf16, r.M, r.N, r.K) ==
          Approx(std::max((flops / q + Fh) / eff_peak, bytes / hbm)).epsilon(kRel));
  }
}

TEST_CASE("wave quantisation: tiles / (waves * units), the better orientation", "[layer_cost]") {
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  hw.efficiency.compute_units = 132, hw.efficiency.gemm_tile_m = 256, hw.efficiency.gemm_tile_n = 128;
  struct Row {
    double M, N, expected;
  };
  const Row rows[] = {
      // Shapes that tile exactly in both orientations (256x128 and 128x256).
      {8192, 8192, 2048.0 / 2112.0},    // 32 x 64 = 2048 tiles: 16 waves of 132
      {256 * 132, 128, 1.0},            // 256x128: 132 tiles, exactly one full wave
      {256 * 133, 256, 266.0 / 396.0},  // 266 tiles either way: 3 waves
      {256, 256, 2.0 / 132.0},          // 2 tiles on 132 SMs
  };
  for (const Row& r : rows) {
    INFO("M " << r.M << " N " << r.N);
    CHECK(wave_efficiency(hw, r.M, r.N) == Approx(r.expected).epsilon(kRel));
  }
  hw.efficiency.compute_units = 0;  // no tile data: no quantisation
  CHECK(wave_efficiency(hw, 100, 100) == 1.0);
}

TEST_CASE("layer FLOPs: 2 x tokens x matmul parameters / t, attention 4*b*(H/t)*s_local*s*hd", "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ParamCounts p = count_params(m);
  const double matmul_per_layer = double(p.attention_per_layer + p.ffn_per_layer);  // no biases
  struct Row {
    std::int64_t t, b, cp;
  };
  const Row rows[] = {{1, 1, 1}, {2, 1, 1}, {8, 2, 1}, {4, 1, 2}, {8, 4, 4}};
  for (const Row& r : rows) {
    INFO("t " << r.t << " b " << r.b << " cp " << r.cp);
    const double s = 8192, s_local = s / double(r.cp), n = double(r.b) * s_local;
    const double attn_full = 4.0 * double(r.b) * (32.0 / double(r.t)) * s_local * s * 128.0;
    const ParallelConfig pc = config(r.t, r.t > 1, Recompute::none, r.b, r.cp);
    const LayerTime flash = layer_time(m, hw, pc, training(8192, AttentionKernel::flash));
    CHECK(flash.gemm_flops_fwd == Approx(2.0 * n * matmul_per_layer / double(r.t)).epsilon(kRel));
    CHECK(flash.attention_flops_fwd == Approx(attn_full / 2.0).epsilon(kRel));  // causal blocks skipped
    const LayerTime unfused = layer_time(m, hw, pc, training(8192, AttentionKernel::unfused));
    CHECK(unfused.attention_flops_fwd == Approx(attn_full).epsilon(kRel));
  }
}

TEST_CASE("the sustained clock scales tensor-core work, not HBM-bound work", "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  HardwareProfile burst = find_hardware("dgx-h100", kDir);
  burst.efficiency.sustained_clock_fraction = 1.0;
  HardwareProfile held = burst;
  held.efficiency.sustained_clock_fraction = 0.8;
  for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::flash2, AttentionKernel::unfused}) {
    const LayerTime a = layer_time(m, burst, config(1, false, Recompute::none, 1), training(8192, k));
    const LayerTime b = layer_time(m, held, config(1, false, Recompute::none, 1), training(8192, k));
    CHECK(b.gemm_fwd_s == Approx(a.gemm_fwd_s / 0.8).epsilon(kRel));  // compute-bound GEMMs at 8192 tokens
    CHECK(b.gemm_bwd_s == Approx(a.gemm_bwd_s / 0.8).epsilon(kRel));
    if (k != AttentionKernel::unfused) CHECK(b.attention_fwd_s == Approx(a.attention_fwd_s / 0.8).epsilon(kRel));
    CHECK(b.attention_fwd_s > a.attention_fwd_s);
    CHECK(b.elementwise_fwd_s == Approx(a.elementwise_fwd_s).epsilon(kRel));
  }
}

TEST_CASE("layer time structure: backward multiples, TP collectives, recompute", "[layer_cost]") {
  const ModelSpec m = find_model("llama70b", kDir);
  // The roofline alone: the slowest-chip stretch is checked on its own below.
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  hw.efficiency.chip_speed_sigma = 0;
  const TrainingSpec flash = training(8192, AttentionKernel::flash);
  const TrainingSpec unfused = training(8192, AttentionKernel::unfused);
  const double n = 8192, h = 8192;

  SECTION("GEMM backward = 2x forward FLOPs; flash attention backward = 2.5x forward FLOPs") {
    const LayerTime lt = layer_time(m, hw, config(4, true, Recompute::none, 1), flash);
    const double eff_peak = hw.peak_flops_per_s[0] * hw.efficiency.sustained_clock_fraction * hw.efficiency.gemm_max[0];
    CHECK(lt.gemm_fwd_s >= lt.gemm_flops_fwd / eff_peak);
    CHECK(lt.gemm_bwd_s >= 2.0 * lt.gemm_flops_fwd / eff_peak);
    // Without per-kernel overhead and wave quantisation these compute-bound
    // GEMMs run at exactly gemm_max * peak, and the backward is exactly 2x.
    HardwareProfile ideal = hw;
    ideal.efficiency.gemm_half_flops = 0;
    ideal.efficiency.compute_units = 0;
    const LayerTime li = layer_time(m, ideal, config(4, true, Recompute::none, 1), flash);
    CHECK(li.gemm_fwd_s == Approx(li.gemm_flops_fwd / eff_peak).epsilon(kRel));
    CHECK(li.gemm_bwd_s == Approx(2.0 * li.gemm_fwd_s).epsilon(kRel));
    const double L = 8192 / 2.0, length_eff = L / (L + hw.efficiency.attention_half_tokens);  // causal, cp 1
    CHECK(lt.attention_fwd_s ==
          Approx(lt.attention_flops_fwd / (hw.peak_flops_per_s[0] * hw.efficiency.sustained_clock_fraction *
                                           hw.efficiency.attention_max[0] * length_eff))
              .epsilon(kRel));
    CHECK(lt.attention_bwd_s == Approx(2.5 * lt.attention_fwd_s).epsilon(kRel));
    CHECK(lt.elementwise_bwd_s == Approx(2.0 * lt.elementwise_fwd_s).epsilon(kRel));
  }
  SECTION("no TP, no communication") {
    const LayerTime lt = layer_time(m, hw, config(1, false, Recompute::none, 1), flash);
    CHECK(lt.tp_comm_fwd_s == 0.0);
    CHECK(lt.tp_comm_bwd_s == 0.0);
    CHECK(lt.cp_comm_total_s == 0.0);
  }
  // Every backward TP collective exposed (TrainingSpec::tp_bwd_overlap false:
  // Megatron-LM before 2021-09, Megatron-DeepSpeed, torchtitan, DeepSpeed).
  TrainingSpec exposed = flash;
  exposed.tp_bwd_overlap = false;
  SECTION("TP without SP: two all-reduces of n*h*2 bytes each way") {
    const LayerTime lt = layer_time(m, hw, config(8, false, Recompute::none, 1), exposed);
    const double ar = collective_cost(hw, placement(hw, 8, 1), Collective::all_reduce, 2.0 * n * h).total_s();
    CHECK(lt.tp_comm_fwd_s == Approx(2.0 * ar).epsilon(kRel));
    CHECK(lt.tp_comm_bwd_s == Approx(2.0 * ar).epsilon(kRel));
    CHECK(lt.tp_comm_bwd_mlp_s == Approx(ar).epsilon(kRel));
    CHECK(lt.tp_comm_recompute_s == 0.0);
  }
  SECTION("TP with SP: all-gather + reduce-scatter of the same volume") {
    const LayerTime lt = layer_time(m, hw, config(8, true, Recompute::full, 1), exposed);
    const GroupPlacement g = placement(hw, 8, 1);
    const double pair = collective_cost(hw, g, Collective::all_gather, 2.0 * n * h).total_s() +
                        collective_cost(hw, g, Collective::reduce_scatter, 2.0 * n * h).total_s();
    CHECK(lt.tp_comm_fwd_s == Approx(2.0 * pair).epsilon(kRel));
    // Backward: the forward's pairs plus re-gathering the two sequence-sharded
    // norm outputs for the weight gradients (Korthikanti et al. 2022 §4.2.2).
    const double regather = collective_cost(hw, g, Collective::all_gather, 2.0 * n * h).total_s();
    CHECK(lt.tp_comm_bwd_s == Approx(2.0 * pair + 2.0 * regather).epsilon(kRel));
    CHECK(lt.tp_comm_recompute_s == Approx(2.0 * pair).epsilon(kRel));  // full recompute repeats the forward's
  }
  SECTION("Megatron's default: the column-parallel backward collectives run beside their GEMMs") {
    // Llama 70B at TP8, 8192 tokens: the QKV GEMM (GQA: 1280 outputs a rank)
    // is shorter than an all-reduce of its input, the FFN-in GEMM longer, so
    // only the difference on QKV stays exposed; what hides slows the GEMMs
    // (contention), and the forward is unchanged.
    const GroupPlacement g = placement(hw, 8, 1);
    const double qkv = gemm_time_s(hw, DType::bf16, n, (64.0 + 2.0 * 8.0) * 128.0 / 8.0, h);
    const double ffn_in = gemm_time_s(hw, DType::bf16, n, 2.0 * 28672.0 / 8.0, h);
    const double ar = collective_cost(hw, g, Collective::all_reduce, 2.0 * n * h).total_s();
    REQUIRE(qkv < ar);
    REQUIRE(ffn_in > ar);
    const LayerTime off = layer_time(m, hw, config(8, false, Recompute::none, 1), exposed);
    const LayerTime on = layer_time(m, hw, config(8, false, Recompute::none, 1), flash);
    CHECK(on.tp_comm_fwd_s == off.tp_comm_fwd_s);
    CHECK(on.tp_comm_bwd_s == Approx(ar - qkv).epsilon(kRel));
    CHECK(on.tp_comm_bwd_mlp_s == 0.0);
    CHECK(on.contention_bwd_s > off.contention_bwd_s);
    CHECK(on.bwd_s() < off.bwd_s());
    // With SP: the row-parallel gradient all-gathers stay exposed, and the
    // QKV's re-gather and reduce-scatter hide behind its two GEMMs up to their length.
    const LayerTime sp = layer_time(m, hw, config(8, true, Recompute::none, 1), flash);
    const double ag = collective_cost(hw, g, Collective::all_gather, 2.0 * n * h).total_s();
    const double rs = collective_cost(hw, g, Collective::reduce_scatter, 2.0 * n * h).total_s();
    const auto over = [](double c, double gemm) { return c > gemm ? c - gemm : 0.0; };
    CHECK(sp.tp_comm_bwd_s ==
          Approx(2.0 * ag + over(ag, qkv) + over(rs, qkv) + over(ag, ffn_in) + over(rs, ffn_in)).epsilon(kRel));
    CHECK(sp.tp_comm_bwd_mlp_s == Approx(ag + over(ag, ffn_in) + over(rs, ffn_in)).epsilon(kRel));
  }
  SECTION("gradient accumulation: read 2 + read/write grad_bytes per local layer parameter") {
    const double hbm = hbm_rate(hw);
    const double per_layer = double(count_params(m).per_layer);
    for (double g : {2.0, 4.0}) {
      TrainingSpec ts = flash;
      ts.grad_bytes_per_param = g;
      const LayerTime lt = layer_time(m, hw, config(8, true, Recompute::none, 1), ts);
      CHECK(lt.grad_accumulate_s == Approx(per_layer / 8.0 * (2.0 + 2.0 * g) / hbm).epsilon(kRel));
    }
  }
  SECTION("recompute: full re-runs the forward, selective the unfused attention core only") {
    const LayerTime full = layer_time(m, hw, config(8, true, Recompute::full, 1), flash);
    CHECK(full.recompute_s == Approx(full.compute_fwd_s()).epsilon(kRel));
    CHECK(layer_time(m, hw, config(8, true, Recompute::selective, 1), flash).recompute_s == 0.0);
    const LayerTime sel = layer_time(m, hw, config(8, true, Recompute::selective, 1), unfused);
    CHECK(sel.recompute_s == Approx(sel.attention_fwd_s).epsilon(kRel));
    CHECK(layer_time(m, hw, config(8, true, Recompute::none, 1), flash).recompute_s == 0.0);
  }
  SECTION("every term is finite and non-negative") {
    for (std::int64_t cp : {1, 2, 8}) {
      const LayerTime lt = layer_time(m, hw, config(8, true, Recompute::full, 1, cp), flash);
      for (double x : {lt.gemm_fwd_s, lt.attention_fwd_s, lt.elementwise_fwd_s, lt.gemm_bwd_s, lt.attention_bwd_s,
                       lt.elementwise_bwd_s, lt.grad_accumulate_s, lt.recompute_s, lt.tp_comm_fwd_s, lt.tp_comm_bwd_s,
                       lt.tp_comm_recompute_s, lt.cp_comm_fwd_s, lt.cp_comm_bwd_s, lt.cp_comm_total_s}) {
        CHECK(std::isfinite(x));
        CHECK(x >= 0.0);
      }
      CHECK(lt.cp_comm_fwd_s + lt.cp_comm_bwd_s <= lt.cp_comm_total_s + 1e-18);
    }
  }
}

TEST_CASE("the slowest of N chips stretches every kernel by sigma * E[max of N normals]", "[layer_cost]") {
  // Blom's approximation against exact expected maxima of n standard normals
  // (Harter 1961 tables): n = 2: 0.5642, 8: 1.4236, 16: 1.7660, 1000: 3.2414.
  CHECK(expected_max_standard_normal(1) == 0.0);
  CHECK(expected_max_standard_normal(2) == Approx(0.5642).margin(0.03));  // Blom is 0.025 high at n = 2
  CHECK(expected_max_standard_normal(8) == Approx(1.4236).margin(0.02));
  CHECK(expected_max_standard_normal(16) == Approx(1.7660).margin(0.02));
  CHECK(expected_max_standard_normal(1000) == Approx(3.2414).margin(0.02));
  const ModelSpec m = find_model("llama8b", kDir);
  HardwareProfile plain = find_hardware("dgx-h100", kDir);
  plain.efficiency.chip_speed_sigma = 0;
  HardwareProfile varied = plain;
  varied.efficiency.chip_speed_sigma = 0.012;
  TrainingSpec ts = training(8192, AttentionKernel::flash);
  for (std::int64_t gpus : {1, 8, 1024}) {
    ts.num_gpus = gpus;
    const ParallelConfig pc = config(1, false, Recompute::none, 1);
    const LayerTime a = layer_time(m, plain, pc, ts), b = layer_time(m, varied, pc, ts);
    const double k = 1.0 + 0.012 * expected_max_standard_normal(gpus);
    INFO(gpus << " GPUs");
    CHECK(b.gemm_fwd_s == Approx(a.gemm_fwd_s * k).epsilon(1e-12));
    CHECK(b.compute_bwd_s() == Approx(a.compute_bwd_s() * k).epsilon(1e-12));
    CHECK(b.straggler_s == Approx((k - 1) * (a.compute_fwd_s() + a.compute_bwd_s())).epsilon(1e-9));
    CHECK(a.straggler_s == 0.0);
  }
}

TEST_CASE("TP communication overlap: less exposed TP, never below one chunk, contention added", "[layer_cost]") {
  const ModelSpec m = find_model("llama70b", kDir);
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  TrainingSpec ts = training(8192, AttentionKernel::flash);
  const ParallelConfig pc = config(8, true, Recompute::none, 1);
  const LayerTime plain = layer_time(m, hw, pc, ts);
  ts.tp_comm_overlap = true;
  const LayerTime over = layer_time(m, hw, pc, ts);
  CHECK(over.tp_comm_fwd_s < plain.tp_comm_fwd_s);
  CHECK(over.tp_comm_bwd_s < plain.tp_comm_bwd_s);
  // At least the first chunk of each collective: 2 all-gathers in 8 (ring
  // exchange over TP 8) and 2 reduce-scatters in 4 (pipelined).
  CHECK(over.tp_comm_fwd_s >= plain.tp_comm_fwd_s / 8 - 1e-15);
  CHECK(over.contention_fwd_s > 0);
  CHECK(over.contention_bwd_s > 0);
  CHECK(over.compute_fwd_s() == plain.compute_fwd_s());  // kernels unchanged; the slowdown is contention
  // Without SP there is nothing to overlap (Megatron requires SP): priced as before.
  const ParallelConfig no_sp = config(8, false, Recompute::none, 1);
  CHECK(layer_time(m, hw, no_sp, ts).tp_comm_fwd_s == layer_time(m, hw, no_sp, training(8192, AttentionKernel::flash)).tp_comm_fwd_s);
}

TEST_CASE("flash attention efficiency follows the key/value length per kernel call: L/(L + half), L = s/(2cp)",
          "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  hw.efficiency.chip_speed_sigma = 0;
  REQUIRE(hw.efficiency.attention_half_tokens > 0);
  const double Lh = hw.efficiency.attention_half_tokens;
  const double rate_max =
      hw.peak_flops_per_s[0] * hw.efficiency.sustained_clock_fraction * hw.efficiency.attention_max[0];
  struct Row {
    std::int64_t seq, cp;
  };
  for (const Row r : {Row{2048, 1}, Row{8192, 1}, Row{8192, 2}, Row{8192, 4}, Row{131072, 16}}) {
    INFO("seq " << r.seq << " cp " << r.cp);
    const LayerTime lt = layer_time(m, hw, config(1, false, Recompute::none, 1, r.cp), training(r.seq, AttentionKernel::flash));
    const double L = double(r.seq) / (2.0 * double(r.cp));
    CHECK(lt.attention_fwd_s == Approx(lt.attention_flops_fwd / (rate_max * L / (L + Lh))).epsilon(kRel));
    CHECK(lt.attention_bwd_s == Approx(2.5 * lt.attention_fwd_s).epsilon(kRel));
  }
  // Same attention FLOPs per GPU, shorter kernel calls: CP 2 with micro-batch 2 is slower than CP 1 with 1.
  const LayerTime cp1 = layer_time(m, hw, config(1, false, Recompute::none, 1, 1), training(8192, AttentionKernel::flash));
  const LayerTime cp2 = layer_time(m, hw, config(1, false, Recompute::none, 2, 2), training(8192, AttentionKernel::flash));
  CHECK(cp2.attention_flops_fwd == Approx(cp1.attention_flops_fwd).epsilon(kRel));
  CHECK(cp2.attention_fwd_s > cp1.attention_fwd_s);
  // A profile without the curve keeps attention_max at every length.
  hw.efficiency.attention_half_tokens = 0;
  const LayerTime flat = layer_time(m, hw, config(1, false, Recompute::none, 1, 4), training(8192, AttentionKernel::flash));
  CHECK(flat.attention_fwd_s == Approx(flat.attention_flops_fwd / rate_max).epsilon(kRel));
}

TEST_CASE("CP pays Transformer Engine's fp32 merge of its ring steps, (10cp + 6) bytes per output element, and "
          "its K/V copy into the send buffer, 4 bytes per K/V element each way",
          "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = steady_hardware("dgx-h100");
  const double bw = hbm_rate(hw);
  const TrainingSpec ts = training(8192, AttentionKernel::flash);
  // CP 1 with micro-batch b and CP k with micro-batch k*b hold the same tokens per GPU: their element-wise
  // kernels differ by the merge alone.
  for (std::int64_t cp : {2, 4}) {
    INFO("cp " << cp);
    const LayerTime one = layer_time(m, hw, config(1, false, Recompute::none, 1, 1), ts);
    const LayerTime k = layer_time(m, hw, config(1, false, Recompute::none, cp, cp), ts);
    const double n = 8192, out = n * 32 * 128, kv = 2.0 * n * 8 * 128, c = double(cp);
    CHECK(k.elementwise_fwd_s - one.elementwise_fwd_s == Approx(((10.0 * c + 6.0) * out + 4.0 * kv) / bw).epsilon(1e-9));
    CHECK(k.elementwise_bwd_s - one.elementwise_bwd_s ==
          Approx(((10.0 * c + 6.0) * out + 10.0 * c * kv + 4.0 * kv) / bw).epsilon(1e-9));
  }
}

TEST_CASE("eager PyTorch element-wise ops: RoPE in fp32 complex, the output copy, SiLU and multiply apart",
          "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = steady_hardware("dgx-a100-80gb");
  const double bw = hbm_rate(hw);
  TrainingSpec eager = training(8192, AttentionKernel::flash);
  eager.eager_elementwise = true;
  // Hand-derived for Llama 3.1 8B (H 32, KV 8, hd 128, F 14336), 8192 tokens, TP t: per token
  // +16 bytes per Q/K element, +4 per attention-output element, +4 per FFN element.
  for (std::int64_t tp : {1, 2}) {
    INFO("tp " << tp);
    const auto [fwd, bwd] = elementwise_added(m, hw, tp, training(8192, AttentionKernel::flash), eager);
    const double t = double(tp), extra = 8192.0 * (16.0 * 40 * 128 + 4.0 * 32 * 128 + 4.0 * 14336) / t;
    CHECK(fwd == Approx(extra / bw).epsilon(1e-9));
    CHECK(bwd == Approx(2.0 * extra / bw).epsilon(1e-9));
  }
}

TEST_CASE("varlen attention: Q, K, V gathered and the output scattered back around the kernel", "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = steady_hardware("dgx-h100");
  const double bw = hbm_rate(hw);
  TrainingSpec varlen = training(8192, AttentionKernel::flash2);
  varlen.attention_varlen_unpad = true;
  // Llama 3.1 8B, 8192 tokens, TP t: forward 4 B per Q/K/V element (H + 2 KV heads of 128) and 6 B per output
  // element (H heads); backward 6 B and 4 B.
  for (std::int64_t tp : {1, 2}) {
    INFO("tp " << tp);
    const auto [fwd, bwd] = elementwise_added(m, hw, tp, training(8192, AttentionKernel::flash2), varlen);
    const double t = double(tp), qkv = 8192.0 * (32 + 16) * 128 / t, out = 8192.0 * 32 * 128 / t;
    CHECK(fwd == Approx((4 * qkv + 6 * out) / bw).epsilon(1e-9));
    CHECK(bwd == Approx((6 * qkv + 4 * out) / bw).epsilon(1e-9));
  }
  // Unfused attention runs on the padded tensors: nothing to gather.
  TrainingSpec unfused = varlen;
  unfused.attention = AttentionKernel::unfused;
  const ParallelConfig pc = config(1, false, Recompute::none, 1);
  CHECK(layer_time(m, hw, pc, unfused).elementwise_fwd_s ==
        layer_time(m, hw, pc, training(8192, AttentionKernel::unfused)).elementwise_fwd_s);
}

TEST_CASE("composite RMSNorm (eager PyTorch before 2.9) moves 32 more bytes per element in each norm", "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const HardwareProfile hw = steady_hardware("dgx-a100-80gb");
  const double bw = hbm_rate(hw);
  TrainingSpec eager = training(8192, AttentionKernel::flash);
  eager.eager_elementwise = true;
  TrainingSpec composite = eager;
  composite.eager_composite_rmsnorm = true;
  const ParallelConfig pc = config(1, false, Recompute::none, 1);
  const LayerTime a = layer_time(m, hw, pc, eager), b = layer_time(m, hw, pc, composite);
  // Two norms of 8192 x 4096 elements: (36 - 4) bytes each, forward; backward 2x.
  const double extra = 2.0 * 32.0 * 8192 * 4096;
  CHECK(b.elementwise_fwd_s - a.elementwise_fwd_s == Approx(extra / bw).epsilon(1e-9));
  CHECK(b.elementwise_bwd_s - a.elementwise_bwd_s == Approx(2.0 * extra / bw).epsilon(1e-9));
  // Compiled (not eager): the flag alone changes nothing; a LayerNorm model is not an RMSNorm one.
  TrainingSpec compiled = training(8192, AttentionKernel::flash);
  compiled.eager_composite_rmsnorm = true;
  CHECK(layer_time(m, hw, pc, compiled).elementwise_fwd_s ==
        layer_time(m, hw, pc, training(8192, AttentionKernel::flash)).elementwise_fwd_s);
  const ModelSpec gpt = find_model("gpt3-175b", kDir);
  CHECK(layer_time(gpt, hw, pc, composite).elementwise_fwd_s == layer_time(gpt, hw, pc, eager).elementwise_fwd_s);
}

TEST_CASE("FlashAttention-2 on Hopper runs at the profile's flash2_attention_max, on Ampere it is the kernel",
          "[layer_cost]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const ParallelConfig pc = config(1, false, Recompute::none, 1);
  HardwareProfile h100 = find_hardware("dgx-h100", kDir);
  h100.efficiency.chip_speed_sigma = 0;
  REQUIRE(h100.efficiency.flash2_attention_max > 0);
  const LayerTime fa3 = layer_time(m, h100, pc, training(8192, AttentionKernel::flash));
  const LayerTime fa2 = layer_time(m, h100, pc, training(8192, AttentionKernel::flash2));
  const double ratio = h100.efficiency.attention_max[0] / h100.efficiency.flash2_attention_max;
  CHECK(fa2.attention_fwd_s == Approx(fa3.attention_fwd_s * ratio).epsilon(1e-12));
  CHECK(fa2.attention_bwd_s == Approx(fa3.attention_bwd_s * ratio).epsilon(1e-12));
  CHECK(fa2.attention_flops_fwd == fa3.attention_flops_fwd);  // the same causal FLOPs, a slower kernel
  CHECK(fa2.gemm_fwd_s == fa3.gemm_fwd_s);
  HardwareProfile a100 = find_hardware("dgx-a100-80gb", kDir);
  REQUIRE(a100.efficiency.flash2_attention_max == 0);  // FA2 is what attention_max measures there
  CHECK(layer_time(m, a100, pc, training(8192, AttentionKernel::flash2)).attention_fwd_s ==
        layer_time(m, a100, pc, training(8192, AttentionKernel::flash)).attention_fwd_s);
}

TEST_CASE("TP inside a TPU torus overlaps the GEMMs as XLA's collective matmul does", "[layer_cost]") {
  const ModelSpec m = find_model("llama70b", kDir);
  HardwareProfile tpu = find_hardware("tpu-v5e-256", kDir);
  TrainingSpec ts = training(2048, AttentionKernel::flash);
  ts.num_gpus = 256;
  const ParallelConfig pc = config(16, true, Recompute::none, 16);
  const LayerTime xla = layer_time(m, tpu, pc, ts);
  // The same profile read as a switched fabric prices the collectives the same way but exposed.
  HardwareProfile flat = tpu;
  flat.tiers[0].topology = Topology::switched;
  const LayerTime exposed = layer_time(m, flat, pc, ts);
  const GroupPlacement g = placement(tpu, 16, 1);
  const double bytes = 2.0 * 16 * 2048 * 8192;
  const double ag = collective_cost(tpu, g, Collective::all_gather, bytes).total_s();
  const double rs = collective_cost(tpu, g, Collective::reduce_scatter, bytes).total_s();
  CHECK(xla.tp_comm_fwd_s < 2.0 * (ag + rs));
  CHECK(xla.tp_comm_fwd_s >= 2.0 * (ag + rs) / 16.0 - 1e-15);  // at least the first of 16 chunks of each
  CHECK(xla.tp_comm_bwd_s < exposed.tp_comm_bwd_s);
  CHECK(xla.contention_fwd_s == 0);  // ICI DMA engines take no compute units
}

TEST_CASE("CP K/V exchange: the forward's cp-1 transfers hide behind cp-1 of the cp ring steps, the backward's "
          "behind all of them",
          "[layer_cost]") {
  // Transformer Engine AttnFuncWithCPAndKVP2P (v2.8 context_parallel.py):
  // step i+1's K/V arrive during step i's kernel, the last step has no
  // transfer beside it; the backward sends K/V and dK/dV beside every step.
  // Inter-node links 100x slower, CP across nodes (TP 8 x CP 2): exposed.
  const ModelSpec m = find_model("llama8b", kDir);
  HardwareProfile hw = find_hardware("dgx-h100", kDir);
  hw.efficiency.chip_speed_sigma = 0;
  REQUIRE(hw.tiers.size() == 2);
  hw.tiers[1].bandwidth_nominal_bytes_per_s /= 100;
  hw.tiers[1].bandwidth_achieved_bytes_per_s /= 100;
  const TrainingSpec ts = training(65536, AttentionKernel::flash);
  for (std::int64_t cp : {2, 4}) {
    INFO("cp " << cp);
    const LayerTime lt = layer_time(m, hw, config(8, true, Recompute::none, 1, cp), ts);
    const double sends = lt.cp_comm_total_s / 3.0, c = double(cp);
    REQUIRE(sends > lt.attention_fwd_s);
    CHECK(lt.cp_comm_fwd_s == Approx(sends - lt.attention_fwd_s * (c - 1.0) / c).epsilon(1e-12));
    CHECK(lt.cp_comm_bwd_s == Approx(2.0 * sends - lt.attention_bwd_s).epsilon(1e-12));
  }
}

TEST_CASE("the output layer runs in bf16 under fp8, TE's fused loss moves 6 + 4 bytes a logit", "[layer_cost]") {
  // Megatron-Core builds the output layer outside Transformer Engine's
  // fp8_autocast (core_v0.19.0 gpt_model.py), so fp8 training prices it as bf16;
  // Megatron's unfused fp32 cross-entropy moves 38 + 14 bytes a logit, TE's
  // fused one 6 + 4 (head_cost.cpp).
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama3.1-8b", kDir);
  const ParallelConfig pc = config(2, true, Recompute::none, 1);
  TrainingSpec bf16 = training(8192, AttentionKernel::flash), fp8 = bf16;
  fp8.dtype = DType::fp8;
  const HeadTime hb = head_time(m, hw, pc, bf16), hf = head_time(m, hw, pc, fp8);
  CHECK(hf.output_fwd_s == Approx(hb.output_fwd_s).epsilon(kRel));
  CHECK(hf.output_bwd_s == Approx(hb.output_bwd_s).epsilon(kRel));
  // The layers' GEMMs do get faster in fp8, so the head is not priced by accident of a shared rate.
  CHECK(layer_time(m, hw, pc, fp8).fwd_s() < layer_time(m, hw, pc, bf16).fwd_s());

  TrainingSpec te = bf16;
  te.loss_kernel = LossKernel::te;
  const HeadTime ht = head_time(m, hw, pc, te);
  const double saved_fwd = hb.output_fwd_s - ht.output_fwd_s, saved_bwd = hb.output_bwd_s - ht.output_bwd_s;
  CHECK(saved_fwd > 0.0);
  CHECK(saved_bwd > 0.0);
  CHECK(saved_fwd / saved_bwd == Approx((38.0 - 6.0) / (14.0 - 4.0)).epsilon(1e-9));
  const double logits = 8192.0 * double(m.vocab_size) / 2.0;
  const double k = 1.0 + straggler_slowdown(hw, bf16.num_gpus);
  CHECK(saved_fwd == Approx(32.0 * logits / hbm_rate(hw) * k).epsilon(1e-9));
  // flash-attn's loss: one read of the logits forward (2 bytes), read and write backward (4).
  TrainingSpec fa = bf16;
  fa.loss_kernel = LossKernel::flash_attn;
  const HeadTime hfa = head_time(m, hw, pc, fa);
  CHECK(hb.output_fwd_s - hfa.output_fwd_s == Approx((38.0 - 2.0) * logits / hbm_rate(hw) * k).epsilon(1e-9));
  CHECK(hb.output_bwd_s - hfa.output_bwd_s == Approx((14.0 - 4.0) * logits / hbm_rate(hw) * k).epsilon(1e-9));
  // Composer's two train metrics: an fp32 copy and a log_softmax of the logits each (14 bytes), after the backward.
  TrainingSpec metrics = fa;
  metrics.train_metric_losses = 2;
  const HeadTime hm = head_time(m, hw, pc, metrics);
  CHECK(hm.output_fwd_s == Approx(hfa.output_fwd_s).epsilon(1e-12));
  CHECK(hm.output_bwd_s - hfa.output_bwd_s == Approx(2.0 * 14.0 * logits / hbm_rate(hw) * k).epsilon(1e-9));
}
