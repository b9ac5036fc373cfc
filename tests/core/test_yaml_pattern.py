"""``import rulegen`` seeds ``re``'s cache with a quicker-to-compile form of PyYAML's
non-printable pattern (:func:`rulegen._seed_yaml_reader_pattern`): it must match exactly the
code points PyYAML's own pattern matches, the YAML 1.1 spec's non-printable characters."""

from __future__ import annotations

import re
import subprocess
import sys

import rulegen

#: The YAML 1.1 spec's printable characters (production [1] c-printable), as ranges.
PRINTABLE = [(0x09, 0x09), (0x0A, 0x0A), (0x0D, 0x0D), (0x20, 0x7E), (0x85, 0x85), (0xA0, 0xD7FF),
             (0xE000, 0xFFFD), (0x10000, 0x10FFFF)]


def _non_printable() -> list[int]:
    printable = set()
    for lo, hi in PRINTABLE:
        printable.update(range(lo, hi + 1))
    return [c for c in range(0x110000) if c not in printable]


def test_both_patterns_match_the_non_printable_code_points_and_no_other():
    every = "".join(map(chr, range(0x110000)))  # lone surrogates included
    expected = _non_printable()
    assert [m.start() for m in re.finditer(rulegen.NON_PRINTABLE_SET, every)] == expected
    # PyYAML's text, compiled on its own (flags differ from the seeded key: no cache hit)
    own = re.compile(rulegen.YAML_NON_PRINTABLE, re.UNICODE | re.DOTALL)
    assert [m.start() for m in own.finditer(every)] == expected


def test_pyyaml_reads_with_the_seeded_pattern_and_still_refuses_a_control_character():
    # a fresh interpreter: rulegen imported before yaml, as the command line does
    code = ("import rulegen, yaml, yaml.reader\n"
            "print(yaml.reader.Reader.NON_PRINTABLE.pattern == rulegen.NON_PRINTABLE_SET)\n"
            "try:\n    yaml.load('a: \"\\x07\"', Loader=yaml.SafeLoader)\nexcept yaml.reader.ReaderError as e:\n"
            "    print('refused', hex(e.character))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "refused", "0x7"]
