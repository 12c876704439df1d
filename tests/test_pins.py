"""Reading the project's Neuron package pins (nkilint.pins) from every file
format, and choosing the release they name."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write
from nkilint.pins import (
    choose,
    find_pins,
    read_directory,
    read_environment_yml,
    read_pipfile,
    read_pyproject,
    read_requirements,
    read_setup_cfg,
    target_from_pins,
)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _pins(pins):
    return [(p.package, p.specifier, p.line) for p in pins]


# -- requirements and constraints ---------------------------------------------------
def test_requirements_txt(repo):
    path = write(repo / "requirements.txt",
                 "# the SDK 2.24 compiler\n"
                 "numpy>=1.20\n"
                 "neuronx-cc==2.19.8089.0  # pinned\n"
                 "torch-neuronx==2.7.0.2.8.6734 ; python_version >= '3.9'\n"
                 "--extra-index-url https://pip.repos.neuron.amazonaws.com\n"
                 "-e ./local_pkg\n"
                 "jax-neuronx \\\n"
                 "    >=0.6\n")
    assert _pins(read_requirements(path)) == [
        ("neuronx-cc", "==2.19.8089.0", 3), ("torch-neuronx", "==2.7.0.2.8.6734", 4), ("jax-neuronx", ">=0.6", 7)]


def test_requirements_include_and_constraint_files(repo):
    write(repo / "requirements.txt", "-r requirements/base.txt\n-c constraints.txt\nnumpy\n")
    write(repo / "requirements" / "base.txt", "neuronx-cc>=2.19\n")
    write(repo / "constraints.txt", "neuronx-cc<2.21\n-r requirements.txt\n")  # a loop is followed once
    pins = read_requirements(repo / "requirements.txt")
    assert sorted(_pins(pins)) == [("neuronx-cc", "<2.21", 1), ("neuronx-cc", ">=2.19", 1)]


# -- pyproject.toml ---------------------------------------------------------------------
def test_pyproject_pep621_optional_and_dependency_groups(repo):
    path = write(repo / "pyproject.toml", """\
[project]
name = "kernels"
dependencies = [
    "numpy",
    "neuronx-cc==2.24.5133.0",
]

[project.optional-dependencies]
jax = ["jax-neuronx==0.7.0.1.0.8181"]

[dependency-groups]
dev = ["nki>=0.3", {include-group = "jax"}]
""")
    assert _pins(read_pyproject(path)) == [
        ("neuronx-cc", "==2.24.5133.0", 5), ("jax-neuronx", "==0.7.0.1.0.8181", 9), ("nki", ">=0.3", 12)]


def test_pyproject_poetry_tables(repo):
    path = write(repo / "pyproject.toml", """\
[tool.poetry.dependencies]
python = "^3.10"
neuronx-cc = "2.19.8089.0"

[tool.poetry.group.dev.dependencies]
nki = { version = "^0.6" }
torch-neuronx = "~2.9.0"
""")
    assert _pins(read_pyproject(path)) == [
        ("neuronx-cc", "==2.19.8089.0", 3), ("nki", ">=0.6,<0.7", 6), ("torch-neuronx", ">=2.9.0,<2.10", 7)]


def test_pyproject_pdm_and_uv_tables(repo):
    path = write(repo / "pyproject.toml", """\
[tool.pdm.dev-dependencies]
test = ["neuronx-cc==2.20.9961.0"]

[tool.uv]
constraint-dependencies = ["nki<0.5"]
dev-dependencies = ["jax-neuronx"]
""")
    assert _pins(read_pyproject(path)) == [
        ("neuronx-cc", "==2.20.9961.0", 2), ("jax-neuronx", "", 6), ("nki", "<0.5", 5)]


def test_a_broken_pyproject_pins_nothing(repo):
    assert read_pyproject(write(repo / "pyproject.toml", "[project\nneuronx-cc = 1\n")) == []


# -- setup.cfg, environment.yml, Pipfile -----------------------------------------------------
def test_setup_cfg_install_requires_and_extras(repo):
    path = write(repo / "setup.cfg", """\
[metadata]
name = kernels

[options]
install_requires =
    numpy
    neuronx-cc==2.21.18209.0

[options.extras_require]
torch =
    torch-neuronx==2.8.0.2.10.13553
