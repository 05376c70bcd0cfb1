// write_file_atomically: a writer killed midway (SIGKILL, no chance to clean
// up) leaves the old file intact; a completed write replaces it whole; a write
// that cannot happen is an InputError and leaves no temporary file.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "planner/io/atomic_write.h"
#include "planner/spec/input_error.h"
#include "test_support.h"

namespace fs = std::filesystem;

using planner::testing::TempDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Temporary files of `target` (target.tmp.XXXXXX) and their total size.
std::uintmax_t temp_bytes(const fs::path& target, int* count = nullptr) {
  std::uintmax_t bytes = 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(target.parent_path()))
    if (e.path().filename().string().rfind(target.filename().string() + ".tmp.", 0) == 0) {
      std::error_code ec;
      bytes += fs::file_size(e.path(), ec);
      ++n;
    }
  if (count) *count = n;
  return bytes;
}

}  // namespace

TEST_CASE("a writer killed midway leaves the old file intact", "[atomic_write]") {
  TempDir dir;
  const fs::path target = dir.path / "profile.json";
  const std::string old_contents = "{\"old\": true}\n";
  planner::write_file_atomically(target.string(), old_contents);
  bool killed_midway = false;
  // Larger payloads until the kill lands while the temporary file is being
  // written (on a fast disk a small write may finish first).
  for (std::size_t mib : {64u, 256u, 768u}) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const std::string payload(mib << 20, 'x');
      planner::write_file_atomically(target.string(), payload);
      ::_exit(0);
    }
    // Kill as soon as part of the new contents is on disk.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool seen = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (temp_bytes(target) > 0) {
        seen = true;
        break;
      }
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) break;  // finished before we saw it
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const bool was_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (seen && was_killed) {
      // The reader sees the old file, whole.
      CHECK(slurp(target) == old_contents);
      killed_midway = true;
      break;
    }
    // The write completed: the target is the new file, whole.
    CHECK(fs::file_size(target) == (mib << 20));
    planner::write_file_atomically(target.string(), old_contents);
  }
  CHECK(killed_midway);
  // A later write succeeds and replaces it whole, whatever was left behind.
  planner::write_file_atomically(target.string(), "new\n");
  CHECK(slurp(target) == "new\n");
}

TEST_CASE("a write that cannot happen is an InputError and leaves nothing", "[atomic_write]") {
  TempDir dir;
  const fs::path target = dir.path / "missing_dir" / "out.json";
  CHECK_THROWS_AS(planner::write_file_atomically(target.string(), "x"), planner::InputError);
  CHECK_FALSE(fs::exists(target));
  // A directory in the way of the rename: the temporary file is removed.
  const fs::path blocker = dir.path / "blocker";
  fs::create_directories(blocker / "inside");
  CHECK_THROWS_AS(planner::write_file_atomically(blocker.string(), "x"), planner::InputError);
  int count = 0;
  (void)temp_bytes(blocker, &count);
  CHECK(count == 0);
  // Never replace a device node (as root, rename would swap /dev/null for a file).
  CHECK_THROWS_AS(planner::write_file_atomically("/dev/null", "x"), planner::InputError);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("several files are written all or none", "[atomic_write]") {
  TempDir dir;
  const fs::path good = dir.path / "trace.json", bad = dir.path / "missing_dir" / "x.svg";
  CHECK_THROWS_AS(planner::write_files_atomically({{good.string(), "trace"}, {bad.string(), "svg"}}),
                  planner::InputError);
  CHECK_FALSE(fs::exists(good));  // the first is not left behind
  int count = 0;
  (void)temp_bytes(good, &count);
  CHECK(count == 0);
  planner::write_files_atomically({{good.string(), "trace"}, {(dir.path / "x.svg").string(), "svg"}});
  CHECK(slurp(good) == "trace");
  CHECK(slurp(dir.path / "x.svg") == "svg");
}

TEST_CASE("same_file sees one file under two spellings", "[atomic_write]") {
  TempDir dir;
  const std::string a = (dir.path / "x.html").string(), b = (dir.path / "." / "x.html").string();
  CHECK(planner::same_file(a, b));  // neither exists yet
  CHECK_FALSE(planner::same_file(a, (dir.path / "y.html").string()));
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);
  CHECK(planner::same_file("x.html", "./x.html"));  // a relative name before the file exists
  CHECK(planner::same_file("x.html", a));
  fs::current_path(cwd);
}
