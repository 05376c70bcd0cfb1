// write_file_atomically: temp file in the target's directory (same file
// system, so rename(2) is atomic), fsync, rename. POSIX (IEEE 1003.1, rename:
// "If the link named by the new argument exists, it shall be removed and old
// renamed to new ... a link named new shall remain visible to other threads
// throughout the renaming operation").
#include "planner/io/atomic_write.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner {

void write_file_atomically(const std::string& path, std::string_view contents) {
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
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw InputError(path, fmt::format("cannot replace the file: {}", std::strerror(err)));
  }
}

}  // namespace planner
