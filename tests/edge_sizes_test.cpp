// Edge sizes (issue 6): GPU counts up to 2^24, 10^4-10^5 layers, vocabularies
// of 10^7-10^8, sequences of 10^7-10^8 tokens. Within the bounds of
// planner/limits.h every figure is finite and non-negative and the search
// finishes with valid results; one past a bound is a one-line InputError
// naming the field; no 64-bit product overflows on the way (the sanitizer
// build runs these too).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/model/evaluate.h"
#include "planner/model/model_math.h"
#include "planner/model/pipeline.h"
#include "planner/search/search.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"

using namespace planner;
using nlohmann::json;

namespace {

const std::string kDir = PLANNER_SOURCE_DIR;

json llama8b_json() {
  json j = to_json(find_model("llama8b", kDir));
  j.erase("expected_params");
  j["name"] = "edge";
  j["aliases"] = json::array();
  return j;
}

std::string model_error(const json& j) {
  try {
    (void)model_from_json(j, "edge.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Every figure a user sees: finite and non-negative.
void check_sane(const Evaluation& ev) {
  const StepTimeBreakdown& t = ev.time;
  const MemoryBreakdown& m = ev.memory;
  for (double x : {t.compute_s,
                   t.recompute_s,
                   t.tp_comm_s,
                   t.cp_comm_s,
                   t.pp_p2p_s,
                   t.pp_bubble_s,
                   t.dp_comm_s,
                   t.zero3_comm_s,
                   t.optimizer_s,
                   t.step_s,
                   t.stage_time_per_micro_batch_s,
                   t.tokens_per_s,
                   t.model_flops_per_step,
                   t.hardware_flops_per_step,
                   t.mfu,
                   t.hfu,
                   m.weights_bytes,
                   m.gradients_bytes,
                   m.optimizer_bytes,
                   m.activations_bytes,
                   m.logits_bytes,
                   m.transient_bytes,
                   m.total_bytes,
                   m.micro_batches_in_flight}) {
    CHECK(std::isfinite(x));
    CHECK(x >= 0.0);
  }
  CHECK(t.step_s > 0.0);
}

void check_search(const SearchResult& r, std::int64_t gpus) {
  CHECK(r.considered == r.feasible + r.rejected);
  for (const Evaluation& ev : r.top) {
    const ParallelConfig& c = ev.config;
    INFO("tp " << c.tp << " cp " << c.cp << " pp " << c.pp << " dp " << c.dp);
    CHECK(c.tp * c.cp * c.pp * c.dp == gpus);
    CHECK(ev.feasible());
    CHECK(ev.memory.total_bytes <= ev.memory.capacity_bytes);
    check_sane(ev);
  }
}

SearchSpec spec_for(const ModelSpec& m, std::int64_t gpus, std::int64_t global_batch, std::size_t top_k = 5) {
  SearchSpec s;
  s.training.num_gpus = gpus;
  s.training.seq_len = m.default_seq_len;
  s.training.global_batch_sequences = global_batch;
  s.top_k = top_k;
  return s;
}

}  // namespace

TEST_CASE("model sizes: at each bound the file is read, one past it is an error naming the field", "[edge]") {
  struct Row {
    const char* field;
    std::int64_t at, beyond;
    std::vector<std::pair<const char*, std::int64_t>> also;  // fields set alongside, to stay valid
  };
  const Row rows[] = {
      {"num_layers", kMaxLayers, kMaxLayers + 1, {}},
      {"hidden_size", kMaxHiddenSize, kMaxHiddenSize + 1, {}},
      {"ffn_hidden_size", kMaxFfnHiddenSize, kMaxFfnHiddenSize + 1, {}},
      {"num_attention_heads", kMaxHeads, kMaxHeads + 1, {{"num_kv_heads", 1}}},
      {"head_dim", kMaxHeadDim, kMaxHeadDim + 1, {}},
      {"vocab_size", kMaxVocab, kMaxVocab + 1, {}},
      {"default_seq_len", kMaxSeqLen, kMaxSeqLen + 1, {{"default_global_batch_tokens", kMaxSeqLen}}},
      {"max_position_embeddings", kMaxSeqLen, kMaxSeqLen + 1, {}},
      {"default_global_batch_tokens", kMaxGlobalBatchSequences * 8192, kMaxGlobalBatchSequences * 8192 + 1, {}},
  };
  for (const Row& r : rows) {
    SECTION(r.field) {
      json j = llama8b_json();
      if (std::string(r.field) == "max_position_embeddings") j["position_embedding"] = "learned";
      for (const auto& [k, v] : r.also) j[k] = v;
      j[r.field] = r.at;
      const ModelSpec m = model_from_json(j, "edge.json");
      CHECK(size_problems(m).empty());
      j[r.field] = r.beyond;
      CHECK(model_error(j) == fmt::format("edge.json: {}: expected at most {}, got {}", r.field, r.at, r.beyond));
    }
  }
  SECTION("the parameter count as a whole") {
    // Each field within its bound, 10^5 layers of h = 2^20: 1.32e18 parameters.
    json j = llama8b_json();
    j["num_layers"] = kMaxLayers;
    j["hidden_size"] = kMaxHiddenSize;
    j["ffn_hidden_size"] = kMaxFfnHiddenSize;
    CHECK(model_error(j) ==
          "edge.json: parameters: expected at most 1e+15 in all (num_layers x per-layer parameters "
          "+ embeddings), got 1.32e+18");
    j["num_layers"] = 500;  // 6.6e15: still too many
    CHECK(model_error(j).find("parameters: expected at most 1e+15") != std::string::npos);
    j["num_layers"] = 50;  // 6.6e14: fits
    const ModelSpec m = model_from_json(j, "edge.json");
    CHECK(double(count_params(m).total) <= kMaxParams);
  }
  SECTION("huge heads and head_dim no longer wrap the parameter count") {
    // Before the bounds, 2^40 heads of 2^40 gave a negative-free but wrapped
    // 64-bit count (2.9e17 instead of ~2.4e27).
    json j = llama8b_json();
    j["num_attention_heads"] = std::int64_t(1) << 40;
    j["num_kv_heads"] = 1;
    j["head_dim"] = std::int64_t(1) << 40;
    CHECK(model_error(j) ==
          "edge.json: num_attention_heads: expected at most 65536, got 1099511627776; head_dim: "
          "expected at most 65536, got 1099511627776");
  }
}

TEST_CASE("specs built in code are checked against the same bounds", "[edge]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  ModelSpec m = find_model("llama8b", kDir);
  TrainingSpec ts;
  ts.num_gpus = 8, ts.seq_len = 8192, ts.global_batch_sequences = 64;
  ParallelConfig pc;
  pc.dp = 8;
  SECTION("model") {
    m.num_layers = std::int64_t(1) << 62;
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts),
                      "model llama3.1-8b: num_layers: expected at most 100000, got 4611686018427387904");
    CHECK_THROWS_WITH(search(m, hw, spec_for(m, 8, 64)),
                      "model llama3.1-8b: num_layers: expected at most 100000, got 4611686018427387904");
    m.num_layers = 0;
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts), "model llama3.1-8b: num_layers: expected at least 1, got 0");
  }
  SECTION("training run") {
    ts.num_gpus = kMaxGpus + 1;
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts), "training run: num_gpus: expected at most 16777216, got 16777217");
    ts.num_gpus = 8;
    ts.seq_len = kMaxSeqLen + 1;
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts), "training run: seq_len: expected at most 100000000, got 100000001");
    ts.seq_len = 8192;
    ts.global_batch_sequences = kMaxGlobalBatchSequences + 1;
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts),
                      "training run: global_batch_sequences: expected at most 1000000000, got 1000000001");
    ts.global_batch_sequences = 64;
    ts.grad_bytes_per_param = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(evaluate(m, hw, pc, ts),
                      "training run: grad_bytes_per_param: expected a number from 0 to 64, got nan");
  }
  SECTION("search pins") {
    SearchSpec s = spec_for(m, 8, 64);
    s.pins.tp = 0;
    CHECK_THROWS_WITH(search(m, hw, s), "search: pinned tp: expected a positive integer, got 0");
  }
}

