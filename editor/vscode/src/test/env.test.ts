// node --test: the server's environment carries the stored key under the configured name only.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_KEY_ENV, keyEnvProblem, serverEnvironment } from '../env';

test('the stored key is passed under the configured variable, the rest of the environment kept', () => {
    const base = { PATH: '/usr/bin', HOME: '/home/me' };
    const out = serverEnvironment(base, 'MY_LLM_KEY', 'sk-secret');
    assert.deepEqual(out.env, { PATH: '/usr/bin', HOME: '/home/me', MY_LLM_KEY: 'sk-secret' });
    assert.equal(out.problem, undefined);
    assert.ok(!out.note.includes('sk-secret'), 'the note goes to the log: never the key');
    assert.deepEqual(base, { PATH: '/usr/bin', HOME: '/home/me' }, 'the extension host environment is not changed');
});

test('without a stored key the inherited variable stays', () => {
    const out = serverEnvironment({ [DEFAULT_KEY_ENV]: 'from-shell' }, DEFAULT_KEY_ENV, undefined);
    assert.equal(out.env[DEFAULT_KEY_ENV], 'from-shell');
    assert.match(out.note, /from the environment/);
    assert.ok(!out.note.includes('from-shell'));
    assert.equal(serverEnvironment({}, DEFAULT_KEY_ENV, '').env[DEFAULT_KEY_ENV], undefined);
});

test('a name that is no variable, or one that steers how programs start, gets no key', () => {
    for (const name of ['1KEY', 'MY-KEY', 'A B', '', 'PATH', 'LD_PRELOAD', 'PYTHONPATH', 'NODE_OPTIONS', 'home']) {
        assert.ok(keyEnvProblem(name), name);
        const out = serverEnvironment({ PATH: '/usr/bin' }, name, 'sk-secret');
        assert.ok(out.problem?.includes('sage.agent.llm.apiKeyEnv'), name);
        assert.ok(!Object.values(out.env).includes('sk-secret'), name);
    }
    assert.equal(keyEnvProblem(DEFAULT_KEY_ENV), undefined);
    assert.equal(keyEnvProblem('OPENAI_API_KEY'), undefined);
});
