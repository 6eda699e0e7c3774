"""Interrupts an hloc command and checks that it loses nothing (issue 17, part 4).

Usage: interrupt.py SIGNAL WHEN OUTDIR -- COMMAND...
SIGNAL is INT or TERM. WHEN is a number of seconds to wait before the signal, or "tmp": send it as
soon as a temporary file (".NAME.tmp-XXXXXX", support/file_io.cc) appears in OUTDIR, that is in the
middle of an output write (polled every 0.2 ms; if the command ends first it is run again, up to
5 times). Then checks: the command ended by that signal (a shell reports 130 / 143) within 10 s,
stderr says "hloc: interrupted (SIGINT)" / "hloc: terminated (SIGTERM)", and OUTDIR holds no
temporary and nothing but the files it held before (each unchanged). Prints what happened.
"""
import os
import signal
import subprocess
import sys
import time


def snapshot(folder):
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))}


def main():
    sig_name, when, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    assert sys.argv[4] == "--"
    command = sys.argv[5:]
    sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[sig_name]
    before = snapshot(outdir)
    for attempt in range(5):
        # lit's workers ignore SIGINT (the child would inherit that): the default, as at a terminal.
        p = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)])
        if when == "tmp":
            seen = None
            while p.poll() is None and seen is None:
                seen = next((n for n in os.listdir(outdir) if ".tmp-" in n), None)
                if seen is None:
                    time.sleep(0.0002)
            if seen is None:
                p.communicate()
                print("attempt %d: the command finished before a temporary was seen; again" % attempt)
                for n in os.listdir(outdir):
                    if n not in before:
                        os.remove(os.path.join(outdir, n))
                continue
            print("temporary seen: the signal comes in the middle of a write")
        else:
            time.sleep(float(when))
            if p.poll() is not None:
                print("FAIL: the command finished before the signal (exit %d); use a slower one" % p.returncode)
                sys.exit(1)
        sent = time.monotonic()
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            print("FAIL: still running 10 s after SIG%s" % sig_name)
            sys.exit(1)
        took = time.monotonic() - sent
        break
    else:
        print("FAIL: never caught a write in progress")
        sys.exit(1)
    err = err.decode("utf-8", "replace")
    failures = []
    if p.returncode != -sig:
        failures.append("exit status %d, expected death by SIG%s (shell status %d)" % (p.returncode, sig_name, 128 + sig))
    word = {"INT": "interrupted (SIGINT)", "TERM": "terminated (SIGTERM)"}[sig_name]
    if "hloc: " + word not in err:
        failures.append("no 'hloc: %s' message; stderr: %s" % (word, err[-400:]))
    after = snapshot(outdir)
    if after != before:
        failures.append("the output folder changed: before %s, after %s" % (sorted(before), sorted(after)))
    for f in failures:
        print("FAIL: " + f)
    if failures:
        sys.exit(1)
    print("SIG%s: ended by the signal (shell status %d) in under 10 s, message printed, output folder unchanged (%d files)"
          % (sig_name, 128 + sig, len(after)))
    print("stderr: " + err.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
