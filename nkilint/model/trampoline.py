"""Recursive questions without Python recursion.

A question over syntax that recurses on sub-expressions (``holds`` on a
3,000-operand sum, a name defined from a name defined from ...) would use one
Python frame per level and raise ``RecursionError`` on valid deep code,
notably on Python 3.10 where the engine cannot raise the recursion limit
safely. Written as a generator that ``yield``s the generator of each
sub-question and receives its answer, it keeps its exact order of evaluation
(short-circuits included) while ``run`` drives the generators from an
explicit stack.
"""

from __future__ import annotations

from typing import Any, Generator

Step = Generator[Any, Any, Any]


def run(question: Step) -> Any:
    """The answer of a generator-based recursive question (see the module
    docstring): each value it yields is a sub-question, sent back answered."""
    stack: list[Step] = [question]
    answer: Any = None
    while True:
        try:
            sub = stack[-1].send(answer)
        except StopIteration as stop:
            stack.pop()
            answer = stop.value
            if not stack:
                return answer
            continue
        stack.append(sub)
        answer = None


__all__ = ["Step", "run"]
