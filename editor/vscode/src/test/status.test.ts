// node --test: the status bar text for each kind of sage/report.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFailure, isReportSummary, ReportSummary, serverDownView, statusText, statusTooltip } from '../status';

const configured = { backend: 'sim', chip: '910B2' };

function report(over: Partial<ReportSummary>): ReportSummary {
    return {
        task: '/t/add', kernel: '/t/add/add_custom.cpp', status: 'correct', chip: '910B4', backend: 'sim', passed: 3,
        trials: 3, estimatedUs: 1.234, bottleneck: 'MTE2', estimated: true, errors: 0, ...over,
    };
}

test('each result reads as one short line, with the backend and chip it ran on', () => {
    const cases: [Partial<ReportSummary>, string][] = [
        [{}, 'SAGE sim 910B4: correct 3/3, est. 1.23 us'],
        [{ backend: 'ascend', estimated: false, estimatedUs: 10 }, 'SAGE ascend 910B4: correct 3/3, 10.00 us'],
        [{ estimatedUs: null }, 'SAGE sim 910B4: correct 3/3'],
        [{ status: 'mismatch', passed: 1 }, 'SAGE sim 910B4: mismatch 1/3'],
        [{ status: 'compile_error', passed: null, trials: null, estimatedUs: null, errors: 2 }, 'SAGE sim 910B4: compile error, 2 errors'],
        [{ status: 'runtime_error', errors: 1 }, 'SAGE sim 910B4: runtime error, 1 error'],
        [{ status: 'timeout' }, 'SAGE sim 910B4: timeout'],
    ];
    for (const [over, text] of cases) {
        assert.equal(statusText(configured, report(over)), text);
    }
});

test('before any report: the configured backend and chip; a running command shows', () => {
    assert.equal(statusText(configured), 'SAGE sim 910B2');
    assert.equal(statusText(configured, undefined, 'optimizing'), '$(sync~spin) SAGE sim 910B2: optimizing...');
    assert.equal(statusText(configured, report({}), 'optimizing'),
        '$(sync~spin) SAGE sim 910B4: correct 3/3, est. 1.23 us, optimizing...');
});

test('the tooltip names the kernel and the bottleneck and says an estimate is one', () => {
    const tip = statusTooltip(report({}));
    assert.match(tip, /add_custom\.cpp: correct 3\/3/);
    assert.match(tip, /bottleneck: MTE2/);
    assert.match(tip, /CPU cost model/);
    assert.match(statusTooltip(), /no evaluation yet/);
});

test('failures are marked; malformed notifications are not reports', () => {
    assert.equal(isFailure(report({ status: 'mismatch' })), true);
    assert.equal(isFailure(report({})), false);
    assert.equal(isFailure(undefined), false);
    assert.equal(isReportSummary(report({})), true);
    assert.equal(isReportSummary({ task: '/t' }), false);
    assert.equal(isReportSummary(null), false);
});

test('a stopped server shows as a warning that restarts it; starting and running show the result', () => {
    assert.equal(serverDownView('running'), undefined);
    assert.equal(serverDownView('starting'), undefined);
    const down = serverDownView('stopped');
    assert.equal(down?.text, '$(warning) SAGE: server stopped — Restart');
    assert.equal(down?.command, 'sage.restartServer');
});
