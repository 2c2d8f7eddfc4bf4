// node --test: which suggestion (or report) a command means, and what accepting one writes.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    decisionMessage, DecisionNotice, EpisodeNotice, episodeSeverity, forget, isDecisionNotice, isEpisodeNotice,
    isSuggestionNotice, ownForFile, pendingView, pickForFile, remember, replacements, SuggestedFile, SuggestionNotice,
} from '../suggestions';

function suggestion(task: string, title = 'SAGE rewrite: est. 1.80x (CPU model), correct on 5 trials'): SuggestionNotice {
    const files = [{ path: `${task}/k.cpp`, name: 'k.cpp', text: 'int BUFFER_NUM = 2;\n' }];
    return { uri: `file://${task}/k.cpp`, task, title, episodeId: 'e1', attemptId: 'a1', speedup: 1.8, files, diff: '', estimated: true };
}

test('one per task, most recent last; the active file picks its task, else the latest', () => {
    let items = remember([], suggestion('/w/add'));
    items = remember(items, suggestion('/w/mul'));
    const newer = suggestion('/w/add/', 'SAGE fix: correct on 5 trials (est. 2.00 us (CPU model))');
    items = remember(items, newer);
    assert.deepEqual(items.map((s) => s.task), ['/w/mul', '/w/add/']);
    assert.equal(pickForFile(items, '/w/add/host.py'), newer);
    assert.equal(pickForFile(items, '/w/mul/k.cpp')?.task, '/w/mul');
    assert.equal(pickForFile(items, '/elsewhere/x.cpp'), newer);
    assert.equal(pickForFile(items, undefined), newer);
    assert.deepEqual(forget(items, '/w/add').map((s) => s.task), ['/w/mul']);
    assert.equal(pickForFile([], '/w/add/k.cpp'), undefined);
});

test("the status bar's verdict is the active file's task's own: none while it is not evaluated yet", () => {
    const items = [suggestion('/w/add'), suggestion('/w/mul')];
    assert.equal(ownForFile(items, '/w/add/k.cpp')?.task, '/w/add');
    assert.equal(ownForFile(items, '/w/naive/k.cpp'), undefined);
    assert.equal(ownForFile(items, undefined)?.task, '/w/mul');
    assert.equal(ownForFile([], undefined), undefined);
});

test('notifications of another shape are refused', () => {
    assert.equal(isSuggestionNotice(suggestion('/w/add')), true);
    assert.equal(isSuggestionNotice({ uri: 'file:///k.cpp', task: '/w' }), false);
    assert.equal(isSuggestionNotice(undefined), false);
    // An older server's notice: a diff without the files.
    const diffOnly: Partial<SuggestionNotice> = suggestion('/w/add');
    delete diffOnly.files;
    assert.equal(isSuggestionNotice(diffOnly), false);
    assert.equal(isSuggestionNotice({ ...suggestion('/w/add'), files: [{ path: '/w/add/k.cpp', name: 'k.cpp' }] }), false);
});

test('accepting writes each changed file whole and creates the missing ones', () => {
    const kernel: SuggestedFile = { path: '/w/add/k.cpp', name: 'k.cpp', text: 'int BUFFER_NUM = 2;\nint x;\n' };
    const host: SuggestedFile = { path: '/w/add/host.py', name: 'host.py', text: 'MAX_CORES = 8\n' };
    const tiling: SuggestedFile = { path: '/w/add/tiling.h', name: 'tiling.h', text: '// new\n' };
    const onDisk = new Map([[kernel.path, 'int BUFFER_NUM = 1;\nint x;\n'], [host.path, 'MAX_CORES = 8\r\n']]);
    const plan = replacements([kernel, host, tiling], (f) => onDisk.get(f.path));
    // host.py already reads as suggested (CRLF aside): left alone.
    assert.deepEqual(plan, [{ file: kernel, create: false }, { file: tiling, create: true }]);
    assert.deepEqual(replacements([kernel], () => kernel.text), []);
});

test('undecided suggestions stay in the status bar with the server\'s title until decided', () => {
    assert.equal(pendingView([]), undefined);
    const one = { uri: 'file:///t/add/add.asc', task: '/t/add', title: 'est. 1.80x (CPU model)', episodeId: 'e', attemptId: 'a',
        speedup: 1.8, files: [], diff: '', estimated: true };
    assert.equal(pendingView([one])?.text, '$(lightbulb) SAGE: suggestion ready (est. 1.80x (CPU model)) — Review');
    assert.match(pendingView([one, { ...one, task: '/t/mul' }])?.text ?? '', /\(\+1 more\) — Review$/);
});

function episode(status: string, error: string | null = null): EpisodeNotice {
    return {
        uri: 'file:///w/add/k.cpp', task: '/w/add', status, episodeId: 'e1', speedup: 1.8, estimated: true, turns: 4,
        message: 'SAGE: k.cpp: verified rewrite, est. 1.80x (CPU model) faster, correct on every trial (4 turns, ...).',
        title: 'SAGE rewrite: est. 1.80x (CPU model), correct on 5 trials', model: 'offline', error,
    };
}

test('an episode\'s end is shown as loud as it went', () => {
    assert.equal(isEpisodeNotice(episode('improved')), true);
    assert.equal(isEpisodeNotice({ uri: 'file:///k.cpp' }), false);
    assert.equal(episodeSeverity(episode('improved')), 'info');
    assert.equal(episodeSeverity(episode('no_improvement', 'cancelled')), 'info');
    assert.equal(episodeSeverity(episode('improved', 'the endpoint stayed down')), 'warning');
    assert.equal(episodeSeverity(episode('failed', 'the agent process ended unexpectedly')), 'error');
});

test('a decision says what the person did; a reward only for an acceptance', () => {
    const d: DecisionNotice = { task: '/w/add', episodeId: 'e1', decision: 'accept', reason: 'the rewrite was saved',
        logged: true, reward: 0.43 };
    assert.equal(isDecisionNotice(d), true);
    assert.equal(isDecisionNotice({ ...d, logged: 'yes' }), false);
    assert.deepEqual(decisionMessage(d), { severity: 'info',
        text: 'SAGE: rewrite accepted (the rewrite was saved): logged in the experience memory (reward 0.43).' });
    const undone = decisionMessage({ ...d, decision: 'reject', reason: 'the rewrite was undone in k.cpp', reward: 0.73 });
    assert.equal(undone.text, 'SAGE: rewrite rejected (the rewrite was undone in k.cpp): logged in the experience memory.');
    assert.equal(decisionMessage({ ...d, logged: false }).severity, 'warning');
    assert.match(decisionMessage({ ...d, decision: 'timeout', reward: null }).text, /left undecided/);
});
