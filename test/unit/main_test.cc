// The doctest main of unit_tests and plugin_unit_tests. Each module's
// tests are in <module>_test.cc. The hostile-input set (malformed,
// truncated, huge and non-UTF-8 input: hostile_input.h lists its suites)
// runs on its own as
//   build/test/unit_tests -ts='hostile*'
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
