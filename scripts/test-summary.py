#!/usr/bin/env python3
# Counts of one meson test run, as scripts/test.sh and scripts/test-debian.sh
# report them: test cases from Criterion's synthesis lines, one per other
# test (SKIP counts as passed, as meson counts it). Prints "PASSED FAILED";
# appends each failed test (with its assertion or error lines) to FAILURES,
# prefixed with NAME.
#
#   scripts/test-summary.py BUILD/meson-logs/testlog.json FAILURES NAME
import json, re, sys
synth = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
ok = bad = 0
names = []
with open(sys.argv[1]) as f:
	for line in f:
		r = json.loads(line)
		m = synth.search((r.get("stdout") or "") + (r.get("stderr") or ""))
		if m:
			ok += int(m.group(2))
			bad += int(m.group(3)) + int(m.group(4))
			out = (r.get("stdout") or "") + (r.get("stderr") or "")
			# Each failed case with its assertion lines, for CI's tail.
			lines = out.splitlines()
			for i, l in enumerate(lines):
				c = re.match(r"\[FAIL\] (\S+): \(", l)
				if not c:
					continue
				why = []
				for j in range(i - 1, max(i - 12, -1), -1):
					if not lines[j].startswith("[----]"):
						break
					t = lines[j][6:].strip()
					if t:
						why.insert(0, t)
				names.append(r["name"] + ": " + c.group(1) +
					     "".join("\n      " + w for w in why[-4:]))
			if r["result"] not in ("OK", "EXPECTEDFAIL") and int(m.group(3)) + int(m.group(4)) == 0:
				bad += 1	# killed or timed out after its synthesis
				names.append(r["name"] + " (" + r["result"] + ")")
		elif r["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
			ok += 1
		else:
			bad += 1
			out = [l for l in ((r.get("stdout") or "") + (r.get("stderr") or "")).splitlines() if l.strip()]
			# The lines that say what went wrong, else the last ones.
			# A line indented deeper than the one before it (after a
			# "prog: " prefix) says why that one failed: it goes too.
			said = []
			depth = lambda l: len(l) - len(re.sub(r"^[\w.-]+: ", "", l, 1).lstrip())
			head = None	# the depth of the last line said, while its reasons follow
			for l in out:
				if re.search(r"SUMMARY|ERROR|WARNING|FAIL|[Ff]ailed|error:|not ok", l):
					said.append(l)
					head = depth(l)
				elif head is not None and depth(l) > head:
					said.append(l)
				else:
					head = None
			tail = (said or out)[-8:]
			names.append(r["name"] + " (" + r["result"] + ")" +
				     "".join("\n      " + t[:300] for t in tail))
print(ok, bad)
with open(sys.argv[2], "a") as f:
	for n in names:
		f.write(sys.argv[3] + ": " + n + "\n")
