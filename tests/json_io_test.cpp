// json_io: spec parsing and validation. Error messages are part of the
// interface (house style §5): each InputError names the file and the field,
// and is checked word for word.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/io/read_file.h"
#include "planner/spec/input_error.h"
#include "test_support.h"

using namespace planner;
using nlohmann::json;

using planner::testing::error_of;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;

json stock_model_json() { return read_json_file(kDir + "/models/llama3.1-8b.json"); }
json stock_hardware_json() { return read_json_file(kDir + "/hardware_profiles/dgx-h100.json"); }

// A scratch file in the system temp directory, removed at scope exit.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};
}  // namespace

TEST_CASE("model JSON errors name the file and the field, verbatim", "[json_io]") {
  struct Row {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  };
  const Row rows[] = {
      {"wrong type", [](json& j) { j["hidden_size"] = "abc"; },
       R"(x.json: hidden_size: expected a positive integer, got "abc")"},
      {"missing field", [](json& j) { j.erase("num_layers"); },
       "x.json: num_layers: missing (expected a positive integer)"},
      {"unknown field", [](json& j) { j["hiden_size"] = 4096; }, "x.json: hiden_size: unknown field"},
      {"notes not text", [](json& j) { j["notes"] = 5; }, "x.json: notes: expected a non-empty string, got 5"},
      {"a position table without learned positions", [](json& j) { j["max_position_embeddings"] = 4096; },
       "x.json: max_position_embeddings: applies to learned positions only (the table's rows); position_embedding "
       "is rope"},
      {"bad enum", [](json& j) { j["ffn_type"] = "swish"; },
       R"(x.json: ffn_type: expected one of swiglu | geglu | gelu | relu | squared_relu, got "swish")"},
      {"bool as number", [](json& j) { j["tied_embeddings"] = 1; },
       "x.json: tied_embeddings: expected true or false, got 1"},
      {"zero where positive", [](json& j) { j["num_attention_heads"] = 0; },
       "x.json: num_attention_heads: expected a positive integer, got 0"},
      {"cross-field", [](json& j) { j["num_kv_heads"] = 5; },
       "x.json: num_kv_heads: expected a divisor of num_attention_heads 32, got 5"},
      {"sequence beyond the learned position table",
       [](json& j) {
         j["position_embedding"] = "learned";
         j["max_position_embeddings"] = 4096;
       },
       "x.json: default_seq_len: expected at most max_position_embeddings 4096 (learned positions), got 8192"},
      {"every problem is reported",
       [](json& j) {
         j["hidden_size"] = -1;
         j["vocab_size"] = 1.5;
       },
       "x.json: hidden_size: expected a positive integer, got -1; "
       "vocab_size: expected a positive integer, got 1.5"},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      json j = stock_model_json();
      r.edit(j);
      CHECK(error_of([&] { (void)model_from_json(j, "x.json"); }) == r.message);
    }
  }
}

TEST_CASE("hardware JSON errors carry the nested JSON path", "[json_io]") {
  struct Row {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  };
  const Row rows[] = {
      {"tier field", [](json& j) { j["tiers"][1]["nics_per_node"] = 0; },
       "h.json: tiers[1].nics_per_node: expected a positive integer, got 0"},
      {"chip field", [](json& j) { j["chip"]["hbm_capacity_bytes"] = -1; },
       "h.json: chip.hbm_capacity_bytes: expected a number > 0 and <= 1e+15, got -1"},
      {"unknown nested field", [](json& j) { j["efficiency"]["gemm_maximum"] = 0.5; },
       "h.json: efficiency.gemm_maximum: unknown field"},
      {"sustained clock above the burst clock", [](json& j) { j["efficiency"]["sustained_clock_fraction"] = 1.2; },
       "h.json: efficiency.sustained_clock_fraction: expected a number > 0 and <= 1, got 1.2"},
      {"sustained clock of zero", [](json& j) { j["efficiency"]["sustained_clock_fraction"] = 0; },
       "h.json: efficiency.sustained_clock_fraction: expected a number > 0 and <= 1, got 0"},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      json j = stock_hardware_json();
      r.edit(j);
      CHECK(error_of([&] { (void)hardware_from_json(j, "h.json"); }) == r.message);
    }
  }
}

