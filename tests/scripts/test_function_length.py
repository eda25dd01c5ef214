#!/usr/bin/env python3
"""Tests of scripts/function-length: the functions it finds in the fixtures
(lengths counted by hand from the fixture files), and the allowlist rules: a
new long function fails, an allowlisted one may shrink but not grow, and
--update only lowers or drops entries."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOL = os.path.join(ROOT, "scripts", "function-length")
FIXTURES = os.path.relpath(os.path.join(HERE, "function_length"), ROOT)


def run(*args, root=ROOT):
    return subprocess.run([sys.executable, TOOL, "--root", root, *args], capture_output=True, text=True)


def listed(*files):
    result = run("--list", *files)
    assert result.returncode == 0, result.stderr
    found = set()
    for line in result.stdout.splitlines():
        length, where, name = line.split(None, 2)
        found.add((name, int(where.rsplit(":", 1)[1]), int(length)))
    return found


class Shapes(unittest.TestCase):
    def test_cpp_shapes(self):
        # (name, line of the name, lines up to the closing brace)
        expected = {
            ("free_function", 12, 11),  # a lambda, braces in strings, chars, raw strings, comments
            ("Plain::Plain", 36, 7),  # braced member initialisers and a lambda in the list
            ("Plain::~Plain", 43, 3),
            ("Plain::operator()", 48, 3),
            ("Plain::operator==", 51, 3),
            ("Plain::operator bool", 54, 1),
            ("Plain::Nested::deep", 57, 5),  # its local class counts to it
            ("Box::take", 69, 4),  # the brace on its own line
            ("Box::put", 79, 3),  # a template's member defined outside
            ("make_callback", 83, 7),  # std::function<void()> return type
            ("trailing", 91, 3),
            ("held", 95, 3),  # a lambda held in a variable
            ("c_function", 100, 3),  # inside extern "C" { }
            ("Plain::Plain", 107, 3),
            ("Widget::refresh", 114, 5),  # after "public slots:"
            ("Widget::Widget", 123, 3),  # initialiser list ending in a brace
            ("operator<<", 129, 3),
        }
        self.assertEqual(listed(os.path.join(FIXTURES, "shapes.cpp")), expected)

    def test_cuda_shapes(self):
        expected = {
            ("sweep", 3, 8),  # named past __launch_bounds__(...)
            ("cell", 12, 1),
            ("Shape::area", 15, 1),
        }
        self.assertEqual(listed(os.path.join(FIXTURES, "kernel.cu")), expected)

    def test_not_functions(self):
        # Enums, aggregate tables, macros and member initialisers are not functions.
        names = {name for name, _, _ in listed(os.path.join(FIXTURES, "shapes.cpp"))}
        for name in ("Colour", "table", "BLOCK", "name", "x", "callback_", "function", "Plain"):
            self.assertNotIn(name, names)


def body(lines):
    return "int f_%d() {\n" % lines + "    int x = 0;\n" * (lines - 2) + "}\n"


class Allowlist(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        os.makedirs(os.path.join(self.root, "engine"))
        os.makedirs(os.path.join(self.root, "scripts"))
        self.allowlist = os.path.join(self.root, "scripts", "function-length.allow")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, text, name="a.cpp"):
        with open(os.path.join(self.root, "engine", name), "w") as f:
            f.write(textwrap.dedent(text))

    def allow(self, text):
        with open(self.allowlist, "w") as f:
            f.write(text)

    def check(self, *args):
        return run("--limit", "5", *args, root=self.root)

    def test_new_long_function_fails(self):
        self.write(body(6) + body(5))
        self.allow("")
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("engine/a.cpp:1: f_6 is 6 lines", result.stderr)
        self.assertNotIn("f_5", result.stderr)

    def test_allowlisted_function_may_stay_or_shrink(self):
        self.write(body(8))
        self.allow("8 engine/a.cpp f_8\n")
        self.assertEqual(self.check().returncode, 0)
        self.allow("9 engine/a.cpp f_8\n")
        result = self.check()
        self.assertEqual(result.returncode, 0)
        self.assertIn("down to 8 lines", result.stdout)

    def test_allowlisted_function_may_not_grow(self):
        self.write(body(8))
        self.allow("7 engine/a.cpp f_8\n")
        result = self.check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("f_8 grew to 8 lines (allowlisted at 7", result.stderr)

    def test_update_lowers_and_drops_but_never_adds(self):
        self.write(body(8) + body(3) + body(7))
        self.allow("# header\n10 engine/a.cpp f_8\n9 engine/a.cpp f_3\n9 engine/gone.cpp g\n")
        result = self.check("--update")
        self.assertEqual(result.returncode, 1)  # f_7 is new: still a failure, not added
        with open(self.allowlist) as f:
            entries = [line for line in f.read().splitlines() if line and not line.startswith("#")]
        self.assertEqual(entries, ["8 engine/a.cpp f_8"])

    def test_bad_allowlist_line_is_named(self):
        self.write(body(3))
        self.allow("engine/a.cpp f_3\n")
        result = self.check()
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("function-length.allow:1", result.stderr)


if __name__ == "__main__":
    unittest.main()
