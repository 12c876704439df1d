"""New text for one project file (an editor buffer, a fix round) drops the
evaluated values of that module and of the modules that import it, directly
or through others, and keeps every other module's values (issue 17: a
re-lint re-analyses only the edited file and the files that read it)."""

from __future__ import annotations

from pathlib import Path

from conftest import write
from nkilint.config import Settings
from nkilint.engine import Checker, RunOptions
from nkilint.model.project import Project
from nkilint.plugins import installed_rules
from nkilint.source import SourceFile
from nkilint.versions import LATEST

KERNEL = """import nki
import nki.isa as nisa
import nki.language as nl
from pkg.helpers import rows
from pkg.other import COLS


@nki.jit
def kern(a):
    out = nl.ndarray((rows(), COLS), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((rows(), COLS), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def _tree(root: Path) -> None:
    (root / ".git").mkdir()
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "consts.py", "ROWS = 128\n")
    # rows() takes no arguments: a pure helper the interpreter memoises.
    write(root / "pkg" / "helpers.py", "from pkg.consts import ROWS\n\n\ndef rows():\n    return ROWS\n")
    write(root / "pkg" / "other.py", "COLS = 512\n")
    write(root / "k.py", KERNEL)


def _checker(root: Path) -> Checker:
    ruleset = installed_rules()
    settings = Settings(root=root, target_name="trn2", nki_version=LATEST, nki_version_explicit=False)
    return Checker(settings, ruleset, frozenset(ruleset.rules), RunOptions())


def _ids(checker: Checker, root: Path, name: str, text: str | None = None) -> list[str]:
    path = root / name
    text = path.read_text() if text is None else text
    return sorted(f.rule_id for f in checker.check_text(text, name, str(path)).findings)


def _module(project: Project, path: Path):
    return project._modules.get(path.resolve())


def test_edit_of_an_imported_module_reaches_its_importers_through_a_helper(tmp_path: Path) -> None:
    _tree(tmp_path)
    checker = _checker(tmp_path)
    assert "NKI101" not in _ids(checker, tmp_path, "k.py")
    project = checker.project
    helpers, other = _module(project, tmp_path / "pkg" / "helpers.py"), _module(project, tmp_path / "pkg" / "other.py")
    other_env = other.env
    assert helpers.env is not None and other_env is not None
    assert any(key[0] == str(helpers.path) for key in project.pure_memo)  # rows() was memoised
    # consts.py gets new text (an unsaved buffer, checked as the editor sends it).
    assert _ids(checker, tmp_path, "pkg/consts.py", "ROWS = 256\n") == []
    assert helpers.env is None and helpers.env_state == "new"  # imports consts: dropped
    assert not any(key[0] == str(helpers.path) for key in project.pure_memo)
    assert _module(project, tmp_path / "pkg" / "other.py") is other and other.env is other_env  # unrelated: kept
    # The kernel, re-checked, sees the new value through helpers.rows().
    assert "NKI101" in _ids(checker, tmp_path, "k.py")
    assert other.env is other_env
    # And back.
    _ids(checker, tmp_path, "pkg/consts.py", "ROWS = 128\n")
    assert "NKI101" not in _ids(checker, tmp_path, "k.py")


def test_importers_are_transitive_and_leave_unrelated_modules_out(tmp_path: Path) -> None:
    _tree(tmp_path)
    checker = _checker(tmp_path)
    _ids(checker, tmp_path, "k.py")
    project = checker.project
    consts = (tmp_path / "pkg" / "consts.py").resolve()
    readers = {p.name for p in project.importers_of(consts)}
    assert readers == {"helpers.py", "k.py"}
    assert {p.name for p in project.importers_of((tmp_path / "pkg" / "other.py").resolve())} == {"k.py"}
    assert project.importers_of((tmp_path / "k.py").resolve()) == set()


def test_same_text_again_drops_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    checker = _checker(tmp_path)
    _ids(checker, tmp_path, "k.py")
    project = checker.project
    helpers = _module(project, tmp_path / "pkg" / "helpers.py")
    env = helpers.env
    before = project.invalidations
    _ids(checker, tmp_path, "k.py")  # a re-lint without an edit
    _ids(checker, tmp_path, "pkg/consts.py")  # its disk text, as parsed for the import
    assert project.invalidations == before
    assert helpers.env is env


USER = """import nki
import nki.isa as nisa
import nki.language as nl
import pkg


@nki.jit
def kern(a):
    t = nl.ndarray((pkg.consts.ROWS, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    return t
"""


def test_a_package_bound_by_import_reads_its_submodules_by_attribute(tmp_path: Path) -> None:
    # ``import pkg`` then ``pkg.consts.ROWS``: no import statement names
    # pkg/consts.py, yet the kernel's value comes from it.
    _tree(tmp_path)
    write(tmp_path / "user.py", USER)
    write(tmp_path / "plain.py", "from pkg.other import COLS\n\n\ndef f():\n    return COLS\n")
    checker = _checker(tmp_path)
    assert "NKI101" not in _ids(checker, tmp_path, "user.py")
    project = checker.project
    project.module_at(tmp_path / "plain.py").env = {}  # as if evaluated: it is scanned, and must not match
    consts = (tmp_path / "pkg" / "consts.py").resolve()
    readers = {p.name for p in project.importers_of(consts)}
    assert "user.py" in readers and "plain.py" not in readers
    _ids(checker, tmp_path, "pkg/consts.py", "ROWS = 256\n")
    assert "NKI101" in _ids(checker, tmp_path, "user.py")


def test_modules_never_evaluated_are_not_scanned(tmp_path: Path) -> None:
    _tree(tmp_path)
    project = Project(tmp_path)
    project.module_at(tmp_path / "pkg" / "helpers.py")  # parsed (an import lookup), never evaluated
    assert project.importers_of((tmp_path / "pkg" / "consts.py").resolve()) == set()


def test_buffer_differing_from_the_parsed_disk_text_invalidates_importers(tmp_path: Path) -> None:
    _tree(tmp_path)
    checker = _checker(tmp_path)
    _ids(checker, tmp_path, "k.py")  # helpers and consts parsed from disk
    project = checker.project
    helpers = _module(project, tmp_path / "pkg" / "helpers.py")
    consts = tmp_path / "pkg" / "consts.py"
    project.register_source(consts, SourceFile(str(consts), "ROWS = 256\n", "pkg/consts.py"))
    assert helpers.env is None
    assert "NKI101" in _ids(checker, tmp_path, "k.py")