TEST_CASE("malformed JSON reports file:line:column and what was expected", "[json_io]") {
  // The stray comma on line 3, column 17 is the error.
  const TempFile f("planner_json_io_test_malformed.json",
                   "{\n  \"name\": \"x\",\n  \"num_layers\": ,\n  \"hidden_size\": 1\n}\n");
  try {
    (void)load_model_file(f.path);
    FAIL("no InputError thrown");
  } catch (const InputError& e) {
    CHECK(e.where() == f.path + ":3:17");
    CHECK(std::string(e.what()) == f.path +
                                       ":3:17: malformed JSON: syntax error while parsing value - unexpected ','; "
                                       "expected '[', '{', or a literal");
  }
}

TEST_CASE("a key given twice in one object is an error naming its path", "[json_io]") {
  // nlohmann::json would keep the last value silently (RFC 8259 leaves it undefined).
  const auto where = [](const char* text) {
    try {
      (void)parse_json_text(text, "f.json");
    } catch (const InputError& e) {
      return e.where();
    }
    return std::string("accepted");
  };
  CHECK(where("{\"tp\": 2, \"tp\": 4}") == "f.json: tp");
  CHECK(where("{\"a\": {\"c\": 1, \"c\": 2}}") == "f.json: a.c");
  CHECK(where("[{\"x\": 1}, {\"y\": 2, \"y\": 3}]") == "f.json: [1].y");
  CHECK(where("{\"cases\": [1, [2], {\"q\": 1, \"q\": 2}]}") == "f.json: cases[2].q");
  // The same name in sibling or nested objects is fine.
  CHECK(where("{\"a\": {\"k\": 1}, \"b\": {\"k\": 1, \"a\": {\"a\": 1}}}") == "accepted");
  CHECK(error_of([] { (void)parse_json_text("{\"tp\": 2, \"tp\": 4}", "f.json"); }) ==
        "f.json: tp: key given twice in one object (expected each name once; which value was meant?)");
}

TEST_CASE("a missing file is an InputError naming it", "[json_io]") {
  const std::string path = (std::filesystem::temp_directory_path() / "planner_json_io_test_no_such_file.json").string();
  CHECK(error_of([&] { (void)load_model_file(path); }) == path + ": cannot open file");
}

TEST_CASE("input files must be regular files of bounded size", "[json_io]") {
  // Devices, FIFOs and directories would hang or fail obscurely; a huge file
  // would exhaust memory. Each is a one-line error naming the path.
  const auto dir = std::filesystem::temp_directory_path();
  CHECK(error_of([&] { (void)load_model_file(dir.string()); }) == dir.string() + ": expected a file, got a directory");
  CHECK(error_of([] { (void)read_json_file("/dev/zero"); }) ==
        "/dev/zero: expected a regular file (not a device, FIFO or socket)");
  const std::string big = (dir / "planner_json_io_test_sparse.json").string();
  {
    std::ofstream out(big);
    out << "{}";
  }
  std::filesystem::resize_file(big, kMaxInputFileBytes + 1);  // sparse: no disk used
  CHECK(error_of([&] { (void)read_json_file(big); }).find("larger than the 256 MiB") != std::string::npos);
  std::filesystem::remove(big);
}

TEST_CASE("a number too large for a double is malformed JSON, not a crash", "[json_io]") {
  // nlohmann throws out_of_range (not parse_error) for it; found by fuzz_nccl_tests_log.
  CHECK(error_of([] { (void)parse_json_text("{\"hidden_size\": 1e400}", "m.json"); }) ==
        "m.json: malformed JSON: a number out of range (expected a valid JSON document)");
}

