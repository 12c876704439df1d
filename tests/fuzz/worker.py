"""A worker process for the long fuzz run (scripts/fuzz.py).

Each input is checked in a child process, so an input that crashes the
interpreter (a segfault in a native parser) or hangs where no Python-level
alarm can stop it is a recorded problem, and the run goes on with a new
worker. A module of its own so that the spawned child can import it.
"""

from __future__ import annotations

import multiprocessing
import time

from harness import TIME_BOUND_S, decoding_problems, problems


def _serve(conn) -> None:  # pragma: no cover - runs in the worker process
    while True:
        try:
            kind, payload, legacy = conn.recv()
        except EOFError:
            return
        if kind == "selftest-die":  # the worker's own tests: a native crash
            import os
            import signal

            os.kill(os.getpid(), signal.SIGSEGV)
        if kind == "selftest-hang":  # ... and a hang no alarm ends
            time.sleep(3600)
        conn.send(decoding_problems(payload) if kind == "bytes" else problems(payload, legacy=legacy))


class Worker:
    """A child process that runs the properties on one input at a time; a
    death or a silence past the bound is itself the problem found."""

    def __init__(self, bound_s: float = TIME_BOUND_S * 3) -> None:
        self.bound_s = bound_s
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")  # nothing inherited from a half-broken parent
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def _restart(self) -> None:
        self.proc.kill()
        self.proc.join(5)
        self.restarts += 1
        self._start()

    def check(self, kind: str, payload, legacy: bool = False) -> list[str]:
        try:
            self.conn.send((kind, payload, legacy))
            if self.conn.poll(self.bound_s):
                return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            pass
        self.proc.join(0.5)
        code = self.proc.exitcode
        self._restart()
        if code is None:
            return [f"hang: no answer from the worker in {self.bound_s:g} s (killed)"]
        return [f"process died: exit code {code}" + (f" (signal {-code})" if code < 0 else "")]

    def close(self) -> None:
        self.proc.kill()
        self.proc.join(5)
