"""The target found in the project: the Neuron packages it pins.

Reads, never executes: ``requirements*.txt`` and ``constraints*.txt``
(following ``-r`` / ``-c`` includes), ``pyproject.toml`` (PEP 621
dependencies and optional groups, PEP 735 dependency groups, Poetry, PDM
and uv tables), ``setup.cfg`` (``install_requires``, ``extras_require``),
``environment.yml`` (conda and its ``pip:`` list) and ``Pipfile``. Pins of
``nki``, ``neuronx-cc``, ``neuronx-cc-stubs``, ``torch-neuronx`` and
``jax-neuronx`` map to an SDK release (``nkilint.releases.packages``).

The nearest directory at or above the checked paths that pins one of them
decides, up to the repository root. Within it, pins of one package are
intersected (a constraints file narrows a requirement); across packages a
pin with an upper bound beats an open range, then ``nki`` beats
``neuronx-cc`` beats the stubs and the framework packages.
"""

from __future__ import annotations

import configparser
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .safefs import read_text_capped
from .releases import PACKAGES, Release, TargetOrigin
from .releases.packages import Resolution, normalize_name, resolve

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_INCLUDE_DEPTH = 4


@dataclass(frozen=True)
class Pin:
    package: str  # normalized name
    specifier: str  # PEP 440 ("" = any version)
    file: Path
    line: int
    text: str  # as written


def _wanted(name: str) -> str | None:
    norm = normalize_name(name)
    return norm if norm in PACKAGES else None


