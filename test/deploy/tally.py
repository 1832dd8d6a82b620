"""The deploy checks' one way of counting: ok() records a check, finish()
prints the failures and the counts and exits 1 if any failed."""
import sys

failures = []
passes = 0


def ok(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
    return cond


def finish():
    for f in failures:
        print("FAIL - " + f)
    print("%d passed, %d failed" % (passes, len(failures)))
    sys.exit(1 if failures else 0)
