// The runtime shim's parts, for runtime_cmd.cc: its own options and
// settings, runc's command line read as runc reads it, and the invocation
// (RuntimeShim): the edit of config.json, the runtime's log, the exec.
// Any failure before the exec is one line on stderr and in the runtime's
// --log file (where containerd looks for the reason a create failed), exit 1;
// config.json is then unchanged.
#include "runtime_shim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "atomic_file.h"
#include "decision.h"
#include "engine_files.h"
#include "exit_codes.h"
#include "files.h"
#include "log.h"
#include "log_setup.h"
#include "options.h"
#include "path_text.h"
#include "spec_editor.h"
#include "unique_fd.h"

namespace ocid {
namespace {

constexpr const char* kConfigName = "config.json";

// --- runc's command line --------------------------------------------------------------

// runc 1.1 global flags that take a value (all others are booleans).
bool GlobalTakesValue(const std::string& name) {
  return name == "log" || name == "log-format" || name == "root" || name == "criu" ||
         name == "rootless";
}

// create/run flags that take a value.
bool CreateTakesValue(const std::string& name) {
  return name == "bundle" || name == "b" || name == "console-socket" || name == "pid-file" ||
         name == "preserve-fds";
}

// "-x", "--x", "-x=v", "--x=v" -> name x and, when inline, its value.
// False for arguments that are not flags ("-" and "--" included).
bool SplitFlag(const std::string& arg, std::string* name, std::string* value, bool* inline_value) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return false;
  size_t start = arg[1] == '-' ? 2 : 1;
  size_t eq = arg.find('=', start);
  *inline_value = eq != std::string::npos;
  *name = arg.substr(start, *inline_value ? eq - start : std::string::npos);
  *value = *inline_value ? arg.substr(eq + 1) : "";
  return !name->empty();
}

// --- the runtime's log file -----------------------------------------------------------

std::string Rfc3339Now() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09ldZ", static_cast<long>(ts.tv_nsec));
  return buf;
}

std::string Summary(const Plan& plan, const std::vector<uint32_t>& added_gids) {
  size_t devices = 0;
  for (const auto& m : plan.mounts)
    if (m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice) ++devices;
  std::string s;
  for (const auto& a : plan.activated) {
    s += (s.empty() ? "" : "; ") + a.file + " (" + a.requested_by + "): features";
    for (const auto& f : a.features) s += " " + f;
  }
  s += "; " + std::to_string(plan.mounts.size() - devices) + " mounts, " + std::to_string(devices) +
       " devices";
  for (const auto& p : plan.preload) s += ", LD_PRELOAD " + p;
  for (const auto& a : plan.activated)
    if (!a.profile.empty()) s += ", profile " + a.profile;
  for (uint32_t g : added_gids) s += ", group " + std::to_string(g);
  return s;
}

}  // namespace

// --- the shim -------------------------------------------------------------------------

class RuntimeShim::Impl {
 public:
  Impl(std::vector<std::string> args, char** env, mode_t mask)
      : args_(std::move(args)), inv_(ParseRuntimeArgs(args_)), env_(env), umask_(mask) {}

  ShimSettings* settings() { return &settings_; }

  bool Creates() const { return inv_.Creates() && !inv_.container_id.empty(); }

  // One line on stderr and in the runtime's log.
  int Failed(const Error& e) {
    // A container that asked is refused, and its line says so; before that
    // the shim's own settings failed, which is no decision about it.
    std::string line = (inv_.container_id.empty() ? "" : "container " + inv_.container_id + ": ") +
                       (asked_ ? "refused: " : "") + e.Line();
    // For a container that asked, a decision (log.h fields); before that,
    // the shim's own settings failed.
    log::Fields f;
    if (asked_) {
      f = planned_;
      f.container_id = Printable(inv_.container_id);
      f.decision = "refused";
      f.reason = e.Line();
      f.stage = "create";
    }
    log::Write(log::Level::kError, line, f);
    RuntimeLog("error", line);
    return kExitFailure;
  }

  void InitLogging() {
    // The one log set-up (log_setup.h), with the shim's settings as given:
    // runtime.json is its settings file, validated already
    // (ValidateShimSettings).
    LogSetup setup;
    setup.read_config_file = false;
    setup.given.level = settings_.log_level;
    setup.given.format = settings_.log_format;
    if (!settings_.log_target.empty()) setup.given.target = settings_.log_target;
    if (!settings_.log_file.empty()) setup.given.file = settings_.log_file;
    LogSetupIssues issues = SetUpLog(setup);
    if (!issues.file.empty()) RuntimeLog("warning", issues.file);
  }

