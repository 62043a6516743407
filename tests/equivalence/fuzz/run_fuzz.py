"""Run the fuzz suites F1-F9 and print their figures: ``python3 dev.py fuzz`` (large counts) or
``python3 dev.py fuzz --quick`` (the fixed-seed samples CI runs). ``--suite F1`` runs one suite."""

from __future__ import annotations

import argparse
import sys
import time

from tests.equivalence.fuzz import suite_f1_differential as f1
from tests.equivalence.fuzz import suite_f2_passes as f2
from tests.equivalence.fuzz import suite_f3_planted as f3
from tests.equivalence.fuzz import suite_f4_metamorphic as f4
from tests.equivalence.fuzz import suite_f5_guards as f5
from tests.equivalence.fuzz import suite_f6_side_effects as f6
from tests.equivalence.fuzz import suite_f7_malformed as f7
from tests.equivalence.fuzz import suite_f8_injection as f8
from tests.equivalence.fuzz import suite_f9_forced_kernels as f9

# suite -> (run, large count, CI sample count). The count is programs, except: F3 a budget of programs per
# planted bug, F7 mutated texts and mutated saved files each, F8 rounds over every payload. F9 compiles C for
# every graph (about a second per program).
SUITES = {
    "F1": (f1.run, 10_000, 40),
    "F2": (f2.run, 2_000, 60),
    "F3": (f3.run, 200, 60),
    "F4": (f4.run, 2_000, 15),
    "F5": (f5.run, 500, 5),
    "F6": (f6.run, 2_000, 30),
    "F7": (f7.run, 100_000, 600),
    "F8": (f8.run, 3, 1),
    "F9": (f9.run, 3_000, 16),
}
SEED = 20260603


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the CI samples instead of the large counts")
    parser.add_argument("--suite", action="append", choices=sorted(SUITES), help="run only these suites")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--count", type=int, help="programs (or the suite's unit) instead of the large count")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for F1")
    args = parser.parse_args(argv)
    start, failed = time.perf_counter(), []
    for name in args.suite or SUITES:
        run, large, quick = SUITES[name]
        count = args.count or (quick if args.quick else large)
        figure = run(count, args.seed, jobs=args.jobs) if name in ("F1", "F9") else run(count, args.seed)
        print(figure.text(), flush=True)
        print(flush=True)
        if not figure.ok:
            failed.append(name)
    print(f"{'all suites pass' if not failed else 'FAILED: ' + ', '.join(failed)} "
          f"({time.perf_counter() - start:.0f} s, seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
