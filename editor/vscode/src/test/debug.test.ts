// node --test: what "Debug block N" does with each kind of sage.debugBlock answer.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { debugStep, DebugLaunch } from '../debug';

const ready: DebugLaunch = {
    ready: true,
    block: 2,
    entry: 'add_custom',
    terminalLine: "gdb -q -ex 'break \"/t/add.cpp\":78 if ::block_idx == 2' -ex run --args /t/.sage/debug/harness m",
    stop: { file: '/t/add.cpp', line: 78, condition: '::block_idx == 2' },
    launch: { name: 'SAGE: add_custom, block 2', type: 'cppdbg', request: 'launch', program: '/t/.sage/debug/harness' },
};

test('with the C/C++ extension, a debug session stops at the conditional breakpoint', () => {
    assert.deepEqual(debugStep(ready, true), { kind: 'session', configuration: ready.launch, stop: ready.stop });
});

test('without it, gdb runs in a terminal, and the note says how to debug in the editor', () => {
    const step = debugStep(ready, false);
    assert.equal(step.kind, 'terminal');
    assert.ok(step.kind === 'terminal' && step.line === ready.terminalLine && step.note.includes('ms-vscode.cpptools'));
});

test('a task that does not build, or an answer of another shape, is said so', () => {
    assert.deepEqual(debugStep({ ready: false, block: 8, reason: 'host.py:9: there is no block 8' }, true),
        { kind: 'refused', message: 'SAGE: block 8 cannot be debugged: host.py:9: there is no block 8.' });
    assert.equal(debugStep({ started: true }, true).kind, 'refused');
    assert.equal(debugStep(undefined, false).kind, 'refused');
});