TEST_CASE("structural checks never overflow: degrees up to 2^62", "[edge]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama8b", kDir);
  TrainingSpec ts;
  ts.num_gpus = kMaxGpus, ts.seq_len = 8192, ts.global_batch_sequences = kMaxGlobalBatchSequences;
  const std::int64_t big = std::int64_t(1) << 62;
  struct Row {
    const char* what;
    ParallelConfig pc;
    Reason expected;
  };
  auto layout = [](std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp, std::int64_t mbs = 1,
                   std::int64_t v = 1) {
    ParallelConfig pc;
    pc.tp = tp, pc.cp = cp, pc.pp = pp, pc.dp = dp, pc.micro_batch_size = mbs, pc.virtual_stages = v;
    return pc;
  };
  const Row rows[] = {
      {"tp*cp*pp*dp = 2^96 (2^24 each)", layout(kMaxGpus, kMaxGpus, kMaxGpus, kMaxGpus), Reason::gpu_count_mismatch},
      {"2^62 each", layout(big, big, big, big), Reason::gpu_count_mismatch},
      {"dp * mbs past 2^63", layout(1, 1, 1, big, big), Reason::batch_not_divisible},
      {"pp * v past 2^63", layout(1, 1, big, 1, 1, big), Reason::too_few_layers},
      {"2 * cp past 2^63", layout(1, big, 1, 1), Reason::cp_not_dividing_seq},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      const Evaluation ev = evaluate(m, hw, r.pc, ts);
      CHECK(ev.has(r.expected));
      CHECK_FALSE(ev.feasible());
    }
  }
}

