"""The mutation-testing command (`tools/mutate.py`) on a small planted project.

A weak suite lets a boundary mutant survive, a strong one kills it, an infinite loop is
killed by the timeout, and the project's own files are never left mutated. Each mutant runs
only the tests that run one of its lines (fastest first), every test when a line of it runs
at import, and none when no test runs it; several runners give the same results as one; the
recording of which test runs which line is cached until a source file changes.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import random
import shutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

    def counting_run(
        self: mutate.Runner, tests: list[str], timeout: float, select: Sequence[str] = ()
    ) -> str:
        runs.append(tuple(tests))
        return real_run(self, tests, timeout, select)

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
        "--timeout",  # one of the mutants loops forever: do not wait long for it
        "2",
    ]
    mutate.main([*args, "--tests", "strong", "--json"])
    modules = json.loads(capsys.readouterr().out)["modules"]
    mutated = sum(m["mutants"] for m in modules)
    assert [m["module"] for m in modules] == ["calc/lib.py", "calc/more.py"]
    assert all(m["mutants"] > 0 for m in modules)
    assert len(runs) == mutated + 1  # every mutant, and one clean run


# --- which tests a mutant runs -------------------------------------------------------------

SHAPES = """SIDES = 4


def perimeter(side: int) -> int:
    return 4 * side


def area(side: int) -> int:
    return side * side


def unused(side: int) -> int:
    return side - 1
"""

#: Each test appends its name to the file $RAN_LOG: what a run ran.
RAN = """import os
import time

from calc.shapes import SIDES, area, perimeter


def ran(name: str) -> None:
    with open(os.environ["RAN_LOG"], "a") as log:
        log.write(name + "\\n")
"""
SHAPE_TESTS = {
    "test_perimeter.py": RAN
    + """

def test_slow_perimeter() -> None:
    ran("slow_perimeter")
    time.sleep(0.05)
    assert perimeter(2) == 8


def test_fast_perimeter() -> None:
    ran("fast_perimeter")
    assert perimeter(1) == 4
""",
    # `test_sides`, the only test that reads `SIDES`, is the last: a run of every test
    # (with -x) runs all four.
    "test_area.py": RAN
    + """

def test_area() -> None:
    ran("area")
    assert area(3) == 9


def test_sides() -> None:
    ran("sides")
    assert SIDES == 4
