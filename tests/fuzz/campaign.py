#!/usr/bin/env python3
"""Fuzz campaign bookkeeping (tests/fuzz/README.md, make fuzz and make fuzz-merge).

    python3 tests/fuzz/campaign.py record TARGET TIME_FILE LOG_FILE
        appends one row to tests/fuzz/cpu-time.tsv (the CPU seconds of TIME_FILE, written by
        /usr/bin/time -f "%U %S", and the runs of libFuzzer's LOG_FILE) and rewrites the
        cumulative table in tests/fuzz/README.md between its cpu-time markers
    python3 tests/fuzz/campaign.py table
        only rewrites the table
    python3 tests/fuzz/campaign.py keep TARGET MERGED_DIR
        after `fuzz-TARGET -merge=1 MERGED_DIR corpus/TARGET found/TARGET WORK/TARGET`: keeps in
        tests/fuzz/found/TARGET the merged inputs that are not seeds of corpus/TARGET, at most
        MAX_FILES files and MAX_BYTES bytes (smallest first), and prints what it kept
"""
import hashlib
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = os.path.join(HERE, "cpu-time.tsv")
README = os.path.join(HERE, "README.md")
BEGIN, END = "<!-- cpu-time: written by campaign.py -->", "<!-- /cpu-time -->"
MAX_FILES, MAX_BYTES = 120, 256 * 1024
HEADER = "date\tgit\ttarget\tcpu_s\truns\tfound_files"


def rows():
    if not os.path.exists(LOG):
        return []
    out = []
    with open(LOG) as f:
        for line in f:
            if line.startswith("date\t") or not line.strip():
                continue
            d, g, t, cpu, runs, found = line.rstrip("\n").split("\t")
            out.append(dict(date=d, git=g, target=t, cpu=float(cpu), runs=int(runs), found=found))
    return out


def table():
    per = {}
    for r in rows():
        p = per.setdefault(r["target"], dict(cpu=0.0, runs=0, campaigns=0, last=""))
        p["cpu"] += r["cpu"]
        p["runs"] += r["runs"]
        p["campaigns"] += 1
        p["last"] = max(p["last"], r["date"])
    lines = [BEGIN, "", "| target | CPU time, all campaigns | inputs run | campaigns | last | committed found/ inputs |",
             "|---|---|---|---|---|---|"]
    total = 0.0
    for t in sorted(per):
        p = per[t]
        total += p["cpu"]
        fd = os.path.join(HERE, "found", t)
        n = len(os.listdir(fd)) if os.path.isdir(fd) else 0
        size = sum(os.path.getsize(os.path.join(fd, f)) for f in os.listdir(fd)) if n else 0
        lines.append("| `%s` | %s | %s | %d | %s | %d (%.0f KB) |" % (
            t, hms(p["cpu"]), "{:,}".format(p["runs"]), p["campaigns"], p["last"], n, size / 1024.0))
    lines += ["", "Total: %s of CPU over %d targets (`tests/fuzz/cpu-time.tsv`, one row per target "
              "and campaign)." % (hms(total), len(per)), "", END]
    with open(README) as f:
        text = f.read()
    block = "\n".join(lines)
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(README, "w") as f:
        f.write(text)


def hms(s):
    s = int(round(s))
    return "%dh %02dm %02ds" % (s // 3600, s % 3600 // 60, s % 60) if s >= 3600 else "%dm %02ds" % (s // 60, s % 60)


def record(target, time_file, log_file):
    with open(time_file) as f:
        last = [l for l in f.read().split("\n") if re.match(r"^[\d.]+ [\d.]+$", l.strip())]
    if not last:
        sys.exit("campaign.py: %s holds no \"USER SYS\" line" % time_file)
    user, sys_ = (float(x) for x in last[-1].split())
    runs = 0
    with open(log_file, errors="replace") as f:
        for line in f:
            m = re.match(r"^stat::number_of_executed_units:\s*(\d+)", line)
            if m:
                runs = int(m.group(1))
    git = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip() or "?"
    fd = os.path.join(HERE, "found", target)
    found = str(len(os.listdir(fd))) if os.path.isdir(fd) else "0"
    new = not os.path.exists(LOG)
    with open(LOG, "a") as f:
        if new:
            f.write(HEADER + "\n")
        f.write("%s\t%s\t%s\t%.1f\t%d\t%s\n" % (time.strftime("%Y-%m-%d", time.gmtime()), git, target,
                                                 user + sys_, runs, found))
    table()
    print("  fuzz %s: %.1f s of CPU, %d runs (added to tests/fuzz/cpu-time.tsv)" % (target, user + sys_, runs))


def keep(target, merged):
    seeds = set()
    for d in (os.path.join(HERE, "corpus", target), os.path.join(HERE, "regress", target)):
        if os.path.isdir(d):
            for f in os.listdir(d):
                with open(os.path.join(d, f), "rb") as fh:
                    seeds.add(hashlib.sha1(fh.read()).hexdigest())
    cand = []
    for f in os.listdir(merged):
        with open(os.path.join(merged, f), "rb") as fh:
            data = fh.read()
        h = hashlib.sha1(data).hexdigest()
        if h not in seeds:
            cand.append((len(data), h, data))
    cand.sort()
    out = os.path.join(HERE, "found", target)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.unlink(os.path.join(out, f))
    total = n = 0
    for size, h, data in cand:
        if n >= MAX_FILES or total + size > MAX_BYTES:
            break
        with open(os.path.join(out, h[:16]), "wb") as fh:
            fh.write(data)
        total += size
        n += 1
    print("  fuzz-merge %s: %d inputs beyond the seeds, %d kept (%.0f KB) in tests/fuzz/found/%s"
          % (target, len(cand), n, total / 1024.0, target))


def main(argv):
    if len(argv) == 5 and argv[1] == "record":
        record(argv[2], argv[3], argv[4])
    elif len(argv) == 2 and argv[1] == "table":
        table()
    elif len(argv) == 4 and argv[1] == "keep":
        keep(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
