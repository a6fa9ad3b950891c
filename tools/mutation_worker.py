"""A fork server for mutation campaigns: pytest started once, each test run forked from it.

Started by `tools/mutate.py` as ``python tools/mutation_worker.py TREE`` (by path, so that it
imports nothing of the project: every forked run imports the possibly mutated modules
fresh, and a recorded run sees every line the project runs at import). It pre-imports
pytest and the heavy libraries the suite uses, then reads one JSON request a line on stdin
and answers one JSON line ``{"outcome": "passed" | "failed" | "timeout", ...}``:

- ``{"tests": [...], "timeout": seconds}`` runs the tests with ``-x``;
- ``{"tests": [files...], "select": [node ids...], "timeout": seconds}`` runs only the tests
  named, in that order, with ``-x`` (a test named but not collected fails the run, as
  pytest does when a node id on its command line is not found);
- ``{"module": name, "timeout": seconds}`` passes if the tree's copy of that module is the
  one a test run imports;
- ``{"coverage": [tests...], "files": [paths...], "timeout": seconds}`` runs the tests
  (without ``-x``) under a line tracer of the files (paths relative to the tree) and answers
  ``"path"``, a JSON file of which test ran which line (format in `_Recorder.result`).

A run past its timeout (an infinite loop) is killed with its whole process group. Saves
about two seconds of start-up per mutant.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Sequence
from types import FrameType
from typing import Any

import pytest

for _heavy in ("hypothesis", "trio", "pytest_trio", "msgpack", "nacl.signing", "nacl.public"):
    with contextlib.suppress(ImportError):
        __import__(_heavy)

_child = 0

#: Plugins imported before pytest starts cannot have their asserts rewritten: a warning the
#: project's `filterwarnings = error` would turn into a failure.
_QUIET = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
#: The exit code of a run that did not collect a test it was asked to run.
_NOT_COLLECTED = 4

_Tracer = Callable[[FrameType, str, Any], Any]


class _Select:
    """Keeps only the tests named, in the order named (fastest first, say)."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)
        self.missing = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[Any]) -> None:
        by_id = {item.nodeid: item for item in items}
        wanted = set(self.ids)
        self.missing = not wanted <= by_id.keys()
        deselected = [item for item in items if item.nodeid not in wanted]
        items[:] = [by_id[i] for i in self.ids if i in by_id]
        if deselected:
            config.hook.pytest_deselected(items=deselected)


class _Recorder:
    """Which lines of the target files each test runs, by `sys.settrace`.

    The global tracer is called at every function call: it returns a line tracer only for
    code objects of the target files, so everything else runs at nearly full speed. Lines
    are recorded into the sets of the current *context*: a test (its setup, call and
    teardown), a fixture wider than a function (its setup, charged to every test that uses
    it, not only to the first), or "outside" any test: collection, and any module body
    being executed (an import, even one a test triggers lazily: module constants, class
    bodies, default arguments, decorators). A line run outside affects every test.
    """

    def __init__(self, tree: str, files: Sequence[str]) -> None:
        self.files = list(files)
        self.paths = {os.path.realpath(os.path.join(tree, f)): i for i, f in enumerate(files)}
        self.known: dict[str, int | None] = {}  # code file name -> index in files
        self.contexts: dict[object, list[set[int]]] = {}
        self.outside = self._sets(None)
        self.current: object = None  # the key of the context being recorded
        self.stack: list[object] = []  # the contexts a fixture's setup interrupted
        self.imports = 0  # module bodies being executed (nested imports)
        #: Where line tracers write: the current context's sets, or outside's during an
        #: import. One list changed in place, so that the tracers need no attribute lookup.
        self.sink = list(self.outside)
        self.tracers = [self._line_tracer(i) for i in range(len(files))]
        self.tests: list[str] = []  # in the order run
        self.seconds: dict[str, float] = {}
        self.failed: set[str] = set()
        self.uses: dict[str, set[object]] = {}  # test -> the wider fixtures it uses

    def _sets(self, key: object) -> list[set[int]]:
        if key not in self.contexts:
            self.contexts[key] = [set() for _ in self.files]
        return self.contexts[key]

    def _switch(self, key: object) -> None:
        self.current = key
        if not self.imports:
            self.sink[:] = self._sets(key)

    def _line_tracer(self, index: int) -> _Tracer:
        sink = self.sink

        def trace(frame: FrameType, event: str, _arg: Any) -> _Tracer:
            if event == "line":
                sink[index].add(frame.f_lineno)
            return trace

        return trace

    def _index(self, filename: str) -> int | None:
        try:
            return self.known[filename]
        except KeyError:
            index = self.paths.get(os.path.realpath(filename))
            self.known[filename] = index
            return index

    def global_trace(self, frame: FrameType, _event: str, _arg: Any) -> _Tracer | None:
        code = frame.f_code
        index = self._index(code.co_filename)
        if code.co_name == "<module>":
            return self._module_body(frame, index)
        return None if index is None else self.tracers[index]

    def _module_body(self, frame: FrameType, index: int | None) -> _Tracer:
        """A module body runs (an import): everything it runs is outside any test."""
        self.imports += 1
        if self.imports == 1:
            self.sink[:] = self.outside
        lines = None if index is None else self.tracers[index]
        if lines is None:
            frame.f_trace_lines = False  # only its end matters

        def trace(frame: FrameType, event: str, arg: Any) -> _Tracer:
            if event == "return":  # also when the body raised
                self.imports -= 1
                if not self.imports:
                    self.sink[:] = self._sets(self.current)
            elif lines is not None:
                lines(frame, event, arg)
            return trace

        return trace

    def start(self) -> None:
        threading.settrace(self.global_trace)
        sys.settrace(self.global_trace)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)

    # --- pytest hooks: whose context a line belongs to --------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: Any, nextitem: object
    ) -> Generator[None, object, object]:
        nodeid: str = item.nodeid
        self.tests.append(nodeid)
        uses = self.uses.setdefault(nodeid, set())
        info = getattr(item, "_fixtureinfo", None)  # statically requested fixtures
        for name in getattr(item, "fixturenames", ()):
            for fixturedef in info.name2fixturedefs.get(name, ()) if info else ():
                if fixturedef.scope != "function":
                    uses.add(id(fixturedef))
        self._switch(nodeid)
        started = time.perf_counter()
        try:
            return (yield)
        finally:
            self.seconds[nodeid] = time.perf_counter() - started
            self._switch(None)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: Any, request: object
    ) -> Generator[None, object, object]:
        if fixturedef.scope == "function":
            return (yield)
        if isinstance(self.current, str):  # requested dynamically (getfixturevalue) too
            self.uses.setdefault(self.current, set()).add(id(fixturedef))
        self.stack.append(self.current)
        self._switch(id(fixturedef))
        try:
            return (yield)
        finally:
            self._switch(self.stack.pop())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.add(report.nodeid)

    def result(self) -> dict[str, object]:
        """``{"tests": [node ids, in the order run], "seconds": [each test's setup, call and
        teardown], "failed": [indices of tests that failed], "files": {path: {"outside":
        [lines], "lines": {line: [indices of the tests that ran it]}}}}``."""
        files: dict[str, object] = {}
        for i, name in enumerate(self.files):
            by_line: dict[int, list[int]] = {}
            for t, test in enumerate(self.tests):
                own = self.contexts.get(test)
                ran = set(own[i]) if own is not None else set()
                for key in self.uses.get(test, ()):
                    if key in self.contexts:
                        ran |= self.contexts[key][i]
                for line in ran:
                    by_line.setdefault(line, []).append(t)
            files[name] = {
                "outside": sorted(self.outside[i]),
                "lines": {str(line): tests for line, tests in sorted(by_line.items())},
            }
        return {
            "tests": self.tests,
            "seconds": [round(self.seconds.get(t, 0.0), 6) for t in self.tests],
            "failed": [i for i, t in enumerate(self.tests) if t in self.failed],
            "files": files,
        }


