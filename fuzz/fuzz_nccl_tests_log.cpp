// libFuzzer target: the nccl-tests importer, text logs of every layout and
// the -J JSON file. Malformed input must be an InputError naming file:line.
#include <string_view>

#include "fuzz_support.h"
#include "planner/calibrate/nccl_tests_import.h"
#include "planner/spec/input_error.h"

using namespace planner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  NcclTestsImportOptions opt;
  opt.ranks = 8;  // what a user passes for logs that do not list their devices
  try {
    NcclTestsImport out;
    if (!text.empty() && text.front() == '{')
      import_nccl_tests_json(text, "fuzz.json", opt, out);
    else
      import_nccl_tests_text(text, "fuzz.log", opt, out);
    for (const auto& s : out.measurements.series)
      for (const auto& p : s.points) fuzz::require_sane(p.time_s, "imported time");
  } catch (const InputError&) {}
  return 0;
}
