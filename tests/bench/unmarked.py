"""Name the tests that `pytest -m "not slow"` runs but that take over a second: candidates for
SLOW_TESTS in tests/marks.py (not a test: timings depend on the machine and its load).

    python -m tests.bench.unmarked                 # runs pytest -m "not slow" (minutes)
    python -m tests.bench.unmarked report.xml      # reads a JUnit report of such a run
    python -m tests.bench.unmarked --over 2 ...    # another threshold, in seconds

Durations are setup + call + teardown. Judge them on a quiet machine: under load everything is
slower, and a test just over the line may be the machine's doing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def durations(report: Path) -> list[tuple[float, str]]:
    found = []
    for case in ET.parse(report).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        found.append((float(case.get("time", 0)), f"{path}.py::{case.get('name')}"))
    return sorted(found, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.unmarked", description=__doc__.split("\n\n")[0])
    parser.add_argument("report", nargs="?", type=Path, help="a JUnit XML report of a `-m \"not slow\"` run")
    parser.add_argument("--over", type=float, default=1.0, help="seconds (default 1)")
    options = parser.parse_args()
    report = options.report
    if report is None:
        report = Path(tempfile.mkdtemp()) / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-m", "not slow", "-q", f"--junitxml={report}",
                        "-o", "junit_duration_report=total"], cwd=ROOT, check=False)
    cases = durations(report)
    slow = [(t, name) for t, name in cases if t > options.over]
    for seconds, name in slow:
        print(f"{seconds:6.2f}s  {name}")
    total = sum(t for t, _ in cases)
    print(f"{len(slow)} of {len(cases)} tests over {options.over:g} s: {sum(t for t, _ in slow):.0f} s of {total:.0f} s")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