# -- requirements files -----------------------------------------------------
def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, joined text) with comments and continuations handled."""
    buf, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if not buf:
            start = number
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        if buf.strip():
            yield start, buf.strip()
        buf = ""
    if buf.strip():
        yield start, buf.strip()


def _requirement_pin(text: str, file: Path, line: int) -> Pin | None:
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    name = _wanted(req.name)
    if name is None or req.url:
        return None
    return Pin(name, str(req.specifier), file, line, text)


def read_requirements(path: Path, depth: int = 0, seen: set[Path] | None = None) -> list[Pin]:
    seen = set() if seen is None else seen
    try:
        real = path.resolve()
        if real in seen or depth > MAX_INCLUDE_DEPTH:
            return []
        seen.add(real)
        text = read_text_capped(path, errors="replace")
    except OSError:
        return []
    out: list[Pin] = []
    for number, line in _logical_lines(text):
        include = re.match(r"^(-r|-c|--requirement|--constraint)(\s*=\s*|\s+)(\S+)", line)
        if include:
            out.extend(read_requirements(path.parent / include.group(3), depth + 1, seen))
            continue
        if line.startswith("-"):
            continue  # -e, --index-url, --hash=... and other options
        pin = _requirement_pin(line.split(" --", 1)[0].strip(), path, number)
        if pin is not None:
            out.append(pin)
    return out


# -- TOML files -------------------------------------------------------------
def _line_of(text: str, *needles: str) -> int:
    """The first line containing every needle (1 when none does)."""
    for number, line in enumerate(text.splitlines(), 1):
        low = line.lower()
        if all(n.lower() in low for n in needles if n):
            return number
    return 1


def _pep508_pins(items: Any, file: Path, text: str) -> list[Pin]:
    out: list[Pin] = []
    if not isinstance(items, list):
        return out
    for item in items:
        if not isinstance(item, str):
            continue  # {include-group = "..."}: the group is read on its own
        pin = _requirement_pin(item, file, 1)
        if pin is not None:
            out.append(Pin(pin.package, pin.specifier, file, _line_of(text, item), item))
    return out


def _poetry_constraint(value: Any) -> list[str]:
    """Poetry constraint(s) as PEP 440 specifier strings (``||`` gives several)."""
    if isinstance(value, dict):
        value = value.get("version", "*")
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_poetry_constraint(v))
        return out
    if not isinstance(value, str):
        return []
    return [_poetry_clause(part.strip()) for part in value.split("||")]


def _bump(parts: list[int], index: int) -> str:
    bumped = parts[: index + 1]
    bumped[index] += 1
    return ".".join(str(p) for p in bumped)


def _poetry_clause(clause: str) -> str:
    specs = []
    for token in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", clause.strip()):
        token = token.strip()
        if not token or token == "*":
            continue
        if token[0] in "^~" and not token.startswith("~="):
            version = token[1:].strip()
            parts = [int(p) for p in re.findall(r"\d+", version)] or [0]
            if token[0] == "^":
                index = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
            else:
                index = 0 if len(parts) == 1 else 1
            specs.append(f">={version},<{_bump(parts, index)}")
        elif token[0].isdigit():
            specs.append(f"=={token}")
        else:
            specs.append(token)
    return ",".join(specs)


def _poetry_pins(table: Any, file: Path, text: str) -> list[Pin]:
    out: list[Pin] = []
    if not isinstance(table, dict):
        return out
    for key, value in table.items():
        name = _wanted(str(key))
        if name is None:
            continue
        line = _line_of(text, str(key))
        for spec in _poetry_constraint(value):
            if not _valid_spec(spec):
                continue
            out.append(Pin(name, spec, file, line, f"{key} = {value!r}" if not isinstance(value, str) else f"{key} = \"{value}\""))
    return out


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _load_toml(path: Path) -> tuple[str, dict] | None:
    """The text and table of a TOML file; None when it cannot be read (a
    broken file pins nothing)."""
    try:
        text = read_text_capped(path)
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _valid_spec(spec: str) -> bool:
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        return False
    return True


def read_pyproject(path: Path) -> list[Pin]:
    loaded = _load_toml(path)
    if loaded is None:
        return []
    text, data = loaded
    out = _pep508_pins(_dig(data, "project", "dependencies"), path, text)
    for table in (_dig(data, "project", "optional-dependencies"), data.get("dependency-groups"),
                  _dig(data, "tool", "pdm", "dev-dependencies")):
        if isinstance(table, dict):
            for items in table.values():
                out.extend(_pep508_pins(items, path, text))
    for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
        out.extend(_pep508_pins(_dig(data, "tool", "uv", key), path, text))
    poetry = _dig(data, "tool", "poetry")
    if isinstance(poetry, dict):
        out.extend(_poetry_pins(poetry.get("dependencies"), path, text))
        out.extend(_poetry_pins(poetry.get("dev-dependencies"), path, text))
        for group in (poetry.get("group") or {}).values() if isinstance(poetry.get("group"), dict) else ():
            out.extend(_poetry_pins(_dig(group, "dependencies"), path, text))
    return out


def read_pipfile(path: Path) -> list[Pin]:
    loaded = _load_toml(path)
    if loaded is None:
        return []
    text, data = loaded
    out: list[Pin] = []
    for section, table in data.items():
        if section in ("source", "requires", "scripts", "pipenv") or not isinstance(table, dict):
            continue
        for key, value in table.items():
            name = _wanted(str(key))
            if name is None:
                continue
            spec = value.get("version", "*") if isinstance(value, dict) else value
            if not isinstance(spec, str):
                continue
            spec = "" if spec.strip() == "*" else spec.strip()
            if not _valid_spec(spec):
                continue
            out.append(Pin(name, spec, path, _line_of(text, str(key)), f"{key} = {value!r}"))
    return out


# -- setup.cfg and environment.yml ------------------------------------------
def read_setup_cfg(path: Path) -> list[Pin]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        text = read_text_capped(path)
        parser.read_string(text)
    except (OSError, UnicodeDecodeError, configparser.Error):
        return []
    values: list[str] = []
    if parser.has_option("options", "install_requires"):
        values.append(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        values.extend(parser.get("options.extras_require", k) for k in parser.options("options.extras_require"))
    out: list[Pin] = []
    for value in values:
        for item in value.splitlines():
            item = item.strip()
            if not item or item.startswith("#"):
                continue
            pin = _requirement_pin(item, path, 1)
            if pin is not None:
                out.append(Pin(pin.package, pin.specifier, path, _line_of(text, item), item))
    return out


_CONDA = re.compile(r"^(?:[\w.-]+::)?(?P<name>[A-Za-z0-9_.-]+)\s*(?P<rest>.*)$")


def _conda_spec(rest: str) -> str:
    """A conda version spec as PEP 440: ``=1.2`` and ``1.2`` are prefix
    matches (``==1.2.*``), ``==1.2`` is exact, ``>=1.2,<2`` stays; a build
    string after another ``=`` is dropped."""
    rest = rest.strip()
    if not rest:
        return ""
    if rest.startswith("=="):
        return "==" + rest[2:].split("=", 1)[0].strip()
    if rest.startswith("=") or rest[0].isdigit():
        version = rest.lstrip("=").split("=", 1)[0].split()[0].rstrip("*").rstrip(".")
        return f"=={version}.*"
    return rest


def read_environment_yml(path: Path) -> list[Pin]:
    try:
        text = read_text_capped(path, errors="replace")
    except OSError:
        return []
    out: list[Pin] = []
    for number, raw in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*-\s+(?P<item>[^#]+?)\s*(#.*)?$", raw)
        if not m:
            continue
        item = m.group("item").strip().strip("'\"")
        if item.endswith(":"):
            continue  # "- pip:"
        pin = _requirement_pin(item, path, number)
        if pin is None:
            cm = _CONDA.match(item)
            name = _wanted(cm.group("name")) if cm else None
            if name is None:
                continue
            spec = _conda_spec(cm.group("rest"))
            if not _valid_spec(spec):
                continue
            pin = Pin(name, spec, path, number, item)
        out.append(pin)
    return out


# -- discovery and the choice -------------------------------------------------
def read_directory(directory: Path) -> list[Pin]:
    """Every pin of the identifying packages in the files of one directory."""
    out: list[Pin] = []
    try:
        entries = sorted(p for p in directory.iterdir() if p.is_file())
    except OSError:
        return out
    seen: set[Path] = set()
    for path in entries:
        name = path.name.lower()
        if re.match(r"^(requirements|constraints)[\w.-]*\.(txt|in)$", name):
            out.extend(read_requirements(path, seen=seen))
        elif name == "pyproject.toml":
            out.extend(read_pyproject(path))
        elif name == "setup.cfg":
            out.extend(read_setup_cfg(path))
        elif name in ("environment.yml", "environment.yaml"):
            out.extend(read_environment_yml(path))
        elif name == "pipfile":
            out.extend(read_pipfile(path))
    return out


def _is_project_root(directory: Path) -> bool:
    return any((directory / marker).exists() for marker in (".git", ".hg", ".svn"))


def find_pins(start: Path, stop: Path | None = None) -> list[Pin]:
    """The pins of the nearest directory at or above ``start`` that has any,
    not above a repository root, ``stop`` or the home directory."""
    try:
        here = start.resolve()
    except (OSError, RuntimeError):
        here = Path(os.path.abspath(start))
    if not here.is_dir():
        here = here.parent
    home = Path.home().resolve() if "HOME" in os.environ else None
    for directory in (here, *here.parents):
        if home is not None and directory == home.parent:
            break
        pins = read_directory(directory)
        if pins:
            return pins
        if _is_project_root(directory) or (stop is not None and directory == stop):
            break
    return []


@dataclass(frozen=True)
class Choice:
    release: Release
    pin: Pin
    resolution: Resolution
    others: tuple[tuple[Pin, Release], ...]


def choose(pins: list[Pin]) -> Choice | None:
    """The release the pins name (None when none of them names one)."""
    by_package: dict[str, list[Pin]] = {}
    for pin in pins:
        by_package.setdefault(pin.package, []).append(pin)
    candidates: list[tuple[tuple, Pin, Resolution]] = []
    for package, group in by_package.items():
        combined = _combined(group)
        resolution = resolve(package, combined) if combined is not None else None
        cited = _most_specific(group)
        if resolution is None:
            resolution = resolve(package, cited.specifier)
        if resolution is None:
            continue
        order = (0 if resolution.bounded else 1, PACKAGES.index(package))
        candidates.append((order, cited, resolution))
    if not candidates:
        return None
    candidates.sort(key=lambda c: c[0])
    _, pin, resolution = candidates[0]
    others = tuple((p, r.release) for _, p, r in candidates[1:] if r.bounded and r.release != resolution.release)
    return Choice(resolution.release, pin, resolution, others)


def _combined(group: list[Pin]) -> str | None:
    spec = SpecifierSet("")
    try:
        for pin in group:
            spec &= SpecifierSet(pin.specifier)
    except InvalidSpecifier:
        return None
    return str(spec)


def _most_specific(group: list[Pin]) -> Pin:
    def rank(pin: Pin) -> tuple[int, int]:
        ops = [s.operator for s in SpecifierSet(pin.specifier)] if pin.specifier else []
        exact = any(op in ("==", "===") for op in ops)
        upper = any(op in ("<", "<=", "~=") for op in ops)
        return (0 if exact else 1 if upper else 2, -len(ops))
    return min(group, key=rank)


def display_path(path: Path, cwd: Path | None = None) -> str:
    cwd = cwd or Path.cwd()
    try:
        return path.resolve().relative_to(cwd.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def target_from_pins(start: Path, stop: Path | None = None, cwd: Path | None = None) -> tuple[Release, TargetOrigin] | None:
    """The release and its origin from the project's pins, if it pins one."""
    choice = choose(find_pins(start, stop))
    if choice is None:
        return None
    where = f"{display_path(choice.pin.file, cwd)}:{choice.pin.line}"
    others = tuple(f"{display_path(p.file, cwd)}:{p.line} ({p.text}) names SDK {r.minor}" for p, r in choice.others)
    origin = TargetOrigin(
        "pin", f"from {where}", file=display_path(choice.pin.file, cwd), line=choice.pin.line,
        package=choice.pin.package, requirement=choice.pin.text, how=choice.resolution.how, others=others,
    )
    return choice.release, origin
