"""NKI732 split-collective-pairing: a *_trigger that is not paired with a prepare of the same collective, a second
prepare before the trigger, a second trigger, or a prepare that is never triggered (NKI 0.7+)."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.graph import PreparedCollective, SplitCollectiveIssue
from nkilint.releases import ALLOWED, FACTS
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter, error_or_warning

_DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/"


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _message(issue: SplitCollectiveIssue) -> tuple[str, str]:
    """(message, hint) for one pairing the docs rule out."""
    name = _short(issue.api)
    prepare = name[: -len("_trigger")] + "_prepare"
    if issue.kind == "intervening-prepare":
        return (f"`{name}` is issued while the `{_short(issue.detail)}` above still waits for its trigger: prepares "
                "share a single slot, so an intervening prepare of any kind is rejected",
                f"call {_short(issue.detail)[: -len('_prepare')]}_trigger(...) on the first instruction before "
                "preparing the next collective")
    if issue.kind == "not-a-prepare":
        return (f"`{name}` takes the instruction returned by its paired `{prepare}`, not {issue.detail}: the "
                "trigger reuses the buffers, replica group and every other argument of that prepare",
                f"pass the value {prepare}(...) returned")
    if issue.kind == "other-collective":
        return (f"`{name}` is given the instruction of `{_short(issue.detail)}`, a different collective: a "
                f"trigger completes only a prepare of its own collective (`{prepare}`)",
                f"call {_short(issue.detail)[: -len('_prepare')]}_trigger on it, or prepare with {prepare}")
    if issue.kind == "loop-prepare":
        return (f"this `{prepare}` runs on every iteration of its loop, but its `{name}` is after the loop: from "
                "the second iteration on, a prepare is issued while the previous one waits for its trigger, which "
                "is rejected (prepares share a single slot)",
                f"call {name} inside the loop, after each prepare, or move the prepare out of the loop")
    if issue.kind == "loop-trigger":
        return (f"this `{name}` runs on every iteration of its loop, but its `{prepare}` is before the loop: from "
                "the second iteration on it triggers an instruction that was already triggered (each prepare is "
                "followed by exactly one trigger)",
                f"prepare inside the loop, before each trigger, or move the trigger out of the loop")
    return (f"this `{name}` triggers an instruction that was already triggered: each prepare is followed by "
            "exactly one trigger",
            "prepare again for a second run of the collective, or drop this trigger")


def _result_unused(tree: ast.Module, call: ast.AST) -> bool:
    """Whether the value of the prepare call ``call`` is dropped: a bare
    expression statement, or bound to a name that nothing in the enclosing
    function (or module) reads. A result that is read somewhere may reach a
    trigger the interpreter did not follow."""
    scope: ast.AST = tree
    for node in astwalk.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(n is call for n in astwalk.walk(node)):
            scope = node  # ast.walk is breadth first: the last match is the innermost function
    for node in astwalk.walk(scope):
        if isinstance(node, ast.Expr) and node.value is call:
            return True
        if isinstance(node, ast.Assign) and node.value is call:
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                return False
            name = node.targets[0].id
            return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                           for n in astwalk.walk(tree))
    return False


class SplitCollectivePairing(Rule):
    id = "NKI732"
    name = "split-collective-pairing"
    family = "semantics"
    level = Level.ERROR
    summary = "A split collective's *_trigger without its own *_prepare, a prepare before the previous one was triggered, or a prepare never triggered"
    explanation = f"""
NKI 0.7 (Neuron SDK 2.33) splits `nki.collectives.all_to_all_v` and
`all_gather_v` into `*_prepare(...)`, which sets up the collective's
metadata and returns an `NkiInstruction`, and `*_trigger(prepare_instr)`,
which runs the collective with the buffers and arguments of that prepare.
The API pages say: "Each prepare must be followed by exactly one
`..._trigger()`, with no other prepare in between. Prepares share a single
slot, so an intervening prepare of any kind is rejected", and the
trigger's `prepare_instr` is "the instruction returned by the paired
`..._prepare()`". The rule follows the kernel as the interpreter runs it
and reports:

* **a prepare issued while another prepare waits for its trigger** (an
  error: rejected);
* **a trigger given something other than the instruction of a prepare of
  the same collective** (a tensor, a constant, the instruction of
  `all_gather_v_prepare` passed to `all_to_all_v_trigger`) — an error;
* **a second trigger of the same instruction** — an error ("exactly one");
* **a prepare inside a loop with its trigger after the loop**, or **a
  trigger inside a loop of an instruction prepared before it**: from the
  second iteration on the loop prepares twice, or triggers twice (a
  warning when the trip count is not known);
* **a prepare whose instruction is never triggered** — a warning: the
  collective never runs, so its destinations are never written, and the
  other ranks of the replica group wait for a peer that never joins. It is
  reported only when the result is dropped or bound to a name nothing
  reads, so a helper the analysis did not follow cannot be the trigger.