TEST_CASE("InputError joins where and message", "[json_io]") {
  const InputError e("models/x.json", "hidden_size: bad");
  CHECK(e.where() == "models/x.json");
  CHECK(e.message() == "hidden_size: bad");
  CHECK(std::string(e.what()) == "models/x.json: hidden_size: bad");
}

TEST_CASE("unknown names list the known ones and suggest the nearest", "[json_io]") {
  const std::string msg = error_of([] { (void)find_model("llama9b", kDir); });
  CHECK_THAT(msg, Catch::StartsWith("--model: unknown model 'llama9b' (did you mean 'llama8b'?); known: "));
  for (const ModelSpec& m : list_models(kDir)) CHECK_THAT(msg, Catch::Contains(m.name));
  CHECK_THAT(error_of([] { (void)find_hardware("dgx-h900", kDir); }),
             Catch::StartsWith("--hardware: unknown hardware profile 'dgx-h900' (did you mean 'dgx-h100'?); known: "));
}

TEST_CASE("to_json and from_json round-trip every stock spec", "[json_io]") {
  for (const ModelSpec& m : list_models(kDir)) {
    INFO(m.name);
    CHECK(model_from_json(to_json(m), "<round-trip>") == m);
  }
  for (const HardwareProfile& h : list_hardware(kDir)) {
    INFO(h.name);
    CHECK(hardware_from_json(to_json(h), "<round-trip>") == h);
  }
}

TEST_CASE("head_dim defaults to hidden_size / num_attention_heads", "[json_io]") {
  json j = stock_model_json();
  j.erase("head_dim");
  CHECK(model_from_json(j, "x.json").head_dim == 4096 / 32);
  j["hidden_size"] = 4100;  // not divisible by 32 heads
  CHECK(error_of([&] { (void)model_from_json(j, "x.json"); }) ==
        "x.json: head_dim: missing, and hidden_size 4100 is not divisible by num_attention_heads 32");
}

