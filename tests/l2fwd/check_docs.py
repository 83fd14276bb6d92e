#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The options as the program prints them, against what the docs say.

    check_docs.py --binary PROG --doc DOC [--also DOC]... [--ini FILE
                  [--ini-section NAME]...] [--default-policy NAME
                  --meson-options FILE]

PROG -- --help (parsed before EAL: no root, hugepages or devices) is the
one source of truth for the options, their sections, defaults and
ranges. DOC's option tables (a Markdown table whose header is
"| option | default | meaning |", its INI section taken from the "[name]"
of the heading above it, when the heading has one) must list every
option, once, and every option listed must be in --help:

- an option of --help missing from DOC's tables (and from every --also
  DOC, which are looked in after DOC: tcp-echo shares l2fwd-sirq's
  [run], [sirq] and [napi] tables) fails, named;
- an option of DOC's tables missing from --help fails, named (--also
  DOCs are not checked this way: l2fwd-sirq.md lists options tcp-echo
  does not have);
- a default printed "(default: X)" must be the first `code` of the
  table's default cell (or the whole cell, without code), and a table
  must not give a `code` default where --help prints none;
- "(range: LO..HI)" must appear as LO..HI in the option's row;
- the section above the table must be the one --help prints the
  option in (the INI file's section);
- --policy's default is the build's -Ddefault_policy: where the cell
  says so, the doc's value is meson_options.txt's default and the
  program's is the build's (--default-policy).

With --ini, every key of the example INI file that is set (not
commented out) must hold the value --help prints as its default, and
every option with a printed default must appear in the file, set or
commented out; only the --ini-section sections (all if none given).
Exit 0 when everything agrees, 1 with one line per disagreement.
"""
import argparse
import os
import re
import subprocess
import sys

OPT_LINE = re.compile(
    r"^  (?:-(?P<short>[A-Za-z]), |    )--(?P<long>[a-z0-9][a-z0-9-]*)"
    r"(?: (?P<arg>[^ ]+))?(?: +(?P<desc>\S.*))?$")
DEFAULT = re.compile(r"\(default: (?P<value>[^()]*)\)(?: \(range: (?P<range>[^()]*)\))?\s*$")
SECTION = re.compile(r"^\[(?P<name>[a-z0-9-]+)\]$")
HEADING = re.compile(r"^#+\s")
HEADING_SECTION = re.compile(r"\[(?P<name>[a-z0-9-]+)\]")
TABLE_HEADER = re.compile(r"^\|\s*option\s*\|\s*default\s*\|")
LONG_NAME = re.compile(r"--(?P<name>[a-z0-9][a-z0-9-]*)")
CODE = re.compile(r"`([^`]*)`")

failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what)


def help_options(binary):
    """{long name: {section, default, range, line}} from PROG -- --help."""
    run = subprocess.run([binary, "--", "--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=60)
    if run.returncode != 0:
        fail("%s -- --help exited %d: %s" % (binary, run.returncode,
                                              run.stderr.strip()))
        return {}
    opts = {}
    section = None
    last = None
    for line in run.stdout.splitlines():
        m = SECTION.match(line)
        if m:
            section = m.group("name")
            last = None
            continue
        m = OPT_LINE.match(line)
        if m:
            last = m.group("long")
            opts[last] = {"section": section, "desc": m.group("desc") or "",
                          "short": m.group("short"), "line": line.strip()}
            continue
        # A description on the lines below its option.
        if last is not None and line.startswith(" " * 20):
            opts[last]["desc"] = (opts[last]["desc"] + " " + line.strip()).strip()
        else:
            last = None
    for o in opts.values():
        m = DEFAULT.search(o["desc"])
        o["default"] = m.group("value") if m else None
        o["range"] = m.group("range") if m else None
    if not opts:
        fail("%s -- --help printed no option" % binary)
    return opts


def split_row(line):
    """The cells of a Markdown table row; "\\|" is not a separator."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def doc_options(path):
    """{long name: [row, ...]} of the doc's option tables."""
    rows = {}
    section = None
    in_table = False
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if HEADING.match(line):
            m = HEADING_SECTION.search(line)
            section = m.group("name") if m else None
            in_table = False
            continue
        if TABLE_HEADER.match(line):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        cells = split_row(line)
        if len(cells) < 3 or set(cells[0]) <= set("-: "):
            continue
        m = LONG_NAME.search(cells[0])
        if m is None:
            fail("%s:%d: an option table row without a --name: %s" % (path, n, line))
            continue
        rows.setdefault(m.group("name"), []).append({
            "doc": os.path.basename(path), "line": n, "section": section,
            "option": cells[0], "default": cells[1], "row": line})
    return rows


def doc_default(cell):
    """The value a default cell gives: its first `code`, else the text."""
    m = CODE.search(cell)
    if m:
        return m.group(1), True
    return cell.strip(), False


def meson_default_policy(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"option\('default_policy'.*?value:\s*'([^']*)'", text, re.S)
    return m.group(1) if m else None


def check_docs(args, opts):
    primary = doc_options(args.doc)
    docs = [primary] + [doc_options(p) for p in args.also]
    where = os.path.basename(args.doc)
    prog = os.path.basename(args.binary)

    for name, rows in sorted(primary.items()):
        if len(rows) > 1:
            fail("--%s: listed %d times in %s (lines %s): one row per option" %
                 (name, len(rows), where, ", ".join(str(r["line"]) for r in rows)))
        if name not in opts:
            fail("--%s: in %s (line %d) but not in %s -- --help" %
                 (name, where, rows[0]["line"], prog))

    for name, o in sorted(opts.items()):
        row = next((d[name][0] for d in docs if name in d), None)
        if row is None:
            fail("--%s: in %s -- --help ([%s]) but in no option table of %s" %
                 (name, prog, o["section"], ", ".join(
                     [where] + [os.path.basename(p) for p in args.also])))
            continue
        at = "%s:%d" % (row["doc"], row["line"])
        if row["section"] is not None and row["section"] != o["section"]:
            fail("--%s: %s puts it in [%s], --help in [%s]" %
                 (name, at, row["section"], o["section"]))
        if o["short"] is not None and ("-%s," % o["short"]) not in row["option"].replace("`", ""):
            fail("--%s: --help gives it -%s, %s does not (%s)" %
                 (name, o["short"], at, row["option"]))
        value, coded = doc_default(row["default"])
        if o["default"] is None:
            if coded:
                fail("--%s: %s gives the default `%s`, --help prints none" %
                     (name, at, value))
        elif name == "policy" and "-Ddefault_policy" in row["default"] and \
                args.default_policy is not None:
            want = meson_default_policy(args.meson_options)
            if value != want:
                fail("--policy: %s says `%s`, meson_options.txt's default_policy is '%s'" %
                     (at, value, want))
            if o["default"] != args.default_policy:
                fail("--policy: --help prints '%s', this build's -Ddefault_policy is '%s'" %
                     (o["default"], args.default_policy))
        elif value != o["default"]:
            fail("--%s: %s says the default is '%s', --help prints '%s'" %
                 (name, at, value, o["default"]))
        if o["range"] is not None and o["range"] not in row["row"]:
            fail("--%s: --help gives the range %s, %s does not say it" %
                 (name, o["range"], at))


def check_ini(args, opts):
    path = args.ini
    where = os.path.basename(path)
    wanted = set(args.ini_section)
    seen = set()
    section = None
    key = re.compile(r"^(?P<comment>;\s*)?(?P<key>[a-z0-9][a-z0-9-]*)\s*=\s*(?P<value>.*?)\s*$")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        m = re.match(r"^\[(?P<name>[^]]+)\]\s*$", line)
        if m:
            section = m.group("name")
            continue
        if section is None or (wanted and section not in wanted):
            continue
        m = key.match(line)
        if m is None:
            continue
        name = m.group("key")
        o = opts.get(name)
        if o is None or o["section"] != section:
            if not m.group("comment"):
                fail("%s:%d: [%s] %s is no option of [%s] in --help" %
                     (where, n, section, name, section))
            continue
        seen.add(name)
        if not m.group("comment") and o["default"] is not None and \
                m.group("value") != o["default"]:
            fail("%s:%d: [%s] %s = %s, --help prints the default '%s'" %
                 (where, n, section, name, m.group("value"), o["default"]))
    for name, o in sorted(opts.items()):
        if o["default"] is None or (wanted and o["section"] not in wanted):
            continue
        if name not in seen:
            fail("--%s: --help prints the default '%s'; %s has no [%s] %s, set or commented out" %
                 (name, o["default"], where, o["section"], name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--also", action="append", default=[])
    ap.add_argument("--ini")
    ap.add_argument("--ini-section", action="append", default=[])
    ap.add_argument("--default-policy")
    ap.add_argument("--meson-options")
    args = ap.parse_args()

    opts = help_options(args.binary)
    if opts:
        check_docs(args, opts)
        if args.ini:
            check_ini(args, opts)
    if failures:
        print("%d disagreement(s) between %s -- --help and the docs" %
              (len(failures), os.path.basename(args.binary)))
        return 1
    print("ok: %d options of %s -- --help agree with %s%s" %
          (len(opts), os.path.basename(args.binary), os.path.basename(args.doc),
           " and " + os.path.basename(args.ini) if args.ini else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
