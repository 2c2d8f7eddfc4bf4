// node --test: the commands package.json contributes are reachable in remote windows and findable by title.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

interface Manifest {
    contributes: {
        commands: { command: string; title: string; category: string }[];
        menus: { commandPalette: { command: string; when?: string }[] };
    };
}

// npm test (and the pytest that runs these) runs in the extension's folder.
const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as Manifest;

/**
 * Evaluates the small subset of `when` syntax package.json uses (`==`, `||`, `&&`, parentheses)
 * against a context; anything else fails the test rather than being guessed.
 */
function holds(when: string, context: Record<string, string>): boolean {
    const tokens = when.match(/\(|\)|&&|\|\||[^\s()&|]+(?:\s*==\s*[^\s()&|]+)?/g) ?? [];
    let at = 0;
    const primary = (): boolean => {
        const token = tokens[at++];
        if (token === '(') {
            const value = or();
            assert.equal(tokens[at++], ')', `unbalanced parentheses in ${when}`);
            return value;
        }
        const match = /^([\w.]+)\s*==\s*(.+)$/.exec(token ?? '');
        assert.ok(match, `unsupported clause ${token} in ${when}`);
        return context[match[1]] === match[2];
    };
    const and = (): boolean => {
        let value = primary();
        while (tokens[at] === '&&') { at++; value = primary() && value; }
        return value;
    };
    const or = (): boolean => {
        let value = and();
        while (tokens[at] === '||') { at++; value = and() || value; }
        return value;
    };
    const value = or();
    assert.equal(at, tokens.length, `trailing tokens in ${when}`);
    return value;
}

const KERNEL = { editorLangId: 'ascendc', resourceFilename: 'add.asc' };

test('every palette entry shows for a kernel in a local and in a remote window', () => {
    for (const entry of manifest.contributes.menus.commandPalette) {
        for (const resourceScheme of ['file', 'vscode-remote']) {
            assert.ok(!entry.when || holds(entry.when, { ...KERNEL, resourceScheme }),
                `${entry.command} is hidden for a ${resourceScheme} kernel: ${entry.when}`);
        }
        assert.ok(!entry.when || !holds(entry.when, { ...KERNEL, resourceScheme: 'git' }),
            `${entry.command} shows on a git (read-only) view`);
    }
});

test('palette titles are distinct and "SAGE: Optimize" starts only the optimize command', () => {
    const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`);
    assert.equal(new Set(titles).size, titles.length, `duplicate titles: ${titles.join(', ')}`);
    const optimize = titles.filter((t) => t.toLowerCase().startsWith('sage: optimize'));
    const ids = manifest.contributes.commands.filter((c) => optimize.includes(`${c.category}: ${c.title}`));
    assert.deepEqual(ids.map((c) => c.command), ['sage.optimizeKernel']);
});
