"""``nkilint server`` driven over stdio by a real LSP client (pygls'), as an editor would."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

from conftest import CRASHING_RULES, make_pack, write  # noqa: E402
from lsp_driver import Editor, apply_edit, run  # noqa: E402

# Current generation: an SBUF tile over 128 partitions (NKI101, an error, no
# fix) and a deprecated engine alias (NKI604, a warning with a safe fix).
KERNEL = textwrap.dedent("""\
    import nki
    import nki.language as nl
    import nki.isa as nisa


    @nki.jit
    def add_kernel(a):
        out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_copy(dst=t, src=t, engine=nisa.vector_engine)
        nisa.dma_copy(dst=out, src=t)
        return out
""")

# Two SBUF tensors placed over each other (NKI207, with a related location).
OVERLAP = textwrap.dedent("""\
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def add_kernel(x, y):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        a = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
        b = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1024))
        nisa.dma_copy(dst=a, src=x)
        nisa.dma_copy(dst=b, src=y)
        nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
        nisa.dma_copy(dst=out, src=a)
        return out  # noqa: NKI101
""")

# Legacy generation (neuronxcc.nki, nl.load / nl.store), a symbolic tile.
LEGACY = textwrap.dedent("""\
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl


    @nki.jit
    def scale_kernel(a, out):
        rows = min(a.shape[0], 128)
        t = nl.ndarray((nl.par_dim(rows), 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        t[...] = nl.load(a[0:rows, 0:512])
        nl.store(out[0:rows, 0:512], value=t)
""")


def _codes(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def _by_code(diagnostics, code: str) -> types.Diagnostic:
    return next(d for d in diagnostics if d.code == code)


@pytest.fixture
def root(project):
    write(project / "pyproject.toml", "[tool.nkilint]\n")
    return project


@pytest.mark.parametrize("pull", [False, True], ids=["push", "pull"])
def test_diagnostics_after_open_and_after_an_edit(root, pull):
    async def scenario():
        async with Editor(root, pull=pull) as editor:
            uri = editor.open("kernel.py", KERNEL)
            diagnostics = await editor.diagnostics(uri)
            assert _codes(diagnostics) == ["NKI101", "NKI604"]
            size = _by_code(diagnostics, "NKI101")
            assert size.severity == types.DiagnosticSeverity.Error and size.source == "nkilint"
            assert (size.range.start.line, size.range.start.character) == (8, 8)
            assert "256 partitions" in size.message
            assert size.code_description.href.endswith("docs/rules.md#nki101-partition-size-over-limit")
            alias = _by_code(diagnostics, "NKI604")
            # An alias that still works is a note (docs/levels.md): Information.
            assert alias.severity == types.DiagnosticSeverity.Information
            assert list(alias.tags) == [types.DiagnosticTag.Deprecated]
            # Unsaved edit: 256 -> 128 partitions on line 9 (incremental change).
            editor.edit(uri, 8, 20, 8, 23, "128")
            assert _codes(await editor.diagnostics(uri)) == ["NKI604"]
            # A new version with the same text (an undo and redo) is answered too.
            editor.replace(uri, KERNEL.replace("t = nl.ndarray((256", "t = nl.ndarray((128"))
            assert _codes(await editor.diagnostics(uri)) == ["NKI604"]
            assert not (root / "kernel.py").exists()  # nothing was read from or written to disk

    run(scenario())


def test_related_locations_and_unused_noqa_tag(root):
    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("overlap.py", OVERLAP)
            diagnostics = await editor.diagnostics(uri)
            overlap = _by_code(diagnostics, "NKI207")
            assert overlap.range.start.line == 8
            related = overlap.related_information
            assert related and related[0].location.uri == uri and related[0].location.range.start.line == 7
            assert "placed here" in related[0].message
            stale = _by_code(diagnostics, "NKI004")
            assert list(stale.tags) == [types.DiagnosticTag.Unnecessary] and stale.range.start.line == 13

    run(scenario())


def test_each_code_action_applied_and_rechecked(root):
    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("kernel.py", KERNEL)
            await editor.diagnostics(uri)
            actions = await editor.code_actions(uri, 10, 45)
            titles = [a.title for a in actions]
            assert titles == ["NKI604: replace with nisa.engine.vector", "Disable NKI604 for this line",
                              "nkilint: fix all safe fixes in this file"]
            fix, disable, fix_all = actions
            assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
            assert fix.diagnostics[0].code == "NKI604"
            assert fix_all.kind == "source.fixAll.nkilint"

            fixed = apply_edit(KERNEL, fix.edit, uri)
            assert "engine=nisa.engine.vector)" in fixed and fixed.count("\n") == KERNEL.count("\n")
            editor.replace(uri, fixed)
            assert _codes(await editor.diagnostics(uri)) == ["NKI101"]

            editor.replace(uri, KERNEL)
            await editor.diagnostics(uri)
            silenced = apply_edit(KERNEL, disable.edit, uri)
            assert silenced.splitlines()[10].endswith("engine=nisa.vector_engine)  # noqa: NKI604")
            editor.replace(uri, silenced)
            assert _codes(await editor.diagnostics(uri)) == ["NKI101"]

            # On the line that already has a noqa, the other rule is added to it.
            more = (await editor.code_actions(uri, 8, 10))
            disable_size = next(a for a in more if a.title == "Disable NKI101 for this line")
            both = apply_edit(silenced, disable_size.edit, uri)
            assert both.splitlines()[8].endswith("buffer=nl.sbuf)  # noqa: NKI101")
            editor.replace(uri, both)
            assert _codes(await editor.diagnostics(uri)) == []

            editor.replace(uri, KERNEL)
            await editor.diagnostics(uri)
            only = await editor.code_actions(uri, 0, 0, only=["source.fixAll"])
            assert [a.kind for a in only] == ["source.fixAll.nkilint"]
            editor.replace(uri, apply_edit(KERNEL, only[0].edit, uri))
            assert _codes(await editor.diagnostics(uri)) == ["NKI101"]

    run(scenario())


def test_unsafe_fix_is_marked_and_never_preferred(root):
    text = textwrap.dedent("""\
        import nki.language as nl

        def budget():
            return nl.tile_size.total_available_sbuf_size
    """)

    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("budget.py", text)
            assert "NKI604" in _codes(await editor.diagnostics(uri))
            actions = await editor.code_actions(uri, 3, 30)
            unsafe = next(a for a in actions if a.title.startswith("NKI604:"))
            assert unsafe.title.endswith("(unsafe fix)") and not unsafe.is_preferred
            assert "sbuf_fmax_bytes" in apply_edit(text, unsafe.edit, uri)
            # "Fix all" applies safe fixes only: none here.
            assert not [a for a in actions if a.kind == "source.fixAll.nkilint"]

    run(scenario())


def test_hover_on_a_tensor_and_on_a_finding(root):
    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("kernel.py", KERNEL)
            await editor.diagnostics(uri)
            tensor = await editor.hover(uri, 9, 22)  # `t` in dma_copy(dst=t, ...)
            assert "**t**: SBUF tensor in kernel `add_kernel`" in tensor
            for fact in ("- shape: (256, 512)", "- dtype: float32", "- buffer: sbuf",
                         "- partition size: 256 (axis 0)", "- bytes per partition: 2048 B", "- allocated: line 9"):
                assert fact in tensor, (fact, tensor)
            out = await editor.hover(uri, 11, 22)  # `out`: an HBM tensor, no SBUF bytes
            assert "**out**: shared_hbm tensor" in out and "bytes per partition" not in out
            finding = await editor.hover(uri, 10, 45)
            assert finding.startswith("**NKI604** `renamed-api` (note)")
            assert "nisa.engine.vector" in finding and "docs/rules.md#nki604-renamed-api" in finding
            assert await editor.hover(uri, 0, 0) is None  # `import`: nothing to say

    run(scenario())


def test_hover_symbolic_shape_in_a_legacy_kernel_and_on_a_noqa_code(root):
    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("legacy.py", LEGACY)
            await editor.diagnostics(uri)
            tile = await editor.hover(uri, 9, 40)  # `t` in nl.store(..., value=t)
            assert "**t**: SBUF tensor in kernel `scale_kernel`" in tile
            assert "- dtype: bfloat16" in tile and "- allocated: line 8" in tile
            assert "(in [" in tile and "<= 128" in tile or "(in [" in tile, tile
            assert "- bytes per partition: 1024 B" in tile
            noqa = textwrap.dedent("""\
                import nki.language as nl
                x = 1  # noqa: NKI101
            """)
            other = editor.open("noqa.py", noqa)
            await editor.diagnostics(other)
            text = await editor.hover(other, 1, 18)
            assert text.startswith("**NKI004** `unused-noqa` (warning)")  # the finding on the comment
            assert "**NKI101** `partition-size-over-limit`: " in text  # and the rule the code names

    run(scenario())


def test_configuration_reload_and_sibling_module_change(root):
    write(root / "sizes.py", "TILE = 256\n")
    kernel = KERNEL.replace("(256, 512), dtype=nl.float32, buffer=nl.sbuf", "(TILE, 512), dtype=nl.float32, buffer=nl.sbuf")
    kernel = kernel.replace("import nki.isa as nisa\n", "import nki.isa as nisa\nfrom sizes import TILE\n")

    async def scenario():
        async with Editor(root) as editor:
            uri = editor.open("kernel.py", kernel)
            assert _codes(await editor.diagnostics(uri)) == ["NKI101", "NKI604"]
            assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in editor.registrations)
            before = len(editor.published[uri])
            write(root / "pyproject.toml", '[tool.nkilint]\nignore = ["NKI604"]\n')
            editor.files_changed(root / "pyproject.toml")
            assert _codes(await _next_push(editor, uri, before)) == ["NKI101"]
            before = len(editor.published[uri])
            write(root / "sizes.py", "TILE = 64\n")
            editor.files_changed(root / "sizes.py")
            assert _codes(await _next_push(editor, uri, before)) == []
            # A broken configuration: a message, and the defaults meanwhile.
            before = len(editor.published[uri])
            write(root / "pyproject.toml", '[tool.nkilint]\nselect = ["NOPE9"]\n')
            editor.files_changed(root / "pyproject.toml")
            assert _codes(await _next_push(editor, uri, before)) == ["NKI604"]
            assert any("NOPE9" in m for m in editor.messages)

    run(scenario())


async def _next_push(editor: Editor, uri: str, seen: int):
    import asyncio

    for _ in range(1200):
        if len(editor.published.get(uri, [])) > seen:
            return editor.published[uri][-1].diagnostics
        await asyncio.sleep(0.1)
    raise TimeoutError("no new diagnostics")


def test_a_crashing_rule_is_one_diagnostic_and_the_server_keeps_running(root, pack_env):
    site, env = pack_env
    make_pack(site, "acme-crash", "acme_crash", CRASHING_RULES, "acme_crash:RULES")
    write(site / "acme_crash.py", (site / "acme_crash.py").read_text() + "\nRULES = (Boom,)\n")

    async def scenario():
        async with Editor(root, env=env) as editor:
            uri = editor.open("kernel.py", KERNEL)
            diagnostics = await editor.diagnostics(uri)
            crash = [d for d in diagnostics if d.code == "NKI003"]
            assert len(crash) == 1 and "ACME666" in crash[0].message and "ZeroDivisionError" in crash[0].message
            assert crash[0].severity == types.DiagnosticSeverity.Error
            assert {"NKI101", "NKI604"} <= set(_codes(diagnostics))  # the other rules still ran
            editor.edit(uri, 8, 20, 8, 23, "128")
            assert _codes(await editor.diagnostics(uri)) == ["NKI003", "NKI604"]
            assert "**t**" in await editor.hover(uri, 9, 22)

    run(scenario())


def test_overrides_give_a_document_its_own_release(project):
    write(project / "pyproject.toml", '[tool.nkilint]\nsdk = "2.34"\n\n'
          '[[tool.nkilint.overrides]]\nfiles = ["legacy/"]\nsdk = "2.26"\n')
    legacy_import = "import neuronxcc.nki.language as nl\n"

    async def scenario():
        async with Editor(project) as editor:
            current = editor.open("k.py", legacy_import)
            assert _codes(await editor.diagnostics(current)) == ["NKI601"]
            legacy = editor.open("legacy/k.py", legacy_import)
            assert _codes(await editor.diagnostics(legacy)) == []

    run(scenario())
