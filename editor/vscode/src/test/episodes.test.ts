// node --test: which server progress "SAGE: Cancel Optimization" cancels.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { CancellableProgress } from '../episodes';

test('only cancellable progress that has not ended is cancelled, once', () => {
    const p = new CancellableProgress();
    p.began('eval', false);
    p.began('episode-1', true);
    p.began('episode-2', true);
    p.ended('episode-1');
    assert.deepEqual(p.cancelAll(), ['episode-2']);
    assert.deepEqual(p.cancelAll(), []);
});
