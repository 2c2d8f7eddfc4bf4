// node --test: the settings payload, the launch command and what package.json declares, without an editor.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_KEY_ENV } from '../env';
import {
    explicitValue, LAUNCH_SETTINGS, launchCommand, MACHINE_SETTINGS, RESTART_SETTINGS, SERVER_SETTINGS, serverSettings,
    settingsCommand, USER_ONLY_SETTINGS,
} from '../settings';

interface Manifest {
    engines: { vscode: string };
    devDependencies: Record<string, string>;
    contributes: {
        commands: { command: string; title: string; category: string }[];
        configuration: { properties: Record<string, { scope?: string; default?: unknown }> };
    };
}

// npm test (and the pytest that runs these) runs in the extension's folder.
const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as Manifest;

test('only settings the user set are sent, nested as the server reads them', () => {
    const user: Record<string, unknown> = {
        'eval.chip': '910B4', 'server.debounceS': 0.05, interpreter: ['py'],
        'agent.llm.baseUrl': 'http://127.0.0.1:8000/v1', 'agent.llm.timeoutS': 30, 'agent.turns': 5,
        'agent.llm.model': '', 'memory.db': '  ',
    };
    assert.deepEqual(serverSettings((key) => user[key]), {
        sage: {
            eval: { chip: '910B4' }, server: { debounceS: 0.05 },
            agent: { turns: 5, llm: { baseUrl: 'http://127.0.0.1:8000/v1', timeoutS: 30 } },
        },
    });
    assert.deepEqual(serverSettings(() => undefined), { sage: {} });
});

test('the most specific scope wins, except for the settings that route the API key', () => {
    const everywhere = { globalValue: 'user', workspaceValue: 'workspace', workspaceFolderValue: 'folder' };
    assert.equal(explicitValue('eval.chip', everywhere), 'folder');
    assert.equal(explicitValue('eval.chip', { globalValue: 'user', workspaceValue: 'workspace' }), 'workspace');
    assert.equal(explicitValue('agent.llm.baseUrl', everywhere), 'user');
    assert.equal(explicitValue('agent.llm.apiKeyEnv', { workspaceValue: 'PATH' }), undefined);
    assert.equal(explicitValue('eval.chip', undefined), undefined);
    assert.ok(RESTART_SETTINGS.includes('agent.llm.apiKeyEnv'), 'a new variable name needs a new server process');
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

test('package.json declares exactly the forwarded and launch settings, and no key', () => {
    const properties = manifest.contributes.configuration.properties;
    const declared = Object.keys(properties).map((k) => k.replace(/^sage\./, ''));
    const expected = [...SERVER_SETTINGS, ...LAUNCH_SETTINGS, 'trace.server'];
    assert.deepEqual([...declared].sort(), [...expected].sort());
    assert.ok(!declared.some((k) => /apikey$/i.test(k)), 'the API key lives in secret storage, never in settings');
    for (const key of USER_ONLY_SETTINGS) {
        assert.equal(properties[`sage.${key}`].scope, 'machine', `sage.${key} must stay out of workspace settings`);
    }
    assert.equal(properties['sage.agent.llm.apiKeyEnv'].default, DEFAULT_KEY_ENV);
});

test('every contributed command is registered, and none takes a server command id', () => {
    // The client registers the server's commands itself; registering one of those ids again throws.
    const serverCommands = ['sage.evaluate', 'sage.optimize', 'sage.acceptSuggestion', 'sage.rejectSuggestion', 'sage.showMemory'];
    const source = readFileSync(join(process.cwd(), 'src', 'extension.ts'), 'utf8');
    const registered = [...source.matchAll(/command\('(sage\.\w+)'/g)].map((m) => m[1]);
    const contributed = manifest.contributes.commands.map((c) => c.command);
    assert.deepEqual([...registered].sort(), [...contributed].sort());
    assert.deepEqual(contributed.filter((id) => serverCommands.includes(id)), []);
    assert.ok(manifest.contributes.commands.every((c) => c.category === 'SAGE'));
});

test('engines.vscode allows the @types/vscode the extension is compiled against (vsce refuses otherwise)', () => {
    const version = (range: string) => /(\d+)\.(\d+)/.exec(range)?.slice(1, 3).map(Number) ?? [];
    const [engineMajor, engineMinor] = version(manifest.engines.vscode);
    const [typesMajor, typesMinor] = version(manifest.devDependencies['@types/vscode']);
    assert.equal(typesMajor, engineMajor);
    assert.ok(typesMinor <= engineMinor, `@types/vscode ${typesMinor} is newer than engines.vscode ${engineMinor}`);
});

test('machine-scoped settings are exactly those package.json declares with a machine scope', () => {
    const declared = Object.entries(manifest.contributes.configuration.properties)
        .filter(([, p]) => p.scope === 'machine' || p.scope === 'machine-overridable')
        .map(([name]) => name.replace(/^sage\./, ''));
    assert.deepEqual([...MACHINE_SETTINGS].sort(), declared.sort());
});

test('Open Settings goes to the remote settings for a machine-scoped setting in a remote window', () => {
    assert.deepEqual(settingsCommand('interpreter', 'ssh-remote'),
        { command: 'workbench.action.openRemoteSettings', args: { query: 'sage.interpreter' } });
    assert.deepEqual(settingsCommand('interpreter', undefined),
        { command: 'workbench.action.openSettings', args: { query: 'sage.interpreter' } });
    assert.deepEqual(settingsCommand('eval.chip', 'ssh-remote'),
        { command: 'workbench.action.openSettings', args: { query: 'sage.eval.chip' } });
});