TEST_CASE("2^20 and 2^24 GPUs: the search finishes with valid results, keeping only the top K", "[edge]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  const ModelSpec m = find_model("llama405b", kDir);
  for (std::int64_t gpus : {std::int64_t(1) << 20, (std::int64_t(1) << 20) + 1, kMaxGpus}) {
    INFO(gpus << " GPUs");
    // 2048 sequences (the model's 16M tokens) and a batch large enough for every GPU.
    for (std::int64_t batch : {std::int64_t(2048), gpus}) {
      const SearchResult r = search(m, hw, spec_for(m, gpus, batch, 3));
      check_search(r, gpus);
      CHECK(r.top.size() <= 3);
      if (gpus % 2 == 0 && batch == gpus) CHECK_FALSE(r.top.empty());
    }
  }
}

TEST_CASE("10^4 and 10^5 layers: priced and searched in bounded time", "[edge]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  for (std::int64_t layers : {std::int64_t(10'000), kMaxLayers}) {
    json j = llama8b_json();
    j["num_layers"] = layers;
    const ModelSpec m = model_from_json(j, "deep.json");
    INFO(layers << " layers");
    TrainingSpec ts;
    ts.num_gpus = 4096, ts.seq_len = 4096, ts.global_batch_sequences = 4096;
    ParallelConfig pc;
    pc.tp = 8, pc.pp = 512, pc.dp = 1, pc.virtual_stages = 8, pc.recompute = Recompute::full, pc.zero_stage = 1;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    CHECK((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
    check_sane(ev);
    const SearchResult r = search(m, hw, spec_for(m, 1024, 1024));
    check_search(r, 1024);
  }
}

TEST_CASE("vocabularies of 10^7 and sequences of 10^7 tokens: finite figures", "[edge]") {
  const HardwareProfile hw = find_hardware("dgx-h100", kDir);
  json j = llama8b_json();
  j["vocab_size"] = 10'000'000;
  const ModelSpec big_vocab = model_from_json(j, "vocab.json");
  const ModelSpec llama = find_model("llama8b", kDir);
  struct Row {
    const char* what;
    const ModelSpec& model;
    std::int64_t seq;
    AttentionKernel attention;
    std::int64_t cp;
  };
  const Row rows[] = {
      {"vocabulary 10^7", big_vocab, 8192, AttentionKernel::flash, 1},
      {"sequence 10^7, flash, CP 64", llama, 10'000'000, AttentionKernel::flash, 64},
      {"sequence 10^7, unfused", llama, 10'000'000, AttentionKernel::unfused, 1},
      {"sequence 10^8 (the bound), unfused", llama, kMaxSeqLen, AttentionKernel::unfused, 1},
      {"vocabulary 10^7 and sequence 10^7", big_vocab, 10'000'000, AttentionKernel::flash, 64},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      TrainingSpec ts;
      ts.num_gpus = 8 * r.cp, ts.seq_len = r.seq, ts.global_batch_sequences = 8, ts.attention = r.attention;
      ParallelConfig pc;
      pc.tp = 8, pc.cp = r.cp, pc.sequence_parallel = true;
      const Evaluation ev = evaluate(r.model, hw, pc, ts);
      CHECK((ev.reasons & ~(1u << unsigned(Reason::out_of_memory))) == 0);
      check_sane(ev);
      SearchSpec s = spec_for(r.model, ts.num_gpus, 8);
      s.training = ts;
      check_search(search(r.model, hw, s), ts.num_gpus);
    }
  }
}

