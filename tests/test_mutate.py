"""The mutation-testing command (`tools/mutate.py`) on a small planted project.

A weak suite lets a boundary mutant survive, a strong one kills it, an infinite loop is
killed by the timeout, and the project's own files are never left mutated.
"""

from __future__ import annotations

import ast
import json
import random
import sys
from pathlib import Path

import pytest

from tools import mutants, mutate

LIBRARY = '''"""A planted module."""


def is_adult(age: int) -> bool:
    return age >= 18


def spin(n: int) -> int:
    i = 0
    while i < n:
        i += 1
    return i
'''

WEAK = """from calc.lib import is_adult, spin


def test_is_adult() -> None:
    assert is_adult(30)
    assert not is_adult(5)
    assert spin(3) == 3
"""

STRONG = (
    WEAK
    + """

def test_the_boundary() -> None:
    assert is_adult(18)
    assert not is_adult(17)
"""
)

EVERY_OPERATOR = '''"""Docstring: never mutated."""
LIMIT: int = 3


def f(xs: list[int], flag: bool) -> int:
    """Neither is this."""
    total = 0
    for x in xs:
        if x > LIMIT and not flag:
            total += x * 2
        elif x in (1, 2) or flag is True:
            continue
    print(f"total {total + 1}")
    return total - 1
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "lib.py").write_text(LIBRARY)
    for name, text in (("weak", WEAK), ("strong", STRONG)):
        (root / name).mkdir()
        (root / name / f"test_{name}.py").write_text(text)
    # Like the project's own: a warning fails the run (so the runner must not cause one).
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    return root


def test_every_operator_makes_valid_distinct_mutants() -> None:
    made = mutants.generate_mutants(EVERY_OPERATOR, "m.py")
    operators = {m.operator for m in made}
    assert operators == {
        "compare",
        "boolean",
        "arithmetic",
        "constant",
        "negation",
        "condition",
        "return",
        "delete",
    }
    original = ast.unparse(ast.parse(EVERY_OPERATOR))
    texts = set()
    for m in made:
        text = mutants.mutate_source(EVERY_OPERATOR, m)
        compile(text, "m.py", "exec")
        assert text != original
        texts.add(text)
        assert m.original == EVERY_OPERATOR.splitlines()[m.line - 1].strip()
        # Docstrings, f-strings (the words of messages) and annotations are left alone.
        assert "Docstring: never mutated." in text
        assert "Neither is this." in text
        assert "{total - 1}" not in text
        assert "{total + 2}" not in text
        assert "xs: list[int]" in text
    assert len(texts) == len(made), "two mutants make the same code"
    descriptions = {(m.line, m.description) for m in made}
    assert (9, "> -> >=") in descriptions
    assert (9, "and -> or") in descriptions
    assert (9, "drop `not`") in descriptions
    assert (10, "* -> //") in descriptions
    assert (10, "+ -> -") in descriptions
    assert (11, "in -> not in") in descriptions
    assert (14, "return None instead") in descriptions
    assert (12, "statement deleted") in descriptions  # `continue`
    # A module statement is not deleted (that only breaks the import); its value is mutated.
    assert {m.description for m in made if m.line == 2} == {"3 -> 4", "3 -> 2"}


def test_a_sample_is_reproducible_and_of_the_asked_size() -> None:
    first = mutants.generate_mutants(EVERY_OPERATOR, "m.py", sample=5, rng=random.Random(3))
    again = mutants.generate_mutants(EVERY_OPERATOR, "m.py", sample=5, rng=random.Random(3))
    assert first == again
    assert len(first) == 5


def _boundary_mutant() -> mutants.Mutant:
    (mutant,) = [
        m for m in mutants.generate_mutants(LIBRARY, "calc/lib.py") if m.description == ">= -> >"
    ]
    return mutant


def test_a_weak_suite_lets_the_boundary_mutant_survive_and_a_strong_one_kills_it(
    project: Path, tmp_path: Path
) -> None:
    tree = mutate._copy_tree(project, tmp_path / "scratch")
    mutant = _boundary_mutant()
    with mutate.Runner(tree, sys.executable) as runner:
        for suite, outcome in (("weak", "survived"), ("strong", "killed")):
            report = mutate.run_module(
                runner, "calc/lib.py", [suite], [mutant], timeout=60, equivalent=set()
            )
            assert [r.outcome for r in report.results] == [outcome]
    assert (tree / "calc" / "lib.py").read_text() == LIBRARY  # the copy is restored too


def test_a_mutant_that_loops_forever_is_killed_by_the_timeout(
    project: Path, tmp_path: Path
) -> None:
    tree = mutate._copy_tree(project, tmp_path / "scratch")
    (loop,) = [
        m
        for m in mutants.generate_mutants(LIBRARY, "calc/lib.py")
        if m.original == "i += 1" and m.operator == "arithmetic"
    ]
    with mutate.Runner(tree, sys.executable) as runner:
        report = mutate.run_module(
            runner, "calc/lib.py", ["weak"], [loop], timeout=3, equivalent=set()
        )
    assert [r.outcome for r in report.results] == ["timeout"]
    assert report.killed == 1


def test_the_command_reports_survivors_and_never_mutates_the_project(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--root", str(project), "--module", "calc/lib.py", "--tests", "weak", "--json"]
    # Seed 8 samples two mutants: `age >= 18` -> `age > 18`, which the weak suite lets
    # survive, and `i += 1` -> `i += 2`, which it kills.
    code = mutate.main([*args, "--sample", "2", "--seed", "8"])
    out = json.loads(capsys.readouterr().out)
    (module,) = out["modules"]
    assert (module["mutants"], module["killed"], module["score"]) == (2, 1, 50.0)
    assert [(s["line"], s["description"], s["original"]) for s in module["survivors"]] == [
        (5, ">= -> >", "return age >= 18")
    ]
    assert code == 1  # under the 95% bar
    assert mutate.main([*args, "--sample", "2", "--seed", "8", "--fail-under", "50"]) == 0
    assert (project / "calc" / "lib.py").read_text() == LIBRARY


def test_bad_usage_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ["--root", str(project)]
    assert mutate.main([*root, "--module", "calc/nothing.py", "--tests", "weak"]) == 2
    assert "no such module" in capsys.readouterr().err
    assert mutate.main([*root, "--module", "calc/lib.py"]) == 2
    assert "has no test subset" in capsys.readouterr().err
    assert mutate.main([*root, "--module", "calc/lib.py", "--tests", "nope"]) == 2
    assert mutate.main([*root, "--module", "calc/lib.py", "--tests", "weak", "--sample", "0"]) == 2
    assert mutate.main(["--bogus"]) == 2
    capsys.readouterr()
    assert mutate.main([*root, "--module", "calc/lib.py", "--tests", "weak", "--list"]) == 0
    assert "calc/lib.py:5: [compare] >= -> >: return age >= 18" in capsys.readouterr().out


def test_every_core_module_has_an_existing_test_subset() -> None:
    for module, tests in mutate.TEST_SUBSETS.items():
        assert (mutate.ROOT / module).is_file(), module
        for test in tests:
            assert (mutate.ROOT / test.split("::")[0]).is_file(), test


def test_every_listed_equivalent_names_a_mutant_of_the_code_as_it_is() -> None:
    # An entry whose line was edited or removed no longer leaves anything out of the score,
    # and its argument is about code that is gone: it must be argued again or dropped.
    listed = mutate.load_equivalent()
    keys: dict[str, set[str]] = {}  # module -> its entries, unscoped (as `Mutant.key`)
    for entry in listed:
        scoped, rest = entry.split(" | ", 1)
        module = scoped.split("::")[0]
        keys.setdefault(module, set()).add(f"{module} | {rest}")
    made: set[str] = set()
    for module, texts in keys.items():
        source = (mutate.ROOT / module).read_text()
        # Only the mutants named: making every mutant of 36 modules (each compiled to
        # check it) takes minutes.
        for mutant in mutants.generate_mutants(source, module, matching=sorted(texts)):
            made.update((mutant.key, mutant.scoped_key))
    assert sorted(listed - made) == []


def test_a_survivor_listed_as_equivalent_leaves_the_score(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    listed = tmp_path / "equivalent.txt"
    listed.write_text(
        "# comment\n"
        "calc/lib.py | return age >= 18 | >= -> >  # pretend: the suite need not tell\n"
        "calc/lib.py | a | b | c | 1 -> 2  # an original line holding ' | ' still parses\n"
        "calc/lib.py | x = 1  # one | 1 -> 2  # and one with a comment of its own\n"
    )
    assert mutate.load_equivalent(listed) == {
        "calc/lib.py | return age >= 18 | >= -> >",
        "calc/lib.py | a | b | c | 1 -> 2",
        "calc/lib.py | x = 1  # one | 1 -> 2",
    }
    monkeypatch.setattr(mutate, "EQUIVALENT_FILE", listed)
    args = ["--root", str(project), "--module", "calc/lib.py", "--tests", "weak", "--json"]
    assert mutate.main([*args, "--sample", "2", "--seed", "8"]) == 0
    (module,) = json.loads(capsys.readouterr().out)["modules"]
    assert (module["killed"], module["equivalent"], module["score"], module["raw_score"]) == (
        1,
        1,
        100.0,
        50.0,
    )
    assert [s["equivalent"] for s in module["survivors"]] == [True]


def test_an_equivalent_listed_for_one_function_leaves_the_same_line_elsewhere_counted() -> None:
    source = (
        "class Box:\n"
        "    def ready(self):\n"
        "        self.sync()\n"
        "    def play(self):\n"
        "        self.sync()\n"
    )
    points = mutants.mutation_points(source, "box.py")
    deleted = [m for m in points if m.description == "statement deleted"]
    assert [(m.line, m.function) for m in deleted] == [(3, "Box.ready"), (5, "Box.play")]
    scoped = {"box.py::Box.ready | self.sync() | statement deleted"}
    assert [mutate.is_listed(m, scoped) for m in deleted] == [True, False]
    assert all(mutate.is_listed(m, {"box.py | self.sync() | statement deleted"}) for m in deleted)


def test_modules_that_share_a_subset_run_it_clean_only_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The concept modules one big module was split into share its subset: the campaign
    # runs that subset on the unmutated tree once, not once for each of them.
    (project / "calc" / "more.py").write_text("def double(x: int) -> int:\n    return x * 2\n")
    (project / "strong" / "test_more.py").write_text(
        "from calc.more import double\n\n\ndef test_double() -> None:\n    assert double(3) == 6\n"
    )
    runs: list[tuple[str, ...]] = []
    real_run = mutate.Runner.run

    def counting_run(self: mutate.Runner, tests: list[str], timeout: float) -> str:
        runs.append(tuple(tests))
        return real_run(self, tests, timeout)

    monkeypatch.setattr(mutate.Runner, "run", counting_run)
    args = [
        "--root",
        str(project),
        "--module",
        "calc/lib.py",
        "--module",
        "calc/more.py",
        "--sample",
        "2",
    ]
    mutate.main([*args, "--tests", "strong", "--json"])
    modules = json.loads(capsys.readouterr().out)["modules"]
    mutated = sum(m["mutants"] for m in modules)
    assert [m["module"] for m in modules] == ["calc/lib.py", "calc/more.py"]
    assert all(m["mutants"] > 0 for m in modules)
    assert len(runs) == mutated + 1  # every mutant, and one clean run
