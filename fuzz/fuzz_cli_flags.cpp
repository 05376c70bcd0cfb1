// libFuzzer target: the CLI's flags. The input is split on '\n' into argv
// (argv[0] = "planner"); run_cli must return 0, 1 or 2, never 3 ("internal
// error": an exception other than InputError), and never crash. Arguments
// that would write files (--svg, --trace, --html, -o, --output, --update) are
// refused up front: a fuzzer must not write anywhere on the machine.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../src/cli/commands.h"
#include "fuzz_support.h"

namespace {

bool writes_files(const std::string& a) {
  for (const char* flag : {"--svg", "--trace", "--html", "--output", "--update", "--out"})
    if (a.rfind(flag, 0) == 0) return true;
  return a.rfind("-o", 0) == 0 || (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('o') != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"planner"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = char(data[i]);
    if (c == '\n') {
      args.push_back(cur);
      cur.clear();
    } else if (c != '\0') {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  for (const std::string& a : args)
    if (writes_files(a)) return 0;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  const int rc = planner::cli::run_cli(int(args.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  // Exit code 3 is run_cli's "internal error" (an exception other than
  // InputError); the text cannot be the signal, as flag values are echoed.
  if (rc == 3) std::fputs(err.str().c_str(), stderr);
  planner::fuzz::require(rc >= 0 && rc <= 2, "exit code 0, 1 or 2 (3: an exception other than InputError)");
  return 0;
}
