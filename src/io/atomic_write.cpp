// write_file_atomically: temp file in the target's directory (same file
// system, so rename(2) is atomic), fsync, rename. POSIX (IEEE 1003.1, rename:
// "If the link named by the new argument exists, it shall be removed and old
// renamed to new ... a link named new shall remain visible to other threads
// throughout the renaming operation").
#include "planner/io/atomic_write.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner {

namespace {

// The checks and the staging of one file: a temporary file next to `path`
// holding `contents`, flushed and closed. Returns its name.
std::string stage(const std::string& path, std::string_view contents) {
  if (path.empty()) throw InputError("<output>", "expected a file name, got an empty path");
  // rename(2) would replace whatever is there: never a device (--svg /dev/null
  // as root would swap the device node for a file), a directory or a FIFO.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(path, "refusing to replace something that is not a regular file (a device, directory or FIFO)");
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw InputError(path, fmt::format("cannot create a temporary file next to it: {}", std::strerror(errno)));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw InputError(path, fmt::format("{}: {}", what, std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write the temporary file");
    }
    done += std::size_t(n);
  }
  // mkstemp creates 0600; give the file the usual permissions (umask applies).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("cannot set permissions");
  if (::fsync(fd) != 0) fail("cannot flush the temporary file");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw InputError(path, fmt::format("cannot close the temporary file: {}", std::strerror(err)));
  }
  return tmpl;
}

void commit(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(path, fmt::format("cannot replace the file: {}", std::strerror(err)));
  }
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view contents) { commit(stage(path, contents), path); }

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> staged;
  try {
    for (const auto& [path, contents] : files) staged.push_back(stage(path, contents));
  } catch (...) {
    for (const std::string& tmp : staged) ::unlink(tmp.c_str());
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    try {
      commit(staged[i], files[i].first);
    } catch (...) {
      for (std::size_t j = i + 1; j < files.size(); ++j) ::unlink(staged[j].c_str());
      throw;
    }
  }
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  // absolute first: weakly_canonical keeps a relative path whose first part
  // does not exist ("x.html" before it is written) relative.
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace planner
