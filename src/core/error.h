// One error type for the whole hook: what was being done, on which path, and
// the errno if the kernel said no. Line() renders the one line a user sees.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

struct Error {
  std::string what;  // e.g. "cannot open host source", "invalid inventory"
  std::string path;  // the path, file or key concerned ("" if none)
  int errnum = 0;    // errno, 0 if not a system error

  // One line, whatever the inputs held: the parts through Printable(), cut
  // so that the line is at most kMaxLineBytes (the middle of what is too
  // long elided). A config.json can put anything in a message: a newline in
  // an annotation key, a 10 MB env value.
  std::string Line() const;
  bool empty() const { return what.empty(); }
};

// The one bound on a line that shows bytes someone else chose (a
// container, a bundle, a kubelet), SECURITY.md 2.11: every log line on
// every target (a text or JSON line on stderr and in the log file, a syslog
// datagram, each field of a journald entry), every line the runtime shim
// appends to a runtime's --log, and Error::Line() is at most this many
// bytes as written: escapes and quoting included, the newline not counted.
// The log module's renderers and the shim's apply it (log.h, shim_config.h),
// whatever their callers did; what does not fit is cut in the middle, and
// the cut says so ("[... N bytes ...]").
constexpr size_t kMaxLineBytes = 4096;

// How a renderer writes what Printable returns: as it is, or inside a
// quoted string that doubles '"' and '\\' (a JSON string, a logfmt
// value). Printable's `max` counts the bytes as written.
enum class Quoting { kNone, kDoubled };

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
// reversible.
//
// The result takes at most `max` bytes as written under `quoting`
// (std::string_view::npos: no cut). What is longer keeps its head (three
// quarters) and its tail, the middle replaced by "[... N bytes ...]", N
// the bytes of `s` left out. A cut never splits a character, an escape, or
// a marker of an earlier cut (whose N then counts in the new one), so a
// text already through Printable can be cut again. A `max` too small for
// the marker gives what fits of "[...]". The result is unchanged by a
// second pass with the same `max`.
std::string Printable(std::string_view s, size_t max = kMaxLineBytes,
                      Quoting quoting = Quoting::kNone);

// Texts that share one line (a message and its fields), each through
// Printable and cut so that together they take at most `room` bytes as
// written: the short ones whole, the long ones sharing the rest evenly.
std::vector<std::string> PrintableParts(const std::vector<std::string_view>& parts, size_t room,
                                        Quoting quoting = Quoting::kNone);

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

}  // namespace ocid
