"""Mutants of a Python module: small changes to its AST, each one compiling.

Operators: comparison swaps (`<` and `<=`, `==` and `!=`, `in` and `not in`...), `and` and
`or`, arithmetic swaps (`+` and `-`, `*` and `//`, `|` and `&`, shifts), integer constants off
by one and booleans flipped, `not` dropped, conditions negated (`if`, `while`, conditional
expressions, comprehension filters), a returned value replaced by None, and a statement
inside a function deleted. Docstrings, the words of f-string messages, annotations and
imports are never mutated. A mutant is named by its module, the index of its mutation point
(deterministic: the order of `ast.walk`) and, for reading, its line and description.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """One change to one module: the `index`-th mutation point of `operator`."""

    module: str
    index: int  # position among the module's mutation points (deterministic)
    line: int
    operator: str
    description: str
    original: str  # the original source line, stripped
    function: str = ""  # the enclosing function, as `Class.method` ("" at module level)

    @property
    def key(self) -> str:
        """A name that survives edits elsewhere in the file (line numbers do not)."""
        return f"{self.module} | {self.original} | {self.description}"

    @property
    def scoped_key(self) -> str:
        """`key` with the enclosing function (`module::Class.method | ...`): names one of
        several identical lines of a module (each `self._after_sync()`, say)."""
        return f"{self.module}::{self.function} | {self.original} | {self.description}"


_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}

_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}

_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Div: "/",
    ast.Mod: "%",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.And: "and",
    ast.Or: "or",
}

#: Statements whose deletion (replacement by `pass`) is a mutant.
_DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Continue,
              ast.Break, ast.Delete)  # fmt: skip

# A mutation point: (node, operator name, description, in-place change of that node).
_Point = tuple[ast.AST, str, str, Callable[[ast.AST], ast.AST | None]]


def _is_docstring(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and parent.body[0] is node
    )


def _skipped_subtrees(tree: ast.Module) -> set[ast.AST]:
    """Nodes never mutated: annotations, imports, `if TYPE_CHECKING`, `__all__`, and the text
    of error messages (changing the words of a message is not a behaviour the suite pins)."""
    skip: set[ast.AST] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            mark(node.returns)
            for arg in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs):
                mark(arg.annotation)
            mark(node.args.vararg.annotation if node.args.vararg else None)
            mark(node.args.kwarg.annotation if node.args.kwarg else None)
            for deco in node.decorator_list:
                mark(deco)
        elif isinstance(node, ast.ClassDef):
            for deco in node.decorator_list:
                mark(deco)
            mark_bases = [*node.bases, *node.keywords]
            for base in mark_bases:
                mark(base)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
            if node.value is None:
                mark(node)
        elif (
            isinstance(node, ast.Import | ast.ImportFrom)
            or (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
            or isinstance(node, ast.JoinedStr)
            or (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            )
        ):
            mark(node)
    return skip


def _points(tree: ast.Module) -> Iterator[_Point]:
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    skip = _skipped_subtrees(tree)
    for node in ast.walk(tree):
        if node in skip:
            continue
        yield from _node_points(node, parents)


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Deleting a module or class statement only breaks the import (a trivial kill)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return True
    return False


def _node_points(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> Iterator[_Point]:
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAPS.get(type(op))
            if swap is not None:
                yield (
                    node,
                    "compare",
                    f"{_SYMBOLS[type(op)]} -> {_SYMBOLS[swap]}",
                    _set_compare(i, swap),
                )
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield (
            node,
            "boolean",
            f"{_SYMBOLS[type(node.op)]} -> {_SYMBOLS[other]}",
            _set_attr("op", other),
        )
    elif isinstance(node, ast.BinOp | ast.AugAssign):
        swap_op = _BINOP_SWAPS.get(type(node.op))
        if swap_op is not None:
            yield (
                node,
                "arithmetic",
                f"{_SYMBOLS[type(node.op)]} -> {_SYMBOLS[swap_op]}",
                _set_attr("op", swap_op),
            )
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield node, "negation", "drop `not`", lambda n: n.operand  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant) and not _is_docstring(parents.get(node, node), parents):
        value = node.value
        if isinstance(value, bool):
            yield node, "constant", f"{value} -> {not value}", _set_attr("value", not value)
        elif isinstance(value, int):
            yield node, "constant", f"{value} -> {value + 1}", _set_attr("value", value + 1)
            if value != 0:
                yield node, "constant", f"{value} -> {value - 1}", _set_attr("value", value - 1)
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        yield node, "condition", "negate the condition", _negate_test
    if isinstance(node, ast.comprehension):
        for i in range(len(node.ifs)):
            yield node, "condition", "negate a comprehension filter", _negate_if(i)
    if (
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        yield node, "return", "return None instead", _set_attr("value", ast.Constant(None))
    if (
        isinstance(node, _DELETABLE)
        and not _is_docstring(node, parents)
        and _in_function(node, parents)
    ):
        yield node, "delete", "statement deleted", lambda _n: ast.Pass()


def _set_attr(name: str, value: object) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        setattr(node, name, value() if isinstance(value, type) else value)
        return node

    return change


def _set_compare(i: int, op: type[ast.cmpop]) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Compare)
        node.ops[i] = op()
        return node

    return change


def _negate_test(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.If | ast.While | ast.IfExp)
    node.test = ast.UnaryOp(ast.Not(), node.test)
    return node


def _negate_if(i: int) -> Callable[[ast.AST], ast.AST]:
    def change(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.comprehension)
        node.ifs[i] = ast.UnaryOp(ast.Not(), node.ifs[i])
        return node

    return change


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        visited: ast.AST = super().visit(node)
        return visited


def _mutated_tree(source: str, index: int) -> tuple[ast.Module, _Point]:
    tree = ast.parse(source)
    for i, point in enumerate(_points(tree)):
        if i == index:
            node, _, _, change = point
            replacement = change(node)
            if replacement is not node and replacement is not None:
                _Replace(node, replacement).visit(tree)  # never the module node itself
            return ast.fix_missing_locations(tree), point
    raise ValueError(f"no mutation point {index}")


def mutate_source(source: str, mutant: Mutant) -> str:
    """The module's source with `mutant` applied (as Python code that compiles)."""
    tree, _ = _mutated_tree(source, mutant.index)
    return ast.unparse(tree)