  bool EditIfAsked(Error* err) {
    Container c;
    c.state.id = inv_.container_id;
    if (!AbsoluteBundle(&c.state.bundle, err)) return false;
    Options opts;
    opts.config_dir = settings_.config_dir;
    opts.host_root = settings_.host_root;
    bool asked = false, dir_unreadable = false;
    bool loaded = LoadIfAsked(opts, "", &c, &asked, &dir_unreadable, err);
    asked_ = asked;
    if (!loaded) {
      if (!dir_unreadable) return false;
      // As in the hook: without inventories nobody can have asked, and a
      // container that did not ask must not be harmed.
      log::Warn(err->Line());
      RuntimeLog("warning", err->Line());
      return true;
    }
    if (!asked) {
      ReportNotAsked(c.state.id, "create");
      return true;
    }
    Plan plan;
    SpecEditNotes notes;
    std::string bytes = c.config_bytes;
    {
      std::unique_ptr<HostRootView> host;
      if (!PlanFor(opts, c, /*resolve_paths=*/true, &host, &plan, err)) return false;
      planned_ = DecisionFields(plan);
      ReportBroken(c.inventories, plan.Active());
      ReportIgnored(c.state.id, plan);
      ReportWarnings(c.state.id, plan);
      for (const auto& w : plan.warnings)
        RuntimeLog("warning", Printable("container " + c.state.id + ": " + w));
      if (!plan.Active()) {
        OCID_DEBUG("container " + c.state.id + ": not activated");
        return true;
      }
      // The directories an inventory creates (create_if), on the host
      // through root's writer (host_dirs.h), before runc reads config.json
      // and binds them; a refused walk refuses the container.
      std::vector<std::string> created;
      if (!CreateDirectories(c.state.id, *host, &plan, &created, err)) return false;
      for (const auto& line : created) RuntimeLog("info", line);
      if (!EditSpec(plan, host->root_path(), &bytes, err, &notes)) {
        if (err->path == kConfigName) err->path = c.config_path;
        return false;
      }
      for (const auto& w : notes.warnings) {
        std::string line = Printable("container " + c.state.id + ": " + w);
        log::Fields f;
        f.container_id = Printable(c.state.id);
        log::Write(log::Level::kWarn, line, f);
        RuntimeLog("warning", line);
      }
      if (!notes.kept_env.empty()) {
        std::string names;
        for (const auto& k : notes.kept_env) names += (names.empty() ? "" : " ") + k;
        std::string line = "container " + c.state.id +
                           ": profile variables the container sets "
                           "itself kept at its values: " +
                           names;
        log::Info(Printable(line));
        RuntimeLog("info", Printable(line));
      }
    }
    // Replaced atomically, never through a symlink: the shim writes nowhere
    // but the bundle directory.
    if (bytes != c.config_bytes && !ReplaceBundleFile(c.config_path, bytes, err)) return false;
    std::string line = "container " + c.state.id + ": edited " + c.config_path + ": " +
                       Summary(plan, notes.added_gids);
    log::Fields f = planned_;
    f.decision = "applied";
    f.stage = "create";
    log::Write(log::Level::kInfo, line, f);
    RuntimeLog("info", line);
    return true;
  }

  // runc chdirs into --bundle (default: the current directory).
  bool AbsoluteBundle(std::string* out, Error* err) const {
    std::string b = inv_.bundle;
    if (b.empty() || b[0] != '/') {
      char cwd[4096];
      if (!::getcwd(cwd, sizeof cwd))
        return Fail(err, "cannot get the current directory", "", errno);
      b = b.empty() || b == "." ? std::string(cwd) : std::string(cwd) + "/" + b;
    }
    while (b.size() > 1 && b.back() == '/') b.pop_back();
    *out = b;
    return true;
  }

  // Appends to the runtime's --log file, created as runc would create it.
  // Best effort: the line is on stderr too.
  void RuntimeLog(const std::string& level, const std::string& msg) const {
    if (inv_.log_file.empty()) return;
    UniqueFd fd(::open(inv_.log_file.c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644));
    if (!fd.valid()) return;
    Error ignored;
    WriteAllFd(fd.get(),
               RuntimeLogLine(inv_.log_format, level, "oci-decorator: " + msg, Rfc3339Now()),
               inv_.log_file, &ignored);
  }

