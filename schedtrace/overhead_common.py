"""overhead_common.py -- what the overhead scripts of this folder share
(measure-overhead-steady.py, measure-overhead-progress.py): the one-line
error, the wait for the last trace's release, and the summary of a series
of ratios.  docs/schedtrace.md, "Overhead"."""
import os
import statistics
import subprocess
import sys
import time


def die(msg):
    """One line on stderr, named after the script that runs, and exit 2."""
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(2)


def wait_release():
    """Waits while a gcscale-release process is left: the last trace's events
    are still being released, which a trace started now would wait for (and a
    user's single trace does not)."""
    while subprocess.run(["pgrep", "-x", "gcscale-release"], stdout=subprocess.DEVNULL).returncode == 0:
        time.sleep(0.05)


def summary(what, xs):
    """'WHAT: mean M (SE S, +P %), median D' of ratios xs (at least two)."""
    mean, se = statistics.mean(xs), statistics.stdev(xs) / len(xs) ** 0.5
    return f"{what}: mean {mean:.4f} (SE {se:.4f}, {100 * (mean - 1):+.2f} %), median {statistics.median(xs):.4f}"
