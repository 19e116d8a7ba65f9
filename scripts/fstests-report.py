#!/usr/bin/env python3
"""Usage: fstests-report.py DIR KERNEL... -- CONFIG...

The table of a make fstests run (scripts/fstests.sh): for each
configuration, test -> result on each kernel, read from fstests' xunit
report (DIR/KERNEL-CONFIG/**/result.xml) or, where a boot ended before
./check wrote it, from ./check's output (results.log) and the kernel log.
Results: pass, fail (with fstests' reason), notrun (with its reason),
"not reached" (the boot ended first). Exit 1 when a test fails on the
last kernel and not on the first, or a boot did not finish; else 0.
"""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET


def from_xunit(path):
    res = {}
    for case in ET.parse(path).getroot().iter('testcase'):
        name = case.get('name')
        skip = case.find('skipped')
        fail = case.find('failure')
        if skip is not None:
            res[name] = 'notrun: ' + (skip.get('message') or '').strip()
        elif fail is not None:
            res[name] = 'fail: ' + (fail.get('message') or '').strip()
        else:
            res[name] = 'pass (%ss)' % case.get('time', '?')
    return res


# What the kernel must never print (one list for the harness): a line of
# it names why a boot did not finish.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       'kernel-complaints.txt')) as f:
    COMPLAINTS = '|'.join(l.rstrip('\n') for l in f
                          if l.strip() and not l.startswith('#'))

TEST = re.compile(r'^((?:generic|xfs|ext4|shared)/\d+|fsx/[\w.-]+)\s+(.*)$')


def from_check_log(path):
    """./check's own lines, for boots that never wrote result.xml."""
    res = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = TEST.match(line.rstrip())
            if not m:
                continue
            name, rest = m.groups()
            if 'HARNESS:' in rest:
                # The boot's time limit (or the guest) ended it mid-test.
                res[name] = 'not finished: ' + rest[rest.index('HARNESS:'):].strip()
            elif '[not run]' in rest:
                res[name] = 'notrun: ' + rest.split('[not run]', 1)[1].strip()
            elif '[failed' in rest or 'output mismatch' in rest or '_check_' in rest:
                res[name] = 'fail: ' + rest.strip()
            elif re.search(r'\d+s$', rest):
                res[name] = 'pass'
            else:
                res[name] = 'crashed in this test: ' + rest.strip()
    return res


def boot_result(d):
    """(results by test, problem with the boot or None)."""
    xml = glob.glob(os.path.join(d, '**', 'result.xml'), recursive=True)
    log = os.path.join(d, 'results.log')
    text = open(log, errors='replace').read() if os.path.exists(log) else ''
    done = re.search(r'^HARNESS: DONE (\d+)', text, re.M)
    problem = None
    if not done:
        console = os.path.join(d, 'console.log')
        ctext = open(console, errors='replace').read() if os.path.exists(console) else ''
        m = re.search(r'^.*(%s|TIMEOUT).*$' % COMPLAINTS, ctext + text, re.M)
        problem = 'boot did not finish' + (': ' + m.group(0).strip()[:120] if m else '')
    res = from_check_log(log) if os.path.exists(log) else {}
    if xml:
        res.update(from_xunit(xml[0]))
    return res, problem


def main(argv):
    if '--' not in argv or argv.index('--') < 2:
        sys.exit(__doc__)
    top = argv[0]
    kernels = argv[1:argv.index('--')]
    configs = argv[argv.index('--') + 1:]
    bad = False
    print('# fstests, -o dax=always (%s)\n' % os.path.basename(top))
    for c in configs:
        results, problems = {}, {}
        for k in kernels:
            results[k], problems[k] = boot_result(os.path.join(top, '%s-%s' % (k, c)))
        names = sorted(set().union(*results.values()))
        print('## %s\n' % c)
        for k in kernels:
            secs = os.path.join(top, '%s-%s' % (k, c), 'seconds')
            t = open(secs).read().strip() + ' s' if os.path.exists(secs) else '?'
            counts = {}
            for r in results[k].values():
                kind = r.split(':')[0]
                kind = kind if kind.startswith('not ') else kind.split(' ')[0]
                counts[kind] = counts.get(kind, 0) + 1
            print('- %s: %s, boot %s%s' % (k, ', '.join('%d %s' % (v, n) for n, v in sorted(counts.items())),
                                          t, ' — ' + problems[k] if problems[k] else ''))
            bad = bad or problems[k] is not None
        print('\n| test | ' + ' | '.join(kernels) + ' |')
        print('|---' * (len(kernels) + 1) + '|')
        for n in names:
            cells = [results[k].get(n, 'not reached').replace('|', '/') for k in kernels]
            print('| %s | %s |' % (n, ' | '.join(cells)))
            first, last = cells[0], cells[-1]
            if last.startswith(('fail', 'crashed')) and not first.startswith(('fail', 'crashed')):
                bad = True
        print()
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
