// docker's daemon.json, as `setup docker` merges it and `check` reads it
// back: the "runtimes" object and "default-runtime", every other key left as
// it is. Pure: bytes in, bytes out.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error.h"

namespace ocid {

// docker's own runtime, the default when daemon.json names none.
constexpr const char* kDockerStockRuntime = "runc";
// The shim's option naming the runtime it runs (shim_config.h), as
// `--default-runtime --wrap-default` writes it into "runtimeArgs".
constexpr const char* kShimRuntimeArg = "--ocid-runtime";

// What `setup docker` does to "default-runtime".
enum class DockerDefault {
  kLeave,  // nothing
  kSet,    // the shim becomes docker's default runtime
  kUnset,  // undone: docker's default is what it was before kSet
};

struct DockerSetupRequest {
  std::string name;  // the runtime's name in daemon.json
  std::string path;  // the runtime shim
  DockerDefault default_runtime = DockerDefault::kLeave;
  // kSet over a default of the operator's own (not runc, not ours): the
  // shim becomes the default and runs that runtime's binary, so every
  // container still runs on it. Without it, kSet refuses such a default.
  bool wrap_default = false;
};

struct DockerMerge {
  std::string json;  // the new daemon.json (the input when unchanged)
  bool changed = false;
  std::string old_path;     // the entry's path before, "" if none
  std::string runtimes;     // the resulting "runtimes" object, for messages
  std::string old_default;  // "default-runtime" before, "" if none
  std::string new_default;  // after, "" if none
  std::string wrapped;      // kSet: the runtime the shim now runs; kUnset:
                            // the one given back the default ("" neither)
};

// Merges {"runtimes": {name: {"path": path}}} into daemon.json's bytes
// ("" or blank: no file yet), and changes "default-runtime" as asked. Every
// other key, every other runtime and any other key of the entry
// (runtimeArgs) is kept, in order. Unchanged when there is nothing to do.
// `file` names the file in errors.
//
// kSet: "default-runtime" becomes `name` when it is absent, runc or `name`.
// Another runtime there is the operator's: refused, unless wrap_default,
// which needs that runtime registered with an absolute "path" and no
// "runtimeArgs"; `--ocid-runtime=<its path>` is then added to the entry's
// "runtimeArgs" (replacing an earlier --ocid-runtime).
// kUnset: when "default-runtime" is `name`, it becomes the runtime whose
// path the entry's --ocid-runtime names (that argument removed), else runc.
// Written out, not removed: dockerd's reload keeps its current default
// when the key is absent (moby daemon/reload_unix.go reloadPlatform: only
// a non-empty DefaultRuntime is taken).
bool MergeDockerSetup(const std::string& bytes, const std::string& file,
                      const DockerSetupRequest& req, DockerMerge* out, Error* err);

// MergeDockerSetup with kLeave.
bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err);

struct DockerRuntime {
  std::string name;
  std::string path;
  std::vector<std::string> args;  // "runtimeArgs" (strings only)
};

struct DockerDaemon {
  std::vector<DockerRuntime> runtimes;  // entries with a string path
  std::string default_runtime;          // "" = not named (docker's runc)
};

// daemon.json's runtimes and default runtime. A blank file has none
// (docker accepts it).
bool ParseDockerDaemon(std::string_view bytes, const std::string& file, DockerDaemon* out,
                       Error* err);

// daemon.json's "runtimes" as (name, path) pairs; entries without a string
// path are skipped.
bool ParseDockerRuntimes(std::string_view bytes, const std::string& file,
                         std::vector<std::pair<std::string, std::string>>* out, Error* err);

// The runtime the shim's arguments name (--ocid-runtime P or
// --ocid-runtime=P among the leading --ocid-* ones, read by
// TakeShimOptions), "" if none or if the shim would refuse them.
std::string ShimRuntimeOf(const std::vector<std::string>& args);

}  // namespace ocid
