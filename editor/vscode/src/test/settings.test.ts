// node --test: the settings payload and the launch command, without an editor.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LAUNCH_SETTINGS, launchCommand, SERVER_SETTINGS, serverSettings } from '../settings';

test('only settings the user set are sent, nested as the server reads them', () => {
    const user: Record<string, unknown> = { 'eval.chip': '910B4', 'server.debounceS': 0.05, interpreter: ['py'] };
    assert.deepEqual(serverSettings((key) => user[key]), { sage: { eval: { chip: '910B4' }, server: { debounceS: 0.05 } } });
    assert.deepEqual(serverSettings(() => undefined), { sage: {} });
});

test('serverCommand wins, then sage.interpreter, then the Python extension, then PATH', () => {
    assert.deepEqual(launchCommand({ serverCommand: ['sage-npu', 'serve'], interpreter: ['/py'] }, ['/ext']),
        { command: 'sage-npu', args: ['serve'], origin: 'sage.serverCommand' });
    assert.deepEqual(launchCommand({ serverCommand: [], interpreter: ['/venv/bin/python', '-X', 'utf8'] }, ['/ext']),
        { command: '/venv/bin/python', args: ['-X', 'utf8', '-m', 'sage_npu.cli', 'serve'], origin: 'sage.interpreter',
          interpreter: ['/venv/bin/python', '-X', 'utf8'] });
    assert.equal(launchCommand({ interpreter: [' '] }, ['/ext/python']).origin, 'Python extension');
    const fallback = launchCommand({}, undefined, 'linux');
    assert.deepEqual([fallback.command, fallback.origin], ['python3', 'PATH']);
    assert.equal(launchCommand({}, [], 'win32').command, 'python');
});

test('package.json declares exactly the forwarded and launch settings', () => {
    // npm test runs in the extension's folder.
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'));
    const declared = Object.keys(pkg.contributes.configuration.properties).map((k) => k.replace(/^sage\./, ''));
    const expected = [...SERVER_SETTINGS, ...LAUNCH_SETTINGS, 'trace.server'];
    assert.deepEqual([...declared].sort(), [...expected].sort());
});
