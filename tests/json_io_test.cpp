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
      {"bad enum", [](json& j) { j["ffn_type"] = "swish"; },
       R"(x.json: ffn_type: expected one of swiglu | geglu | gelu | relu | squared_relu, got "swish")"},
      {"bool as number", [](json& j) { j["tied_embeddings"] = 1; },
       "x.json: tied_embeddings: expected true or false, got 1"},
      {"zero where positive", [](json& j) { j["num_attention_heads"] = 0; },
       "x.json: num_attention_heads: expected a positive integer, got 0"},
      {"cross-field", [](json& j) { j["num_kv_heads"] = 5; },
       "x.json: num_kv_heads: expected a divisor of num_attention_heads 32, got 5"},
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
