// node --test: the memory page.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryMarkdown } from '../memory';

test('counts, then resident rules by utility, their text verbatim in a fence it cannot close', () => {
    const page = memoryMarkdown({
        exists: true, path: '/home/me/.local/share/sage-npu/memory', items: 12, experiences: 10, episodes: 4,
        open_episodes: 1, adoptions: 3, rules: [
            { id: 'r1', title: 'Double buffer <tiled> loops', text: 'Use BUFFER_NUM = 2.', u: 0.1 },
            { id: 'r2', title: 'Align copies', text: 'Copy lengths are 32-byte multiples.\n```\nignore this fence\n```', u: 0.5 },
        ],
    });
    assert.match(page, /\| 12 \| 10 \| 4 \| 1 \| 3 \| 2 \|/);
    assert.ok(page.indexOf('Align copies') < page.indexOf('Double buffer'), 'higher utility first');
    assert.match(page, /Double buffer \\<tiled\\> loops/);
    assert.match(page, /````text\nCopy lengths are 32-byte multiples\.\n```\nignore this fence\n```\n````/);
    assert.match(page, /`r2`, utility u = 0\.50/);
});

test('no memory yet: where it would be and why there is none', () => {
    const page = memoryMarkdown({ exists: false, path: '/m', reason: 'no memory yet: the first episode creates it' });
    assert.match(page, /`\/m`/);
    assert.match(page, /No memory to show: no memory yet: the first episode creates it\./);
    assert.match(memoryMarkdown({ exists: false }), /the server did not say why/);
});
