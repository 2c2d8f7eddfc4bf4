// node --test: which suggestion (or report) a command means.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { forget, isApplyTitle, isSuggestionNotice, pickForFile, remember, SuggestionNotice } from '../suggestions';

function suggestion(task: string, title = 'SAGE rewrite: est. 1.80x (CPU model), correct on 5 trials'): SuggestionNotice {
    return { uri: `file://${task}/k.cpp`, task, title, episodeId: 'e1', attemptId: 'a1', speedup: 1.8, diff: '', estimated: true };
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

test('the apply action is told from the reject action by its title', () => {
    assert.equal(isApplyTitle('SAGE rewrite: est. 1.80x (CPU model), correct on 5 trials'), true);
    assert.equal(isApplyTitle('SAGE fix: correct on 5 trials (est. 2.00 us (CPU model))'), true);
    assert.equal(isApplyTitle('SAGE: reject this rewrite'), false);
    assert.equal(isApplyTitle('Optimize with SAGE'), false);
});

test('notifications of another shape are refused', () => {
    assert.equal(isSuggestionNotice(suggestion('/w/add')), true);
    assert.equal(isSuggestionNotice({ uri: 'file:///k.cpp', task: '/w' }), false);
    assert.equal(isSuggestionNotice(undefined), false);
});