def _line_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> int:
    while not hasattr(node, "lineno") and node in parents:
        node = parents[node]  # a comprehension has no line of its own
    return int(getattr(node, "lineno", 0))


def _function_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The qualified name of the function around `node` (`Class.method`), "" if none."""
    names: list[str] = []
    inside = False
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
            inside = True
        elif isinstance(node, ast.ClassDef):
            names.append(node.name)
    return ".".join(reversed(names)) if inside else ""


def mutation_points(source: str, module: str) -> list[Mutant]:
    """Every place a mutant can go (cheap: not yet checked to compile or to change the code)."""
    lines = source.splitlines()
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for index, (node, operator, description, _) in enumerate(_points(tree)):
        found.append((index, _line_of(node, parents), operator, description, node))
    # The same change twice on one line (`(0, 0)`, 0 -> 1): numbered, so that each has a
    # key of its own (an equivalent must not excuse its twin).
    count: dict[tuple[int, str], int] = {}
    for _, line, _, description, _ in found:
        count[line, description] = count.get((line, description), 0) + 1
    seen: dict[tuple[int, str], int] = {}
    points = []
    for index, line, operator, description, node in found:
        if count[line, description] > 1:
            seen[line, description] = seen.get((line, description), 0) + 1
            description = f"{description} (#{seen[line, description]} on the line)"
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        function = _function_of(node, parents)
        points.append(Mutant(module, index, line, operator, description, text, function))
    return points


def _span(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> set[int]:
    while not hasattr(node, "lineno") and node in parents:
        node = parents[node]  # a comprehension has no position of its own
    first = int(getattr(node, "lineno", 0))
    return set(range(first, int(getattr(node, "end_lineno", None) or first) + 1))


def _header(statement: ast.stmt | ast.excepthandler) -> set[int]:
    """The lines of a statement that run when it starts: all of a simple statement's; of a
    compound one (`if`, `for`, `def`, `except`...) its decorators, test, iterable,
    signature... but not its body."""
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
    last = statement.lineno
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            continue  # a block: the statement's body, else, handlers or cases
        for part in ast.walk(child):
            last = max(last, int(getattr(part, "end_lineno", None) or 0))
    return set(range(first, last + 1))


def _lines_to_run(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> tuple[int, ...]:
    """The lines a test must run for a mutant of `node` to make a difference: the node's
    own, and those of the statement it is part of (a statement spanning lines may run
    without a line event for the node's own line: `(1,\n 2)` is one folded constant)."""
    lines = _span(node, parents)
    around: ast.AST | None = node
    while around is not None and not isinstance(around, ast.stmt | ast.excepthandler):
        around = parents.get(around)
    if around is not None:
        lines |= _header(around)
    return tuple(sorted(lines))


def mutation_lines(source: str) -> list[tuple[int, ...]]:
    """For each mutation point (by `Mutant.index`), the lines a test must run for its mutant
    to make a difference (`_lines_to_run`): a test that runs none of them cannot kill it."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return [_lines_to_run(node, parents) for node, *_ in _points(tree)]


@functools.lru_cache(maxsize=4)
def _as_unparsed(source: str) -> str:
    """The original code as `mutate_source` writes it: made once per module, not per mutant."""
    return ast.unparse(ast.parse(source))


def is_valid(source: str, mutant: Mutant) -> bool:
    """The mutant compiles and is not the original code written differently."""
    text = mutate_source(source, mutant)
    if text == _as_unparsed(source):
        return False
    try:
        compile(text, mutant.module, "exec")
    except SyntaxError:  # e.g. `pass` where an expression list was required
        return False
    return True


def generate_mutants(
    source: str,
    module: str,
    *,
    sample: int | None = None,
    rng: random.Random | None = None,
    matching: str | Sequence[str] | None = None,
) -> list[Mutant]:
    """Valid mutants of `source`: all of them, or a random `sample` of them (in file order);
    only those whose `key` contains `matching` (or one of its texts), if given."""
    points = mutation_points(source, module)
    if matching is not None:
        texts = [matching] if isinstance(matching, str) else list(matching)
        points = [m for m in points if any(text in m.key for text in texts)]
    if sample is not None:
        (rng or random.Random(0)).shuffle(points)
    chosen: list[Mutant] = []
    for mutant in points:
        if sample is not None and len(chosen) == sample:
            break
        if is_valid(source, mutant):
            chosen.append(mutant)
    return sorted(chosen, key=lambda m: (m.line, m.index))