namespace {

// chunk_layers before it filled in bulk: one layer at a time to the least
// loaded chunk, ties to the earlier one.
std::vector<std::int64_t> chunk_layers_one_by_one(const StageLayout& layout, std::int64_t stage, std::int64_t v,
                                                  double extra_first, double extra_last) {
  std::vector<std::int64_t> n(std::size_t(v), 0);
  std::vector<double> load(std::size_t(v), 0.0);
  if (stage == 0) load[0] += extra_first;
  if (stage == layout.stages - 1) load[std::size_t(v - 1)] += extra_last;
  for (std::int64_t k = 0; k < layout.layers_on(stage); ++k) {
    const std::size_t c = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
    ++n[c];
    load[c] += 1.0;
  }
  return n;
}

}  // namespace

TEST_CASE("chunk_layers fills chunks in bulk exactly as layer by layer", "[edge][pipeline]") {
  std::mt19937_64 g(20'250'601);
  auto uniform = [&g](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); };
  int cases = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::int64_t stages = std::uniform_int_distribution<std::int64_t>(1, 40)(g);
    const std::int64_t v = std::uniform_int_distribution<std::int64_t>(1, 8)(g);
    const std::int64_t layers = stages * v + std::uniform_int_distribution<std::int64_t>(0, 3000)(g);
    // Extras: fractional, whole numbers (ties), tiny and huge (many layers before the others catch up).
    auto extra = [&] {
      switch (i % 4) {
        case 0:
          return uniform(0.0, 4.0);
        case 1:
          return std::floor(uniform(0.0, 6.0));
        case 2:
          return uniform(0.0, 1e-9);
        default:
          return uniform(0.0, 500.0);
      }
    };
    const double ef = extra(), el = extra();
    const StageLayout layout = balance_layers(layers, stages, v, ef, el);
    if (!layout.feasible) continue;
    for (std::int64_t s : {std::int64_t(0), std::int64_t(1), stages - 2, stages - 1}) {
      if (s < 0 || s >= stages) continue;
      INFO("layers " << layers << " stages " << stages << " v " << v << " stage " << s << " extras " << ef << ", "
                     << el);
      CHECK(chunk_layers(layout, s, v, ef, el) == chunk_layers_one_by_one(layout, s, v, ef, el));
      ++cases;
    }
  }
  CHECK(cases > 5000);
}

TEST_CASE("MoE and MLA sizes: bounds name the field, the largest accepted counts stay exact", "[edge][moe]") {
  ModelSpec m = find_model("mixtral-8x7b", kDir);
  m.expected_params = m.expected_active_params = 0;
  m.moe.top_k = 9;  // specs built in code get the same checks as files
  CHECK(size_problems(m) == std::vector<std::string>{"moe.top_k: expected at most 8, got 9"});
  m.moe.top_k = 2;
  m.moe.first_dense_layers = 32;
  CHECK(size_problems(m) == std::vector<std::string>{"moe.first_dense_layers: expected at most 31, got 32"});
  m.moe.first_dense_layers = 0;
  // 65536 experts of 4M width at h = 2^20: 8.6e17 parameters per layer, refused as a whole before any 64-bit product.
  m.hidden_size = kMaxHiddenSize;
  m.num_heads = 8192;
  m.num_kv_heads = 8;
  m.moe.num_experts = kMaxExperts;
  m.moe.expert_ffn_hidden_size = kMaxFfnHiddenSize;
  const auto p = size_problems(m);
  REQUIRE(p.size() == 1);
  CHECK_THAT(p[0], Catch::StartsWith("parameters: expected at most 1e+15 in all"));
  // Just inside: 1024 experts of 16384 at h = 16384, 8 layers; count_params agrees with a double-precision sum.
  m.hidden_size = 16384;
  m.num_heads = 128;
  m.moe.num_experts = 1024;
  m.moe.expert_ffn_hidden_size = 16384;
  m.num_layers = 8;
  REQUIRE(size_problems(m).empty());
  const ParamCounts c = count_params(m);
  const double routed = 1024.0 * 3 * 16384 * 16384;
  CHECK(double(c.routed_experts_per_moe_layer) == routed);
  CHECK(double(c.total) == Approx(8 * (routed + c.attention_per_layer + 2 * 16384.0 + 16384.0 * 1024) +
                                  2 * 32000.0 * 16384 + 16384)
                               .epsilon(1e-15));
}
