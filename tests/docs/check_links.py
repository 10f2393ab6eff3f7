"""Check that every relative link in the Markdown docs points at a file that exists (and at a heading there).

Usage: python tests/docs/check_links.py [FILE.md ...]   (default: README.md, CONTRIBUTING.md, docs/*.md)

Links are `[text](target)`, `![alt](target)` and reference definitions `[label]: target`, outside code
blocks and code spans. Links with a scheme (https:, mailto:) are not fetched. A `#fragment` on a Markdown
target, or a bare `#fragment`, must name one of its headings as GitHub makes anchors of them. Exits 1 and
prints each broken link with its file and line; 0 when every link resolves.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_FILES = ["README.md", "CONTRIBUTING.md", "docs/*.md"]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(path):
    """(line number, text) of the lines outside fenced code blocks, with code spans blanked."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    fence = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def anchors(path):
    """Every anchor GitHub gives the headings of a Markdown file (repeats get -1, -2, ...)."""
    seen = {}
    result = set()
    for _number, line in markdown_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else "%s-%d" % (base, count))
    return result


def check_file(path):
    """The broken links of one Markdown file, as printable lines."""
    problems = []
    for number, line in markdown_lines(path):
        targets = INLINE_LINK.findall(line)
        definition = REFERENCE_DEF.match(line)
        if definition:
            targets.append(definition.group(1))
        for target in targets:
            if SCHEME.match(target):
                continue
            problem = check_target(path, target)
            if problem:
                problems.append("%s:%d: %s (%s)" % (os.path.relpath(path, ROOT), number, target, problem))
    return problems


def check_target(source, target):
    """Why a relative link from source is broken, or None."""
    file_part, dummy, fragment = target.partition("#")
    if file_part:
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), file_part))
        if not os.path.exists(resolved):
            return "no such file"
    else:
        resolved = source
    if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
        if fragment not in anchors(resolved):
            return "no heading with the anchor #%s" % fragment
    return None


def main(argv):
    patterns = argv or DEFAULT_FILES
    files = []
    for pattern in patterns:
        matches = sorted(glob.glob(os.path.join(ROOT, pattern)))
        if not matches:
            print("%s: no such file" % pattern)
            return 1
        files.extend(matches)
    problems = []
    for path in files:
        problems.extend(check_file(path))
    for problem in problems:
        print(problem)
    print("%d Markdown files, %d broken links" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