A call inside a branch the analysis could not decide is a warning (both
branches of an `if`/`else` may prepare; only one runs).

**Why on Trainium:** the prepare programs the collective engine's
metadata slot ahead of the data, so the setup overlaps with compute; there
is one slot, and the trigger is what starts the transfer on every rank.

**Fix:** pair each prepare with exactly one trigger of the same
collective, in order: `p = ncc.all_to_all_v_prepare(...); ...;
ncc.all_to_all_v_trigger(p)`.

**Releases:** the split collectives exist from NKI 0.7 (SDK 2.33); the rule
has nothing to report on older code.

Sources: {_DOCS}nki.collectives.all_to_all_v_prepare.html,
{_DOCS}nki.collectives.all_to_all_v_trigger.html,
{_DOCS}nki.collectives.all_gather_v_prepare.html.
"""
    references = (
        f"{_DOCS}nki.collectives.all_to_all_v_prepare.html",
        f"{_DOCS}nki.collectives.all_to_all_v_trigger.html",
        f"{_DOCS}nki.collectives.all_gather_v_prepare.html",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.collectives as ncc
            import nki.language as nl

            @nki.jit
            def exchange(tokens, counts, meta, group):
                out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                gathered = nl.ndarray((512, 8), dtype=nl.int32, buffer=nl.shared_hbm)
                a2a = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
                ag = ncc.all_gather_v_prepare([counts], [gathered], group, meta)
                ncc.all_to_all_v_trigger(a2a)
                ncc.all_gather_v_trigger(ag)
                return out
            """,
            lines=[10],
            title="a second prepare before the first is triggered",
        ),
        invalid(
            """
            import nki
            import nki.collectives as ncc
            import nki.language as nl

            @nki.jit
            def exchange(tokens, counts, meta, group):
                out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                gathered = nl.ndarray((512, 8), dtype=nl.int32, buffer=nl.shared_hbm)
                ag = ncc.all_gather_v_prepare([counts], [gathered], group, meta)
                ncc.all_to_all_v_trigger(ag)
                ncc.all_to_all_v_prepare([tokens], [out], group, meta)
                return out
            """,
            lines=[10, 11],
            title="a trigger of another collective's prepare; a prepare never triggered (a warning)",
        ),
        invalid(
            """
            import nki
            import nki.collectives as ncc
            import nki.language as nl

            @nki.jit
            def exchange(tokens, meta, group):
                out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                ncc.all_to_all_v_prepare([tokens], [out], group, meta)
                return out
            """,
            lines=[8],
            level=Level.WARNING,
            title="the prepared collective never runs",
        ),
        valid(
            """
            import nki
            import nki.collectives as ncc
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def exchange(tokens, counts, meta, group):
                out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                gathered = nl.ndarray((512, 8), dtype=nl.int32, buffer=nl.shared_hbm)
                a2a = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
                stage = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=stage, value=0.0)
                ncc.all_to_all_v_trigger(a2a)
                ag = ncc.all_gather_v_prepare([counts], [gathered], group, meta)
                ncc.all_gather_v_trigger(prepare_instr=ag)
                return out
            """,
            title="each prepare followed by its own trigger, compute in between",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        # The APIs exist from SDK 2.33 (release fact "prepare-trigger-collectives"); before,
        # other rules report the names themselves.
        if FACTS.status("prepare-trigger-collectives", ctx.release).status is not ALLOWED:
            return
        reporter = Reporter(ctx)
        seen: set[tuple[int, str]] = set()
        for kernel, graph in ctx.model.graphs():
            for issue in graph.split_collective_issues:
                key = (id(issue.site.node), issue.kind)
                if key in seen:
                    continue
                seen.add(key)
                message, hint = _message(issue)
                if not issue.always:
                    message += " (on the paths that reach these calls)"
                reporter.at_site(issue.site, message, hint=hint, level=error_or_warning(issue.always),
                                 kernel=kernel.base_name)
            for record in graph.prepared_collectives:
                self._untriggered(ctx, reporter, record, seen, kernel.base_name)

    @staticmethod
    def _untriggered(ctx: RuleContext, reporter: Reporter, record: PreparedCollective, seen: set, kernel: str) -> None:
        key = (id(record.site.node), "untriggered")
        if record.triggers or key in seen or not ctx.model.in_this_file(record.site):
            return
        if not _result_unused(ctx.tree, record.site.node):
            return
        seen.add(key)
        name = _short(record.api)
        trigger = name[: -len("_prepare")] + "_trigger"
        reporter.at_site(record.site, f"the instruction of this `{name}` is never passed to `{trigger}`: the "
                         "collective never runs, so its destinations are never written and the other ranks of the "
                         "replica group wait for this one",
                         hint=f"keep the instruction (p = {name}(...)) and call {trigger}(p) once the sources are "
                              "filled", level=Level.WARNING, kernel=kernel)
