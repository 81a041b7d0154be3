"""Prints one pytest-style summary line for the passes of `make test` and exits
non-zero if any of them failed.

Usage: summarize_tests.py LABEL=REPORT.xml [LABEL=REPORT.xml ...] [--docs built|failed]

Each REPORT.xml is the JUnit XML that pytest writes with --junitxml; a missing or
unreadable report counts as a failed pass (pytest did not finish).
"""
import argparse
import sys
import xml.etree.ElementTree as ET
from typing import Dict, Optional

OUTCOMES = ('failed', 'errors', 'passed', 'skipped')


def read_report(path: str) -> Optional[Dict[str, float]]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == 'testsuite' else root.findall('testsuite')
    total = {name: 0.0 for name in ('tests', 'failures', 'errors', 'skipped', 'time')}
    for suite in suites:
        for name in total:
            total[name] += float(suite.get(name, 0))
    return {'failed': total['failures'], 'errors': total['errors'],
            'skipped': total['skipped'], 'time': total['time'],
            'passed': total['tests'] - total['failures'] - total['errors']
            - total['skipped']}


def describe(counts: Dict[str, float]) -> str:
    parts = [f'{int(counts[name])} {name}' for name in OUTCOMES if counts[name]]
    return f'{", ".join(parts) or "no tests ran"} in {counts["time"]:.0f}s'


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('passes', nargs='+', metavar='LABEL=REPORT.xml')
    parser.add_argument('--docs', choices=['built', 'failed'])
    args = parser.parse_args()
    total = {name: 0.0 for name in OUTCOMES + ('time', )}
    details, ok = [], True
    for item in args.passes:
        label, _, path = item.partition('=')
        counts = read_report(path)
        if counts is None:
            details.append(f'{label}: did not finish (no report {path})')
            ok = False
            continue
        ok = ok and counts['passed'] > 0 and not (counts['failed'] or counts['errors'])
        details.append(f'{label}: {describe(counts)}')
        for name in total:
            total[name] += counts[name]
    if args.docs:
        details.append(f'docs: {args.docs}')
        ok = ok and args.docs == 'built'
    line = (f' make test{"" if ok else " FAILED"}: {describe(total)} '
            f'({"; ".join(details)}) ')
    print(f'{line:=^88}' if len(line) < 86 else f'=={line}==')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
