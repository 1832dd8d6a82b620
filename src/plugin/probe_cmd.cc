// `probe`, in the order it works: read the health file (health_file.h),
// parse it, judge it (ProbeVerdict) and say so in one line.
#include "probe_cmd.h"

#include <cstdio>
#include <ctime>

#include "atomic_file.h"
#include "exit_codes.h"
#include "health_file.h"
#include "path_text.h"

namespace ocid {

int RunProbe(const std::string& path, int max_age, bool ready) {
  std::string text;
  bool exists = false;
  Error err;
  const char* me = "oci-decorator-device-plugin probe";
  if (!ReadFileIfExists(path, kMaxHealthBytes, &text, &exists, &err)) {
    std::fprintf(stderr, "%s: %s\n", me, err.Line().c_str());
    return kExitFailure;
  }
  if (!exists) {
    // Where the writer's rule refuses the directory, the plugin never
    // writes the file: say so, rather than suggest it is not running.
    std::string refused = WriteDirRefusal(Dirname(path));
    std::string what = refused.empty()
                           ? "no health file (is the plugin running with --health-file?)"
                           : "no health file: the plugin may not write it there: " + refused +
                                 " (give it a directory of its own inside an emptyDir with "
                                 "medium: Memory, a sticky 1777 tmpfs)";
    std::fprintf(stderr, "%s: %s\n", me, Error{what, path, 0}.Line().c_str());
    return kExitFailure;
  }
  HealthState s;
  std::string why;
  if (!ParseHealth(text, &s, &why)) {
    std::fprintf(stderr, "%s: %s\n", me,
                 Error{"not a health file: " + why, path, 0}.Line().c_str());
    return kExitFailure;
  }
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::string verdict = ProbeVerdict(s, now, max_age, ready);
  if (!verdict.empty()) {
    std::fprintf(stderr, "%s: %s: %s\n", me, Printable(path).c_str(), verdict.c_str());
    return kExitFailure;
  }
  std::printf("%s: %s: %s (written %lld s ago, %d of %d resources registered)\n", me,
              Printable(path).c_str(), ready ? "ready" : "alive",
              static_cast<long long>(now - s.time < 0 ? 0 : now - s.time), s.registered,
              s.resources);
  return 0;
}

}  // namespace ocid