""")
    assert _pins(read_setup_cfg(path)) == [
        ("neuronx-cc", "==2.21.18209.0", 7), ("torch-neuronx", "==2.8.0.2.10.13553", 11)]


def test_environment_yml_conda_and_pip_sections(repo):
    path = write(repo / "environment.yml", """\
name: neuron
channels: [conda-forge]
dependencies:
  - python=3.10
  - conda-forge::neuronx-cc=2.23
  - pip
  - pip:
      - nki==0.2.0
      - "jax-neuronx>=0.7"   # quoted
""")
    assert _pins(read_environment_yml(path)) == [
        ("neuronx-cc", "==2.23.*", 5), ("nki", "==0.2.0", 8), ("jax-neuronx", ">=0.7", 9)]


def test_pipfile(repo):
    path = write(repo / "Pipfile", """\
[[source]]
url = "https://pypi.org/simple"

[packages]
neuronx-cc = "==2.22.12471.0"
numpy = "*"

[dev-packages]
nki = {version = "*"}
""")
    assert _pins(read_pipfile(path)) == [("neuronx-cc", "==2.22.12471.0", 5), ("nki", "", 9)]


# -- the choice ------------------------------------------------------------------------------
def test_the_compiler_of_sdk_2_24_means_2_24(repo):
    write(repo / "requirements.txt", "neuronx-cc==2.19.8089.0\n")
    release, origin = target_from_pins(repo, cwd=repo)
    assert release.minor == "2.24"
    assert (origin.kind, origin.text, origin.package, origin.how) == ("pin", "from requirements.txt:1", "neuronx-cc", "exact")


def test_a_constraint_narrows_a_requirement_of_the_same_package(repo):
    write(repo / "requirements.txt", "neuronx-cc>=2.19\n")
    write(repo / "constraints.txt", "neuronx-cc<2.22\n")
    release, origin = target_from_pins(repo, cwd=repo)
    assert release.minor == "2.26"  # the newest release whose compiler is < 2.22
    assert origin.file == "constraints.txt"  # the bounded pin is cited


def test_a_bounded_pin_beats_an_open_range_and_nki_beats_the_compiler(repo):
    write(repo / "requirements.txt", "nki>=0.3\nneuronx-cc==2.26.6360.0\n")
    assert target_from_pins(repo, cwd=repo)[0].minor == "2.31"
    write(repo / "requirements.txt", "nki==0.4.0\nneuronx-cc==2.26.6360.0\n")
    release, origin = target_from_pins(repo, cwd=repo)
    assert (release.minor, origin.package) == ("2.30", "nki")
    assert origin.others == ("requirements.txt:2 (neuronx-cc==2.26.6360.0) names SDK 2.31",)


def test_open_ranges_of_every_package_mean_the_newest_release(repo):
    # nki-library's pyproject: neuronx-cc, neuronx-cc-stubs and nki, all >=0.0.0a0.
    write(repo / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["neuronx-cc>=0.0.0a0", '
                                   '"neuronx-cc-stubs>=0.0.0a0", "nki>=0.0.0a0"]\n')
    release, origin = target_from_pins(repo, cwd=repo)
    assert (release.minor, origin.package) == ("2.34", "nki")


def test_the_nearest_directory_with_pins_decides_up_to_the_repository_root(repo, tmp_path):
    write(tmp_path / "requirements.txt", "neuronx-cc==2.15.128.0\n")  # above the repository: never read
    write(repo / "requirements.txt", "neuronx-cc==2.19.8089.0\n")
    write(repo / "kernels" / "sub" / "pyproject.toml", '[project]\nname = "k"\ndependencies = ["numpy"]\n')
    write(repo / "kernels" / "requirements-dev.txt", "nki==0.6.0\n")
    assert target_from_pins(repo / "kernels" / "sub", cwd=repo)[0].minor == "2.32"
    assert target_from_pins(repo, cwd=repo)[0].minor == "2.24"
    (repo / "requirements.txt").unlink()
    assert target_from_pins(repo, cwd=repo) is None
    assert find_pins(repo / "kernels") and not read_directory(repo)


def test_pins_that_name_no_release_are_ignored(repo):
    write(repo / "requirements.txt", "neuronx-cc==9.9\nnumpy==1.26\n")
    assert choose(read_directory(repo)) is None
