// Linked into the oci-decorator binary in the sanitizer build only
// (OCID_SANITIZE, CI's build-asan): the sanitizer runtimes' options, compiled
// in. runc and podman run a hook with the fixed env of its hooks.d entry (and
// the hook clears its environment anyway), so an ASAN_OPTIONS set by a test
// never reaches it; these defaults make any finding fail the hook on its own.
//
//   halt_on_error, exitcode  a finding ends the hook at once with status 1:
//                            the container fails, and the runtime shows the
//                            report, which goes to stderr.
//   detect_leaks=0           LeakSanitizer's exit-time check stops the world
//                            with ptrace, which the hook's seccomp filter
//                            refuses (confinement_rules.cc): LSan would die
//                            with "LeakSanitizer has encountered a fatal error"
//                            and fail every container. Allowing ptrace here
//                            would test another filter than the one shipped,
//                            and a check before confinement sees nothing (the
//                            hook frees at exit). Leaks are checked where
//                            confinement only runs in forked children: the
//                            unit tests (same code, LSan on) and the fuzzers.
//   symbolize=0              the symbolizer is a child process (execve, refused
//                            after confinement); its dead pipe would SIGPIPE
//                            the hook in the middle of the report. Frames are
//                            printed as (binary+offset): symbolize them with
//                            llvm-symbolizer --obj=build-asan/oci-decorator.
// The unit test binary does not link this file: it runs with the defaults
// (leak detection on) and the ASAN_OPTIONS CTest gives it.

extern "C" {

// The sanitizer runtimes look these names up: reserved, and meant to be.
// NOLINTNEXTLINE(bugprone-reserved-identifier)
__attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "detect_leaks=0:halt_on_error=1:exitcode=1:symbolize=0";
}

// NOLINTNEXTLINE(bugprone-reserved-identifier)
__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:exitcode=1:symbolize=0";
}

}  // extern "C"
