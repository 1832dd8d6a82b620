// One error type for the whole hook: what was being done, on which path, and
// the errno if the kernel said no. Line() renders the one line a user sees.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ocid {

struct Error {
  std::string what;  // e.g. "cannot open host source", "invalid inventory"
  std::string path;  // the path, file or key concerned ("" if none)
  int errnum = 0;    // errno, 0 if not a system error

  // One line, whatever the inputs held: each part through Printable(), so
  // cut to kMaxShownBytes (the middle is elided). A config.json can put
  // anything in a message: a newline in an annotation key, a 10 MB env value.
  std::string Line() const;
  bool empty() const { return what.empty(); }
};

constexpr size_t kMaxShownBytes = 4096;

// The one escaping rule for every byte a container, a bundle or a client
// chose, before it reaches a log line, an error line, the runtime's --log or
// a terminal (SECURITY.md 2.11). Escaped, each of its bytes as \xNN:
//   - every C0 control (U+0000..U+001F: NUL, TAB, LF, VT, FF, CR, ESC...)
//     and DEL (U+007F);
//   - the C1 controls U+0080..U+009F as encoded in UTF-8 (U+009B is CSI,
//     which some terminals obey like ESC [);
//   - the bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E and
//     U+2066..U+2069 ("Trojan Source": they reorder what a reader sees), and
//     the line and paragraph separators U+2028, U+2029;
//   - every byte that is not part of well-formed UTF-8 (overlong forms,
//     surrogates, above U+10FFFF, cut short).
// Everything else is kept: printable ASCII and other UTF-8 ("café").
// Backslashes are not doubled: the rule makes a line safe to show, not
// reversible. Longer than `max` bytes: head and tail kept, the middle
// elided ("[... N bytes ...]"); std::string_view::npos for no cut. The
// result is unchanged by a second pass (when not cut).
std::string Printable(std::string_view s, size_t max = kMaxShownBytes);

// The same rule for a JSON text that nlohmann::json dumped with
// ensure_ascii false and error_handler_t::replace (valid UTF-8, C0 already
// escaped): DEL, C1, bidirectional controls and the separators become
// \u00XX / \uXXXX escapes, so the text parses to the same strings and shows
// nothing a terminal obeys.
std::string PrintableJson(std::string_view json_text);

// Where and why a JSON document did not parse, from the what() of the
// nlohmann::json exception: "line 1, column 8: invalid string: ill-formed
// UTF-8 byte". The exception's prefix and the bytes it last read are left
// out (they would repeat the input).
std::string JsonErrorReason(std::string_view exception_what);

// Fill *err and return false: lets callers write `return Fail(err, ...)`.
bool Fail(Error* err, std::string what, std::string path = {}, int errnum = 0);

// A command that failed: the exit code of every subcommand whose error is
// one line (log::Failed), unless the command gives its own meaning to codes.
constexpr int kExitFailure = 1;

// The exit code of every program when an exception escapes (a bug, or
// memory exhausted): EX_SOFTWARE, apart from the codes commands give on
// purpose (`check`: 1 not ready, 2 bad input).
constexpr int kExitInternalError = 70;

}  // namespace ocid