""",
}

#: Two paths: two runners record one each (and the recordings are merged).
SHAPE_PATHS = ("shapes/test_perimeter.py", "shapes/test_area.py")
SHAPES_ARGS = ["--module", "calc/shapes.py", "--json", "--fail-under", "0"] + [
    f"--tests={path}" for path in SHAPE_PATHS
]
#: One mutant of each kind of line: run at import, by two tests, by one, by none.
SHAPES_MUTANTS = [
    "--matching=SIDES = 4 | 4 -> 5",
    "--matching=return 4 * side | return None",
    "--matching=return side * side | * -> //",
    "--matching=return side - 1 | - -> +",
]
#: How the two files run whole: test_sides, the only test that reads `SIDES`, comes last.
EVERY_SHAPE_TEST = ["slow_perimeter", "fast_perimeter", "area", "sides"]


def _plant_shapes(root: Path) -> Path:
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "shapes.py").write_text(SHAPES)
    (root / "shapes").mkdir()
    for name, text in SHAPE_TESTS.items():
        (root / "shapes" / name).write_text(text)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    return root


#: Each test run of a campaign: the node ids it was asked for (() for the whole subset)
#: and the names of the tests that ran, in order.
Runs = list[tuple[tuple[str, ...], list[str]]]


def _spy_on_runs(monkeypatch: pytest.MonkeyPatch, log: Path) -> Runs:
    runs: Runs = []
    real_run = mutate.Runner.run

    def run(
        self: mutate.Runner, tests: Sequence[str], timeout: float, select: Sequence[str] = ()
    ) -> str:
        log.write_text("")
        outcome = real_run(self, tests, timeout, select)
        runs.append((tuple(select), log.read_text().split()))
        return outcome

    monkeypatch.setattr(mutate.Runner, "run", run)
    return runs


@dataclass
class Campaign:
    root: Path
    runs: Runs
    output: dict[str, Any]

    @property
    def survivors(self) -> list[dict[str, Any]]:
        (module,) = self.output["modules"]
        survivors: list[dict[str, Any]] = module["survivors"]
        return survivors


@pytest.fixture(scope="module")
def shapes_campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Campaign]:
    """One campaign (one runner) of `SHAPES_MUTANTS`, shared by the tests that read it."""
    scratch = tmp_path_factory.mktemp("shapes")
    root = _plant_shapes(scratch / "project")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("RAN_LOG", str(scratch / "ran.log"))
        runs = _spy_on_runs(monkeypatch, scratch / "ran.log")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert mutate.main(["--root", str(root), *SHAPES_ARGS, *SHAPES_MUTANTS]) == 0
        yield Campaign(root, runs, json.loads(out.getvalue()))


def test_a_mutant_runs_only_the_tests_that_run_its_lines_fastest_first(
    shapes_campaign: Campaign,
) -> None:
    clean, _sides, perimeter, area = shapes_campaign.runs  # in the order of the file
    assert clean == ((), EVERY_SHAPE_TEST)
    # Only test_area runs `side * side`.
    assert area == (("shapes/test_area.py::test_area",), ["area"])
    # Both perimeter tests run `4 * side`: the fast one first, and with -x it is the last.
    assert perimeter == (
        (
            "shapes/test_perimeter.py::test_fast_perimeter",
            "shapes/test_perimeter.py::test_slow_perimeter",
        ),
        ["fast_perimeter"],
    )


def test_a_mutant_no_test_runs_survives_without_running_anything(
    shapes_campaign: Campaign,
) -> None:
    (survivor,) = shapes_campaign.survivors
    assert (survivor["line"], survivor["description"]) == (13, "- -> +")
    assert (survivor["no_test"], survivor["equivalent"]) == (True, False)
    assert len(shapes_campaign.runs) == 4  # clean, and the three others: none for it
    # The text report says why it survived.
    mutant = mutants.Mutant(
        **{k: v for k, v in survivor.items() if k not in ("equivalent", "no_test")}
    )
    report = mutate.ModuleReport("calc/shapes.py", SHAPE_PATHS, 1)
    report.results.append(mutate.MutantResult(mutant, "survived", no_test=True))
    assert "calc/shapes.py:13 (unused): - -> + [no test runs this line]" in mutate.report_text(
        [report], 1
    )


def test_a_mutant_of_a_line_run_at_import_runs_every_test(shapes_campaign: Campaign) -> None:
    _clean, sides, *_ = shapes_campaign.runs
    assert sides == ((), EVERY_SHAPE_TEST)  # the whole subset: every test ran, the last failed


def test_two_runners_give_the_results_of_one(
    shapes_campaign: Campaign, capsys: pytest.CaptureFixture[str]
) -> None:
    root = shapes_campaign.root
    shutil.rmtree(root / mutate.CACHE_DIR)  # recorded again: a path a runner, merged
    args = ["--root", str(root), *SHAPES_ARGS, *SHAPES_MUTANTS, "--jobs", "2"]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("RAN_LOG", str(root.parent / "ran.log"))
        assert mutate.main(args) == 0
    assert json.loads(capsys.readouterr().out) == shapes_campaign.output
    assert mutate.main([*args[:-1], "0"]) == 2


def test_the_recording_is_cached_until_a_source_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _plant_shapes(tmp_path / "project")
    monkeypatch.setenv("RAN_LOG", str(tmp_path / "ran.log"))
    recorded: list[tuple[str, ...]] = []
    real_record = mutate.Runner.record

    def record(
        self: mutate.Runner, tests: Sequence[str], files: Sequence[str], timeout: float
    ) -> mutate.Recording:
        recorded.append(tuple(tests))
        return real_record(self, tests, files, timeout)

    monkeypatch.setattr(mutate.Runner, "record", record)
    # The mutant no test runs: each campaign runs only the clean tests (and the recording).
    args = ["--root", str(root), *SHAPES_ARGS, "--matching", "return side - 1 | - -> +"]
    for _ in range(2):
        assert mutate.main(args) == 0
    assert recorded == [SHAPE_PATHS]  # the second campaign read the first one's recording
    # A test changed (a comment is enough): record again.
    with (root / "shapes" / "test_area.py").open("a") as tests:
        tests.write("# edited\n")
    assert mutate.main(args) == 0
    assert recorded == [SHAPE_PATHS, SHAPE_PATHS]
    capsys.readouterr()


RECORDED_TESTS = """import pytest

from calc.shapes import area


@pytest.fixture(scope="module")
def table() -> int:
    return area(5)


def test_first(table: int) -> None:
    assert table == 25


def test_second(table: int) -> None:
    assert table == 25


def test_lazy() -> None:
    from calc.late import late

    assert late() == 7
