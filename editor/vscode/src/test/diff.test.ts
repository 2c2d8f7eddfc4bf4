// node --test: the unified diff applier, on diffs as Python's difflib writes them (the server's).
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyPatch, parsePatch, PatchError } from '../diff';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

// difflib.unified_diff of numbered(20) with line 3 changed and line 17 split in two.
const TWO_HUNKS =
    '--- a/k.cpp\n+++ b/k.cpp\n@@ -1,6 +1,6 @@\n line 1\n line 2\n-line 3\n+line 3 changed\n line 4\n line 5\n' +
    ' line 6\n@@ -14,7 +14,8 @@\n line 14\n line 15\n line 16\n-line 17\n+line 17a\n+line 17b\n line 18\n line 19\n' +
    ' line 20\n';
const EXPECTED = numbered(20).replace('line 3\n', 'line 3 changed\n').replace('line 17\n', 'line 17a\nline 17b\n');

test('a two-hunk diff applies to the text it was made from', () => {
    const [patch, ...rest] = parsePatch(TWO_HUNKS);
    assert.equal(rest.length, 0);
    assert.deepEqual([patch.oldPath, patch.newPath, patch.hunks.length], ['k.cpp', 'k.cpp', 2]);
    assert.deepEqual(patch.hunks[1], {
        oldStart: 14, oldLines: 7, newStart: 14, newLines: 8,
        before: ['line 14\n', 'line 15\n', 'line 16\n', 'line 17\n', 'line 18\n', 'line 19\n', 'line 20\n'],
        after: ['line 14\n', 'line 15\n', 'line 16\n', 'line 17a\n', 'line 17b\n', 'line 18\n', 'line 19\n', 'line 20\n'],
    });
    assert.equal(applyPatch(numbered(20), patch), EXPECTED);
});

test('hunks are found where the file moved them since', () => {
    const [patch] = parsePatch(TWO_HUNKS);
    const moved = '// a new header\n// of two lines\n' + numbered(20);
    assert.equal(applyPatch(moved, patch), '// a new header\n// of two lines\n' + EXPECTED);
    const shorter = numbered(20).replace('line 10\n', '');
    assert.equal(applyPatch(shorter, patch), EXPECTED.replace('line 10\n', ''));
});

test('a hunk whose lines changed is an error that says which and what to do', () => {
    const [patch] = parsePatch(TWO_HUNKS);
    assert.throws(() => applyPatch(numbered(20).replace('line 16\n', 'line sixteen\n'), patch),
        (e: unknown) => e instanceof PatchError && /k\.cpp: hunk 2 \(lines 14-20\)/.test(e.message) &&
            /Optimize with SAGE/.test(e.message));
});

test('several files; a removed line starting with "-- " is not a file header', () => {
    // difflib.unified_diff over {host.py, k.cpp}: host.py's first line was "-- a lua comment".
    const diff = '--- a/host.py\n+++ b/host.py\n@@ -1,2 +1 @@\n--- a lua comment\n-x = 1\n+x = 2\n' +
        '--- a/k.cpp\n+++ b/k.cpp\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n';
    const [host, kernel] = parsePatch(diff);
    assert.equal(host.newPath, 'host.py');
    assert.equal(applyPatch('-- a lua comment\nx = 1\n', host), 'x = 2\n');
    assert.equal(applyPatch('a\nb\n', kernel), 'a\nc\n');
});

test('a new file: an insertion into empty text', () => {
    const [patch] = parsePatch('--- a/new.py\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    assert.equal(applyPatch('', patch), 'one\ntwo\n');
});

test('CRLF files match LF diffs and keep their line endings', () => {
    const [patch] = parsePatch(TWO_HUNKS);
    const crlf = (s: string) => s.replace(/\n/g, '\r\n');
    assert.equal(applyPatch(crlf(numbered(20)), patch), crlf(EXPECTED));
});

test('"\\ No newline at end of file" on either side', () => {
    const adds = '--- a/k\n+++ b/k\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n';
    assert.equal(applyPatch('a\nb', parsePatch(adds)[0]), 'a\nb\n');
    const drops = '--- a/k\n+++ b/k\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n';
    assert.equal(applyPatch('a\nb\n', parsePatch(drops)[0]), 'a\nc');
});

test('git headers and prose around the diff are skipped; a hunk shorter than its header is an error', () => {
    const git = 'diff --git a/k b/k\nindex 1..2 100644\n--- a/k\t2024-01-01\n+++ b/k\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n';
    const [patch] = parsePatch(git);
    assert.equal(patch.newPath, 'k');
    assert.equal(applyPatch('x\n', patch), 'y\n');
    assert.throws(() => parsePatch('--- a/k\n+++ b/k\n@@ -1,3 +1,3 @@\n a\n-b\n'), PatchError);
    assert.throws(() => parsePatch('@@ -1 +1 @@\n-x\n+y\n'), PatchError);
    assert.deepEqual(parsePatch(''), []);
});
