#!/usr/bin/env python3
"""Checks the browser view of `--dump-html` in a real headless Chromium.

  python3 tests/html/check_html.py [--hloc build/hloc] [--module tests/corpus/X.small.before_optimizations.txt]
                                   [--keep DIR]
  python3 tests/html/check_html.py --page DIR/module_0000.NAME.html [--expect-timed N]

1. `hloc compile MODULE --profile h200 --dump-to D --dump-html -v` and
   `hloc opt MODULE --profile h200 --trace-rules --dump-to D2 --dump-html -v`;
2. loads each page with `chromium --headless --dump-dom` and checks that the script ran
   (body data-ready="1", #errors empty, no console error in Chromium's log), then reads the counts
   the page wrote into elements with ids and compares them with the dumps and logs:
   passes = `[pass]` lines of -v, rule firings = --trace-rules firings, fusions made =
   "priority-fusion: X into" trace lines, thunks = lines of thunk_sequence.txt, fusion
   instructions = fusion instructions in after_optimizations.txt;
3. takes a screenshot (`--screenshot`) and checks that it is a PNG.
With --page, checks one page a compile already wrote (its thunks against the thunk_sequence.txt
beside it) instead; --expect-timed N: the thunk sequence shows a time beside exactly N thunks
(per-thunk times from a thunk_times.json in the dump folder), or, for 0, says there are none and
how to add them. It prints the page's line on the times' source ("check_html: times: ...").
Prints "check_html: ok" at the end, or "check_html: SKIP (...)" and exits 0 when Chromium is not
installed (scripts/setup installs it). Exits 1 on the first failed check.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail(msg):
    print(f"check_html: FAIL: {msg}")
    sys.exit(1)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, profile_dir, args):
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={profile_dir}", "--enable-logging=stderr", "--v=0"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def page_counts(dom):
    counts = {}
    for m in re.finditer(r'id="(n-[a-z-]+)">([^<]*)<', dom):
        counts[m.group(1)] = m.group(2)
    return counts


def check_page(browser, work, html, expected, label):
    text = open(html, encoding="utf-8").read()
    # The embedded JSON must not end its <script> early, and nothing may come from the network.
    if text.count("</script>") != text.count("<script"):
        fail(f"{label}: {text.count('</script>')} '</script>' for {text.count('<script')} '<script'")
    if re.search(r'(src|href)=\\?"(https?:)?//', text) or "<link" in text:
        fail(f"{label}: the page loads something from the network")
    url = "file://" + os.path.abspath(html)
    p = chromium(browser, os.path.join(work, "profile-" + label), ["--dump-dom", url])
    if p.returncode != 0:
        fail(f"{label}: chromium --dump-dom exited {p.returncode}:\n{p.stderr[-3000:]}")
    dom = p.stdout
    console_errors = [l for l in p.stderr.splitlines()
                      if "CONSOLE" in l and ("Uncaught" in l or "Error" in l or ":ERROR:" in l)]
    if console_errors:
        fail(f"{label}: console errors:\n" + "\n".join(console_errors))
    if 'data-ready="1"' not in dom:
        fail(f"{label}: the page's script did not finish (no data-ready on body)")
    m = re.search(r'<div id="errors">(.*?)</div>', dom, re.S)
    if m is None or m.group(1).strip():
        fail(f"{label}: #errors is not empty: {m.group(1) if m else '(missing)'}")
    counts = page_counts(dom)
    for key, want in expected.items():
        got = counts.get(key)
        if got != str(want):
            fail(f"{label}: #{key} shows {got!r}, the dumps say {want}")
        print(f"check_html: {label}: #{key} = {got} (matches)")
    if "<svg" not in dom:
        fail(f"{label}: no SVG in the page (fusion graph / live ranges)")
    return dom


NO_TIMES = ("no per-thunk times (run `hloc run FILE --backend gpu --bench N --per-thunk --dump-to DIR` "
            "to add them)")


def element_text(dom, elem_id):
    m = re.search(r'id="' + elem_id + r'"[^>]*>(.*?)</', dom, re.S)
    return m.group(1) if m else None


def check_existing_page(browser, work, html, expect_timed):
    """--page: one page a compile wrote, its thunks and (--expect-timed) its per-thunk times."""
    seq = glob.glob(os.path.join(os.path.dirname(html), "*.thunk_sequence.txt"))
    if len(seq) != 1:
        fail(f"expected one thunk_sequence.txt beside {html}, found {seq}")
    thunks = len(re.findall(r"^\s*\d+: k\w+", open(seq[0]).read(), re.M))
    expected = {"n-thunks": thunks}
    if expect_timed is not None:
        expected["n-timed-thunks"] = expect_timed
    dom = check_page(browser, work, html, expected, "page")
    if expect_timed is None:
        return
    # The times are drawn, one cell per timed thunk, not only counted.
    cells = len(re.findall(r'<span class="(time|far)"', dom))
    if cells != expect_timed:
        fail(f"page: {cells} time cells beside the thunks, expected {expect_timed}")
    source = element_text(dom, "thunk-times-source") or ""
    mismatch = element_text(dom, "thunk-times-mismatch") or ""
    if expect_timed == 0 and source != NO_TIMES:
        fail(f"page: without times the thunk section says {source!r}, expected {NO_TIMES!r}")
    if expect_timed > 0 and not source.startswith("Per-thunk times from "):
        fail(f"page: the thunk section does not say where its times came from: {source!r}")
    print(f"check_html: times: {source}{mismatch}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hloc", default=os.environ.get("HLOC_BIN", os.path.join(ROOT, "build", "hloc")))
    ap.add_argument("--module", default=os.path.join(ROOT, "tests", "corpus",
                                                     "attention_bf16.small.before_optimizations.txt"))
    ap.add_argument("--keep", help="write the dumps and the screenshot here (kept)")
    ap.add_argument("--page", help="check this page of an earlier compile instead of compiling")
    ap.add_argument("--expect-timed", type=int, help="with --page: thunks the page shows a time for")
    args = ap.parse_args()
    if args.expect_timed is not None and not args.page:
        ap.error("--expect-timed needs --page")

    browser = chromium_binary()
    if browser is None:
        print("check_html: SKIP (chromium is not installed; scripts/setup installs Debian's chromium)")
        return 0
    work = args.keep or tempfile.mkdtemp(prefix="hloc-html-")
    os.makedirs(work, exist_ok=True)
    if args.page:
        check_existing_page(browser, work, args.page, args.expect_timed)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        print("check_html: ok")
        return 0

    # compile: passes, thunks, final fusions.
    cdir = os.path.join(work, "compile")
    p = run([args.hloc, "compile", args.module, "--profile", "h200", "--dump-to", cdir, "--dump-html", "-v"])
    passes = len(re.findall(r"^\[pass\] ", p.stderr, re.M))
    html = glob.glob(os.path.join(cdir, "*.html"))
    if len(html) != 1:
        fail(f"expected one .html in {cdir}, found {html}")
    thunk_text = open(glob.glob(os.path.join(cdir, "*.thunk_sequence.txt"))[0]).read()
    thunks = len(re.findall(r"^\s*\d+: k\w+", thunk_text, re.M))
    after = open(glob.glob(os.path.join(cdir, "*.after_optimizations.txt"))[0]).read()
    fusion_insts = len(re.findall(r"^\s*(ROOT )?\S+ = .*\bfusion\(", after, re.M))
    check_page(browser, work, html[0], {"n-passes": passes, "n-thunks": thunks,
                                        "n-fusion-instructions": fusion_insts}, "compile")

    # opt with --trace-rules: rule firings and fusions against the trace.
    odir = os.path.join(work, "opt")
    p = run([args.hloc, "opt", args.module, "--profile", "h200", "--trace-rules", "--dump-to", odir, "--dump-html",
             "-v", "-o", os.path.join(work, "opt.txt")])
    passes = len(re.findall(r"^\[pass\] ", p.stderr, re.M))
    # A firing line ends with the rule's (file:line), then " [tags: ...]" when the rule has tags.
    firings = len(re.findall(r"^\[(?!pass\])[^\]]+\] \S+ \([^)]*:\d+\)( \[tags: [^\]]*\])?$", p.stderr, re.M))
    # Fusions made: priority-fusion's, multi-output fusion's and horizontal fusion's merges.
    fused = len(re.findall(r"^priority-fusion: \S+(?: \[[\w-]+\])? into ", p.stderr, re.M)) + \
        len(re.findall(r"^(multi-output-fusion|horizontal-in-place-fusion): merged ", p.stderr, re.M))
    html = glob.glob(os.path.join(odir, "*.html"))
    if len(html) != 1:
        fail(f"expected one .html in {odir}, found {html}")
    check_page(browser, work, html[0], {"n-passes": passes, "n-firings": firings, "n-fusions": fused}, "opt")

    # A screenshot of the compile page.
    png = os.path.join(work, "compile.png")
    c = chromium(browser, os.path.join(work, "profile-shot"),
                 [f"--screenshot={png}", "--window-size=1400,1800", "file://" + os.path.abspath(
                     glob.glob(os.path.join(cdir, "*.html"))[0])])
    if c.returncode != 0 or not os.path.isfile(png):
        fail(f"no screenshot (chromium exited {c.returncode}):\n{c.stderr[-3000:]}")
    with open(png, "rb") as f:
        head = f.read(8)
    if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 10000:
        fail(f"{png} is not a PNG of a drawn page ({os.path.getsize(png)} bytes)")
    print(f"check_html: screenshot {png} ({os.path.getsize(png)} bytes)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("check_html: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