"""


def test_the_recording_charges_wide_fixtures_to_their_users_and_imports_to_every_test(
    tmp_path: Path,
) -> None:
    shapes = _plant_shapes(tmp_path / "project")
    (shapes / "calc" / "late.py").write_text("LATE = 7\n\n\ndef late() -> int:\n    return LATE\n")
    (shapes / "recorded").mkdir()
    (shapes / "recorded" / "test_recorded.py").write_text(RECORDED_TESTS)
    tree = mutate._copy_tree(shapes, tmp_path / "scratch")
    with mutate.Runner(tree, sys.executable) as runner:
        recording = runner.record(["recorded"], ["calc/shapes.py", "calc/late.py"], 60)
    names = [t.split("::")[1] for t in recording.tests]
    assert names == ["test_first", "test_second", "test_lazy"]
    assert recording.failed == set()

    def tests_of(file: str, line: int) -> list[str]:
        return [names[t] for t in recording.lines[file].get(line, [])]

    # The module fixture ran `side * side` once, for both of the tests that use it.
    assert tests_of("calc/shapes.py", 9) == ["test_first", "test_second"]
    assert tests_of("calc/shapes.py", 5) == []
    # What runs at import is outside any test, even an import one test makes late.
    assert {1, 4, 8, 12} <= recording.outside["calc/shapes.py"]
    assert {1, 4} <= recording.outside["calc/late.py"]
    assert tests_of("calc/late.py", 1) == []
    assert tests_of("calc/late.py", 5) == ["test_lazy"]


def test_a_mutant_s_lines_are_those_of_its_node_and_of_the_statement_around_it() -> None:
    source = (
        "def f(a: int,\n"  # 1
        "      b: int = 3) -> int:\n"  # 2
        "    x = g(a,\n"  # 3
        "          b + 1)\n"  # 4
        "    if (a and\n"  # 5
        "            b > 2):\n"  # 6
        "        return 1\n"  # 7
        "    return a in (1,\n"  # 8
        "                 2)\n"  # 9
    )
    lines = mutants.mutation_lines(source)
    made = {(m.line, m.description): lines[m.index] for m in mutants.mutation_points(source, "m")}
    assert made[3, "statement deleted"] == (3, 4)  # a statement over two lines: both
    assert made[4, "+ -> -"] == (3, 4)  # a line of a statement: the statement's
    assert made[2, "3 -> 4"] == (1, 2)  # a default: the signature's (the `def` runs at import)
    assert made[6, "> -> >="] == (5, 6)  # a condition over lines: the condition, not the body
    assert made[5, "negate the condition"] == (5, 6, 7)  # the whole `if`
    # A folded constant `(1, 2)` has no line event of its own: its statement's lines count.
    assert made[9, "2 -> 3"] == (8, 9)


def test_tests_are_matched_to_the_paths_of_a_subset() -> None:
    assert mutate._covers("tests", "tests/a.py::test_f")
    assert mutate._covers("tests/a.py", "tests/a.py::test_f[1]")
    assert mutate._covers("tests/a.py::test_f", "tests/a.py::test_f[1]")
    assert not mutate._covers("tests/a.py::test_f", "tests/a.py::test_fg")
    assert not mutate._covers("tests/a", "tests/ab.py::test_f")
    assert mutate._union([("tests/a.py::test_f", "tests/b.py"), ("tests/a.py",)]) == (
        "tests/b.py",
        "tests/a.py",
    )
    subsets = {"x.py": ("tests/a.py",), "y.py": ("tests/b.py",), "z.py": ("tests/a.py::t",)}
    assert mutate._groups(subsets) == [["x.py", "z.py"], ["y.py"]]


def test_a_cached_recording_stands_for_the_clean_run_and_ignores_the_campaign_s_own_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _plant_shapes(tmp_path / "project")
    (root / "tools").mkdir()
    (root / "tools" / "mutate.py").write_text("# the campaign's own code\n")
    monkeypatch.setenv("RAN_LOG", str(tmp_path / "ran.log"))
    runs = _spy_on_runs(monkeypatch, tmp_path / "ran.log")
    # The mutant no test runs: the first campaign runs the subset clean and records it...
    args = ["--root", str(root), *SHAPES_ARGS, "--matching", "return side - 1 | - -> +"]
    assert mutate.main(args) == 0
    assert runs == [((), EVERY_SHAPE_TEST)]
    first = json.loads(capsys.readouterr().out)
    # ...the next, after an edit of the campaign's own code, runs nothing at all: the
    # recording is still good, and it says how long the subset takes and that it passes.
    with (root / "tools" / "mutate.py").open("a") as own:
        own.write("# edited\n")
    assert mutate.main(args) == 0
    assert runs == [((), EVERY_SHAPE_TEST)]
    second = json.loads(capsys.readouterr().out)
    assert [m["survivors"] for m in first["modules"]] == [m["survivors"] for m in second["modules"]]


def test_each_module_s_report_is_written_the_moment_its_last_mutant_is_done(
    shapes_campaign: Campaign, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = shapes_campaign.root
    args = ["--root", str(root), *SHAPES_ARGS, *SHAPES_MUTANTS, "--reports", str(tmp_path)]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("RAN_LOG", str(root.parent / "ran.log"))
        assert mutate.main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == shapes_campaign.output
    written = json.loads((tmp_path / "calc_shapes.json").read_text())
    assert written == printed  # one module: its report is the whole campaign's
