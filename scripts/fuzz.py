"""The fuzzing suite's long run: ``python scripts/fuzz.py --minutes N``.

Runs the properties of tests/fuzz/harness.py (no internal error, no hang,
--fix output that parses, is idempotent and adds no error) on mutated
fixture kernels, grammar-generated modules (hypothesmith) and raw bytes for
as long as asked, and writes each failing input, minimized line by line, to
``--out`` (default fuzz-findings/) with the problem it shows. Prints the
number of inputs tried and of problems found; exit 1 if any.

Each input is checked in a worker process, so an input that crashes the
interpreter (a segfault in a native parser) or hangs where no Python-level
alarm can stop it is recorded as a problem, and the run goes on with a new
worker.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from harness import fixture_kernels, mutate  # noqa: E402
from worker import Worker  # noqa: E402


def minimize(text: str, still_fails, budget_s: float = 120.0) -> str:
    """Drop chunks of lines while the input still fails (delta debugging)."""
    lines = text.split("\n")
    chunk = max(1, len(lines) // 2)
    start = time.monotonic()
    while chunk >= 1 and time.monotonic() - start < budget_s:
        i, changed = 0, False
        while i < len(lines) and time.monotonic() - start < budget_s:
            trial = lines[:i] + lines[i + chunk:]
            if trial and still_fails("\n".join(trial)):
                lines, changed = trial, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return "\n".join(lines)


def _grammar_source(rng: random.Random) -> str | None:
    try:
        import hypothesmith
        from hypothesis.errors import NonInteractiveExampleWarning
    except ImportError:  # pragma: no cover - the test extras are not installed
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        strategy = hypothesmith.from_grammar() if rng.random() < 0.5 else hypothesmith.from_node()
        return strategy.example()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    kernels = fixture_kernels()
    deadline = time.monotonic() + args.minutes * 60
    tried = {"mutation": 0, "grammar": 0, "bytes": 0}
    failures: dict[str, str] = {}
    worker = Worker()
    print(f"fuzzing for {args.minutes:g} min, seed {seed}, {len(kernels)} fixture kernels", flush=True)
    while time.monotonic() < deadline:
        roll = rng.random()
        if roll < 0.15:
            data = rng.randbytes(rng.randrange(0, 300))
            if rng.random() < 0.5:
                data = f"# coding: {rng.choice(['rot13', 'utf-16', 'latin-1', 'zlib', 'idna', 'x'])}\n".encode() + data
            tried["bytes"] += 1
            found = worker.check("bytes", data)
            if found:
                failures.setdefault(found[0].split(":")[0], repr(data))
            continue
        legacy = rng.random() < 0.3
        if roll < 0.3:
            text = _grammar_source(rng)
            if text is None:
                continue
            tried["grammar"] += 1
        else:
            text = mutate(rng.choice(kernels), random.Random(rng.getrandbits(32)), rounds=rng.randint(1, 5))
            tried["mutation"] += 1
        found = worker.check("text", text, legacy)
        if not found:
            continue
        signature = found[0][:120]
        if signature in failures:
            continue
        small = minimize(text, lambda t: bool(worker.check("text", t, legacy)))
        failures[signature] = small
        args.out.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(small.encode()).hexdigest()[:12]
        (args.out / f"{name}.py").write_text(
            f"# nkilint fuzz reproducer (seed {seed}, {'legacy' if legacy else 'current'} NKI)\n"
            f"# problem: {found[0][:300]!r}\n" + small, encoding="utf-8")
        print(f"problem: {found[0][:200]} -> {args.out / (name + '.py')}", flush=True)
    worker.close()
    total = sum(tried.values())
    print(f"inputs tried: {total} ({', '.join(f'{k} {v}' for k, v in tried.items())}); "
          f"distinct problems: {len(failures)}; worker restarts: {worker.restarts}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