TEST_CASE("MoE and MLA fields: errors name the field, verbatim", "[json_io][moe]") {
  struct Row {
    const char* what;
    const char* base;  // stock model file the edit starts from
    std::function<void(json&)> edit;
    const char* message;
  };
  const Row rows[] = {
      {"top_k above num_experts", "mixtral-8x7b", [](json& j) { j["moe"]["top_k"] = 9; },
       "x.json: moe.top_k: expected 1 to num_experts 8, got 9"},
      {"top_k zero", "mixtral-8x7b", [](json& j) { j["moe"]["top_k"] = 0; },
       "x.json: moe.top_k: expected an integer from 1 to 65536, got 0"},
      {"expert width zero", "mixtral-8x7b", [](json& j) { j["moe"]["expert_ffn_hidden_size"] = 0; },
       "x.json: moe.expert_ffn_hidden_size: expected an integer from 1 to 4194304, got 0"},
      {"explicit zero shared-expert width", "deepseek-v3",
       [](json& j) { j["moe"]["shared_expert_ffn_hidden_size"] = 0; },
       "x.json: moe.shared_expert_ffn_hidden_size: expected an integer from 1 to 4194304 (omit it for "
       "expert_ffn_hidden_size; num_shared_experts 0 for no shared experts), got 0"},
      {"layer_freq zero", "mixtral-8x7b", [](json& j) { j["moe"]["layer_freq"] = 0; },
       "x.json: moe.layer_freq: expected an integer from 1 to 100000, got 0"},
      {"layer_freq past the layers", "mixtral-8x7b", [](json& j) { j["moe"]["layer_freq"] = 33; },
       "x.json: moe.layer_freq: expected at most num_layers - first_dense_layers = 32 (else no layer is MoE), got 33"},
      {"all layers dense", "mixtral-8x7b", [](json& j) { j["moe"]["first_dense_layers"] = 32; },
       "x.json: moe.first_dense_layers: expected fewer than num_layers 32, got 32"},
      {"unknown moe field", "mixtral-8x7b", [](json& j) { j["moe"]["n_routed_experts"] = 8; },
       "x.json: moe.n_routed_experts: unknown field"},
      {"bad router score", "mixtral-8x7b", [](json& j) { j["moe"]["router_score"] = "sparsemax"; },
       R"(x.json: moe.router_score: expected one of softmax | sigmoid, got "sparsemax")"},
      {"MLA dim missing", "deepseek-v3", [](json& j) { j["mla"].erase("v_head_dim"); },
       "x.json: mla.v_head_dim: missing (expected an integer from 1 to 65536)"},
      {"MLA head_dim", "deepseek-v3", [](json& j) { j["head_dim"] = 128; },
       "x.json: head_dim: expected qk_nope_head_dim + qk_rope_head_dim = 192 with \"mla\" (the query/key head), got "
       "128"},
      {"MLA KV heads", "deepseek-v3", [](json& j) { j["num_kv_heads"] = 8; },
       "x.json: num_kv_heads: expected num_attention_heads 128 with \"mla\" (each head has its own K and V), got 8"},
      {"active count on a dense model", "llama3.1-8b", [](json& j) { j["expected_active_params"] = 8030261248; },
       "x.json: expected_active_params: expected only on a MoE model (one with a \"moe\" object); a dense model's "
       "active count is its total, expected_params"},
      {"qkv_bias with bias", "llama3.1-8b",
       [](json& j) {
         j["qkv_bias"] = true;
         j["bias"] = true;
         j.erase("expected_params");
       },
       "x.json: qkv_bias: expected false when bias is true (bias covers Q, K, V too)"},
      {"expected_params off", "llama3.1-8b", [](json& j) { j["expected_params"] = 8030261249; },
       "x.json: expected_params: expected the count of the architecture fields, 8030261248, got 8030261249 (off by "
       "+1)"},
      {"expected_active_params off", "deepseek-v3", [](json& j) { j["expected_active_params"] = 37000000000; },
       "x.json: expected_active_params: expected the count of the architecture fields, 37552297472, got 37000000000 "
       "(off by -552297472)"},
      {"architecture edited under a published count", "mixtral-8x7b", [](json& j) { j["moe"]["num_experts"] = 16; },
       // 8 more experts of 3*4096*14336 and router columns in 32 layers; active grows by the router (32*4096*8).
       "x.json: expected_params: expected the count of the architecture fields, 91800997888, got 46702792704 (off by "
       "-45098205184); expected_active_params: expected the count of the architecture fields, 12880973824, got "
       "12879925248 (off by -1048576)"},
  };
  for (const Row& r : rows) {
    SECTION(r.what) {
      json j = read_json_file(kDir + "/models/" + r.base + ".json");
      r.edit(j);
      CHECK(error_of([&] { (void)model_from_json(j, "x.json"); }) == r.message);
    }
  }
}

TEST_CASE("model files round-trip, dense files gain no MoE/MLA keys", "[json_io][moe]") {
  for (const ModelSpec& m : list_models(kDir)) {
    INFO(m.name);
    const json j = to_json(m);
    CHECK(model_from_json(j, "rt.json") == m);
    if (!m.is_moe() && !m.is_mla()) {
      for (const char* k : {"moe", "mla", "qkv_bias", "qk_norm", "mtp_layers", "expected_active_params"})
        CHECK_FALSE(j.contains(k));
      // Every key the file has, to_json writes back with the same value (the file may add notes/aliases order).
      const json file = read_json_file(kDir + "/models/" + m.name + ".json");
      for (auto it = j.begin(); it != j.end(); ++it)
        if (file.contains(it.key())) CHECK(file[it.key()] == it.value());
    }
  }
}
