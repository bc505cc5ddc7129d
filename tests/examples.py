#!/usr/bin/python3
"""Runs every example in README.md and the man pages, as written.

    examples.py run [--sensim BIN] [--build DIR] FILE...   run each file's examples
    examples.py list FILE...                               print the blocks found
    examples.py write FILE DIR                             write FILE's `file` blocks to DIR

What counts as an example:
  - README (Markdown): every fenced block whose info string is `sh`.
  - man pages (mdoc): every `.Bd -literal` ... `.Ed` display inside the
    EXAMPLES section, de-roffed (\\e is a backslash, \\(aq a quote, \\& nothing).

A comment on the line just before a block changes what happens to it
(Markdown `<!-- example: ... -->`, roff `.\\" example: ...`):
  example: skip REASON   not run; counted and listed with its reason (for
                         what needs a GPU, a recording or an hour)
  example: file NAME     not a command: the text is written to NAME in the
                         work folder, for the blocks after it (a rig, a C file)

Each page's examples run in order, in one fresh temporary folder, by `sh -e`,
with the build's sensim first on PATH and then /usr/bin, `data` a link to the shipped data,
HOME the folder itself, PKG_CONFIG_PATH finding a sensim.pc of the build tree
(headers in include/, libraries in the build folder), and the path of the
installed data, /usr/local/share/sensim, standing for the shipped data. A
block that exits non-zero fails the run, with the page, the block's line and
its output. The summary counts the blocks run, written and skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK_MD = re.compile(r'^<!--\s*example:\s*(skip|file)\s*(.*?)\s*-->\s*$')
MARK_ROFF = re.compile(r'^\.\\"\s*example:\s*(skip|file)\s*(.*?)\s*$')
INSTALLED_DATA = '/usr/local/share/sensim'
TIMEOUT = 300


class Block:
    def __init__(self, path, line, text, kind='run', arg=''):
        self.path, self.line, self.text, self.kind, self.arg = path, line, text, kind, arg

    def where(self):
        return '%s:%d' % (os.path.relpath(self.path), self.line)


def deroff(line):
    """The text a literal mdoc display shows for a line."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c != '\\' or i + 1 == len(line):
            out.append(c)
            i += 1
            continue
        n = line[i + 1]
        if n == 'e' or n == '\\':
            out.append('\\')
            i += 2
        elif n == '&':
            i += 2
        elif n == '-':
            out.append('-')
            i += 2
        elif n == '(':
            name = line[i + 2:i + 4]
            out.append({'aq': "'", 'dq': '"', 'ti': '~', 'ha': '^', 'ga': '`', 'rs': '\\'}.get(name, '?'))
            i += 4
        elif n == ' ':
            out.append(' ')
            i += 2
        else:
            raise ValueError('escape \\%s not understood in an example: %r' % (n, line))
    return ''.join(out)