  int Exec() {
    std::vector<char*> argv;
    std::string argv0 = Basename(settings_.runtime);
    argv.push_back(argv0.data());
    for (auto& a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    char* no_env[] = {nullptr};
    ::umask(umask_);
    // The only program the shim ever runs: the configured runtime, by
    // absolute path, with the engine's own arguments and environment. The
    // planned seccomp self-confinement must leave execve allowed in shim mode.
    ::execve(settings_.runtime.c_str(), argv.data(), env_ ? env_ : no_env);
    int e = errno;
    std::string line = "cannot execute the runtime " + settings_.runtime + ": " + std::strerror(e);
    log::Error(line);
    RuntimeLog("error", line);
    return kExitCannotExec;
  }

  std::vector<std::string> args_;
  RuntimeInvocation inv_;
  char** env_;
  mode_t umask_;
  ShimSettings settings_;
  bool asked_ = false;
  log::Fields planned_;  // what the plan activates, once planned
};

RuntimeShim::RuntimeShim(std::vector<std::string> args, char** env, mode_t mask)
    : impl_(std::make_unique<Impl>(std::move(args), env, mask)) {}
RuntimeShim::~RuntimeShim() = default;
ShimSettings* RuntimeShim::settings() { return impl_->settings(); }
bool RuntimeShim::Creates() const { return impl_->Creates(); }
void RuntimeShim::InitLogging() { impl_->InitLogging(); }
bool RuntimeShim::EditIfAsked(Error* err) { return impl_->EditIfAsked(err); }
int RuntimeShim::Exec() { return impl_->Exec(); }
int RuntimeShim::Failed(const Error& e) { return impl_->Failed(e); }

bool IsShimProgramName(const char* argv0) { return argv0 && Basename(argv0) == kShimProgramName; }

bool ResolveShimSettings(const ShimOptions& opts, const std::string& default_file,
                         ShimSettings* out, Error* err) {
  ShimSettings s;
  const std::string& file = opts.config_file ? *opts.config_file : default_file;
  std::string bytes;
  Error read_err;
  if (ReadFileAt(AT_FDCWD, file, kMaxSmallFileBytes, &bytes, &read_err)) {
    if (!ParseShimConfig(bytes, file, &s, err)) return false;
  } else if (opts.config_file || read_err.errnum != ENOENT) {
    // Only the default file may be absent; a named one or an unreadable one
    // is an operator error the engine should show.
    *err = read_err;
    err->what = "cannot read the shim config: " + err->what;
    return false;
  }
  if (!ApplyShimOptions(opts, &s, err)) return false;
  *out = s;
  return true;
}

RuntimeInvocation ParseRuntimeArgs(const std::vector<std::string>& args) {
  RuntimeInvocation inv;
  std::string name, value;
  bool has_value = false;
  size_t i = 0;
  // Global flags, up to the command (Go's flag package stops at the first
  // non-flag; "--" ends the flags).
  for (; i < args.size(); ++i) {
    if (args[i] == "--") {
      ++i;
      break;
    }
    if (!SplitFlag(args[i], &name, &value, &has_value)) break;
    if (GlobalTakesValue(name) && !has_value && i + 1 < args.size()) value = args[++i];
    if (name == "log") inv.log_file = value;
    if (name == "log-format") inv.log_format = value;
  }
  if (i >= args.size()) return inv;
  inv.command = args[i++];
  if (!inv.Creates()) return inv;
  // The command's flags and positionals in any order (urfave/cli moves the
  // flags first); after "--" everything is positional. runc takes the first
  // positional as the container id.
  bool positional_only = false;
  std::vector<std::string> positionals;
  for (; i < args.size(); ++i) {
    if (!positional_only && args[i] == "--") {
      positional_only = true;
      continue;
    }
    if (positional_only || !SplitFlag(args[i], &name, &value, &has_value)) {
      positionals.push_back(args[i]);
      continue;
    }
    if (CreateTakesValue(name) && !has_value && i + 1 < args.size()) value = args[++i];
    if (name == "bundle" || name == "b") inv.bundle = value;
  }
  if (!positionals.empty()) inv.container_id = positionals.front();
  return inv;
}

}  // namespace ocid