def _pytest(args: list[str], plugins: list[object]) -> int:
    return int(pytest.main(["-q", "-p", "no:cacheprovider", *_QUIET, *args], plugins=plugins))


def _run(tree: str, request: dict[str, Any], output: str | None) -> None:
    """In the forked child: run pytest in the tree and exit with its code (or, given a
    module, exit 0 if the tree's copy of it is the one imported)."""
    os.setsid()
    os.chdir(tree)
    sys.path.insert(0, tree)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    code = 1
    try:
        if "module" in request:
            origin = importlib.util.find_spec(request["module"]).origin  # type: ignore[union-attr]
            code = 0 if origin and origin.startswith(os.path.join(tree, "")) else 3
        elif "coverage" in request:
            assert output is not None
            recorder = _Recorder(tree, request["files"])
            recorder.start()  # before pytest collects: imports are recorded as outside
            try:
                code = _pytest(list(request["coverage"]), [recorder])
            finally:
                recorder.stop()
            with open(output, "w") as out:
                json.dump(recorder.result(), out)
            # Failed tests are in the record; a run that could not run them is not.
            code = 0 if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) else code
        elif "select" in request:
            select = _Select(request["select"])
            code = _pytest(["-x", *request["tests"]], [select])
            code = _NOT_COLLECTED if select.missing and code == 0 else code
        else:
            code = _pytest(["-x", *request["tests"]], [])
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "passed" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def main() -> None:
    global _child
    tree = sys.argv[1]
    sys.dont_write_bytecode = True  # a mutant and the original may share size and mtime
    signal.signal(signal.SIGTERM, _kill_child)
    signal.signal(signal.SIGINT, _kill_child)
    for line in sys.stdin:
        request = json.loads(line)
        output = None
        if "coverage" in request:
            # Beside the tree, in the campaign's scratch directory (removed with it).
            handle, output = tempfile.mkstemp(
                prefix="coverage-", suffix=".json", dir=os.path.dirname(tree)
            )
            os.close(handle)
        _child = os.fork()
        if _child == 0:
            _run(tree, request, output)
        answer: dict[str, object] = {"outcome": _wait(_child, float(request["timeout"]))}
        _child = 0
        if output is not None:
            answer["path"] = output
        print(json.dumps(answer), flush=True)


def _kill_child(*_: object) -> None:
    if _child:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(_child, signal.SIGKILL)
    os._exit(1)


if __name__ == "__main__":
    main()