def blocks_md(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    found, i = [], 0
    while i < len(lines):
        m = re.match(r'^```\s*(\S*)\s*$', lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        text = '\n'.join(lines[start:j]) + '\n'
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK_MD.match(lines[k]) if k >= 0 else None
        if mark:
            found.append(Block(path, start, text, mark.group(1), mark.group(2)))
        elif lang == 'sh':
            found.append(Block(path, start, text))
        i = j + 1
    return found


def blocks_roff(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    found, section, i = [], '', 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('.Sh '):
            section = line[4:].strip()
        if section == 'EXAMPLES' and line.startswith('.Bd') and '-literal' in line:
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith('.Ed'):
                j += 1
            try:
                body = [deroff(x) for x in lines[start:j] if not x.startswith('.\\"')]
                text = '\n'.join(body) + '\n'
            except ValueError as e:
                body, text = [], 'false # %s\n' % e
            mark = MARK_ROFF.match(lines[i - 1]) if i > 0 else None
            if mark:
                found.append(Block(path, start, text, mark.group(1), mark.group(2)))
            else:
                found.append(Block(path, start, text))
            i = j
        i += 1
    return found


def blocks(path):
    return blocks_md(path) if path.endswith('.md') else blocks_roff(path)


def build_pc(srcdir, build, folder):
    """A sensim.pc for the build tree, so `pkg-config sensim` works before install."""
    pc = os.path.join(folder, '.pkgconfig')
    os.makedirs(pc, exist_ok=True)
    with open(os.path.join(build, 'sensim.pc')) as f:
        text = f.read()
    text = re.sub(r'(?m)^libdir=.*$', 'libdir=' + build, text)
    text = re.sub(r'(?m)^includedir=.*$', 'includedir=' + os.path.join(srcdir, 'include'), text)
    with open(os.path.join(pc, 'sensim.pc'), 'w') as f:
        f.write(text)
    return pc


def run(files, sensim, build):
    srcdir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = os.path.join(srcdir, 'data')
    counts = {'run': 0, 'file': 0, 'skip': 0}
    skipped, failures = [], 0
    for path in files:
        folder = tempfile.mkdtemp(prefix='sensim-examples-')
        try:
            os.symlink(data, os.path.join(folder, 'data'))
            env = dict(os.environ)
            bindir = os.path.join(folder, '.bin')
            os.makedirs(bindir)
            os.symlink(sensim, os.path.join(bindir, 'sensim'))
            # A Debian user's PATH: the system's python3 (with h5py) first.
            env['PATH'] = bindir + ':/usr/bin:/bin:' + env.get('PATH', '')
            env['HOME'] = folder
            env['PKG_CONFIG_PATH'] = build_pc(srcdir, build, folder)
            env['LD_LIBRARY_PATH'] = build
            env.pop('SENSIM_DATA', None)
            for b in blocks(path):
                counts[b.kind] += 1
                if b.kind == 'skip':
                    skipped.append('%s: %s' % (b.where(), b.arg or '(no reason given)'))
                    continue
                if b.kind == 'file':
                    with open(os.path.join(folder, b.arg), 'w') as f:
                        f.write(b.text)
                    continue
                script = b.text.replace(INSTALLED_DATA, data)
                try:
                    p = subprocess.run(['sh', '-e', '-c', script], cwd=folder, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, timeout=TIMEOUT)
                    rc, out = p.returncode, p.stdout.decode('utf-8', 'replace')
                except subprocess.TimeoutExpired as e:
                    rc, out = 'timeout after %d s' % TIMEOUT, (e.stdout or b'').decode('utf-8', 'replace')
                if rc != 0:
                    failures += 1
                    tail = '\n'.join(out.rstrip('\n').split('\n')[-15:])
                    print('FAIL %s (exit %s):\n%s--- output:\n%s\n' % (b.where(), rc, b.text, tail))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    for s in skipped:
        print('skipped %s' % s)
    print('examples: %d run, %d failed, %d files written, %d skipped (from %d pages)' %
          (counts['run'], failures, counts['file'], counts['skip'], len(files)))
    return 1 if failures else 0


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    verb, args = argv[1], argv[2:]
    if verb == 'list':
        for path in args:
            for b in blocks(path):
                print('%s [%s%s]\n%s' % (b.where(), b.kind, ' ' + b.arg if b.arg else '', b.text))
        return 0
    if verb == 'write':
        path, outdir = args
        for b in blocks(path):
            if b.kind == 'file':
                with open(os.path.join(outdir, b.arg), 'w') as f:
                    f.write(b.text)
        return 0
    if verb == 'run':
        here = os.getcwd()
        sensim, build = os.path.join(here, 'build/sensim'), os.path.join(here, 'build')
        while args and args[0].startswith('--'):
            if args[0] == '--sensim':
                sensim = os.path.abspath(args[1])
            elif args[0] == '--build':
                build = os.path.abspath(args[1])
            else:
                sys.stderr.write('examples.py: unknown option %s\n' % args[0])
                return 2
            args = args[2:]
        return run([os.path.abspath(a) for a in args], sensim, build)
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
